<?php

/**
 * Every public method with hostile arguments: each gives a clear result or a
 * TypeError/ValueError, never a crash, and leaves Redis as it was.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class BadInputTest extends RedisLockTestCase
{
    private static function hostile(): array
    {
        $fp = fopen('php://memory', 'r');
        $recursive = [];
        $recursive[] = &$recursive;
        $deep = [];
        for ($i = 0; $i < 20000; $i++) {
            $deep = [$deep];
        }
        return [
            'recursive array' => $recursive, 'deep array' => $deep,
            'null' => null, 'empty' => '', 'zero string' => '0', 'zero' => 0, 'minus one' => -1,
            'max int' => PHP_INT_MAX, 'min int' => PHP_INT_MIN, 'nan' => NAN, 'inf' => INF, '-inf' => -INF,
            'array' => ['a', 'b'], 'nested array' => [['x']], 'object' => new stdClass(), 'resource' => $fp,
            'closure' => fn () => 1, 'nul bytes' => "a\0b", 'invalid utf-8' => "\xff\xfe",
            'huge' => str_repeat('n', 1 << 20), 'true' => true, 'false' => false, 'float' => 1.5,
            'minus zero' => -0.0, 'denormal' => 5e-324, 'huge float' => 1e300,
        ];
    }

    /**
     * The calls to try: one per method and parameter, the others valid. A
     * pair is [set-up, call]: Redis must stay as the set-up left it.
     */
    private static function calls(): array
    {
        $lock = fn () => new RedisLock();
        $queue = fn () => new RedisQueue();
        $client = fn () => new RedisLock\Client();
        $held = function () use ($client) {
            $l = $client()->lock('h');
            $l->acquire();
            return $l;
        };
        $queue2 = fn () => $client()->queue('q');
        $reserved = function () use ($queue2) {
            $q = $queue2();
            $q->enqueue('t', 'p');
            return [$q, $q->reserve()[0]];
        };
        $batches = fn () => $client()->batches('b');
        $batch = function () use ($batches) {
            $b = $batches();
            return [$b, $b->create('made')['id']];
        };
        return [
            'Client::batches $name' => fn ($v) => $client()->batches($v),
            'Batches::create $name' => fn ($v) => $batches()->create($v),
            'Batches::create $options' => fn ($v) => $batches()->create('n', $v),
            'Batches::find $id' => fn ($v) => $batches()->find($v),
            'Batches::list $limit' => fn ($v) => $batches()->list($v),
            'Batches::list $before' => fn ($v) => $batches()->list(50, $v),
            'Batches::addJobs $id' => fn ($v) => $batches()->addJobs($v, 1),
            'Batches::addJobs $jobs' => [$batch, fn ($b, $v) => $b[0]->addJobs($b[1], $v)],
            'Batches::jobDone $id' => fn ($v) => $batches()->jobDone($v, 'j'),
            'Batches::jobDone $job' => [$batch, fn ($b, $v) => $b[0]->jobDone($b[1], $v)],
            'Batches::jobFailed $job' => [$batch, fn ($b, $v) => $b[0]->jobFailed($b[1], $v)],
            'Batches::finish $id' => fn ($v) => $batches()->finish($v),
            'Batches::cancel $id' => fn ($v) => $batches()->cancel($v),
            'Batches::delete $id' => fn ($v) => $batches()->delete($v),
            'Batches::prune $before' => [$batch, fn ($b, $v) => $b[0]->prune($v)],
            'Batches::prune $which' => [$batch, fn ($b, $v) => $b[0]->prune(0, $v)],
            'Client::queue $name' => fn ($v) => $client()->queue($v),
            'Client::queue $options' => fn ($v) => $client()->queue('q', $v),
            'Client::queue option rate' => fn ($v) => $client()->queue('q', ['rate' => $v])->enqueue('i'),
            'Client::queue option rate limit' => fn ($v) => $client()->queue('q', ['rate' => ['limit' => $v]])->enqueue('i'),
            'Client::reserve $queues' => fn ($v) => $client()->reserve($v),
            'Queue::enqueue $id' => fn ($v) => $queue2()->enqueue($v),
            'Queue::enqueue $payload' => fn ($v) => $queue2()->enqueue('i', $v),
            'Queue::enqueue $delay' => fn ($v) => $queue2()->enqueue('i', null, $v),
            'Queue::enqueue $policy' => fn ($v) => $queue2()->enqueue('i', null, 0, $v),
            'Queue::enqueue $tags' => fn ($v) => $queue2()->enqueue('i', null, 0, null, $v),
            'Queue::enqueue a tag' => fn ($v) => $queue2()->enqueue('i', null, 0, null, [$v]),
            'Queue::enqueueMany $tags' => fn ($v) => $queue2()->enqueueMany(['i' => null], 0, null, $v),
            'Queue::enqueue $group' => fn ($v) => $queue2()->enqueue('i', null, 0, null, null, $v),
            'Queue::enqueueMany $group' => fn ($v) => $queue2()->enqueueMany(['i' => null], 0, null, null, $v),
            'Queue::tagged $tag' => fn ($v) => $queue2()->tagged($v),
            'Queue::tagged $limit' => fn ($v) => $queue2()->tagged('t', $v),
            'Queue::enqueueMany $tasks' => fn ($v) => $queue2()->enqueueMany($v),
            'Queue::enqueueMany $delay' => fn ($v) => $queue2()->enqueueMany(['i' => null], $v),
            'Queue::reserve $count' => fn ($v) => $queue2()->reserve($v),
            'Queue::reserve $lease' => fn ($v) => $queue2()->reserve(1, $v),
            // A task is due, so even an endless wait returns at once.
            'Queue::reserve $wait' => [function () use ($queue2) { $q = $queue2(); $q->enqueue('t'); return $q; },
                fn ($q, $v) => $q->reserve(1, null, $v)],
            'Queue::ack $task' => fn ($v) => $queue2()->ack($v),
            'Queue::ackMany $tasks' => fn ($v) => $queue2()->ackMany($v),
            // A leased task beside the bad value: it stays leased.
            'Queue::reserve $ack' => [$reserved, fn ($qt, $v) => $qt[0]->reserve(1, null, 0, is_array($v) ? [$qt[1], ...$v] : $v)],
            'Queue::nack $delay' => [$reserved, fn ($qt, $v) => $qt[0]->nack($qt[1], $v)],
            'Queue::nack $reason' => [$reserved, fn ($qt, $v) => $qt[0]->nack($qt[1], 0, $v)],
            'Queue::bury $reason' => [$reserved, fn ($qt, $v) => $qt[0]->bury($qt[1], $v)],
            'Queue::extend $lease' => [$reserved, fn ($qt, $v) => $qt[0]->extend($qt[1], $v)],
            'Queue::dead $limit' => fn ($v) => $queue2()->dead($v),
            'Queue::peek $limit' => fn ($v) => $queue2()->peek($v),
            'Queue::leased $limit' => fn ($v) => $queue2()->leased($v),
            'Queue::workers $limit' => fn ($v) => $queue2()->workers($v),
            'Queue::recent $limit' => fn ($v) => $queue2()->recent($v),
            'Queue::recent $id' => fn ($v) => $queue2()->recent(10, $v),
            'Queue::recent $tag' => fn ($v) => $queue2()->recent(10, null, $v),
            'Queue::keepRecent $count' => fn ($v) => $queue2()->keepRecent($v),
            'Queue::keepRecent $seconds' => fn ($v) => $queue2()->keepRecent(5, $v),
            'Queue::keepRecent $maxBytes' => fn ($v) => $queue2()->keepRecent(5, 60, $v),
            'Queue::find $id' => fn ($v) => $queue2()->find($v),
            'Queue::retryDead $ids' => fn ($v) => $queue2()->retryDead($v),
            'Queue::purgeDead $ids' => fn ($v) => $queue2()->purgeDead($v),
            'Queue::remove $ids' => [function () use ($queue2) { $q = $queue2(); $q->enqueue('a', 'p'); return $q; },
                fn ($q, $v) => $q->remove($v)],
            'Queue::bury $task' => fn ($v) => $queue2()->bury($v),
            'Queue::setRate $limit' => fn ($v) => $queue2()->setRate($v),
            'Queue::setRate $per' => fn ($v) => $queue2()->setRate(5, $v),
            'Queue::setGroupConcurrency $concurrency' => fn ($v) => $queue2()->setGroupConcurrency($v),
            'Queue::setGroupRate $limit' => fn ($v) => $queue2()->setGroupRate($v),
            'Queue::setGroupRate $per' => fn ($v) => $queue2()->setGroupRate(5, $v),
            'Queue::setGroupRate $burst' => fn ($v) => $queue2()->setGroupRate(5, 1, $v),
            'Queue::throttle $seconds' => fn ($v) => $queue2()->throttle($v),
            'Queue::throttle $group' => fn ($v) => $queue2()->throttle(1, $v),
            'Semaphore::asLock $permits' => fn ($v) => (new RedisLock\Client(RedisServer::$main->dsn()))->semaphore('bad', 2)->asLock($v),
            'Queue::moveTo $to' => [function () use ($queue2) { $q = $queue2(); $q->enqueue('m', 'p'); return $q; },
                fn ($q, $v) => $q->moveTo($v)],
            'Redlock::__construct $name' => fn ($v) => new RedisLock\Redlock($v, ['nodes' => [RedisServer::$main->dsn()]]),
            'Redlock::__construct $options' => fn ($v) => new RedisLock\Redlock('r', $v),
            'Redlock::acquire $wait' => fn ($v) => (new RedisLock\Redlock('r', ['nodes' => [RedisServer::$main->dsn()]]))->acquire($v),
            'Client::__construct' => fn ($v) => new RedisLock\Client($v),
            'Client::lock $name' => fn ($v) => $client()->lock($v),
            'Client::forceRelease $name' => fn ($v) => $client()->forceRelease($v),
            'Client::forceRelease $kind' => fn ($v) => $client()->forceRelease('n', $v),
            'Client::lock $options' => fn ($v) => $client()->lock('n', $v),
            'Client::lock option ttl' => fn ($v) => $client()->lock('n', ['ttl' => $v])->acquire(),
            'Client::lock option owner' => fn ($v) => $client()->lock('n', ['owner' => $v])->acquire(),
            'Client::lock option exactKey' => fn ($v) => $client()->lock('n', ['exactKey' => $v])->acquire(),
            'Client::readLock option exactKey' => fn ($v) => $client()->readLock('n', ['exactKey' => $v])->acquire(),
            'Client::writeLock $name (exactKey)' => fn ($v) => $client()->writeLock($v, ['exactKey' => true])->acquire(),
            'Lock::acquire $wait' => fn ($v) => $client()->lock('n')->acquire($v),
            'Lock::extend $ttl' => [$held, fn ($l, $v) => $l->extend($v)],
            'Lock::synchronized $fn' => fn ($v) => $client()->lock('n')->synchronized($v),
            'Lock::synchronized $wait' => fn ($v) => $client()->lock('n')->synchronized(fn () => 1, $v),
            'addLock $intOrderId' => fn ($v) => Lock_Service::addLock($v, 60),
            'addLock $intExpireTime' => fn ($v) => Lock_Service::addLock('o', $v),
            'releaseLock $intOrderId' => fn ($v) => Lock_Service::releaseLock($v, 1),
            'releaseLock $intLockId' => fn ($v) => Lock_Service::releaseLock('o', $v),
            'Client::orderLocks $template' => fn ($v) => $client()->orderLocks($v),
            'Client::orderLocks $counter' => fn ($v) => $client()->orderLocks(null, $v),
            'OrderLocks::addLock $intOrderId' => fn ($v) => $client()->orderLocks('own_%s', 'own_id')->addLock($v, 60),
            'OrderLocks::addLock $intExpireTime' => fn ($v) => $client()->orderLocks('own_%s', 'own_id')->addLock('o', $v),
            'OrderLocks::releaseLock $intOrderId' => fn ($v) => $client()->orderLocks('own_%s', 'own_id')->releaseLock($v, 1),
            'OrderLocks::releaseLock $intLockId' => fn ($v) => $client()->orderLocks('own_%s', 'own_id')->releaseLock('o', $v),
            'Telemetry::setParent $traceparent' => fn ($v) => RedisLock\Telemetry::setParent($v),
            'Telemetry::setParent $tracestate' => fn ($v) => RedisLock\Telemetry::setParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', $v),
            'RedisLock::__construct' => fn ($v) => new RedisLock($v),
            'lock $name' => fn ($v) => $lock()->lock($v),
            'lock $timeout' => fn ($v) => $lock()->lock('n', $v),
            'lock $expire' => fn ($v) => $lock()->lock('n', 0, $v),
            'lock $waitIntervalUs' => fn ($v) => $lock()->lock('n', 0, 15, $v),
            'unlock $name' => fn ($v) => $lock()->unlock($v),
            'expire $name' => fn ($v) => $lock()->expire($v, 5),
            'expire $expire' => function ($v) use ($lock) { $l = $lock(); $l->lock('e'); return $l->expire('e', $v); },
            'isLocking $name' => fn ($v) => $lock()->isLocking($v),
            'RedisQueue::__construct' => fn ($v) => new RedisQueue($v),
            'enqueue $name' => fn ($v) => $queue()->enqueue($v, 'i'),
            'enqueue $id' => fn ($v) => $queue()->enqueue('q', $v),
            'enqueue $timeout' => fn ($v) => $queue()->enqueue('q', 'i', $v),
            'enqueue $afterInterval' => fn ($v) => $queue()->enqueue('q', 'i', 10, $v),
            'dequeue $name' => fn ($v) => $queue()->dequeue($v, 'i', 1.5),
            'dequeue $id' => fn ($v) => $queue()->dequeue('q', $v, 1.5),
            'dequeue $score' => fn ($v) => $queue()->dequeue('q', 'i', $v),
            'pop $name' => fn ($v) => $queue()->pop($v),
            'pop $count' => fn ($v) => $queue()->pop('q', $v),
            'top $name' => fn ($v) => $queue()->top($v),
            'top $count' => fn ($v) => $queue()->top('q', $v),
        ];
    }

    public function testEveryMethodWithEveryHostileValue(): void
    {
        $outcomes = [];
        $messages = [];
        foreach (self::calls() as $call => $row) {
            [$setUp, $fn] = is_array($row) ? $row : [fn () => null, $row];
            foreach (self::hostile() as $label => $value) {
                $this->redis->flushAll();
                $context = $setUp();
                $before = $this->snapshot();
                try {
                    $result = $context === null ? $fn($value) : $fn($context, $value);
                    $outcome = is_object($result) ? 'object' : gettype($result);
                } catch (TypeError | ValueError $e) {
                    $outcome = get_class($e);
                    $this->assertNotSame('', $e->getMessage());
                    $messages["$call($label)"] = $e->getMessage();
                    $this->assertSame($before, $this->snapshot(), "$call($label) threw but changed Redis");
                }
                unset($context);
                $outcomes["$call($label)"] = $outcome;
            }
        }
        // Spot checks of the documented outcomes.
        $this->assertSame('array', $outcomes['Batches::create $name(empty)']);
        $this->assertSame('ValueError', $outcomes['Batches::find $id(empty)']);
        $this->assertSame('NULL', $outcomes['Batches::find $id(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Batches::addJobs $jobs(minus one)']);
        $this->assertSame('ValueError', $outcomes['Batches::prune $before(nan)']);
        $this->assertSame('ValueError', $outcomes['Batches::prune $which(empty)']);
        $this->assertSame('TypeError', $outcomes['Batches::list $limit(array)']);
        $this->assertSame('boolean', $outcomes['addLock $intOrderId(null)']);
        $this->assertSame('integer', $outcomes['addLock $intOrderId(nul bytes)']);
        $this->assertSame('integer', $outcomes['addLock $intOrderId(huge)']);
        $this->assertSame('TypeError', $outcomes['addLock $intOrderId(object)']);
        $this->assertSame('ValueError', $outcomes['addLock $intExpireTime(max int)']);
        $this->assertSame('ValueError', $outcomes['addLock $intExpireTime(nan)']);
        $this->assertSame('boolean', $outcomes['addLock $intExpireTime(-inf)'], '-INF <= 0');
        $this->assertSame('TypeError', $outcomes['lock $name(array)']);
        $this->assertSame('ValueError', $outcomes['lock $timeout(inf)']);
        $this->assertSame('TypeError', $outcomes['lock $expire(invalid utf-8)']);
        $this->assertSame('ValueError', $outcomes['RedisLock::__construct(empty)']);
        $this->assertSame('TypeError', $outcomes['RedisQueue::__construct(closure)']);
        $this->assertSame('boolean', $outcomes['enqueue $id(array)']);
        $this->assertSame('TypeError', $outcomes['enqueue $id(nested array)']);
        $this->assertSame('ValueError', $outcomes['pop $count(inf)']);
        $this->assertSame('array', $outcomes['Queue::recent $id(null)']);
        $this->assertSame('ValueError', $outcomes['Queue::recent $id(empty)']);
        $this->assertSame('array', $outcomes['Queue::recent $id(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::recent $limit(zero)']);
        foreach (self::hostile() as $label => $_) {
            $this->assertContains($outcomes["Client::queue option rate($label)"], ['TypeError', 'ValueError'], $label);
        }
        foreach (self::hostile() as $label => $_) {
            $this->assertContains($outcomes["Client::queue option rate limit($label)"], ['TypeError', 'ValueError'], $label);
        }
        $this->assertSame('ValueError', $outcomes['Client::queue option rate limit(max int)']);
        $this->assertSame('TypeError', $outcomes['Client::queue option rate limit(float)']);
        $this->assertSame('boolean', $outcomes['Telemetry::setParent $traceparent(null)']);
        $this->assertSame('boolean', $outcomes['Telemetry::setParent $traceparent(nul bytes)']);
        $this->assertSame('boolean', $outcomes['Telemetry::setParent $traceparent(huge)']);
        $this->assertSame('TypeError', $outcomes['Telemetry::setParent $traceparent(array)']);
        $this->assertSame('boolean', $outcomes['Telemetry::setParent $tracestate(invalid utf-8)']);
        $this->assertSame('TypeError', $outcomes['Telemetry::setParent $tracestate(object)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $tags(null)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $tags(array)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueue $tags(zero string)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueue $tags(nested array)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue a tag(empty)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue a tag(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue a tag(huge)']);
        $this->assertSame('string', $outcomes['Queue::enqueue a tag(invalid utf-8)']);
        $this->assertSame('string', $outcomes['Queue::enqueue a tag(zero)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueue a tag(object)']);
        $this->assertSame('array', $outcomes['Queue::enqueueMany $tags(array)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $group(null)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $group(zero)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $group(invalid utf-8)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $group(empty)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $group(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $group(huge)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueue $group(array)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueueMany $group(empty)']);
        $this->assertSame('ValueError', $outcomes['Queue::tagged $tag(empty)']);
        $this->assertSame('boolean', $outcomes['Queue::setGroupConcurrency $concurrency(null)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupConcurrency $concurrency(zero)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupConcurrency $concurrency(max int)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupConcurrency $concurrency(zero string)'], 'a number in a string, out of range');
        $this->assertSame('TypeError', $outcomes['Queue::setGroupConcurrency $concurrency(float)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupRate $per(nan)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupRate $per(zero)']);
        $this->assertSame('ValueError', $outcomes['Queue::setGroupRate $burst(minus one)']);
        $this->assertSame('double', $outcomes['Queue::throttle $group(null)']);
        $this->assertSame('double', $outcomes['Queue::throttle $group(zero string)']);
        $this->assertSame('ValueError', $outcomes['Queue::throttle $group(empty)']);
        $this->assertSame('ValueError', $outcomes['Queue::throttle $group(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::throttle $group(huge)']);
        $this->assertSame('TypeError', $outcomes['Queue::throttle $group(array)']);
        $this->assertSame('ValueError', $outcomes['Queue::throttle $seconds(inf)']);
        $this->assertSame('ValueError', $outcomes['Queue::tagged $tag(nul bytes)']);
        $this->assertSame('array', $outcomes['Queue::tagged $tag(zero string)']);
        $this->assertSame('ValueError', $outcomes['Queue::tagged $limit(zero)']);
        $this->assertSame('array', $outcomes['Queue::recent $tag(null)']);
        $this->assertSame('ValueError', $outcomes['Queue::recent $tag(empty)']);
        $this->assertSame(
            "RedisLock\\Queue::enqueue(): Argument #5 (\$tags): a tag holds no space or control byte, 'a\\x00b' given",
            $messages['Queue::enqueue a tag(nul bytes)']
        );
        // Control bytes in a refused value are shown escaped: a message reaches terminals.
        $q = (new RedisLock\Client(RedisServer::$main->dsn()))->queue('escaped');
        foreach ([fn () => $q->enqueue('x', null, 0, null, ["x\e[2J\e]0;owned\a"]),
            fn () => $q->enqueue('x', null, 0, null, null, "g\e[2J\u{9b}"),
            fn () => $q->throttle(1, "g\e[2J")] as $call) {
            try {
                $call();
                $this->fail('accepted');
            } catch (ValueError $e) {
                $this->assertDoesNotMatchRegularExpression('/[\x00-\x1f\x7f]|\xc2[\x80-\x9f]/', $e->getMessage());
                $this->assertStringContainsString('\x1b[2J', $e->getMessage());
            }
        }
        // Limits of the listing calls take a number in a string, and say their range.
        $q->enqueue('a');
        $q->enqueue('b');
        $this->assertCount(2, $q->peek('2'));
        $this->assertCount(1, $q->peek(' 1'));
        $l = (new RedisLock\Client(RedisServer::$main->dsn()))->lock('listed');
        $l->acquire();
        $this->assertCount(1, (new RedisLock\Client(RedisServer::$main->dsn()))->locks('listed', '1'));
        $l->release();
        foreach ([[fn () => $q->peek('0'), 'peek(): Argument #1 ($limit) must be between 1 and 1000, 0 given'],
            [fn () => $q->dead('1.5'), "dead(): Argument #1 (\$limit) must be a whole number, '1.5' given"]] as [$call, $expected]) {
            try {
                $call();
                $this->fail('accepted');
            } catch (ValueError $e) {
                $this->assertStringContainsString($expected, $e->getMessage());
            }
        }
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $count(minus one)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $count(max int)']);
        $this->assertSame('boolean', $outcomes['Queue::keepRecent $count(zero)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $seconds(zero)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $seconds(inf)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $seconds(nan)']);
        $this->assertSame('TypeError', $outcomes['Queue::keepRecent $seconds(array)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $maxBytes(zero)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $maxBytes(minus one)']);
        $this->assertSame('ValueError', $outcomes['Queue::keepRecent $maxBytes(max int)']);
        $this->assertSame('boolean', $outcomes['Queue::keepRecent $maxBytes(null)']);
        $this->assertSame('TypeError', $outcomes['Queue::keepRecent $maxBytes(array)']);
        $this->assertSame('array', $outcomes['pop $count(max int)']);
        $this->assertSame('TypeError', $outcomes['Client::lock $name(array)']);
        $this->assertSame('ValueError', $outcomes['Client::forceRelease $name(empty)']);
        $this->assertSame('boolean', $outcomes['Client::forceRelease $name(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Client::forceRelease $kind(empty)']);
        $this->assertSame('TypeError', $outcomes['Client::forceRelease $kind(array)']);
        $this->assertSame('ValueError', $outcomes['Client::lock $name(empty)']);
        $this->assertSame('object', $outcomes['Client::lock $name(nul bytes)']);
        $this->assertSame('TypeError', $outcomes['Client::lock $options(closure)']);
        $this->assertSame('ValueError', $outcomes['Client::lock $options(array)'], 'unknown options 0 and 1');
        $this->assertSame('boolean', $outcomes['Client::lock option ttl(inf)'], 'INF: no expiry');
        $this->assertSame('ValueError', $outcomes['Client::lock option ttl(-inf)']);
        $this->assertSame('ValueError', $outcomes['Client::lock option ttl(nan)']);
        $this->assertSame('boolean', $outcomes['Client::lock option owner(null)'], 'null: no owner');
        $this->assertSame('ValueError', $outcomes['Client::lock option owner(empty)']);
        $this->assertSame('ValueError', $outcomes['Client::lock option owner(huge)']);
        $this->assertSame('TypeError', $outcomes['Client::lock option owner(array)']);
        $this->assertSame('boolean', $outcomes['Client::lock option owner(nul bytes)']);
        $this->assertSame('boolean', $outcomes['Client::lock option owner(invalid utf-8)']);
        $this->assertSame('boolean', $outcomes['Client::lock option exactKey(true)']);
        $this->assertSame('TypeError', $outcomes['Client::lock option exactKey(zero string)']);
        $this->assertSame('TypeError', $outcomes['Client::lock option exactKey(null)']);
        $this->assertSame('boolean', $outcomes['Client::readLock option exactKey(true)']);
        $this->assertSame('TypeError', $outcomes['Client::readLock option exactKey(zero string)']);
        $this->assertSame('boolean', $outcomes['Client::writeLock $name (exactKey)(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Client::writeLock $name (exactKey)(empty)']);
        $this->assertSame('ValueError', $outcomes['Lock::acquire $wait(minus one)']);
        $this->assertSame('ValueError', $outcomes['Lock::acquire $wait(nan)']);
        $this->assertSame('boolean', $outcomes['Lock::acquire $wait(inf)'], 'INF: no limit');
        $this->assertSame('ValueError', $outcomes['Lock::extend $ttl(zero)']);
        $this->assertSame('ValueError', $outcomes['Lock::extend $ttl(max int)']);
        $this->assertSame('boolean', $outcomes['Lock::extend $ttl(null)'], 'null: the lock\'s ttl');
        $this->assertSame('TypeError', $outcomes['Lock::synchronized $fn(nul bytes)']);
        $this->assertSame('integer', $outcomes['Lock::synchronized $fn(closure)']);
        $this->assertSame('ValueError', $outcomes['Lock::synchronized $wait(-inf)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $id(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $id(empty)']);
        $this->assertSame('string', $outcomes['Queue::enqueue $payload(huge)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $delay(minus one)']);
        $this->assertSame('ValueError', $outcomes['Queue::enqueue $policy(empty)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueueMany $tasks(null)']);
        $this->assertSame('TypeError', $outcomes['Queue::enqueueMany $tasks(nested array)']);
        $this->assertSame('ValueError', $outcomes['Queue::reserve $count(max int)']);
        $this->assertSame('TypeError', $outcomes['Queue::reserve $count(float)']);
        $this->assertSame('array', $outcomes['Queue::reserve $wait(inf)'], 'INF: no limit');
        $this->assertSame('TypeError', $outcomes['Queue::ack $task(object)']);
        $this->assertSame('ValueError', $outcomes['Queue::peek $limit(max int)']);
        $this->assertSame('TypeError', $outcomes['Queue::peek $limit(array)']);
        $this->assertSame('NULL', $outcomes['Queue::find $id(nul bytes)']);
        $this->assertSame('ValueError', $outcomes['Queue::find $id(empty)']);
        $this->assertSame('integer', $outcomes['Queue::retryDead $ids(array)']);
        $this->assertSame('TypeError', $outcomes['Queue::purgeDead $ids(zero)']);
        $this->assertSame('integer', $outcomes['Queue::remove $ids(array)']);
        $this->assertSame('TypeError', $outcomes['Queue::remove $ids(null)']);
        $this->assertSame('TypeError', $outcomes['Queue::remove $ids(nested array)']);
        $this->assertSame('TypeError', $outcomes['Queue::bury $task(object)']);
        $this->assertSame('TypeError', $outcomes['Queue::moveTo $to(null)']);
        $this->assertSame('ValueError', $outcomes['Semaphore::asLock $permits(zero)']);
        $this->assertSame('TypeError', $outcomes['Semaphore::asLock $permits(float)']);
        $this->assertSame('TypeError', $outcomes['Queue::moveTo $to(object)']);
        $this->assertSame('TypeError', $outcomes['lock $name(recursive array)']);
        $this->assertSame('ValueError', $outcomes['expire $expire(nan)']);
        $this->assertSame('ValueError', $outcomes['expire $expire(-inf)']);
        $this->assertSame('ValueError', $outcomes['expire $expire(inf)']);
        $this->assertSame('boolean', $outcomes['expire $expire(minus zero)'], 'max(-0.0, 1): 1 s');
        $this->assertSame('boolean', $outcomes['lock $expire(minus zero)'], '-0.0 <= 0: false');
        $this->assertSame('ValueError', $outcomes['Lock::extend $ttl(minus zero)']);
        $this->assertSame('boolean', $outcomes['Lock::extend $ttl(denormal)'], 'rounded up to 1 ms');
        $this->assertSame('TypeError', $outcomes['enqueue $id(recursive array)']);
        $this->assertSame('TypeError', $outcomes['enqueue $id(deep array)']);
        $this->assertSame('ValueError', $outcomes['Client::lock $options(deep array)'], 'unknown option 0');
        $this->assertSame('ValueError', $outcomes['Redlock::__construct $options(recursive array)'], 'unknown option 0');
        $this->assertSame('TypeError', $outcomes['Queue::enqueueMany $tasks(deep array)']);
        // Numbers in messages are written as PHP code writes them.
        $this->assertStringEndsWith(', NAN given', $messages['Lock::acquire $wait(nan)']);
        $this->assertStringEndsWith(', -INF given', $messages['Queue::enqueue $delay(-inf)']);
        $this->assertStringEndsWith(', 9.223372036854776E+18 given', $messages['Lock::extend $ttl(max int)']);
        $this->assertStringEndsWith(', 1.0E+300 given', $messages['Queue::extend $lease(huge float)']);
        // (an int has at most 19 digits; 1e300 was written out in 301)
        foreach ($messages as $case => $message) {
            $this->assertDoesNotMatchRegularExpression('/\b(NaN|inf)\b|\d{20}/', $message, $case);
        }
        foreach ($outcomes as $case => $outcome) {
            $this->assertContains($outcome, ['boolean', 'integer', 'double', 'string', 'array', 'object', 'NULL', 'TypeError', 'ValueError'], $case);
        }
    }

    /** Two prefixes that differ only in non-UTF-8 bytes are two namespaces. */
    /**
     * Every `int` parameter of the extension (found by reflection, so a new
     * one fails here until it is listed) takes a numeric string as PHP's
     * own functions do: '5' is 5, '5.5' is a ValueError, 'five' a TypeError.
     */
    public function testEveryIntegerParameterTakesANumericString(): void
    {
        $c = fn () => new RedisLock\Client(RedisServer::$main->dsn());
        $q = fn () => $c()->queue('ints');
        $limiter = fn () => $c()->limiter('ints', ['limit' => 10, 'per' => 60]);
        $stock = function () use ($c) {
            $s = $c()->stock('ints');
            $s->set(100);
            return $s;
        };
        $calls = [
            'Batches::addJobs $jobs' => fn ($v) => $c()->batches('ints')->addJobs('none', $v),
            'Batches::list $limit' => fn ($v) => $c()->batches('ints')->list($v),
            'Client::attempt $cost' => fn ($v) => $c()->attempt([$limiter()], $v),
            'Client::locks $limit' => fn ($v) => $c()->locks(null, $v),
            'Client::reserve $count' => fn ($v) => $c()->reserve([$q()], $v),
            'Client::semaphore $permits' => fn ($v) => $c()->semaphore('ints', $v),
            'Limiter::attempt $cost' => fn ($v) => $limiter()->attempt('k', $v),
            'Limiter::peek $cost' => fn ($v) => $limiter()->peek('k', $v),
            'Limiter::wait $cost' => fn ($v) => $limiter()->wait('k', 0, $v),
            'Queue::dead $limit' => fn ($v) => $q()->dead($v),
            'Queue::groups $limit' => fn ($v) => $q()->groups($v),
            'Queue::keepRecent $count' => fn ($v) => $q()->keepRecent($v),
            'Queue::keepRecent $maxBytes' => fn ($v) => $q()->keepRecent(5, 60, $v),
            'Queue::leased $limit' => fn ($v) => $q()->leased($v),
            'Queue::peek $limit' => fn ($v) => $q()->peek($v),
            'Queue::recent $limit' => fn ($v) => $q()->recent($v),
            'Queue::reserve $count' => fn ($v) => $q()->reserve($v),
            'Queue::setGroupConcurrency $concurrency' => fn ($v) => $q()->setGroupConcurrency($v),
            'Queue::setGroupRate $limit' => fn ($v) => $q()->setGroupRate($v),
            'Queue::setGroupRate $burst' => fn ($v) => $q()->setGroupRate(5, 1, $v),
            'Queue::setRate $limit' => fn ($v) => $q()->setRate($v),
            'Queue::setRate $burst' => fn ($v) => $q()->setRate(5, 1, $v),
            'Queue::tagged $limit' => fn ($v) => $q()->tagged('t', $v),
            'Queue::workers $limit' => fn ($v) => $q()->workers($v),
            'Semaphore::acquire $permits' => fn ($v) => $c()->semaphore('ints', 10)->acquire($v),
            'Semaphore::asLock $permits' => fn ($v) => $c()->semaphore('ints', 10)->asLock($v),
            'Stock::giveBack $units' => fn ($v) => $stock()->giveBack($v),
            'Stock::set $units' => fn ($v) => $stock()->set($v),
            'Stock::take $units' => fn ($v) => $stock()->take($v),
        ];
        // The stubs say the types (the extension's arginfo says mixed for a loose parameter).
        $reflected = [];
        $class = null;
        foreach (file(dirname(__DIR__, 2) . '/stubs/redislock.php') as $line) {
            if (preg_match('/^\s*(?:final\s+)?(?:class|interface)\s+(\w+)/', $line, $m)) {
                $class = $m[1];
            } elseif (preg_match('/^\s*public\s+(?:static\s+)?function\s+(\w+)\((.*)\)/', $line, $m)) {
                preg_match_all('/(?:^|,\s*)\??int\s+\$(\w+)/', $m[2], $params);
                foreach ($params[1] as $param) {
                    $reflected[] = "$class::{$m[1]} \$$param";
                }
            }
        }
        // (The interface's own are its classes'.)
        $reflected = array_values(array_filter($reflected, fn ($p) => !str_starts_with($p, 'LockInterface::')));
        $this->assertEqualsCanonicalizing($reflected, array_keys($calls), 'every int parameter of the stubs is tried');
        foreach ($calls as $call => $fn) {
            foreach (['5' => null, '5.5' => ValueError::class, 'five' => TypeError::class, ' 5' => null] as $value => $error) {
                $this->redis->flushAll();
                try {
                    $fn((string) $value);
                    $this->assertNull($error, "$call('$value') is refused");
                } catch (TypeError | ValueError $e) {
                    $this->assertSame($error, get_class($e), "$call('$value'): {$e->getMessage()}");
                    $this->assertStringContainsString('$' . explode(' $', $call)[1], $e->getMessage(), "$call('$value') names its parameter");
                }
            }
        }
    }

    public function testPrefixesAreBytes(): void
    {
        $dsn = RedisServer::$main->dsn();
        $a = new RedisLock(['dsn' => $dsn, 'prefix' => "\xff:"]);
        $b = new RedisLock("$dsn?prefix=%FE%3A");
        $this->assertTrue($a->lock('n'));
        $this->assertTrue($b->lock('n'), 'another namespace');
        $this->assertSame(1, $this->redis->exists("\xff:Lock:n"));
        $this->assertSame(1, $this->redis->exists("\xfe:Lock:n"));
        $out = self::php('ini_set("redislock.prefix", "\xfd:"); (new RedisQueue())->enqueue("q", "i"); echo "ok";');
        $this->assertSame('ok', $out);
        $this->assertSame(1, $this->redis->exists("\xfd:Queue:q"));
        $a->unlockAll();
        $b->unlockAll();
    }

    /** Floats become names exactly as PHP's "Lock:{$name}" writes them. */
    public function testFloatNamesAreConvertedAsPhpConvertsThem(): void
    {
        $lock = new RedisLock();
        foreach ([0.1 + 0.2, 1e25, 1e15, 0.0001, 0.00001, 123456789012345.678, 5e-324, -1.5e-7, 100.0, -2.5] as $f) {
            $this->assertTrue($lock->lock($f), (string) $f);
            $this->assertSame(1, $this->redis->exists("Lock:{$f}"), "Lock:{$f}");
            $this->assertTrue($lock->unlock($f));
        }
        $this->assertSame(1, Lock_Service::addLock(0.1 + 0.2, 60));
        $this->assertSame(1, $this->redis->exists('order_lock_0.3'));
        $old = ini_set('precision', '17');
        try {
            $this->assertTrue($lock->lock(0.1 + 0.2));
            $this->assertSame(1, $this->redis->exists('Lock:0.30000000000000004'));
            ini_set('precision', '-1');
            $this->assertTrue($lock->lock(1e25));
            $this->assertSame(1, $this->redis->exists('Lock:' . 1e25));
        } finally {
            ini_set('precision', $old);
        }
    }

    /**
     * An object with __toString() (a uuid object, a value object) is its
     * string wherever a name, id or payload is a string, as in the seeds'
     * "Lock:{$name}" and in PHP's string parameters; it is not a number,
     * and an object without one is a TypeError that names its class.
     */
    public function testStringableObjectsAreTheirStrings(): void
    {
        $id = new class { public function __toString(): string { return "uuid-7\0x"; } };
        $lock = new RedisLock();
        $this->assertTrue($lock->lock($id, 0, 60));
        $this->assertSame(1, $this->redis->exists("Lock:uuid-7\0x"));
        $this->assertLocking($lock->isLocking($id));
        $this->assertTrue($lock->unlock($id));
        $queue = new RedisQueue();
        $this->assertTrue($queue->enqueue($id, $id));
        $this->assertSame("uuid-7\0x", $queue->pop($id)['id']);
        $this->assertSame(1, Lock_Service::addLock($id, 60));
        $this->assertSame(1, $this->redis->exists("order_lock_uuid-7\0x"));

        $client = new RedisLock\Client();
        $held = $client->lock($id);
        $this->assertTrue($held->acquire());
        $this->assertTrue($client->lockState("uuid-7\0x")['held']);
        $held->release();
        $tasks = $client->queue($id);
        $this->assertSame('added', $tasks->enqueue($id, $id));
        [$task] = $tasks->reserve();
        $this->assertSame(["uuid-7\0x", "uuid-7\0x"], [$task->id(), $task->payload()]);
        $this->assertTrue($tasks->ack($task));

        $five = new class { public function __toString(): string { return '5'; } };
        $this->assertTypeError('$wait) must be of type int|float, class@anonymous given', fn () => $held->acquire($five));
        $this->assertTypeError('$name) must be of type string|int|float, stdClass given', fn () => $client->lock(new stdClass()));
        // An anonymous class is named as PHP names it (its full name goes on
        // after a NUL byte with the declaring file).
        $this->assertTypeError('$name) must be of type string|int|float, class@anonymous given', fn () => $client->lock(new class {}));
        // A __toString() that throws: its exception, as PHP's own string
        // parameters let it through; nothing is written.
        $this->redis->flushDb();
        $throws = new class { public function __toString(): string { throw new LogicException('no name yet'); } };
        foreach ([fn () => $lock->lock($throws), fn () => $queue->enqueue('q', $throws), fn () => $client->lock($throws)] as $call) {
            try {
                $call();
                $this->fail('no exception');
            } catch (LogicException $e) {
                $this->assertSame('no name yet', $e->getMessage());
            }
        }
        $this->assertSame(0, $this->redis->dbSize());
    }

    private function assertTypeError(string $ends, callable $call): void
    {
        try {
            $call();
            $this->fail("no TypeError: $ends");
        } catch (TypeError $e) {
            $this->assertStringEndsWith($ends, $e->getMessage());
        }
    }

    /** The reported crash, as a script runs it: a TypeError, not SIGSEGV. */
    public function testARecursiveArrayIsATypeErrorNotACrash(): void
    {
        $out = self::php('$a = []; $a[] = &$a;
            try { (new RedisLock())->lock($a); } catch (TypeError $e) { echo get_class($e); }
            $d = []; for ($i = 0; $i < 20000; $i++) { $d = [$d]; }
            try { (new RedisQueue())->enqueue("q", $d); } catch (TypeError $e) { echo " ", get_class($e); }', [], $exit);
        $this->assertSame(0, $exit, $out);
        $this->assertSame('TypeError TypeError', $out);
    }

    public function testBinaryAndHugeNamesRoundTrip(): void
    {
        $huge = str_repeat('n', 1 << 20);
        $lock = new RedisLock();
        foreach (["a\0b", "\xff\xfe", $huge] as $name) {
            $this->assertTrue($lock->lock($name));
            $this->assertTrue((bool) $this->redis->exists("Lock:$name"));
            $this->assertLocking($lock->isLocking($name));
            $this->assertTrue($lock->unlock($name));
            $api = (new RedisLock\Client())->lock($name);
            $this->assertTrue($api->acquire());
            $this->assertTrue((bool) $this->redis->exists("lock:{{$name}}"));
            $this->assertTrue($api->isHeld());
            $this->assertTrue($api->release());
            $this->redis->del("lock:{{$name}}:fence");
        }
        $q = new RedisQueue();
        $q->enqueue("q\0", ["id\0x", "\xff"], 10, -1);
        $this->assertSame(["id\0x", "\xff"], array_column($q->pop("q\0", 2), 'id'));
        $this->assertSame([], $this->snapshot());
    }

    /** Array keys that are not UTF-8 are bytes like any id (they were a Rust panic). */
    public function testArrayKeysThatAreNotUtf8AreBytes(): void
    {
        $out = self::php('$c = new RedisLock\Client(); $q = $c->queue("bin");
            var_dump($q->enqueueMany(["\xff\xfe" => "p", "ok" => null, 7 => "seven"]));
            $tasks = $q->reserve(10);
            $ids = array_map(fn ($t) => bin2hex($t->id()) . "=" . $t->payload(), $tasks); sort($ids); echo implode(",", $ids), "\n";
            echo $q->ackMany(["\xff" => $tasks[0], "\xfe" => $tasks[1], 2 => $tasks[2]]), "\n";
            echo count($c->reserve(["\xff" => $q])), "\n";
            try { $c->queue("x", ["\xfflease" => 1]); } catch (ValueError $e) { echo get_class($e), "\n"; }
            try { new RedisLock(["\xffhost" => "x"]); } catch (ValueError $e) { echo get_class($e), "\n"; }
            $s = $c->stock("bin"); $s->set(5); $s->take(2, "\xff\x00b"); echo bin2hex(array_keys($s->buyers())[0]), "\n";', [], $exit);
        $this->assertSame(0, $exit, $out);
        $this->assertStringNotContainsString('panic', $out);
        $this->assertSame(<<<'OUT'
            array(3) {
              ["\xff\xfe"]=>
              string(5) "added"
              ["ok"]=>
              string(5) "added"
              [7]=>
              string(5) "added"
            }
            37=seven,6f6b=,fffe=p
            3
            0
            ValueError
            ValueError
            ff0062

            OUT, str_replace("\xff\xfe", '\xff\xfe', $out));
    }
}
