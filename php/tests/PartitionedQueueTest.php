<?php

use RedisLock\Client;

/**
 * A queue kept in partitions (`['partitions' => N]`, docs/past-one-node.md)
 * on one server: where its tasks go, that reserve() takes from every
 * partition in turn, that every transition reaches the task's partition,
 * and that racing workers run each task once. (On a Cluster:
 * TopologyTest.)
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class PartitionedQueueTest extends RedisLockTestCase
{
    private function client(): Client
    {
        return new Client(RedisServer::$main->dsn());
    }

    /** CRC16/XMODEM, as Redis Cluster hashes keys: the partition of a name. */
    private static function partitionOf(string $name, int $n): int
    {
        $crc = 0;
        foreach (str_split($name) as $byte) {
            $crc ^= ord($byte) << 8;
            for ($i = 0; $i < 8; $i++) {
                $crc = ($crc & 0x8000) ? (($crc << 1) ^ 0x1021) & 0xffff : ($crc << 1) & 0xffff;
            }
        }
        return $crc % $n;
    }

    /** The sorted set of partition $i of 4 of queue 'orders'. */
    private function partitionKey(int $i): string
    {
        $keys = $this->redis->keys("queue:{*}#s$i/4:6:orders");
        $this->assertCount(1, $keys, "partition $i has one sorted set");
        return $keys[0];
    }

    public function testATaskGoesToItsGroupsPartitionOrElseItsIds(): void
    {
        $c = $this->client();
        $q = $c->queue('orders', ['partitions' => 4]);
        $this->assertSame(4, $q->partitions());
        for ($i = 0; $i < 40; $i++) {
            $this->assertSame('added', $q->enqueue("t$i", "p$i"));
        }
        for ($i = 0; $i < 10; $i++) {
            $q->enqueue("g$i", null, 0, null, null, 'acme');
        }
        $this->assertSame('ignored', $q->enqueue('t7', 'again'), 'an id is found in its partition: de-duplicated');
        $byPartition = [];
        foreach (range(0, 3) as $i) {
            $byPartition[$i] = $this->redis->zRange($this->partitionKey($i), 0, -1);
            sort($byPartition[$i]);
        }
        $expected = array_fill(0, 4, []);
        for ($i = 0; $i < 40; $i++) {
            $expected[self::partitionOf("t$i", 4)][] = "t$i";
        }
        for ($i = 0; $i < 10; $i++) {
            $expected[self::partitionOf('acme', 4)][] = "g$i";
        }
        foreach ($expected as &$ids) {
            sort($ids);
        }
        $this->assertSame($expected, $byPartition, "ungrouped tasks by their id's CRC16, a group's all in one partition");
        $this->assertSame(0, $this->redis->exists('Queue:orders'), 'nothing in the one-slot layout');

        $parts = $q->partitionMetrics();
        $this->assertSame(array_map('count', $expected), array_column($parts, 'ready'));
        $m = $q->metrics();
        $this->assertSame(50, $m['ready']);
        $this->assertSame(50, $m['totals']['enqueued']);
        $this->assertSame(2, $m['groups'], "acme, and the ungrouped tasks of acme's partition");
        $this->assertSame(['orders'], $c->queues(), 'listed once, by its name');
        $this->assertSame(['orders' => 4], $c->queuePartitions());
        $this->assertSame('p7', $q->find('t7')['payload']);
        $this->assertSame('acme', $q->find('g3')['group'], "a grouped task is found outside its id's partition");
        $this->assertNull($q->find('none'));
        $q->enqueue('later', null, 60);
        $peeked = array_column($q->peek(1000), 'at');
        $this->assertCount(51, $peeked);
        $sorted = $peeked;
        sort($sorted);
        $this->assertSame($sorted, $peeked, 'the earliest due first, over every partition');
        $this->assertSame('later', $q->peek(1000)[50]['id']);
        $this->assertCount(3, $q->peek(3), 'peek stops at its limit');
        $this->assertSame(0, $c->queue('orders')->metrics()['totals']['enqueued'], 'the same name without partitions is another queue');
    }

    public function testReserveTakesFromEveryPartitionInTurn(): void
    {
        $q = $this->client()->queue('orders', ['partitions' => 4]);
        // A group per partition: one with 100 tasks, three with one each.
        $groups = [];
        for ($g = 0; count($groups) < 4; $g++) {
            $groups[self::partitionOf("tenant$g", 4)] ??= "tenant$g";
        }
        ksort($groups);
        foreach ($groups as $part => $group) {
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "$group-$i", range(1, $part === 0 ? 100 : 1)), null), 0, null, null, $group);
        }
        $seen = [];
        for ($i = 0; $i < 4; $i++) {
            $task = $q->reserve()[0];
            $seen[] = explode('-', $task->id())[0];
            $this->assertTrue($q->ack($task));
        }
        sort($seen);
        $this->assertSame(array_values($groups), $seen, 'four reserves, one from each partition: none waits behind the busy one');
    }

    public function testEveryTransitionReachesTheTasksPartition(): void
    {
        $c = $this->client();
        $q = $c->queue('orders', ['partitions' => 4, 'maxAttempts' => 2, 'lease' => 5]);
        $ids = [];
        for ($i = 0; count($ids) < 4; $i++) {
            $ids[self::partitionOf("id$i", 4)] ??= "id$i";
        }
        ksort($ids);
        foreach ($ids as $id) {
            $q->enqueue($id, "payload of $id", 0, null, ['tagged']);
        }
        $tasks = [];
        while ($got = $q->reserve()) {
            $tasks[$got[0]->id()] = $got[0];
        }
        $this->assertCount(4, $tasks);
        [$a, $b, $d, $e] = array_values($ids);
        $this->assertTrue($q->extend($tasks[$a], 10));
        $this->assertTrue($q->nack($tasks[$a], 0, 'boom'));
        $this->assertSame(['queued', 'boom'], [$q->find($a)['state'], $q->find($a)['reason']]);
        $this->assertTrue($q->release($tasks[$b], 60));
        $this->assertSame('queued', $q->find($b)['state']);
        $this->assertTrue($q->bury($tasks[$d], 'bad'));
        $this->assertSame([$d], array_column($q->dead(), 'id'));
        $this->assertSame(1, $q->ackMany([$tasks[$e], $tasks[$e]]), 'acked once');
        $this->assertFalse($q->ack($tasks[$e]));
        $this->assertSame(1, $q->retryDead());
        $this->assertSame(3, $q->metrics()['ready'] + $q->metrics()['delayed']);
        $this->assertCount(3, $q->tagged('tagged'));
        $outcomes = array_column($q->recent(), 'outcome');
        sort($outcomes);
        $this->assertSame(['acked', 'dead', 'nacked'], $outcomes, 'the recent attempts of every partition (a release is not one)');
        $this->assertSame(1, $q->remove([$b, 'none']));

        // Pause, throttle and rates reach every partition.
        $this->assertTrue($q->pause());
        $this->assertSame([], $q->reserve());
        $this->assertNotNull($q->metrics()['paused']);
        $this->assertTrue($q->resume());
        $this->assertCount(1, $q->reserve());
        $this->assertSame(1, $q->clear());
        $this->assertSame(0, $q->metrics()['ready'] + $q->metrics()['delayed']);

        // A task of another partitioning of the same name, and moves.
        $plain = $c->queue('orders');
        $q->enqueue('y');
        $task = $q->reserve()[0];
        try {
            $plain->ack($task);
            $this->fail('a task of 4 partitions acked on the queue of one');
        } catch (ValueError $e) {
            $this->assertStringContainsString('kept in 4 partition(s), and this object keeps it in 1', $e->getMessage());
        }
        $this->assertTrue($q->ack($task));
        $q->enqueueMany(['m1' => null, 'm2' => null, 'm3' => null]);
        $this->assertSame(3, $q->moveTo($c->queue('elsewhere', ['partitions' => 4])));
        $this->assertSame(3, $c->queue('elsewhere', ['partitions' => 4])->metrics()['ready']);
    }

    /**
     * A queue's count changes by moving its waiting tasks to the queue under
     * the new count: each to its partition there (a group's together), with
     * its due time, payload, attempts and tags; one slot to 4 partitions,
     * then 4 to 7, then back to one slot.
     */
    public function testMovingToAnotherCountRoutesEachTaskToItsPartition(): void
    {
        $c = $this->client();
        $one = $c->queue('resize');
        $one->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 30)), 'p'), 0, null, ['moved']);
        $one->enqueueMany(array_fill_keys(array_map(fn ($i) => "g$i", range(1, 10)), null), 0, null, null, 'acme');
        $one->enqueue('later', 'x', 300);
        $due = $one->find('later')['at'];
        $before = array_column($one->peek(1000), 'id');
        sort($before);
        $last = $one;
        foreach ([4, 7, 1] as $n) {
            $next = $c->queue('resize', ['partitions' => $n]);
            $this->assertSame(41, $last->moveTo($next), "to $n partition(s)");
            $this->assertSame(0, $last->metrics()['ready'] + $last->metrics()['delayed'], 'nothing left behind');
            $after = array_column($next->peek(1000), 'id');
            sort($after);
            $this->assertSame($before, $after, "each task once, under $n");
            foreach ($next->partitionMetrics() as $i => $m) {
                $held = $m['ready'] + $m['delayed'];
                $this->assertSame(count(array_filter($before, fn ($id) => $i === ($n === 1 ? 0 : self::partitionOf($id[0] === 'g' ? 'acme' : $id, $n)))), $held, "partition $i of $n holds its tasks");
            }
            $this->assertEqualsWithDelta($due, $next->find('later')['at'], 1.0, 'the due time kept, relative to the clock: a move adds the time it takes');
            $this->assertSame(['moved'], $next->find('t7')['tags']);
            $this->assertSame('acme', $next->find('g3')['group']);
            $last = $next;
        }
    }

    /**
     * The count changed on a live queue (docs/past-one-node.md): workers
     * and a producer already on 8 partitions, two workers still on 4, and
     * the operator's move of what waits under 4: every task acked once.
     */
    public function testTheCountChangesOnALiveQueueWithoutLosingOrDoublingATask(): void
    {
        $c = $this->client();
        $old = $c->queue('live', ['partitions' => 4]);
        $old->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 300)), null));
        $work = fn (int $n, string $until) => '
            $q = (new RedisLock\Client())->queue("live", ["partitions" => ' . $n . ']);
            $c = new RedisLock\Client();
            $t0 = microtime(true);
            $done = [];
            while (' . $until . ') {
                foreach ($q->reserve(2, null, 0.05) as $t) { usleep(1000); if ($q->ack($t)) { $done[] = $t->id(); } }
            }
            echo implode(" ", $done);';
        $acked = '$c->queue("live", ["partitions" => 4])->metrics()["totals"]["acked"] + $c->queue("live", ["partitions" => 8])->metrics()["totals"]["acked"]';
        $procs = [];
        foreach ([4, 4] as $n) {
            $procs[] = self::start($work($n, 'microtime(true) - $t0 < 0.3'));
        }
        foreach ([8, 8, 8] as $n) {
            $procs[] = self::start($work($n, "$acked < 400 && microtime(true) - \$t0 < 30"));
        }
        $procs[] = self::start('
            $q = (new RedisLock\Client())->queue("live", ["partitions" => 8]);
            for ($i = 1; $i <= 100; $i++) { $q->enqueue("n$i"); usleep(500); }');
        usleep(100000);
        $moved = $old->moveTo($c->queue('live', ['partitions' => 8]));
        $outs = array_map(fn ($p) => self::finish($p), $procs);
        // What the old workers gave back after the move (none here: they
        // ack) would be moved by running the move again.
        $moved += $old->moveTo($c->queue('live', ['partitions' => 8]));
        $done = array_merge(...array_map(fn ($o) => preg_split('/\s+/', trim($o), -1, PREG_SPLIT_NO_EMPTY), $outs));
        $this->assertSame(count($done), count(array_unique($done)), 'no task acked twice');
        sort($done);
        $all = array_merge(array_map(fn ($i) => "t$i", range(1, 300)), array_map(fn ($i) => "n$i", range(1, 100)));
        sort($all);
        $this->assertSame($all, $done, 'every task acked once');
        $this->assertGreaterThan(0, $moved, 'the move had tasks to move');
        foreach ([4, 8] as $n) {
            $m = $c->queue('live', ['partitions' => $n])->metrics();
            $this->assertSame([0, 0, 0], [$m['ready'], $m['delayed'], $m['leased']], "nothing left under $n");
        }
    }

    public function testMaxLengthBoundsEachPartitionByItsShare(): void
    {
        $q = $this->client()->queue('bounded', ['partitions' => 2, 'maxLength' => 4]);
        $full = null;
        for ($i = 0; $i < 10 && $full === null; $i++) {
            try {
                $q->enqueue("t$i");
            } catch (RedisLock\QueueFullException $e) {
                $full = $e->getMessage();
            }
        }
        $this->assertNotNull($full, 'a partition of 2 fills up');
        $this->assertStringContainsString('a partition of queue', $full);
        $this->assertStringContainsString('at most 2 (its share of maxLength 4 over 2 partitions)', $full);
        $this->assertLessThanOrEqual(4, $q->metrics()['ready']);
    }

    public function testHistorysMemoryBoundIsSharedOutOverThePartitions(): void
    {
        $q = $this->client()->queue('remembered', ['partitions' => 4]);
        $q->keepRecent(1000, 600, 2048);
        $this->assertSame(2048, $q->recentFootprint()['maxBytes'], '512 bytes each');
        $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "r$i", range(1, 60)), null));
        while ($tasks = $q->reserve(10)) {
            foreach ($tasks as $t) {
                $q->bury($t, str_repeat('why', 10));
            }
        }
        $kept = $q->recentFootprint()['kept'];
        $this->assertGreaterThan(0, $kept);
        $this->assertLessThan(60, $kept, 'each partition keeps what fits in its 512 bytes');
        $this->assertCount($kept, $q->recent(1000));
    }

    public function testRacingWorkersRunEachTaskOnce(): void
    {
        $q = $this->client()->queue('race', ['partitions' => 8]);
        $batch = [];
        for ($i = 0; $i < 400; $i++) {
            $batch["t$i"] = "p$i";
        }
        $q->enqueueMany(array_slice($batch, 0, 200, true));
        $q->enqueueMany(array_slice($batch, 200, null, true), 0, null, null, 'tenant');
        $worker = '
            $q = (new RedisLock\Client())->queue("race", ["partitions" => 8]);
            $done = [];
            while ($tasks = $q->reserve(3, null, 0.5)) {
                foreach ($tasks as $t) { if ($q->ack($t)) { $done[] = $t->id(); } }
            }
            echo implode(" ", $done);';
        $outs = self::phpMany(array_fill(0, 8, $worker));
        $done = array_merge(...array_map(fn ($o) => preg_split('/\s+/', trim($o), -1, PREG_SPLIT_NO_EMPTY), $outs));
        sort($done);
        $expected = array_keys($batch);
        sort($expected);
        $this->assertSame($expected, $done, 'each of the 400 acked once, by one worker');
        $m = $q->metrics();
        $this->assertSame([0, 0, 400, 0], [$m['ready'] + $m['delayed'], $m['leased'], $m['totals']['acked'], $m['totals']['expired']]);
    }

    public function testABlockedReserveGetsATaskOfAnyPartition(): void
    {
        $q = $this->client()->queue('wake', ['partitions' => 4]);
        $proc = self::start('
            $q = (new RedisLock\Client())->queue("wake", ["partitions" => 4]);
            $t0 = microtime(true);
            $got = $q->reserve(1, null, 10);
            echo ($got[0] ?? null)?->id(), " ", round(microtime(true) - $t0, 3);');
        // Each of the 4 partitions' lines holds the waiter.
        $deadline = microtime(true) + 20;
        while (count(array_filter($this->redis->keys('queue:{*}#s*/4:4:wake:line'), fn ($k) => $this->redis->lLen($k) > 0)) < 4) {
            $this->assertLessThan($deadline, microtime(true), 'the waiter joined every line');
            usleep(5000);
        }
        $q->enqueue('late');
        [$id, $waited] = explode(' ', trim(self::finish($proc))) + [null, null];
        $this->assertSame('late', $id);
        fwrite(STDERR, "[partitions] a blocked reserve got its task after $waited s\n");
    }

    public function testBadPartitionCountsAreRefusedAndHostileNamesAreQueuesOfTheirOwn(): void
    {
        $c = $this->client();
        $before = $this->snapshot();
        $this->assertAllRefused([
            fn () => $c->queue('x', ['partitions' => 0]),
            fn () => $c->queue('x', ['partitions' => -1]),
            fn () => $c->queue('x', ['partitions' => 129]),
            fn () => $c->queue('x', ['partitions' => PHP_INT_MAX]),
            fn () => $c->queue('x', ['partitions' => 1.5]),
            fn () => $c->queue('x', ['partitions' => NAN]),
            fn () => $c->queue('x', ['partitions' => INF]),
            fn () => $c->queue('x', ['partitions' => 'eight']),
            fn () => $c->queue('x', ['partitions' => []]),
            fn () => $c->queue('x', ['partitions' => "4\0"]),
        ]);
        $this->assertSame($before, $this->snapshot());
        $this->assertSame(1, $c->queue('x', ['partitions' => 1])->partitions());
        $this->assertSame(128, $c->queue('x', ['partitions' => 128])->partitions());
        // Names that look like keys: each its own queue, its tasks its own.
        $names = ['x:dead', '{t}:leases', "a\0b", '}{', str_repeat('n', 10000), 'queue:{ZA4}#s3/4:6:orders'];
        foreach ($names as $i => $name) {
            $q = $c->queue($name, ['partitions' => 3]);
            $q->enqueue("only-$i", "\0payload\xff");
            $this->assertSame(1, $q->metrics()['ready'], $name);
            $task = $q->reserve()[0];
            $this->assertSame(["only-$i", "\0payload\xff"], [$task->id(), $task->payload()]);
            $this->assertTrue($q->ack($task));
        }
        $listed = $c->queuePartitions();
        ksort($listed);
        $expected = array_fill_keys($names, 3);
        ksort($expected);
        $this->assertSame($expected, $listed, 'every partitioned name listed once, with its count');
        $this->assertSame(0, $c->queue('orders')->metrics()['totals']['enqueued'], "a name like a partition's key touched no other queue");
    }

    /**
     * redislock.partitions gives the queues it names their count where the
     * code gives none: the drop-in RedisQueue, Client::queue() without the
     * option (which still wins). A bad map is a startup warning and keeps
     * the previous one; ini_set() of one returns false.
     */
    public function testTheIniMapPartitionsTheDropInQueueAndTheQueuesItNames(): void
    {
        $ini = ['redislock.partitions' => 'legacy=4 queues:default=2 legacy=3', 'redislock.default_dsn' => RedisServer::$main->dsn()];
        $out = self::php('
            $q = new RedisQueue();
            $q->enqueue("legacy", ["a", "b", "c", "d", "e", "f"]);
            $q->enqueue("legacy", "late", 10, 60);
            $c = new RedisLock\Client();
            $top = array_column($q->top("legacy", 10), "id");
            $popped = array_column($q->pop("legacy", 4), "id");
            $popped = array_merge($popped, array_column($q->pop("legacy", 10), "id"));
            sort($popped);
            echo json_encode([
                $c->queue("legacy")->partitions(), $c->queue("queues:default")->partitions(),
                $c->queue("other")->partitions(), $c->queue("legacy", ["partitions" => 1])->partitions(),
                count($top), $popped, $q->pop("legacy"),
                $c->queue("legacy")->metrics()["delayed"],
                $q->dequeue("legacy", "late", $c->queue("legacy")->find("late")["at"]),
                ini_set("redislock.partitions", "x=0"), ini_get("redislock.partitions"),
            ]);', $ini);
        $this->assertSame([3, 2, 1, 1, 6, ['a', 'b', 'c', 'd', 'e', 'f'], false, 1, 1, false, 'legacy=4 queues:default=2 legacy=3'], json_decode($out, true), $out);
        $this->assertNotSame([], $this->redis->keys('queue:{*}#s*/3:6:legacy:stats'), 'the last count given for a name: 3');
        $this->assertSame([], $this->redis->keys('*/4:6:legacy*'));
        $this->assertSame(0, $this->redis->exists('{Queue:legacy}:stats'), 'nothing in the one-slot layout');
        foreach (['x=0', 'x=129', 'x', '=4', 'x=four'] as $bad) {
            $out = self::php('echo "[", ini_get("redislock.partitions"), "]";', ['redislock.partitions' => "ok=2 $bad"]);
            $this->assertStringContainsString('redislock.partitions holds queue=count pairs separated by spaces (a count of 1 to 128)', $out, $bad);
            $this->assertStringContainsString('[]', $out, "$bad: the setting is ignored whole");
        }
    }

    public function testTheCliShowsAPartitionedQueueWholeWithItsPartitions(): void
    {
        $q = $this->client()->queue('shown', ['partitions' => 3]);
        $q->enqueueMany(['a' => null, 'b' => null, 'c' => null, 'd' => null]);
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        $run = function (array $args) use ($so): string {
            $cmd = array_map('escapeshellarg', [PHP_BINARY, '-n', '-d', "extension=$so", __DIR__ . '/../bin/redislock', ...$args]);
            return (string) shell_exec('REDISLOCK_URL=' . escapeshellarg(RedisServer::$main->dsn()) . ' ' . implode(' ', $cmd) . ' 2>&1');
        };
        $status = $run(['status']);
        $this->assertMatchesRegularExpression('/^shown\s+running\s+4\s/m', $status, $status);
        $shown = $run(['queue', 'shown']);
        $this->assertStringContainsString('3 partitions:', $shown);
        $parts = array_map(fn ($m) => $m['ready'], $q->partitionMetrics());
        foreach ($parts as $i => $ready) {
            $this->assertMatchesRegularExpression("/^$i\\s+$ready\\s+0\\s+0\\s+0\$/m", $shown, $shown);
        }
        // The count changed from the CLI: 3 partitions to 5.
        $moved = $run(['move', 'shown', '--partitions=3', '--to-partitions=5', '--yes']);
        $this->assertStringContainsString('4 task(s) moved', $moved, $moved);
        $this->assertSame(4, $this->client()->queue('shown', ['partitions' => 5])->metrics()['ready']);
        $this->assertSame(0, $q->metrics()['ready']);
    }
}
