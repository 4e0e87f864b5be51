<?php

use RedisLock\Client;
use RedisLock\Queue;
use RedisLock\RedisLockException;

/**
 * Workflows: a parent task that waits for its children (Queue::enqueue()'s
 * $children), their results, the policies for a child that dies, chains,
 * and workers killed in the middle.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class WorkflowTest extends RedisLockTestCase
{
    private function queue(string $name, array $options = []): Queue
    {
        return (new Client())->queue($name, $options);
    }

    /** How many script calls failed (`failed_calls`: a script not loaded yet, sent again once loaded). */
    private function failedScriptCalls(): int
    {
        $stats = $this->redis->info('commandstats');
        $n = 0;
        foreach (['fcall', 'evalsha', 'eval'] as $cmd) {
            preg_match('/failed_calls=(\d+)/', $stats["cmdstat_$cmd"] ?? '', $m);
            $n += (int) ($m[1] ?? 0);
        }
        return $n;
    }

    public function testAParentRunsOnceItsChildrenAreAckedWithTheirResults(): void
    {
        $pages = $this->queue('pages');
        $reports = $this->queue('reports');
        $this->assertSame('added', $reports->enqueue('report-1', 'render', children: [
            ['queue' => $pages, 'id' => 'page-1', 'payload' => 'one'],
            ['queue' => 'pages', 'id' => 'page-2'],
            ['queue' => 'images', 'id' => 'logo'],
        ]));
        $found = $reports->find('report-1');
        $this->assertSame(['waiting', null, 3, 'render'], [$found['state'], $found['at'], $found['children'], $found['payload']]);
        $this->assertSame([], $reports->reserve(), 'a waiting parent is not reservable');
        $this->assertSame(0, $reports->metrics()['ready']);

        $got = $pages->reserve(10);
        $this->assertSame(['page-1' => 'one', 'page-2' => null], array_combine(array_map(fn ($t) => $t->id(), $got), array_map(fn ($t) => $t->payload(), $got)));
        $this->assertTrue($pages->ack($got[0], "html\0one"));
        $this->assertSame(2, $reports->find('report-1')['children']);
        $this->assertSame(1, $pages->ackMany([$got[1]], [0 => 'html two']));
        $this->assertSame(1, $reports->find('report-1')['children']);
        $this->assertSame([], $reports->reserve());

        $images = $this->queue('images');
        $this->assertTrue($images->ack($images->reserve()[0]), 'a child acked without a result');
        $this->assertSame('queued', $reports->find('report-1')['state']);
        [$parent] = $reports->reserve();
        $this->assertSame(['report-1', 'render'], [$parent->id(), $parent->payload()]);
        $this->assertSame(['pages/page-1' => "html\0one", 'pages/page-2' => 'html two', 'images/logo' => null], $parent->childResults());
        $this->assertTrue($reports->ack($parent));
        $this->assertSame([], $this->snapshot(), 'nothing of the flow left behind');
        $this->assertNull($reports->find('report-1'));
    }

    public function testAChildsNameIsItsBytesInTheResultsAndStates(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $parents->enqueue('p', null, children: [['queue' => $work, 'id' => "\xff\0id"]]);
        $this->assertSame(["work/\xff\0id" => 'waiting'], $parents->find('p')['childStates']);
        [$t] = $work->reserve();
        $this->assertTrue($work->ack($t, "r\0"));
        $this->assertSame(["work/\xff\0id" => "r\0"], $parents->reserve()[0]->childResults());
    }

    public function testAChildThatDiesFailsIgnoresOrContinuesItsParent(): void
    {
        $work = $this->queue('work', ['maxAttempts' => 1]);
        $parents = $this->queue('parents');
        foreach (['fail', 'ignore', 'continue'] as $policy) {
            $parents->enqueue("p-$policy", "for $policy", children: [
                ['queue' => $work, 'id' => "bad-$policy"],
                ['queue' => $work, 'id' => "good-$policy"],
            ], onChildFailure: $policy);
        }
        $tasks = [];
        foreach ($work->reserve(10) as $t) {
            $tasks[$t->id()] = $t;
        }
        $this->assertTrue($work->nack($tasks['bad-fail'], 0, 'boom'));
        $this->assertTrue($work->bury($tasks['bad-ignore'], 'no way'));
        $this->assertTrue($work->nack($tasks['bad-continue']));

        $dead = $parents->find('p-fail');
        $this->assertSame(['dead', 'child work/bad-fail died: boom', 'for fail'], [$dead['state'], $dead['reason'], $dead['payload']]);
        $this->assertSame(['waiting', 1], [$parents->find('p-ignore')['state'], $parents->find('p-ignore')['children']]);
        $this->assertSame(['work/bad-ignore' => 'dead', 'work/good-ignore' => 'waiting'], $parents->find('p-ignore')['childStates'], 'each child, as the parent sees it');
        $this->assertSame('queued', $parents->find('p-continue')['state'], 'continue: at once');

        foreach (['good-fail', 'good-ignore', 'good-continue'] as $id) {
            $this->assertTrue($work->ack($tasks[$id], "r-$id"));
        }
        $ran = [];
        foreach ($parents->reserve(10) as $t) {
            $ran[$t->id()] = $t->childResults();
            $parents->ack($t);
        }
        ksort($ran);
        $this->assertSame(['p-continue' => [], 'p-ignore' => ['work/good-ignore' => 'r-good-ignore']], $ran);
        $this->assertSame('dead', $parents->find('p-fail')['state'], 'a child acked after its parent failed changes nothing');

        // A failed parent retried from the dead letters runs with what its
        // children left.
        $this->assertSame(1, $parents->retryDead());
        [$t] = $parents->reserve();
        $this->assertSame(['p-fail', []], [$t->id(), $t->childResults()]);
        $parents->ack($t);
        $this->assertSame(0, $parents->metrics()['dead']);
    }

    /** A child removed (remove(), clear()) ends as a failure for its parent's policy. */
    public function testAChildRemovedEndsAsAFailure(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $parents->enqueue('p-fail', null, children: [['queue' => $work, 'id' => 'a'], ['queue' => $work, 'id' => 'b']]);
        $this->assertSame(1, $work->remove(['a']));
        $this->assertSame(['dead', 'child work/a was removed'], [$parents->find('p-fail')['state'], $parents->find('p-fail')['reason']]);
        $parents->enqueue('p-ignore', null, children: [['queue' => $work, 'id' => 'c'], ['queue' => $work, 'id' => 'd']], onChildFailure: 'ignore');
        $this->assertSame(3, $work->clear(), 'b, c and d');
        $this->assertSame('queued', $parents->find('p-ignore')['state']);
        $this->assertSame([], $parents->reserve()[0]->childResults());
    }

    /**
     * moveTo() on one server carries a child's link to its parent (it ends
     * there for its parent, under the name its parent gave it) and a
     * released parent's results; to another server, where its parent is
     * not, a child ends for its parent as removed.
     */
    public function testAMovedChildEndsForItsParentWhereverItWent(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $parents->enqueue('p-moved', null, children: [['queue' => $work, 'id' => 'e']]);
        $parents->enqueue('r', null, children: [['queue' => $work, 'id' => 'x']]);
        foreach ($work->reserve(2) as $t) {
            if ($t->id() === 'x') {
                $this->assertTrue($work->ack($t, 'x done'));
            } else {
                $this->assertTrue($work->release($t));
            }
        }
        $elsewhere = $this->queue('elsewhere');
        $this->assertSame(1, $work->moveTo($elsewhere));
        $this->assertSame(0, $this->redis->hLen('{Queue:work}:links'), 'the link left with the child');
        $this->assertSame(['work/e' => 'waiting'], $parents->find('p-moved')['childStates'], 'a move is no end');
        $this->assertSame(1, $parents->moveTo($this->queue('parents-2')), 'the released parent r');
        [$t] = $elsewhere->reserve();
        $this->assertTrue($elsewhere->ack($t, 'e done'));
        $moved = $this->queue('parents-2')->reserve();
        $this->assertSame(['r'], array_map(fn ($t) => $t->id(), $moved));
        $this->assertSame(['work/x' => 'x done'], $moved[0]->childResults(), 'its results went with it');
        [$released] = $parents->reserve();
        $this->assertSame(['p-moved', ['work/e' => 'e done']], [$released->id(), $released->childResults()]);

        $other = RedisServer::start();
        $parents->enqueue('p-away', null, children: [['queue' => $work, 'id' => 'f']]);
        $this->assertSame(1, $work->moveTo((new Client($other->dsn()))->queue('away')));
        $this->assertSame(['dead', 'child work/f was removed'], [$parents->find('p-away')['state'], $parents->find('p-away')['reason']]);
        $this->assertSame(['f'], array_map(fn ($t) => $t->id(), (new Client($other->dsn()))->queue('away')->reserve()), 'a task of its own there');
    }

    public function testAChildWhoseLeaseRunsOutForGoodFailsItsParent(): void
    {
        $work = $this->queue('work', ['maxAttempts' => 1, 'lease' => 0.2]);
        $parents = $this->queue('parents');
        $parents->enqueue('p', null, children: [['queue' => $work, 'id' => 'slow']]);
        $this->assertCount(1, $work->reserve());
        usleep(300000);
        $this->assertSame([], $work->reserve(), 'the lease ran out: a dead letter');
        $this->assertSame(['dead', 'child work/slow died: lease ran out'], [$parents->find('p')['state'], $parents->find('p')['reason']]);
    }

    /** Partitioned queues: each task in its id's partition, the parent's group kept. */
    public function testAParentAndChildrenOnPartitionedQueues(): void
    {
        $parents = $this->queue('parents', ['partitions' => 4]);
        $work = $this->queue('work', ['partitions' => 3]);
        $children = [];
        for ($i = 0; $i < 12; $i++) {
            $children[] = ['queue' => $work, 'id' => "c$i"];
        }
        $parents->enqueue('p', 'payload', 0, null, ['tagged'], 'tenant-1', $children);
        $this->assertSame(['waiting', ['tagged'], 'tenant-1', 12], array_values(array_intersect_key($parents->find('p'), ['state' => 0, 'children' => 0, 'group' => 0, 'tags' => 0])));
        $done = 0;
        while ($done < 12 && ($got = $work->reserve(5)) !== []) {
            $done += $work->ackMany($got, array_map(fn ($t) => 'r-' . $t->id(), $got));
        }
        $this->assertSame(12, $done);
        [$p] = $parents->reserve();
        $this->assertSame(['p', 'tenant-1'], [$p->id(), $parents->find('p')['group']]);
        $results = $p->childResults();
        ksort($results);
        $expected = [];
        for ($i = 0; $i < 12; $i++) {
            $expected["work/c$i"] = "r-c$i";
        }
        ksort($expected);
        $this->assertSame($expected, $results);
    }

    public function testAChainRunsStepByStepAndANestedParentKeepsItsOwnPolicy(): void
    {
        $steps = $this->queue('steps');
        // fetch, then transform, then load: each the parent of the one before.
        $steps->enqueue('load', null, children: [
            ['queue' => 'steps', 'id' => 'transform', 'children' => [
                ['queue' => 'steps', 'id' => 'fetch', 'payload' => 'url'],
            ]],
        ]);
        $order = [];
        for ($i = 0; $i < 3; $i++) {
            $got = $steps->reserve(10);
            $this->assertCount(1, $got, 'one step at a time');
            $order[] = $got[0]->id() . ' ' . json_encode($got[0]->childResults());
            $steps->ack($got[0], 'out of ' . $got[0]->id());
        }
        $this->assertSame(['fetch []', 'transform {"steps\/fetch":"out of fetch"}', 'load {"steps\/transform":"out of transform"}'], $order);

        $steps->enqueue('top', null, children: [
            ['queue' => 'steps', 'id' => 'mid', 'onChildFailure' => 'ignore', 'children' => [
                ['queue' => 'steps', 'id' => 'leaf'],
            ]],
        ]);
        $steps->bury($steps->reserve()[0]);
        [$mid] = $steps->reserve();
        $this->assertSame(['mid', []], [$mid->id(), $mid->childResults()], "'ignore': the middle runs without its dead leaf");
        $steps->ack($mid, 'm');
        $this->assertSame(['steps/mid' => 'm'], $steps->reserve()[0]->childResults());
    }

    /**
     * The parent and its children are created in one step: a child whose id
     * is taken leaves Redis as it was; a parent whose id is taken is
     * 'ignored', as enqueue() under 'keep' is.
     */
    public function testAFlowIsCreatedWholeOrNotAtAll(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $work->enqueue('taken');
        $before = $this->snapshot();
        try {
            $parents->enqueue('p', null, children: [['queue' => $work, 'id' => 'free'], ['queue' => $work, 'id' => 'taken']]);
            $this->fail('a child whose id is queued');
        } catch (RedisLockException $e) {
            $this->assertSame("redislock: task 'taken' of queue 'work' is queued, leased, waiting or a child already: a child is a new task; nothing of the flow was created", $e->getMessage());
        }
        $this->assertSame($before, $this->snapshot());
        $this->assertNull($parents->find('p'));

        $parents->enqueue('queued-parent');
        $before = $this->snapshot();
        $this->assertSame('ignored', $parents->enqueue('queued-parent', null, children: [['queue' => $work, 'id' => 'free']]));
        $this->assertSame($before, $this->snapshot());

        $parents->enqueue('w', null, children: [['queue' => $work, 'id' => 'c1']]);
        $this->assertSame('ignored', $parents->enqueue('w', null, children: [['queue' => $work, 'id' => 'c2']]), 'a parent waiting already');
        $this->assertSame('added', $parents->enqueue('w2', null, children: []), 'no children: a plain task');
        $this->expectException(RedisLockException::class);
        $parents->enqueue('w3', null, children: [['queue' => $work, 'id' => 'c1']]);
    }

    /**
     * A child acked by a worker that goes before it hands the end to the
     * parent's queue is not lost: the next reserve on the child's queue
     * hands it on. (Here the parent's step fails for a key of a wrong type,
     * as a worker killed at that moment fails it.)
     */
    public function testAChildsEndLeftBehindIsHandedOnByTheNextReserve(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $parents->enqueue('p', null, children: [['queue' => $work, 'id' => 'c']]);
        [$t] = $work->reserve();
        $this->redis->rename('{Queue:parents}:flow-children', 'aside');
        $this->redis->set('{Queue:parents}:flow-children', 'not a hash');
        $this->assertTrue($work->ack($t, 'kept'), 'the ack itself is done');
        $this->assertTrue($this->redis->hExists('{Queue:parents}:flows', 'p'), 'the parent still waits');
        $this->assertSame(1, $this->redis->hLen('{Queue:work}:ended'), 'the end waits for its parent');
        $this->redis->del('{Queue:parents}:flow-children');
        $this->redis->rename('aside', '{Queue:parents}:flow-children');
        $this->assertSame([], $work->reserve());
        $this->assertSame(0, $this->redis->exists('{Queue:work}:ended'));
        $this->assertSame(['work/c' => 'kept'], $parents->reserve()[0]->childResults());
    }

    /**
     * A worker's ack counts its child in the parent's count in the same
     * script (one script an ack, no end left to hand on), once it knows
     * the parents' queue: the process that created the flow knows it, a
     * worker of another process learns it from its first child's end. The
     * parent's record (every child's name) is never rewritten on the way.
     */
    public function testAnAckCountsItsChildInPlaceOnceItsWorkerKnowsTheParentsQueue(): void
    {
        $children = array_map(fn ($i) => ['queue' => 'work', 'id' => "c$i"], range(1, 4));
        $this->queue('parents')->enqueue('p', null, children: $children);
        $record = $this->redis->hGet('{Queue:parents}:flows', 'p');
        $out = self::php(<<<'PHP'
            $work = (new RedisLock\Client())->queue('work');
            $redis = new Redis();
            [$host, $port] = explode(':', substr(ini_get('redislock.default_dsn'), strlen('redis://')));
            $redis->connect($host, (int) $port);
            // Scripts run to the end (a first call of a script the server
            // has not loaded yet fails, and is sent again once loaded).
            $scripts = function () use ($redis): int {
                $n = 0;
                foreach (['fcall', 'evalsha', 'eval'] as $cmd) {
                    $line = $redis->info('commandstats')["cmdstat_$cmd"] ?? '';
                    preg_match('/calls=(\d+)/', $line, $calls);
                    preg_match('/failed_calls=(\d+)/', $line, $failed);
                    $n += (int) ($calls[1] ?? 0) - (int) ($failed[1] ?? 0);
                }
                return $n;
            };
            foreach ($work->reserve(10) as $i => $task) {
                $before = $scripts();
                $work->ack($task, "r$i");
                echo $task->id(), ' ', $scripts() - $before, ' ', $redis->exists('{Queue:work}:ended'), "\n";
            }
            PHP, ['extension' => self::phpredisExtensions()]);
        // The first ack hands its end on (the parents' step: 2 scripts);
        // the next two count theirs in place; the last releases the parent.
        $this->assertSame("c1 2 0\nc2 1 0\nc3 1 0\nc4 2 0\n", $out);
        $this->assertSame(['work/c1' => 'r0', 'work/c2' => 'r1', 'work/c3' => 'r2', 'work/c4' => 'r3'], $this->queue('parents')->reserve()[0]->childResults());

        $this->queue('parents')->enqueue('q', null, children: $children);
        $work = $this->queue('work');
        [$t] = $work->reserve();
        $record = $this->redis->hGet('{Queue:parents}:flows', 'q');
        $scripts = $this->scriptCalls() - $this->failedScriptCalls();
        $this->assertTrue($work->ack($t, 'x'));
        $this->assertSame(1, $this->scriptCalls() - $this->failedScriptCalls() - $scripts, 'the creating process counts in place from the first ack');
        $this->assertSame(3, $this->queue('parents')->find('q')['children']);
        $this->assertSame($record, $this->redis->hGet('{Queue:parents}:flows', 'q'), 'the record is not rewritten');
    }

    /**
     * A parent that a release before the count kept beside its record
     * began waiting still counts its children, from its record's count.
     */
    public function testAParentWaitingSinceAnEarlierReleaseCountsItsChildren(): void
    {
        $work = $this->queue('work');
        $parents = $this->queue('parents');
        $parents->enqueue('p', null, children: [['queue' => $work, 'id' => 'a'], ['queue' => $work, 'id' => 'b']]);
        $token = null;
        foreach ($this->redis->hGetAll('{Queue:parents}:flow-children') as $field => $value) {
            if (!str_contains($field, "\0")) {
                $token = $field;
            }
        }
        $this->assertNotNull($token, 'the count is kept under the flow\'s token');
        $this->redis->hDel('{Queue:parents}:flow-children', $token);
        $this->assertSame(2, $parents->find('p')['children'], 'read from the record');
        [$a, $b] = $work->reserve(2);
        $this->assertTrue($work->ack($a, 'ra'));
        $this->assertSame(1, $parents->find('p')['children']);
        $this->assertSame([], $parents->reserve());
        $this->assertTrue($work->ack($b, 'rb'));
        $this->assertSame(['work/a' => 'ra', 'work/b' => 'rb'], $parents->reserve()[0]->childResults());
    }

    /**
     * What a script leaves its caller is that run's: a Redis function
     * library keeps its helpers' tables from one call to the next, and a
     * table of them once handed every later ack the end of a child acked
     * before (each ack then looked for ends to hand on, for ever).
     */
    public function testAnAckAfterAChildsEndHandsOnNothing(): void
    {
        $work = $this->queue('work');
        $this->queue('parents')->enqueue('p', null, children: [['queue' => $work, 'id' => 'c']]);
        $work->ack($work->reserve()[0], 'r');
        $plain = $this->queue('plain');
        $plain->enqueueMany(['a' => null, 'b' => null, 'c' => null]);
        $before = $this->commandCalls('hscan');
        foreach ($plain->reserve(3) as $t) {
            $plain->ack($t);
        }
        $this->assertSame(0, $this->commandCalls('hscan') - $before, 'no ends to look for');
    }

    public function testBadChildrenAreRefusedAndChangeNothing(): void
    {
        $q = $this->queue('parents');
        $before = $this->snapshot();
        $this->assertRefusedAs([
            [fn () => $q->enqueue('p', null, children: [1]), TypeError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0] must be of type array (with 'queue' and 'id'), int given"],
            [fn () => $q->enqueue('p', null, children: [['id' => 'x']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0] has no 'queue'"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0] has no 'id'"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => '']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0]['id'] must not be empty"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => null]]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0]['id'] must not be empty"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => ['x']]]), TypeError::class, null],
            [fn () => $q->enqueue('p', null, children: [['queue' => '', 'id' => 'x']]), ValueError::class, null],
            [fn () => $q->enqueue('p', null, children: [['queue' => 5, 'id' => 'x']]), TypeError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0]['queue'] must be of type RedisLock\\Queue|string, int given"],
            [fn () => $q->enqueue('p', null, children: [['queue' => new stdClass(), 'id' => 'x']]), TypeError::class, null],
            [fn () => $q->enqueue('p', null, children: ['k' => ['queue' => 'a', 'id' => 'x', 'bogus' => 1]]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)['k'] has the key 'bogus': a child takes 'queue', 'id', 'payload', 'children' and 'onChildFailure'"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x'], ['queue' => 'a', 'id' => 'x']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[1] is task 'x' of queue 'a' a second time in the flow"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'parents', 'id' => 'p']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0] is task 'p' of queue 'parents' a second time in the flow"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x', 'onChildFailure' => 'fail']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0]['onChildFailure'] is for a child with 'children'"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x', 'children' => 'y']]), TypeError::class, "RedisLock\\Queue::enqueue(): Argument #7 (\$children)[0]['children'] must be of type array, string given"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x', 'payload' => []]]), TypeError::class, null],
            [fn () => $q->enqueue('p', null, onChildFailure: 'fail'), ValueError::class, 'RedisLock\Queue::enqueue(): Argument #8 ($onChildFailure) is for a task with children'],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x']], onChildFailure: 'nope'), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #8 (\$onChildFailure) must be 'fail', 'ignore' or 'continue', 'nope' given"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x']], onChildFailure: ''), ValueError::class, null],
            [fn () => $q->enqueue('p', null, policy: 'replace', children: [['queue' => 'a', 'id' => 'x']]), ValueError::class, "RedisLock\\Queue::enqueue(): Argument #4 (\$policy): a parent is a new task: policy must be null or 'keep'"],
            [fn () => $q->enqueue('p', null, children: [['queue' => 'a', 'id' => 'x', 'children' => self::nested(102)]]), ValueError::class, null],
            [fn () => $q->ackMany([], ['x' => 'r']), ValueError::class, 'RedisLock\Queue::ackMany(): Argument #2 ($results) has the key \'x\', which $tasks has not: results are keyed as $tasks is'],
        ]);
        $this->assertSame($before, $this->snapshot());
        // Names that look like another queue's keys are names like any.
        $this->assertSame('added', $q->enqueue("p\0{x}", null, children: [['queue' => '{Queue:parents}:flows', 'id' => 'x:dead'], ['queue' => str_repeat('q', 5000), 'id' => "\0"]]));
        $this->assertSame(2, $q->find("p\0{x}")['children']);
        $this->assertSame(null, $q->find('p'));
    }

    /**
     * Each case [call, the error's class, its message (null: any)] is
     * refused so.
     */
    private function assertRefusedAs(array $cases): void
    {
        foreach ($cases as $i => [$call, $class, $message]) {
            try {
                $call();
                $this->fail("case $i was accepted");
            } catch (TypeError | ValueError $e) {
                $this->assertSame($class, get_class($e), "case $i: " . $e->getMessage());
                if ($message !== null) {
                    $this->assertSame($message, $e->getMessage(), "case $i");
                }
            }
        }
    }

    /** A chain of $n children, each the parent of the next. */
    private static function nested(int $n): array
    {
        $child = ['queue' => 'a', 'id' => "n$n"];
        for ($i = $n - 1; $i > 0; $i--) {
            $child = ['queue' => 'a', 'id' => "n$i", 'children' => [$child]];
        }
        return [$child];
    }

    /**
     * Forked workers run the children of 30 parents on two queues, each
     * worker killed with SIGKILL at a random moment (between a reserve and
     * its ack, or between an ack and the parent's step) and replaced. Every
     * parent then runs exactly once, with every child's result: counted
     * violations, the only acceptable count zero.
     */
    public function testWorkersKilledInTheMiddleLoseNoResultAndRunNoParentTwice(): void
    {
        $parents = $this->queue('parents');
        $flows = 30;
        $each = 6;
        for ($p = 0; $p < $flows; $p++) {
            $children = [];
            for ($c = 0; $c < $each; $c++) {
                $children[] = ['queue' => $c % 2 ? 'kids-a' : 'kids-b', 'id' => "p$p-c$c", 'payload' => "$p:$c"];
            }
            $parents->enqueue("p$p", null, children: $children);
        }
        $worker = <<<'PHP'
            $client = new RedisLock\Client();
            $qs = [$client->queue('kids-a', ['lease' => 1, 'maxAttempts' => 1000]), $client->queue('kids-b', ['lease' => 1, 'maxAttempts' => 1000])];
            $end = microtime(true) + 8;
            while (microtime(true) < $end) {
                foreach ($client->reserve($qs, 3, null, 0.2) as $t) {
                    usleep(random_int(0, 3000));
                    $q = $t->queue() === 'kids-a' ? $qs[0] : $qs[1];
                    $q->ack($t, 'result of ' . $t->payload());
                }
            }
            PHP;
        $procs = [];
        for ($i = 0; $i < 4; $i++) {
            $procs[] = self::start($worker);
        }
        $kills = 0;
        $stop = microtime(true) + 4;
        while (microtime(true) < $stop) {
            usleep(random_int(50000, 250000));
            $i = array_rand($procs);
            posix_kill($procs[$i][2], SIGKILL);
            self::finish($procs[$i]);
            $kills++;
            $procs[$i] = self::start($worker);
        }
        foreach ($procs as $p) {
            self::finish($p);
        }
        $this->assertGreaterThan(5, $kills);
        // What a worker of the children's queues does next: its reserve
        // hands on the ends the killed ones left.
        $a = $this->queue('kids-a', ['lease' => 1]);
        $b = $this->queue('kids-b', ['lease' => 1]);
        $deadline = microtime(true) + 15;
        $runs = [];
        $violations = [];
        while (count($runs) < $flows && microtime(true) < $deadline) {
            foreach ([$a, $b] as $q) {
                foreach ($q->reserve(10) as $t) {
                    $q->ack($t, 'result of ' . $t->payload());
                }
            }
            foreach ($parents->reserve(10) as $t) {
                $runs[$t->id()] = ($runs[$t->id()] ?? 0) + 1;
                $results = $t->childResults();
                $p = (int) substr($t->id(), 1);
                for ($c = 0; $c < $each; $c++) {
                    $name = ($c % 2 ? 'kids-a' : 'kids-b') . "/p$p-c$c";
                    if (($results[$name] ?? null) !== "result of $p:$c") {
                        $violations[] = "{$t->id()} ran without $name's result";
                    }
                }
                $parents->ack($t);
            }
            usleep(20000);
        }
        foreach ($runs as $id => $n) {
            if ($n !== 1) {
                $violations[] = "$id ran $n times";
            }
        }
        $this->assertSame([], $violations);
        $this->assertCount($flows, $runs, 'every parent ran');
        $this->assertSame([], $parents->reserve(), 'and none again');
        foreach (['kids-a', 'kids-b'] as $q) {
            $this->assertSame(0, $this->redis->exists("{Queue:$q}:links", "{Queue:$q}:ended"), "$q: no link nor end left");
        }
        $this->assertSame(0, $this->redis->exists('{Queue:parents}:flows', '{Queue:parents}:flow-children', '{Queue:parents}:child-results'));
    }
}
