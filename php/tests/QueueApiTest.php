<?php

use RedisLock\Client;
use RedisLock\Queue;
use RedisLock\QueueFullException;
use RedisLock\RedisLockException;
use RedisLock\Task;

/**
 * The leased queue of the object API: RedisLock\Queue and RedisLock\Task.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class QueueApiTest extends RedisLockTestCase
{
    private function queue(string $name = 'jobs', array $options = []): Queue
    {
        return (new Client())->queue($name, $options);
    }

    public function testEnqueueReserveAckAndTheKeyLayout(): void
    {
        $q = $this->queue();
        $this->assertSame('jobs', $q->name());
        $this->assertSame('added', $q->enqueue('a', "pay\0load"));
        $this->assertSame('added', $q->enqueue('b'));
        $this->assertSame(['a', 'b'], $this->redis->zRange('Queue:jobs', 0, -1), 'the seed layout');
        $this->assertSame("pay\0load", $this->redis->hGet('{Queue:jobs}:payloads', 'a'));

        $tasks = $q->reserve(10, 30);
        $this->assertCount(2, $tasks);
        $this->assertContainsOnlyInstancesOf(Task::class, $tasks);
        [$a, $b] = $tasks;
        $this->assertSame(['a', "pay\0load", 1, 'jobs'], [$a->id(), $a->payload(), $a->attempts(), $a->queue()]);
        $this->assertSame(['b', null, 1], [$b->id(), $b->payload(), $b->attempts()]);
        $this->assertSame([], $q->reserve(), 'both leased');
        $this->assertEqualsWithDelta(time() + 30, $this->redis->zScore('{Queue:jobs}:leased', 'a'), 2);

        $this->assertTrue($q->ack($a));
        $this->assertFalse($q->ack($a), 'acked once');
        $this->assertSame(1, $q->ackMany([$a, $b]), 'only b was still leased');
        $this->assertSame(0, $q->ackMany([]));
        $this->assertSame([], $this->snapshot(), 'nothing left behind');
    }

    /**
     * reserve($count, $lease, $wait, $ack) acks the finished tasks in the
     * same round trip: one script for both, the acks as ackMany() makes them
     * (a stale lease is not acked), before a wait too, and over 1,000 tasks.
     */
    public function testReserveAcksTheFinishedTasksInTheSameRoundTrip(): void
    {
        $q = $this->queue();
        $q->enqueueMany(['a' => null, 'b' => null, 'c' => null]);
        $a = $q->reserve(1, 30);
        $workers = count($q->workers());
        $scripts = $this->scriptCalls();
        $b = $q->reserve(1, 30, 0, $a);
        $calls = $this->scriptCalls() - $scripts;
        // (A process notes itself as a worker of a queue at most every 5 s,
        // in a script of its own: this reserve may be the one that does.)
        $noted = count($q->workers()) - $workers;
        $this->assertSame(1 + $noted, $calls, 'one script acked a and reserved b');
        $this->assertSame(['b'], array_map(fn ($t) => $t->id(), $b));
        $this->assertNull($q->find('a'), 'a is done');
        $this->assertFalse($q->ack($a[0]), 'a was acked already');
        $this->assertSame(['b'], array_column($q->leased(), 'id'));

        // A stale lease is not acked: c went to another worker after its lease ran out.
        $c = $q->reserve(1, 0.2, 0, $b);
        usleep(300000);
        $again = $q->reserve(1, 30);
        $this->assertSame(['c', 2], [$again[0]->id(), $again[0]->attempts()], 'c, to another worker');
        $this->assertSame([], $q->reserve(1, 30, 0, $c));
        $this->assertSame(['c'], array_column($q->leased(), 'id'), 'the stale ack left c to its new worker');
        $this->assertSame([], $q->reserve(1, 30, 0.2, $again), 'acked before a wait that found nothing');
        $this->assertSame([], $this->snapshot(), 'nothing left behind');

        // Over 1,000 at once: all acked, the last 1,000 with the reserve.
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 1001)), null));
        $many = array_merge($q->reserve(1000), $q->reserve(1));
        $q->enqueue('next');
        $this->assertSame(['next'], array_map(fn ($t) => $t->id(), $q->reserve(1, 30, 0, $many)));
        $this->assertSame(['next'], array_column($q->leased(), 'id'), 'the 1,001 were acked');
        $this->assertSame([], $q->reserve(ack: []), 'an empty list acks nothing');
        $this->assertSame(['next'], array_column($q->leased(), 'id'));
    }

    /**
     * Four workers drain 2,000 tasks with reserve(..., $ack) alone: every
     * task runs once, and nothing is left.
     */
    public function testWorkersAckingWithTheirNextReserveRunEachTaskOnce(): void
    {
        $total = 2000;
        $q = $this->queue('drain2');
        foreach (array_chunk(range(1, $total), 1000) as $chunk) {
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", $chunk), null));
        }
        $worker = '
            $q = (new RedisLock\Client())->queue("drain2");
            $done = [];
            while ($tasks = $q->reserve(1, 30, 0.3, $done)) {
                foreach ($tasks as $task) { echo $task->id(), "\n"; }
                $done = $tasks;
            }';
        $procs = [];
        for ($i = 0; $i < 4; $i++) {
            $procs[] = proc_open(self::command($worker), [1 => ['pipe', 'w']], $pipes);
            $outs[] = $pipes[1];
        }
        $ran = [];
        foreach ($procs as $i => $p) {
            $ran = array_merge($ran, array_filter(explode("\n", stream_get_contents($outs[$i]))));
            proc_close($p);
        }
        $this->assertCount($total, $ran);
        $this->assertCount($total, array_unique($ran), 'each task ran once');
        $this->assertSame(['ready' => 0, 'leased' => 0], array_intersect_key($q->metrics(), ['ready' => 1, 'leased' => 1]));
    }

    public function testPoliciesAndBatchResults(): void
    {
        $q = $this->queue();
        $this->assertSame('added', $q->enqueue('t', 'first', 100));
        $this->assertSame('ignored', $q->enqueue('t', 'second', 50), 'keep is the default');
        $this->assertSame('ignored', $q->enqueue('t', 'later', 200, 'earliest'));
        $this->assertSame('updated', $q->enqueue('t', 'earlier', 50, 'earliest'));
        $this->assertSame('ignored', $q->enqueue('t', 'earlier still', 10, 'latest'));
        $this->assertSame('updated', $q->enqueue('t', 'latest', 300, 'latest'));
        $this->assertSame('updated', $q->enqueue('t', 'now', 0, 'replace'));
        $this->assertSame('now', $q->reserve()[0]->payload());

        $this->assertSame(['x' => 'added', 7 => 'added', 't' => 'added'],
            $q->enqueueMany(['x' => 'p', 7 => null, 't' => 'again']), 't was leased, not queued');
        $this->assertSame(['x' => 'updated', 'y' => 'added'], $q->enqueueMany(['x' => null, 'y' => 'q'], 0, 'replace'));
        $this->assertSame([], $q->enqueueMany([]));
        $this->assertFalse($this->redis->hExists('{Queue:jobs}:payloads', 'x'), 'replaced without payload');
        try {
            $q->enqueue('t', null, 0, 'newest');
            $this->fail('unknown policy');
        } catch (ValueError $e) {
            $this->assertStringContainsString("'keep', 'replace', 'earliest' or 'latest'", $e->getMessage());
        }
    }

    public function testAnExpiredLeaseGoesToTheNextWorkerAndTheStaleAckIsRefused(): void
    {
        $q = $this->queue();
        $q->enqueue('job', 'p');
        [$first] = $q->reserve(1, 0.1);
        usleep(200000);
        [$second] = $q->reserve(1, 30);
        $this->assertSame(['job', 2, 'p'], [$second->id(), $second->attempts(), $second->payload()]);
        $this->assertFalse($q->ack($first), 'the lease ran out and was handed on');
        $this->assertFalse($q->nack($first));
        $this->assertFalse($q->extend($first, 60));
        $this->assertTrue($q->extend($second, 60));
        $this->assertGreaterThan(time() + 50, $this->redis->zScore('{Queue:jobs}:leased', 'job'));
        $this->assertTrue($q->ack($second));
    }

    /**
     * A lease that ran out is its worker's until a reserve() settles it: a
     * late ack() or extend() before that still counts, and the task does
     * not run a second time.
     */
    public function testALeaseThatRanOutIsTheWorkersUntilAReserveSettlesIt(): void
    {
        $q = $this->queue();
        $q->enqueueMany(['acked' => null, 'extended' => null]);
        [$acked, $extended] = $q->reserve(2, 0.1);
        usleep(200000);
        $this->assertTrue($q->ack($acked), 'nobody has it yet');
        $this->assertTrue($q->extend($extended, 30), 'nobody has it yet');
        $this->assertSame([], $q->reserve(2), 'neither runs again');
        $this->assertSame(['extended'], array_column($q->leased(), 'id'));
        $this->assertSame(['acked' => 1, 'expired' => 0], array_intersect_key($q->metrics()['totals'], ['acked' => 0, 'expired' => 0]));
        $this->assertTrue($q->ack($extended));
    }

    public function testAPoisonTaskLandsInTheDeadLettersAndComesBackOnRetry(): void
    {
        $q = $this->queue('poison', ['maxAttempts' => 3]);
        $q->enqueue('bad', 'boom');
        for ($i = 1; $i <= 3; $i++) {
            $tasks = $q->reserve();
            $this->assertCount(1, $tasks, "attempt $i");
            $this->assertSame($i, $tasks[0]->attempts());
            $this->assertTrue($q->nack($tasks[0]));
        }
        $this->assertSame([], $q->reserve());
        $dead = $q->dead();
        $this->assertCount(1, $dead);
        $this->assertSame(['bad', 'boom', 3], [$dead[0]['id'], $dead[0]['payload'], $dead[0]['attempts']]);
        $this->assertEqualsWithDelta(microtime(true), $dead[0]['diedAt'], 5);
        $this->assertSame([
            'ready' => 0, 'delayed' => 0, 'leased' => 0, 'dead' => 1, 'oldestDueAge' => null, 'paused' => null, 'throttled' => null, 'groups' => 0, 'waiting' => 0,
            // Two nacks back to the queue, the third one to the dead letters.
            'totals' => ['enqueued' => 1, 'acked' => 0, 'nacked' => 2, 'retried' => 0, 'dead' => 1, 'expired' => 0],
        ], $q->metrics());

        $this->assertSame(0, $q->retryDead(['nope']));
        $this->assertSame(1, $q->retryDead(['bad']));
        [$again] = $q->reserve();
        $this->assertSame([1, 'boom'], [$again->attempts(), $again->payload()], 'attempts reset');
        $this->assertTrue($q->nack($again, 100));
        $this->assertSame(1, $q->metrics()['delayed'], 'nack with a delay');

        $q->enqueue('worse');
        foreach (range(1, 3) as $_) {
            $q->reserve(1, 0.05);
            usleep(100000); // the worker "died": its lease runs out
        }
        $this->assertSame([], $q->reserve());
        $this->assertSame(['worse'], array_column($q->dead(), 'id'), 'dead by lease expiry too');
        $this->assertSame(1, $q->purgeDead());
        $this->assertSame([], $q->dead());
    }

    public function testDelayedTasksAreDueByTheServerClockAndABlockedReserveWakesThen(): void
    {
        $q = $this->queue();
        $q->enqueue('later', null, 0.5);
        $this->assertSame([], $q->reserve());
        $m = $q->metrics();
        $this->assertSame([0, 1], [$m['ready'], $m['delayed']]);
        $t = microtime(true);
        $tasks = $q->reserve(1, null, 10);
        $waited = microtime(true) - $t;
        $this->assertCount(1, $tasks);
        $this->assertGreaterThan(0.3, $waited, 'not before its due time');
        $this->assertLessThan(10, $waited, 'woken at the due time, not at the end of the wait');
    }

    public function testABlockedReserveOnSeveralQueuesWakesOnAnEnqueue(): void
    {
        $client = new Client();
        [$a, $b] = [$client->queue('a'), $client->queue('b')];
        $p = proc_open(self::command('usleep(300000); (new RedisLock\Client())->queue("b")->enqueue("hello", "world");'),
            [], $pipes);
        $t = microtime(true);
        $tasks = $client->reserve([$a, $b], 1, null, 20);
        $this->assertLessThan(10, microtime(true) - $t);
        proc_close($p);
        $this->assertCount(1, $tasks);
        $this->assertSame(['b', 'hello', 'world'], [$tasks[0]->queue(), $tasks[0]->id(), $tasks[0]->payload()]);
        $this->assertTrue($b->ack($tasks[0]));
        try {
            $a->ack($tasks[0]);
            $this->fail('acked on the wrong queue');
        } catch (ValueError $e) {
            $this->assertStringContainsString("belongs to queue 'b'", $e->getMessage());
        }
        $this->assertSame([], $client->reserve([$a, $b], 1, null, 0.1));
    }

    /** Each queue's own lease and maxAttempts apply to its tasks (they were the first queue's). */
    public function testReservingFromSeveralQueuesKeepsEachQueuesTerms(): void
    {
        $client = new Client();
        $a = $client->queue('terms-a', ['lease' => 60, 'maxAttempts' => 5]);
        $b = $client->queue('terms-b', ['lease' => 0.05, 'maxAttempts' => 1]);
        $b->enqueue('t', 'p');
        $task = $client->reserve([$a, $b])[0];
        $this->assertSame('terms-b', $task->queue());
        usleep(100000);
        $this->assertSame([], $client->reserve([$a, $b]), "b's lease ran out and its one attempt was used");
        $this->assertSame('t', $b->dead()[0]['id']);
        $left = $this->redis->zScore('{Queue:terms-b}:leased', 't');
        $this->assertFalse($left);
        // An explicit lease is for every queue.
        $b->retryDead();
        $task = $client->reserve([$a, $b], 1, 30)[0];
        $this->assertGreaterThan(microtime(true) + 20, $b->find('t')['at']);
        $this->assertTrue($b->ack($task));
    }

    /** An id enqueued while its task runs runs once more after it, never beside it. */
    public function testAnIdEnqueuedWhileItRunsRunsAfterNotBeside(): void
    {
        $q = $this->queue('again');
        $q->enqueue('report', 'v1');
        [$running] = $q->reserve();
        $this->assertSame('added', $q->enqueue('report', 'v2'));
        $this->assertSame([], $q->reserve(), 'not handed to a second worker');
        $this->assertTrue($q->extend($running));
        $this->assertTrue($q->ack($running), 'the first worker keeps its lease');
        [$next] = $q->reserve();
        $this->assertSame(['v2', 1], [$next->payload(), $next->attempts()]);
        $this->assertTrue($q->ack($next));
    }

    public function testABatchOverAThousandIsEnqueuedInChunksEachWhole(): void
    {
        $q = $this->queue('chunks', ['maxLength' => 1500]);
        $tasks = [];
        for ($i = 0; $i < 2500; $i++) {
            $tasks["t$i"] = null;
        }
        try {
            $q->enqueueMany($tasks);
            $this->fail('enqueued past maxLength');
        } catch (QueueFullException $e) {
            $this->assertStringContainsString('the first 1000 of the 2500 tasks were enqueued, the others not', $e->getMessage());
        }
        $this->assertSame(1000, $this->redis->zCard('Queue:chunks'));
        $ids = array_map(fn ($i) => "s$i", range(1, 2500));
        $this->assertTrue((new RedisQueue())->enqueue('seed-chunks', $ids));
        $this->assertSame(2500, $this->redis->zCard('Queue:seed-chunks'));
    }

    public function testAMaximumLengthRefusesEnqueuesClearly(): void
    {
        $q = $this->queue('bounded', ['maxLength' => 2]);
        $this->assertSame(['a' => 'added', 'b' => 'added'], $q->enqueueMany(['a' => null, 'b' => null]));
        $this->assertSame('ignored', $q->enqueue('a'), 'an id already queued is no growth');
        try {
            $q->enqueueMany(['c' => null, 'd' => null]);
            $this->fail('enqueued past maxLength');
        } catch (QueueFullException $e) {
            $this->assertInstanceOf(RedisLockException::class, $e);
            $this->assertStringContainsString("queue 'bounded' is full", $e->getMessage());
        }
        $this->assertSame(2, $this->redis->zCard('Queue:bounded'), 'nothing of the batch was added');
        $q->ack($q->reserve()[0]);
        // Room for one, a batch of two new ones: the message says so.
        try {
            $q->enqueueMany(['c' => null, 'd' => null, 'b' => null]);
            $this->fail('enqueued past maxLength');
        } catch (QueueFullException $e) {
            $this->assertSame("redislock: queue 'bounded' has room for 1 more task (at most 2), fewer than the batch adds; nothing was enqueued", $e->getMessage());
        }
        $this->assertSame('added', $q->enqueue('c'));
        try {
            $q->enqueue('d');
            $this->fail('enqueued past maxLength');
        } catch (QueueFullException $e) {
            $this->assertSame("redislock: queue 'bounded' is full: 2 tasks of at most 2; nothing was enqueued", $e->getMessage());
        }
    }

    /**
     * A queue's terms go with its tasks: the `maxAttempts` and `lease` a
     * producer was given are stored with the queue, and a worker built
     * with the defaults follows them (it ran the task 5 times where the
     * producer said once). A worker's own terms win over the stored ones.
     */
    public function testAProducersTermsGoWithItsTasks(): void
    {
        $producer = $this->queue('mail', ['maxAttempts' => 1, 'lease' => 120]);
        $producer->enqueueMany(['a' => null, 'b' => null]);
        $worker = $this->queue('mail');
        $a = $worker->reserve()[0];
        $this->assertEqualsWithDelta(120, $worker->leased()[0]['until'] - microtime(true), 5, "the producer's lease");
        $this->assertTrue($worker->nack($a));
        $this->assertSame(['a'], array_column($worker->dead(), 'id'), "dead after the producer's one attempt");

        // Expired leases are settled on the producer's terms too.
        $short = $this->queue('mail', ['lease' => 0.05]);
        $this->assertSame('b', $short->reserve()[0]->id());
        usleep(100000);
        $this->assertSame([], $worker->reserve(), 'b is out of attempts');
        $this->assertSame(['a', 'b'], array_column($worker->dead(), 'id'));

        // A worker given its own maxAttempts keeps it.
        $own = $this->queue('mail', ['maxAttempts' => 3]);
        $producer->enqueue('c');
        $this->assertTrue($own->nack($own->reserve()[0]));
        $this->assertSame('queued', $own->find('c')['state'], 'its own 3 attempts');
        $this->assertSame(['maxAttempts' => '1', 'lease' => '120'], $this->redis->hMGet('{Queue:mail}:stats', ['maxAttempts', 'lease']));

        // A producer without terms of its own stores none: the defaults.
        $plain = $this->queue('plain');
        $plain->enqueue('p');
        $this->assertFalse($this->redis->hExists('{Queue:plain}:stats', 'maxAttempts'));
        $this->assertCount(1, $plain->reserve());
        $this->assertEqualsWithDelta(30, $plain->leased()[0]['until'] - microtime(true), 5);
    }

    /**
     * Retrying dead letters counts toward `maxLength` as an enqueue does:
     * the retry stops at the first that finds no room (the older ones go
     * back, the rest stay dead), for the given ids and for all of them.
     */
    public function testRetryingDeadLettersKeepsTheMaximumLength(): void
    {
        $q = $this->queue('bounded', ['maxLength' => 3, 'maxAttempts' => 1]);
        foreach (['d1', 'd2', 'd3'] as $id) {
            $q->enqueue($id);
            $q->nack($q->reserve()[0]);
            usleep(1000);
        }
        $q->enqueueMany(['a' => null, 'b' => null]);
        try {
            $q->retryDead();
            $this->fail('retried past maxLength');
        } catch (QueueFullException $e) {
            $this->assertSame("redislock: queue 'bounded' is full: 3 tasks of at most 3; 1 dead letter(s) retried before, the rest stay dead", $e->getMessage());
        }
        $this->assertSame(['d2', 'd3'], array_column($q->dead(), 'id'), 'the oldest went back');
        $this->assertSame(3, $this->redis->zCard('Queue:bounded'));
        try {
            $q->retryDead(['d3']);
            $this->fail('retried past maxLength');
        } catch (QueueFullException $e) {
            $this->assertStringContainsString('0 dead letter(s) retried before', $e->getMessage());
        }
        $this->assertCount(2, $q->dead());
        $q->ack($q->reserve()[0]);
        $this->assertSame(1, $q->retryDead(['d3', 'nope']));
        $this->assertSame(['d2'], array_column($q->dead(), 'id'));
    }

    /**
     * `moveTo()` refuses the queue itself (whatever object or address names
     * it) before anything changes, stops at the destination's `maxLength`
     * with nothing of that batch moved, and treats names that look like
     * another queue's keys as names.
     */
    public function testMovingRefusesItselfAndAFullDestination(): void
    {
        $q = $this->queue('mail');
        $q->enqueueMany(['a' => 'pa', 'b' => 'pb', 'c' => 'pc']);
        foreach ([$q, (new Client(RedisServer::$main->dsn() . '?prefix='))->queue('mail')] as $itself) {
            try {
                $q->moveTo($itself);
                $this->fail('moved to itself');
            } catch (\ValueError $e) {
                $this->assertSame("RedisLock\\Queue::moveTo(): Argument #1 (\$to) is queue 'mail' itself (the same server, database and keys): nothing was moved", $e->getMessage());
            }
        }
        $this->assertSame(3, $q->metrics()['ready']);
        $this->assertNull($q->metrics()['paused']);

        $small = $this->queue('small', ['maxLength' => 2]);
        $small->enqueue('x');
        try {
            $q->moveTo($small);
            $this->fail('moved past maxLength');
        } catch (QueueFullException $e) {
            $this->assertSame("redislock: queue 'small' is full: 1 tasks of at most 2; 0 task(s) of queue 'mail' moved before, the rest stay", $e->getMessage());
        }
        $this->assertSame([3, 1], [$q->metrics()['ready'], $small->metrics()['ready']]);
        $this->assertNull($q->metrics()['paused'], 'resumed');

        foreach (['mail:dead', '{mail}:leases', "m\0a{i}l"] as $name) {
            $other = $this->queue($name);
            $this->assertSame(3, $q->moveTo($other), $name);
            $this->assertSame(['a', 'b', 'c'], array_column($other->peek(), 'id'));
            $this->assertSame(3, $other->moveTo($q));
        }
        $this->assertSame(['pa', 'pb', 'pc'], array_column($q->peek(), 'payload'));
    }

    public function testMetricsMatchTheGroundTruth(): void
    {
        $q = $this->queue();
        $q->enqueueMany(['r1' => null, 'r2' => null, 'r3' => null]);
        $q->enqueueMany(['d1' => null, 'd2' => null], 60);
        usleep(100000);
        $q->reserve(1);
        $m = $q->metrics();
        $this->assertSame([2, 2, 1, 0], [$m['ready'], $m['delayed'], $m['leased'], $m['dead']]);
        $this->assertGreaterThan(0.05, $m['oldestDueAge']);
        $this->assertLessThan(5, $m['oldestDueAge']);
        $this->assertSame(4, $this->redis->zCard('Queue:jobs'));
        $this->assertSame(1, $this->redis->zCard('{Queue:jobs}:leased'));
    }

    public function testTheSeedQueueAndOldUserlandWorkersShareTheQueue(): void
    {
        $seed = new RedisQueue();
        $q = $this->queue('shared');
        $seed->enqueue('shared', ['s1', 's2']);
        $this->redis->zAdd('Queue:shared', ['NX'], microtime(true) - 1, 'old-userland');
        $ids = array_map(fn (Task $t) => $t->id(), $q->reserve(10));
        sort($ids);
        $this->assertSame(['old-userland', 's1', 's2'], $ids);

        $q->enqueue('n1');
        $this->assertSame('n1', $seed->pop('shared')['id']);
        $this->assertSame(0.0 + 0, (float) $this->redis->zCard('Queue:shared'));
    }

    public function testOptionsAndArgumentsAreChecked(): void
    {
        $client = new Client();
        foreach ([
            [['lease' => 0], ValueError::class], [['maxAttempts' => -1], ValueError::class],
            [['maxLength' => 'five'], TypeError::class], [['maxLength' => '5.5'], ValueError::class], [['leese' => 1], ValueError::class],
        ] as [$options, $class]) {
            try {
                $client->queue('q', $options);
                $this->fail(var_export($options, true));
            } catch (TypeError | ValueError $e) {
                $this->assertInstanceOf($class, $e);
            }
        }
        $q = $client->queue('q');
        foreach ([fn () => $q->reserve(0), fn () => $q->reserve(1001), fn () => $q->enqueue(''),
                  fn () => $q->enqueue('i', null, -1), fn () => $q->reserve(1, -1), fn () => $q->dead(0),
                  fn () => $q->retryDead([]), fn () => $client->reserve([])] as $i => $call) {
            try {
                $call();
                $this->fail("call $i accepted");
            } catch (ValueError) {
            }
        }
        $this->expectException(TypeError::class);
        $client->reserve(['not a queue']);
    }

    /**
     * 8 workers drain 5,000 tasks while the test SIGKILLs them at random,
     * often between reserve and ack, and starts new ones: in the end every
     * task was processed and acked once, none is left or lost, and a task
     * was handed out again only after the worker holding it was killed.
     */
    public function testKilledWorkersLoseNothing(): void
    {
        $q = $this->queue('drain', ['maxAttempts' => 0]);
        foreach (array_chunk(range(1, 5000), 1000) as $chunk) {
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", $chunk), null));
        }
        $this->assertKilledWorkersLoseNothing(5000, 25);
    }

    /** The same with the tasks in groups (and some in none), which reserve() takes in turn. */
    public function testKilledWorkersLoseNothingOfAGroupedQueue(): void
    {
        $q = $this->queue('drain', ['maxAttempts' => 0]);
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 1000)), null), 0, null, null, 'big');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1001, 1100)), null), 0, null, null, 'small');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1101, 1150)), null));
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1151, 1500)), null), 0, null, ['x'], 'big');
        $this->assertSame('small', $q->find('t1001')['group']);
        $this->assertNull($q->find('t1101')['group'], "in the queue's default group");
        $this->assertKilledWorkersLoseNothing(1500, 12);
        $this->assertSame([], $this->redis->keys('{Queue:drain}:group*'), 'the groups go with their last task');
    }

    /**
     * 8 workers drain the queue 'drain' of its $total tasks while the test
     * SIGKILLs $kills of them at random (see testKilledWorkersLoseNothing).
     */
    private function assertKilledWorkersLoseNothing(int $total, int $kills): void
    {
        $log = tempnam(sys_get_temp_dir(), 'drain');
        $worker = '
            $q = (new RedisLock\Client())->queue("drain", ["lease" => 1, "maxAttempts" => 0]);
            $log = fopen(getenv("DRAIN_LOG"), "a");
            $pid = getmypid();
            while (true) {
                $tasks = $q->reserve(1, null, 0.5);
                if (!$tasks) {
                    $m = $q->metrics();
                    if ($m["ready"] + $m["delayed"] + $m["leased"] === 0) { break; }
                    continue;
                }
                fwrite($log, "R {$tasks[0]->id()} $pid\n");
                usleep(5000); // the work
                fwrite($log, "W {$tasks[0]->id()} $pid\n");
                if ($q->ack($tasks[0])) { fwrite($log, "A {$tasks[0]->id()} $pid\n"); }
            }';
        putenv("DRAIN_LOG=$log");
        $spawn = function () use ($worker) {
            $p = proc_open(self::command($worker), [], $pipes);
            return [$p, proc_get_status($p)['pid']];
        };
        $workers = [];
        for ($i = 0; $i < 8; $i++) {
            $workers[] = $spawn();
        }
        $killed = [];
        $deadline = microtime(true) + 120;
        while ($workers && microtime(true) < $deadline) {
            usleep(random_int(50000, 150000));
            foreach ($workers as $i => [$p, $pid]) {
                if (!proc_get_status($p)['running']) {
                    proc_close($p);
                    unset($workers[$i]);
                }
            }
            if ($workers && count($killed) < $kills) {
                // A worker in the midst of a task's work, when one is (its
                // last line says it reserved a task, not yet that it worked
                // it, so it has not acked it): a kill between tasks proves
                // less, and once the queue is drained every kill would be one.
                $last = [];
                foreach (file($log, FILE_IGNORE_NEW_LINES) as $line) {
                    // (The last line may be half written.)
                    if (substr_count($line, ' ') === 2) {
                        [$kind, , $pid] = explode(' ', $line);
                        $last[(int) $pid] = $kind;
                    }
                }
                $busy = array_filter($workers, fn ($w) => ($last[$w[1]] ?? '') === 'R');
                $i = array_rand($busy ?: $workers);
                proc_terminate($workers[$i][0], 9);
                proc_close($workers[$i][0]);
                $killed[] = $workers[$i][1];
                unset($workers[$i]);
                $workers[] = $spawn();
            }
        }
        $this->assertSame([], $workers, 'the workers finished');
        $acked = $reserved = $worked = [];
        $lastHolder = [];
        $unexplained = 0;
        foreach (file($log, FILE_IGNORE_NEW_LINES) as $line) {
            [$kind, $id, $pid] = explode(' ', $line);
            if ($kind === 'R') {
                // Handed out again: only if the previous holder was killed.
                if (isset($lastHolder[$id]) && !in_array((int) $lastHolder[$id], $killed, true)) {
                    $unexplained++;
                }
                $lastHolder[$id] = $pid;
                $reserved[$id] = ($reserved[$id] ?? 0) + 1;
            } elseif ($kind === 'W') {
                $worked[$id] = true;
            } else {
                $acked[$id] = ($acked[$id] ?? 0) + 1;
            }
        }
        unlink($log);
        $this->assertCount($kills, $killed);
        $this->assertCount($total, $worked, 'every task processed');
        $this->assertSame([1], array_values(array_unique($acked)), 'no task acked twice');
        // A worker killed between its ack and its log line leaves no "A": the
        // task is gone from Redis (checked below), and its holder was killed.
        foreach (array_diff_key($worked, $acked) as $id => $_) {
            $this->assertContains((int) $lastHolder[$id], $killed, "$id: acked by a killed worker");
        }
        $this->assertSame(0, $unexplained);
        $this->assertGreaterThan(0, count(array_filter($reserved, fn ($n) => $n > 1)), 'some kills hit a task in flight');
        $this->assertNothingLeftOnceKilledWaitersExpire();
    }

    public function testTheWorkerExampleDrainsAQueue(): void
    {
        $example = dirname(__DIR__) . '/examples/worker.php';
        $dsn = RedisServer::$main->dsn();
        // command() ends with -r <code>: drop it to run the file instead.
        $php = array_slice(self::command(''), 0, -2);
        $cmd = implode(' ', array_map('escapeshellarg', $php)) . ' ' . escapeshellarg($example);
        shell_exec("$cmd mail " . escapeshellarg($dsn) . ' --produce 6');
        $out = shell_exec("WORKER_IDLE_EXIT=0.5 $cmd mail " . escapeshellarg($dsn));
        $this->assertSame(6, substr_count($out, 'done mail-'), $out);
        $this->assertStringContainsString('0 ready, 0 delayed, 0 leased, 0 dead', $out);
        $this->assertSame([], $this->snapshot());
    }

    public function testPeekAndFindLookWithoutTaking(): void
    {
        $q = (new RedisLock\Client())->queue('look', ['maxAttempts' => 1]);
        $q->enqueue('later', 'L', 60);
        $q->enqueue("now\0", 'N');
        $q->enqueue('bare');
        $peeked = $q->peek();
        $this->assertSame(["now\0", 'bare', 'later'], array_column($peeked, 'id'), 'due first');
        $this->assertSame(['N', null, 'L'], array_column($peeked, 'payload'));
        $this->assertSame(['queued'], array_unique(array_column($peeked, 'state')));
        $this->assertGreaterThan($peeked[0]['at'] + 59, $peeked[2]['at']);
        $this->assertCount(1, $q->peek(1));
        $this->assertSame(3, $q->metrics()['ready'] + $q->metrics()['delayed'], 'nothing taken');

        [$task] = $q->reserve();
        $leased = $q->find("now\0");
        $this->assertSame(['leased', 1, 'N'], [$leased['state'], $leased['attempts'], $leased['payload']]);
        $this->assertGreaterThan(microtime(true) + 20, $leased['at'], 'the lease ends in 30 s');
        $q->nack($task);
        $this->assertSame('dead', $q->find("now\0")['state'], 'out of attempts');
        $this->assertNull($q->find('never'));
        $this->assertSame(['bare', 'later'], array_column($q->peek(), 'id'));
    }

    public function testAFailuresReasonIsKeptWithTheTaskAndGoesWithItToTheDeadLetters(): void
    {
        $q = $this->queue('why', ['maxAttempts' => 3]);
        $q->enqueue('a', 'p');
        [$t] = $q->reserve();
        $this->assertNull($q->find('a')['reason'], 'no failure yet');
        $this->assertTrue($q->nack($t, 0, "RuntimeException: smtp down\0"));
        $this->assertSame("RuntimeException: smtp down\0", $q->find('a')['reason'], 'binary safe');
        $this->assertSame("RuntimeException: smtp down\0", $q->peek()[0]['reason']);
        [$t] = $q->reserve();
        $this->assertSame("RuntimeException: smtp down\0", $q->find('a')['reason'], 'still the last failure while it runs again');
        $this->assertTrue($q->nack($t));
        $this->assertNull($q->find('a')['reason'], 'a failure without a reason is the last one');
        [$t] = $q->reserve();
        $this->assertTrue($q->nack($t, 0, 'third'));
        $dead = $q->dead();
        $this->assertSame(['a', 3, 'third'], [$dead[0]['id'], $dead[0]['attempts'], $dead[0]['reason']]);
        $this->assertSame('third', $q->find('a')['reason']);

        // The same id runs again beside its dead letter: each keeps its own.
        $q->enqueue('a', 'q');
        [$t] = $q->reserve();
        $this->assertTrue($q->nack($t, 0, 'fresh'));
        $this->assertSame('fresh', $q->find('a')['reason']);
        $this->assertSame('third', $q->dead()[0]['reason']);
        [$t] = $q->reserve();
        $this->assertTrue($q->ack($t));
        $this->assertSame('third', $q->dead()[0]['reason'], 'the ack ends the live failure only');
        $this->assertSame(1, $q->retryDead());
        $this->assertNull($q->find('a')['reason'], 'a retried dead letter starts afresh');
        [$t] = $q->reserve();
        $this->assertTrue($q->ack($t));
        $this->assertSame([], $this->snapshot(), 'no reason left behind');

        // A lease that runs out says so; bury takes a reason; '' is none.
        $q->enqueue('b');
        $q->reserve(1, 0.05);
        usleep(100000);
        [$t] = $q->reserve();
        $this->assertSame('lease ran out', $q->find('b')['reason']);
        $this->assertTrue($q->bury($t, 'JsonException: Syntax error'));
        $q->enqueue('c');
        [$c] = $q->reserve();
        $this->assertTrue($q->bury($c, ''));
        $this->assertSame(['b' => 'JsonException: Syntax error', 'c' => null], array_column($q->dead(), 'reason', 'id'));

        // Long reasons keep their first 1000 bytes, never half a character.
        $q = $this->queue('why', ['maxAttempts' => 0]);
        $q->enqueue('d');
        [$d] = $q->reserve();
        $this->assertTrue($q->nack($d, 0, str_repeat('é', 600)));
        $this->assertSame(str_repeat('é', 500), $q->find('d')['reason']);
        [$d] = $q->reserve();
        $this->assertTrue($q->nack($d, 0, str_repeat("\xff", 1200)));
        $this->assertSame(1000, strlen($q->find('d')['reason']), 'not UTF-8: cut at 1000 bytes');
        [$d] = $q->reserve();
        $this->assertTrue($q->nack($d, 0, 'dé' . str_repeat('x', 997) . 'é'));
        $this->assertSame('dé' . str_repeat('x', 997), $q->find('d')['reason'], 'cut before the character at byte 1000');

        // A rerun enqueued while the task ran replaces its retry, and its failure.
        [$d] = $q->reserve();
        $q->enqueue('d', 'new');
        $this->assertTrue($q->nack($d, 0, 'old run failed'));
        $this->assertSame(['queued', 'new', null, 0], [$q->find('d')['state'], $q->find('d')['payload'], $q->find('d')['reason'], $q->find('d')['attempts']]);
        $this->assertSame(0, $this->redis->hLen('{Queue:why}:failures'));
        $this->assertSame(['b'], $this->redis->hKeys('{Queue:why}:dead-failures'), 'only the dead letters with a reason');

        $this->expectException(TypeError::class);
        $q->nack($q->reserve()[0], 0, []);
    }

    public function testAPausedQueueHandsOutNothingAndResumingWakesItsWaitingWorkers(): void
    {
        $q = $this->queue('paused', ['lease' => 30]);
        $q->enqueueMany(['r' => null, 's' => null]);
        [$running] = $q->reserve();
        $this->assertTrue($q->pause());
        $this->assertFalse($q->pause(), 'paused already');
        $this->assertEqualsWithDelta(microtime(true), $q->metrics()['paused'], 5);
        $this->assertSame([], $q->reserve(), 'nothing handed out');
        $this->assertSame([], (new Client())->reserve([$q]));
        $this->assertSame((new RedisQueue())->pop('empty'), (new RedisQueue())->pop('paused'), "the drop-in's pop too, as from an empty queue");
        $this->assertSame('s', (new RedisQueue())->top('paused')['id'], 'a look still shows it');
        $this->assertTrue($q->ack($running), 'a running task finishes');
        $this->assertSame('added', $q->enqueue('b'), 'producers go on');
        $other = $this->queue('other');
        $other->enqueue('x');
        $tasks = (new Client())->reserve([$q, $other]);
        $this->assertSame([['other', 'x']], array_map(fn ($t) => [$t->queue(), $t->id()], $tasks), 'several queues: the paused one is passed over');

        // Workers waiting on it while producers enqueue: none gets a task
        // until the resume, then every task runs once.
        $workers = [];
        for ($i = 0; $i < 4; $i++) {
            $workers[] = self::start('$q = (new RedisLock\Client())->queue("paused");
                $seen = 0;
                while ($seen < 20) {
                    $tasks = $q->reserve(1, null, 2);
                    if ($tasks === []) { break; }
                    foreach ($tasks as $t) { echo $t->id(), " ", (new RedisLock\Client())->queue("paused")->metrics()["paused"] === null ? "running" : "PAUSED", "\n"; $q->ack($t); }
                    $seen++;
                }');
        }
        for ($i = 0; $i < 40; $i++) {
            $q->enqueue("t$i");
        }
        usleep(500000);
        $this->assertSame(42, $q->metrics()['ready'], 'nothing taken while paused');
        $this->assertTrue($q->resume());
        $this->assertFalse($q->resume(), 'running already');
        $this->assertNull($q->metrics()['paused']);
        $lines = [];
        foreach ($workers as $w) {
            $lines = array_merge($lines, array_filter(explode("\n", self::finish($w))));
        }
        $ids = array_map(fn ($l) => explode(' ', $l)[0], $lines);
        sort($ids);
        $expected = array_merge(['b', 's'], array_map(fn ($i) => "t$i", range(0, 39)));
        sort($expected);
        $this->assertSame($expected, $ids, 'every task once, after the resume');
        $this->assertSame([], preg_grep('/PAUSED$/', $lines), 'no task handed out while paused');
        $this->assertSame(0, $q->metrics()['ready']);
    }

    public function testAThrottledQueueHandsOutNothingUntilItEndsAndAttemptsAreKept(): void
    {
        $q = $this->queue('api', ['maxAttempts' => 2]);
        $q->enqueue('a', 'pa');
        [$a] = $q->reserve();
        $this->assertTrue($q->nack($a, 0, 'timeout'));
        [$a] = $q->reserve();
        $this->assertSame(2, $a->attempts());
        $q->enqueue('b');
        // The API says 429: the task goes back without spending its second
        // (last) attempt, and nobody takes tasks for a minute.
        $this->assertTrue($q->release($a));
        $this->assertFalse($q->release($a), 'the lease is gone');
        $this->assertEqualsWithDelta(60, $q->throttle(60), 0.01);
        $this->assertEqualsWithDelta(60, $q->throttle(5), 0.01, 'the longer throttle wins');
        $this->assertEqualsWithDelta(microtime(true) + 60, $q->metrics()['throttled'], 5);
        $this->assertSame([], $q->reserve(), 'nothing handed out');
        $this->assertSame([], (new Client())->reserve([$q]));
        $this->assertFalse((new RedisQueue())->pop('api'), "the drop-in's pop neither");
        $found = $q->find('a');
        $this->assertSame(1, $found['attempts'], 'the release took its attempt back');
        $this->assertSame('timeout', $found['reason'], 'and kept its last failure');
        $this->assertSame(0, $q->metrics()['totals']['nacked'] - 1, 'a release is not a nack');
        // A worker waiting in line takes the task as soon as the throttle is ended.
        $worker = self::start('$q = (new RedisLock\Client())->queue("api");
            $t = microtime(true);
            foreach ($q->reserve(2, null, 30) as $task) { echo $task->id(), " ", $task->attempts(), " "; }
            echo microtime(true) - $t < 20 ? "woken" : "late", "\n";');
        $this->lineReaches('{Queue:api}:line', 1);
        $this->assertSame(0.0, $q->throttle(0));
        $this->assertSame("b 1 a 2 woken\n", self::finish($worker), "a: its second attempt, not its third (due again at its release, after b)");
        $this->assertNull($q->metrics()['throttled']);

        // A throttle that runs out by itself: the first in line takes the
        // tasks then, and the paused state is separate.
        $q->enqueue('c');
        $q->throttle(0.5);
        $this->assertTrue($q->pause());
        $this->assertTrue($q->resume(), 'resumed, still throttled');
        $this->assertSame([], $q->reserve());
        $this->assertSame(['c'], array_map(fn ($t) => $t->id(), $q->reserve(1, null, 10)), 'when the throttle ran out');
        $this->assertAllRefused([
            fn () => $q->throttle(-1),
            fn () => $q->throttle(NAN),
            fn () => $q->throttle(INF),
            fn () => $q->throttle(86401),
            fn () => $q->throttle('soon'),
            fn () => $q->release($a, -1),
            fn () => $q->release($a, NAN),
            fn () => $q->release(null),
        ]);
    }

    public function testAQueuesRateHoldsEveryWorkerToIt(): void
    {
        $q = $this->queue('rated', ['lease' => 60]);
        $this->assertTrue($q->setRate(10, 1, 2));
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 200)), null));
        // Four workers reserve for 2 s; each task's reserve time is read back
        // on the server's clock (its lease end less the lease).
        $worker = '$q = (new RedisLock\Client())->queue("rated", ["lease" => 60]);
            $end = microtime(true) + 2;
            while (microtime(true) < $end) {
                foreach ($q->reserve(5, null, 0.5) as $t) {
                    printf("%.3f\n", $q->find($t->id())["at"] - 60);
                }
            }';
        $times = array_map('floatval', preg_split('/\s+/', trim(implode("\n", self::phpMany(array_fill(0, 4, $worker))))));
        sort($times);
        $this->assertGreaterThan(10, count($times), 'the workers took what the rate allows');
        $this->assertLessThan(200, count($times));
        // Replayed as a token bucket of 2, 10 a second: none early (1 ms
        // allowed for the times' rounding).
        $tat = 0.0;
        $early = [];
        foreach ($times as $t) {
            if ($t + 0.001 < $tat - 0.1) {
                $early[] = $t;
            }
            $tat = max($tat, $t) + 0.1;
        }
        $this->assertSame([], $early, 'no task reserved before the rate allowed it');
        $this->assertSame(0, $q->metrics()['totals']['nacked']);
        $this->assertSame(0, $q->find('t99')['attempts'], 'a task that waits for the rate is not attempted');
        $this->assertNull($q->find('t99')['reason']);
        // Without a rate, the rest at once.
        $this->assertTrue($q->setRate(null));
        $this->assertCount(200 - count($times), $q->reserve(1000));
        $this->assertAllRefused([
            fn () => $q->setRate(0),
            fn () => $q->setRate(-1),
            fn () => $q->setRate(1, 0),
            fn () => $q->setRate(1, -1),
            fn () => $q->setRate(1, NAN),
            fn () => $q->setRate(1, INF),
            fn () => $q->setRate(1, 1, 0),
            fn () => $q->setRate('x'),
            fn () => $q->setRate(2000000000),
        ]);
    }

    public function testTheRateOptionIsTheQueuesFromTheObjectsFirstEnqueueOrReserve(): void
    {
        $stored = fn () => $this->redis->hGet('{Queue:opt-rated}:stats', 'rate');
        $worker = $this->queue('opt-rated', ['rate' => ['limit' => 5, 'burst' => 2]]);
        $this->assertFalse($stored(), 'nothing is written before the object is used');
        $plain = $this->queue('opt-rated');
        $plain->enqueueMany(array_fill_keys(array_map(fn ($i) => "r$i", range(1, 20)), null));
        $this->assertFalse($stored(), 'a producer without the option leaves the rate alone');
        $this->assertCount(2, $worker->reserve(10), 'its first reserve: the burst of 2');
        $this->assertNotFalse($stored());
        $this->assertSame([], $plain->reserve(10), 'every worker keeps it');
        // Through Client::reserve() too, and a producer's enqueue: the last stored wins.
        $this->assertTrue($plain->setRate(null));
        $many = $this->queue('opt-rated', ['rate' => ['limit' => 1000, 'per' => 0.5]]);
        $this->assertCount(10, (new Client())->reserve([$many], 10));
        $this->assertNotFalse($stored());
        $this->queue('opt-rated', ['rate' => ['limit' => 1, 'per' => 60]])->enqueue('x');
        // (The bucket goes on from the last rate's: the next task is due
        // within ms of the last, so the reserve waits that long.)
        $this->assertCount(1, $plain->reserve(100, null, 1), 'a burst of 1');
        $this->assertSame([], $plain->reserve(100, null, 0.2), 'then one a minute');
        $this->assertAllRefused([
            fn () => $this->queue('r', ['rate' => 5]),
            fn () => $this->queue('r', ['rate' => null]),
            fn () => $this->queue('r', ['rate' => []]),
            fn () => $this->queue('r', ['rate' => ['per' => 1]]),
            fn () => $this->queue('r', ['rate' => ['limit' => 0]]),
            fn () => $this->queue('r', ['rate' => ['limit' => 1, 'per' => 0]]),
            fn () => $this->queue('r', ['rate' => ['limit' => 1, 'per' => INF]]),
            fn () => $this->queue('r', ['rate' => ['limit' => 1, 'burst' => -1]]),
            fn () => $this->queue('r', ['rate' => ['limit' => 1, 'every' => 1]]),
            fn () => $this->queue('r', ['rate' => ['limit' => [1]]]),
        ]);
        try {
            $this->queue('r', ['rate' => ['limit' => 1, 'per' => 0]]);
        } catch (ValueError $e) {
            $this->assertSame("RedisLock\\Client::queue(): Argument #2 (\$options) option 'rate'['per'] must be a number of seconds greater than 0, 0 given", $e->getMessage());
        }
    }

    public function testGroupsTakeTurnsSoABigOneCannotHoldUpASmallOne(): void
    {
        $q = $this->queue('tenants');
        foreach (array_chunk(range(1, 10000), 1000) as $chunk) {
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "big-$i", $chunk), null), 0, null, null, 'tenant-1');
        }
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "small-$i", range(1, 10)), 'p'), 0, null, ['vip'], 'tenant-2');
        $this->assertSame('added', $q->enqueue('mine', null, 0, null, null, 'tenant-3'));
        usleep(20000);
        $first = [];
        for ($i = 0; $i < 21; $i++) {
            $first[] = $q->reserve()[0]->id();
        }
        $this->assertCount(10, preg_grep('/^small-/', $first), 'the small group started within its share: ' . implode(' ', $first));
        $this->assertContains('mine', $first);
        // What the rows say.
        $found = $q->find('small-1');
        $this->assertSame(['leased', 'tenant-2', ['vip']], [$found['state'], $found['group'], $found['tags']]);
        $this->assertSame('tenant-1', $q->peek(1)[0]['group']);
        $this->assertSame('tenant-2', array_column($q->leased(1000), 'group', 'id')['small-1']);
        $task = null;
        foreach ($q->reserve(1000) as $t) {
            $task ??= $t;
        }
        $q->nack($task, 0, 'no');
        $this->assertSame('tenant-1', $q->recent(1)[0]['group']);
        $this->assertSame('tenant-1', $q->find($task->id())['group'], 'due again, still in its group');
        $this->assertAllRefused([
            fn () => $q->enqueue('x', null, 0, null, null, ''),
            fn () => $q->enqueue('x', null, 0, null, null, 'two words'),
            fn () => $q->enqueue('x', null, 0, null, null, "a\0b"),
            fn () => $q->enqueue('x', null, 0, null, null, str_repeat('g', 101)),
            fn () => $q->enqueue('x', null, 0, null, null, []),
            fn () => $q->enqueueMany(['x' => null], 0, null, null, ''),
        ]);
        try {
            $q->enqueue('x', null, 0, null, null, 'two words');
        } catch (ValueError $e) {
            $this->assertSame("RedisLock\\Queue::enqueue(): Argument #6 (\$group): a group holds no space or control byte, 'two words' given", $e->getMessage());
        }
        $this->assertNull($q->find('x'));
    }

    public function testEachGroupIsHeldToItsConcurrencyAcrossWorkers(): void
    {
        $q = $this->queue('limited');
        $this->assertTrue($q->setGroupConcurrency(2));
        foreach (['g1', 'g2', 'g3', 'g4'] as $g) {
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "$g-$i", range(1, 40)), null), 0, null, null, $g);
        }
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "free-$i", range(1, 20)), null));
        $dir = sys_get_temp_dir() . '/groups' . getmypid();
        @mkdir($dir);
        // A worker running a task of group g takes one of g's 2 slot files:
        // when none is free, more than 2 of g run at once. It gives the slot
        // back before the ack (after it, another may start). A waiting
        // reserve() is woken when a lease of a full group ends.
        $code = '
            $q = (new RedisLock\Client())->queue("limited");
            $violations = 0; $done = [];
            while (true) {
                $tasks = $q->reserve(1 + getmypid() % 3, 30, 0.5);
                if (!$tasks) {
                    $m = $q->metrics();
                    if ($m["ready"] + $m["delayed"] + $m["leased"] === 0) { break; }
                    continue;
                }
                $held = [];
                foreach ($tasks as $t) {
                    $g = strstr($t->id(), "-", true);
                    if ($g === "free") { continue; }
                    $slot = null;
                    foreach ([0, 1] as $i) {
                        $f = fopen("' . $dir . '/$g.$i", "c");
                        if (flock($f, LOCK_EX | LOCK_NB)) { $slot = $f; break; }
                        fclose($f);
                    }
                    if ($slot) { $held[] = $slot; } else { $violations++; }
                }
                usleep(2000);
                foreach ($held as $f) { flock($f, LOCK_UN); fclose($f); }
                foreach ($tasks as $t) {
                    // Some fail once, to run again.
                    if ($t->attempts() === 1 && crc32($t->id()) % 7 === 0) { $q->nack($t); continue; }
                    if ($q->ack($t)) { $done[] = $t->id(); }
                }
            }
            echo $violations, " ", implode(" ", $done), "\n";';
        $outs = self::phpMany(array_fill(0, 8, $code));
        array_map('unlink', glob("$dir/*"));
        rmdir($dir);
        $violations = 0;
        $done = [];
        foreach ($outs as $out) {
            $words = explode(' ', trim($out));
            $this->assertMatchesRegularExpression('/^\d+$/', $words[0], $out);
            $violations += (int) array_shift($words);
            array_push($done, ...$words);
        }
        $this->assertSame(0, $violations, 'more than 2 tasks of a group at once');
        sort($done);
        $this->assertCount(180, $done, 'every task acked');
        $this->assertSame($done, array_values(array_unique($done)), 'none twice');
        $this->assertSame([], $q->groups());
        $this->assertSame(0, $this->redis->exists('{Queue:limited}:group-leased'), 'no leased task counted');
    }

    public function testAGroupsRateAndThrottleHoldItsTasksAlone(): void
    {
        $q = $this->queue('shared');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "a$i", range(1, 10)), null), 0, null, null, 'acme');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "b$i", range(1, 10)), null), 0, null, null, 'bolt');
        $this->assertTrue($q->setGroupConcurrency(3));
        $this->assertTrue($q->setGroupRate(4, 60));
        $ids = fn (array $tasks) => array_map(fn ($t) => $t->id(), $tasks);
        $first = $q->reserve(100);
        $this->assertSame(['a1', 'b1', 'a2', 'b2', 'a3', 'b3'], $ids($first), 'in turn, 3 of each at once');
        $rows = array_column($q->groups(), null, 'group');
        $this->assertSame(['group' => 'acme', 'queued' => 7, 'leased' => 3, 'throttled' => 0.0], $rows['acme']);
        $q->ack($first[0]);
        $q->ack($first[2]);
        $this->assertSame(['a4'], $ids($q->reserve(100)), "acme's fourth and last of its rate; bolt at 3");
        $this->assertSame([], $q->reserve(100, null, 0.05));
        $this->assertTrue($q->setGroupRate(null));
        // The API told us bolt's calls wait 0.3 s: acme goes on.
        $this->assertEqualsWithDelta(0.3, $q->throttle(0.3, 'bolt'), 0.01);
        $this->assertGreaterThan(0.2, array_column($q->groups(), 'throttled', 'group')['bolt']);
        foreach ($first as $t) {
            $q->ack($t);
        }
        $this->assertSame(['a5', 'a6'], $ids($q->reserve(100)), 'acme: 3 leased (a4 a5 a6)');
        $this->assertSame(['b4'], $ids($q->reserve(1, null, 5)), 'bolt, once its throttle ended');
        $this->assertSame(0.0, $q->throttle(0, 'bolt'));
        $this->assertTrue($q->setGroupConcurrency(null));
        $this->assertNull(array_column($q->groups(), 'leased', 'group')['acme']);
        $this->assertCount(10, $q->reserve(100), 'no limits: the rest');
        $this->assertAllRefused([
            fn () => $q->setGroupConcurrency(0),
            fn () => $q->setGroupConcurrency(-1),
            fn () => $q->setGroupConcurrency('2.5'),
            fn () => $q->setGroupConcurrency('two'),
            fn () => $q->setGroupConcurrency([]),
            fn () => $q->setGroupConcurrency(PHP_INT_MAX),
            fn () => $q->setGroupRate(0),
            fn () => $q->setGroupRate(5, 0),
            fn () => $q->setGroupRate(5, NAN),
            fn () => $q->setGroupRate(5, INF),
            fn () => $q->setGroupRate(5, 1, -1),
            fn () => $q->throttle(1, ''),
            fn () => $q->throttle(1, 'two words'),
            fn () => $q->throttle(1, "a\0b"),
            fn () => $q->throttle(1, str_repeat('g', 101)),
            fn () => $q->throttle(1, []),
            fn () => $q->throttle(-1, 'acme'),
        ]);
        try {
            $q->throttle(1, 'two words');
        } catch (ValueError $e) {
            $this->assertSame("RedisLock\\Queue::throttle(): Argument #2 (\$group): a group holds no space or control byte, 'two words' given", $e->getMessage());
        }
    }

    public function testTheDropInsPopKeepsTheQueuesRate(): void
    {
        $q = $this->queue('popped');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "p$i", range(1, 20)), null));
        $this->assertTrue($q->setRate(5, 1, 2));
        $seed = new RedisQueue();
        $first = $seed->pop('popped', 10);
        $this->assertCount(2, $first, 'a burst of 2');
        $this->assertSame($seed->pop('empty'), $seed->pop('popped'), 'then nothing, as from an empty queue');
        usleep(450_000);
        $this->assertCount(2, $seed->pop('popped', 10), 'one a fifth of a second');
        $this->assertCount(1, $q->reserve(10, null, 0.5), 'reserve() and pop() share the bucket');
        $this->assertTrue($q->setRate(null));
        $this->assertCount(15, $seed->pop('popped', 100));
    }

    public function testLeasedTasksAndWorkersSayWhoRunsWhatSinceWhen(): void
    {
        $q = $this->queue('busy');
        $q->enqueueMany(['a' => 'pa', 'b' => null, 'c' => null]);
        $workers = [];
        foreach ([1, 2] as $_) {
            $workers[] = $w = self::start('$q = (new RedisLock\Client())->queue("busy");
                [$t] = $q->reserve(1, 30);
                echo $t->id(), "\n";
                usleep(800000);
                $q->ack($t);');
        }
        $ids = [trim(fgets($workers[0][1][1])), trim(fgets($workers[1][1][1]))];
        $before = microtime(true);
        $leased = $q->leased();
        $this->assertEqualsCanonicalizing($ids, array_column($leased, 'id'));
        $until = array_column($leased, 'until');
        $sorted = $until;
        sort($sorted);
        $this->assertSame($sorted, $until, 'the earliest lease end first');
        $byId = array_column($leased, null, 'id');
        foreach ([0, 1] as $i) {
            $row = $byId[$ids[$i]];
            $this->assertSame(['host' => gethostname(), 'pid' => $workers[$i][2], 'process' => 'cli Standard input code'], $row['worker']);
            $this->assertEqualsWithDelta($before, $row['leasedAt'], 5);
            $this->assertEqualsWithDelta($row['leasedAt'] + 30, $row['until'], 0.01);
            $this->assertSame(1, $row['attempts']);
            $this->assertNull($row['reason']);
        }
        $this->assertSame('pa', $byId['a']['payload']);
        $this->assertCount(1, $q->leased(1));

        $seen = $q->workers();
        $this->assertEqualsCanonicalizing([$workers[0][2], $workers[1][2]], array_column($seen, 'pid'));
        foreach ($seen as $w) {
            $this->assertSame([gethostname(), 'cli Standard input code', 0], [$w['host'], $w['process'], $w['done']]);
            $this->assertMatchesRegularExpression('/^[0-9a-f]{12}$/', $w['id']);
            $this->assertEqualsWithDelta($before, $w['seen'], 5);
            $this->assertEqualsWithDelta(time(), $w['since'], 5);
        }
        foreach ($workers as $w) {
            self::finish($w);
        }
        $this->assertSame([], $q->leased());
        $this->assertSame([1, 1], array_column($q->workers(), 'done'), 'each acked one');

        // This process reserves and acks too: a third worker, with its count.
        foreach ($q->reserve(10) as $t) {
            $q->ack($t);
        }
        // (Its description may be missing: an earlier test flushed it, and
        // a process renews it once a minute.)
        $mine = array_values(array_filter($q->workers(), fn ($w) => !in_array($w['pid'], [$workers[0][2], $workers[1][2]], true)));
        $this->assertSame(1, $mine[0]['done']);
        $this->assertCount(3, $q->workers());
        $this->assertCount(1, $q->workers(1));
    }
}
