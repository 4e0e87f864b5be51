<?php

use RedisLock\Client;
use RedisLock\ConnectionException;
use RedisLock\NotAcquiredException;

/**
 * Beyond one Redis server: the seed classes and the object API on a Redis
 * Cluster, through Sentinel, over TLS with an ACL user, and the opt-in
 * replica acknowledgement. (Failovers are tested on the engines, in
 * tests/cluster.rs and tests/sentinel.rs.)
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class TopologyTest extends RedisLockTestCase
{
    private static ?ClusterNodes $cluster = null;

    private static function cluster(): ClusterNodes
    {
        return self::$cluster ??= new ClusterNodes();
    }

    public static function tearDownAfterClass(): void
    {
        self::$cluster = null;
    }

    /** Runs $code on $cluster; it prints a JSON list of $count checks, each true. */
    private function assertAllChecksHold(ClusterNodes $cluster, string $code, int $count): void
    {
        $out = self::php($code, ['redislock.default_dsn' => $cluster->dsn()]);
        $results = json_decode($out, true);
        $this->assertIsArray($results, $out);
        $this->assertNotContains(false, $results, $out);
        $this->assertCount($count, $results);
    }

    public function testTheSeedClassesAndTheObjectApiOnACluster(): void
    {
        $cluster = self::cluster();
        $code = <<<'PHP'
            $out = [];
            // Lock_Service: the order key and the id counter are in different slots.
            foreach ([101, 202, 303] as $order) {
                $id = Lock_Service::addLock($order, 30);
                $out[] = is_int($id) && Lock_Service::addLock($order, 30) === false
                    && Lock_Service::releaseLock($order, $id) && Lock_Service::addLock($order, 30) > $id;
            }
            $seed = new RedisLock();
            foreach (['a', 'b', 'c', 'd'] as $name) {
                $out[] = $seed->lock($name, 0, 30) && $seed->isLocking($name) && $seed->expire($name, 60);
            }
            $out[] = $seed->unlockAll() && !$seed->isLocking('a');
            $q = new RedisQueue();
            foreach (['q1', 'q2', 'q3'] as $name) {
                $out[] = $q->enqueue($name, 'x') && $q->enqueue($name, 'y', 10, 60)
                    && array_column($q->top($name, 5), 'id') === ['x']
                    && array_column($q->pop($name, 5), 'id') === ['x'] && $q->pop($name, 5) === [];
            }
            $client = new RedisLock\Client();
            foreach (['j1', 'j2', 'j3', 'j4'] as $name) {
                $lock = $client->lock($name, ['ttl' => 10]);
                $out[] = $lock->acquire() && !$client->lock($name)->acquire() && $lock->extend(20)
                    && $lock->token() > 0 && $lock->release();
                $queue = $client->queue($name);
                $queue->enqueue('t', 'payload');
                [$task] = $queue->reserve();
                $out[] = $task->payload() === 'payload' && $queue->ack($task) && $queue->metrics()['ready'] === 0;
            }
            // Waiting on several queues at once, across nodes.
            $qs = [$client->queue('w1'), $client->queue('w2'), $client->queue('w3')];
            $qs[2]->enqueue('late', null, 0.2);
            $got = $client->reserve($qs, 1, null, 5);
            $out[] = count($got) === 1 && $got[0]->queue() === 'w3';
            echo json_encode($out);
            PHP;
        $this->assertAllChecksHold($cluster, $code, 20);

        $r = $cluster->client();
        $this->assertSame(['y'], array_keys($r->zRange('Queue:q1', 0, -1, true)));
        $this->assertGreaterThan(0, (int) $r->get('lock_unique_id'));
        $this->assertFalse($r->exists('Lock:a') > 0);
    }

    public function testStocksSemaphoresReadWriteAndMultiLocksOnACluster(): void
    {
        $cluster = self::cluster();
        $code = <<<'PHP'
            $out = [];
            $c = new RedisLock\Client();
            // A stock and its orders queue share a slot through one hash tag.
            $s = $c->stock('{sale7}', ['orders' => '{sale7}:orders', 'perBuyer' => 1]);
            $out[] = $s->set(2) && $s->take(1, 'ann') === 1 && $s->take(1, 'ann') === false
                && $s->take(1, 'bob') === 0 && $s->take(1, 'cat') === false;
            $out[] = count($c->queue('{sale7}:orders')->reserve(5)) === 2;
            try {
                $c->stock('sale8', ['orders' => 'orders8']);
                $out[] = false;
            } catch (ValueError $e) {
                $out[] = str_contains($e->getMessage(), 'hash slot');
            }
            foreach (['s1', 's2', 's3'] as $name) {
                $a = $c->semaphore($name, 2);
                $b = $c->semaphore($name, 2);
                $out[] = $a->acquire(2) && !$b->acquire(1) && $a->release() && $b->acquire(1)
                    && $b->available() === 1 && $b->release();
                $r = $c->readLock($name);
                $w = $c->writeLock($name);
                $out[] = $r->acquire() && !$w->acquire() && $r->release() && $w->acquire()
                    && $w->token() > 0 && $w->release();
            }
            // Names in many slots: taken in order; in one slot: at once.
            foreach ([['m1', 'm2', 'm3'], ['{m}1', '{m}2']] as $names) {
                $m = $c->lockMany($names);
                $out[] = $m->acquire() && !$c->lock($names[0])->acquire() && count($m->tokens()) === count($names)
                    && $m->release() && $c->lockMany($names)->acquire();
            }
            // Limiters: one on its own slot, several only with one hash tag,
            // else a clear error (never CROSSSLOT) and nothing consumed.
            $ip = $c->limiter('{shop}:ip', ['limit' => 1, 'per' => 60]);
            $user = $c->limiter('{shop}:user', ['limit' => 5, 'per' => 60, 'policy' => 'sliding_window']);
            $out[] = $c->attempt([[$ip, '1.2.3.4'], [$user, 'ann']])->allowed()
                && $c->attempt([[$ip, '1.2.3.4'], [$user, 'ann']])->limiter() === '{shop}:ip'
                && $user->peek('ann')->remaining() === 4;
            $apart = $c->limiter('global', ['limit' => 5, 'per' => 60]);
            try {
                $c->attempt([[$user, 'bob'], $apart]);
                $out[] = false;
            } catch (ValueError $e) {
                $out[] = str_contains($e->getMessage(), 'must share a hash slot') && $apart->peek()->remaining() === 5
                    && $user->peek('bob')->remaining() === 5;
            }
            echo json_encode($out);
            PHP;
        $this->assertAllChecksHold($cluster, $code, 13);
    }

    public function testNoLostUpdatesOnAClusterUnderContention(): void
    {
        $cluster = self::cluster();
        // The counter is a file: read, add one, write back, with no atomicity
        // but the lock's.
        $file = tempnam(sys_get_temp_dir(), 'redislock-counter');
        file_put_contents($file, '0');
        $code = <<<PHP
            \$lock = (new RedisLock\\Client())->lock('counter', ['ttl' => 10]);
            for (\$i = 0; \$i < 100; \$i++) {
                \$lock->synchronized(function () {
                    \$v = (int) file_get_contents('$file');
                    file_put_contents('$file', (string) (\$v + 1));
                });
            }
            echo "done";
            PHP;
        $outs = self::phpMany(array_fill(0, 8, $code), ['redislock.default_dsn' => $cluster->dsn()]);
        foreach ($outs as $out) {
            $this->assertSame('done', $out);
        }
        $this->assertSame('800', file_get_contents($file));
        unlink($file);
    }

    /**
     * One stock in 8 shards over the Cluster's primaries, bought by 12
     * processes of which 4 are killed (SIGKILL) while they buy, some of
     * them, most likely, between the two steps of a move: after the run,
     * every unit of the 600 is either bought or still in the stock, once.
     */
    public function testAShardedStockOnAClusterLosesNoUnitToKilledBuyers(): void
    {
        $cluster = self::cluster();
        $ini = ['redislock.default_dsn' => $cluster->dsn()];
        $open = '$s = (new RedisLock\Client())->stock("flash", ["shards" => 8, "perBuyer" => 3]);';
        $this->assertSame('ok', self::php($open . '$s->set(600); echo "ok";', $ini));
        $procs = [];
        for ($w = 0; $w < 12; $w++) {
            $procs[] = self::start($open . '
                for ($round = 0; $round < 4; $round++) {
                    for ($b = 0; $b < 25; $b++) { $s->take(1, "w' . $w . '-b$b"); usleep(2000); }
                }', $ini);
        }
        // The sale lasts about 0.3 s; the shards drain, and units move,
        // toward its end.
        usleep(150000);
        foreach ([1, 4, 7, 10] as $killed) {
            proc_terminate($procs[$killed][0], SIGKILL);
            usleep(20000);
        }
        foreach ($procs as $proc) {
            self::finish($proc);
        }
        // remaining() finishes the moves the killed cut short; then fresh
        // buyers take all that is left, and not one unit more.
        $out = self::php($open . '
            $before = $s->remaining();
            $n = 0;
            while ($s->take(1, "sweep" . $n) !== false) { $n++; }
            echo json_encode([$before, $n, $s->remaining(), array_sum($s->buyers()), max($s->buyers())]);', $ini);
        [$before, $swept, $left, $bought, $most] = json_decode($out, true) ?? [null, null, null, null, null];
        $this->assertSame($before, $swept, $out);
        $this->assertSame(0, $left, $out);
        $this->assertSame(600, $bought, $out);
        $this->assertLessThanOrEqual(3, $most, $out);
    }

    /**
     * One queue in 6 partitions over the Cluster's 3 primaries, worked by
     * 6 processes of which 2 are killed (SIGKILL) while they hold leases:
     * every task is acked once in the end (the killed workers' leases run
     * out and others take their tasks), none by two survivors.
     */
    public function testAPartitionedQueueOnAClusterLosesNoTaskToKilledWorkers(): void
    {
        $cluster = self::cluster();
        $ini = ['redislock.default_dsn' => $cluster->dsn()];
        $open = '$q = (new RedisLock\Client())->queue("jobs", ["partitions" => 6, "lease" => 1]);';
        $this->assertSame('ok', self::php($open . '
            $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "t$i", range(1, 200)), "x"));
            foreach (["a", "b", "c", "d"] as $g) {
                $q->enqueueMany(array_fill_keys(array_map(fn ($i) => "$g$i", range(1, 25)), "x"), 0, null, null, "tenant-$g");
            }
            echo "ok";', $ini));
        $held = [];
        foreach ($cluster->nodes as $node) {
            if (str_contains($node->client()->rawCommand('INFO', 'replication'), 'role:master')) {
                $held[] = count($node->client()->keys('queue:{*}#s*/6:4:jobs'));
            }
        }
        sort($held);
        $this->assertSame(6, array_sum($held), 'the 6 partitions on the primaries');
        $this->assertGreaterThan(0, $held[0], 'every primary holds a partition: ' . json_encode($held));
        $procs = [];
        for ($w = 0; $w < 6; $w++) {
            $procs[] = self::start($open . '
                $deadline = microtime(true) + 30;
                while ($q->metrics()["totals"]["acked"] < 300 && microtime(true) < $deadline) {
                    foreach ($q->reserve(3, null, 0.3) as $t) {
                        usleep(5000);
                        if ($q->ack($t)) { echo $t->id(), "\n"; }
                    }
                }', $ini);
        }
        usleep(100000);
        foreach ([1, 4] as $killed) {
            proc_terminate($procs[$killed][0], SIGKILL);
        }
        $acked = [];
        foreach ($procs as $w => $proc) {
            $out = self::finish($proc);
            if (!in_array($w, [1, 4], true)) {
                array_push($acked, ...preg_split('/\s+/', trim($out), -1, PREG_SPLIT_NO_EMPTY));
            }
        }
        $this->assertSame(count($acked), count(array_unique($acked)), 'no task acked by two survivors');
        $m = json_decode(self::php($open . 'echo json_encode($q->metrics());', $ini), true);
        $this->assertSame([0, 0, 0, 300], [$m['ready'], $m['delayed'], $m['leased'], $m['totals']['acked']], json_encode($m));        fwrite(STDERR, "[partitions] Cluster: {$m['totals']['expired']} lease(s) of the killed workers ran out and were run again\n");
        $tagged = new RedisLock\Client(['dsn' => $cluster->dsn(), 'prefix' => '{app}:']);
        foreach (['stock' => 'shards', 'queue' => 'partitions'] as $method => $option) {
            try {
                $tagged->$method('one-slot', [$option => 2]);
                $this->fail("$option under a prefix with a hash tag");
            } catch (ValueError $e) {
                $this->assertStringContainsString('cannot spread; use a prefix without braces', $e->getMessage());
            }
        }
    }

    /**
     * A stock in 8 shards with its orders on a queue in 8 partitions, on a
     * Cluster: each take writes its order task in its shard's slot (the
     * names share a hash tag), every unit sold has its task, and names
     * apart are refused.
     */
    public function testAShardedStockWithOrdersOnACluster(): void
    {
        $out = self::php('
            $c = new RedisLock\Client();
            $s = $c->stock("{flash2}", ["shards" => 8, "orders" => "{flash2}:orders"]);
            $s->set(40);
            $sold = 0;
            for ($b = 0; $b < 60; $b++) { if ($s->take(1, "b$b") !== false) { $sold++; } }
            $q = $c->queue("{flash2}:orders", ["partitions" => 8]);
            $got = 0;
            while ($t = $q->reserve(10)) { $got += $q->ackMany($t); }
            try {
                $c->stock("apart", ["shards" => 2, "orders" => "elsewhere"]);
                $apart = "taken";
            } catch (ValueError $e) {
                $apart = $e->getMessage();
            }
            echo json_encode([$sold, $got, $s->remaining(), $apart]);', ['redislock.default_dsn' => self::cluster()->dsn()]);
        [$sold, $got, $left, $apart] = json_decode($out, true) ?? [null, null, null, $out];
        $this->assertSame([40, 40, 0], [$sold, $got, $left], $out);
        $this->assertStringContainsString('must share a hash slot', $apart);
    }

    /**
     * A workflow on a Cluster: in one step when its queues share a hash
     * tag, in steps across slots otherwise (partitions too), run once with
     * every result either way; a busy child in another slot leaves nothing.
     */
    public function testAWorkflowOnAClusterInOneSlotAndAcrossSlots(): void
    {
        $this->assertAllChecksHold(self::cluster(), <<<'PHP'
            $c = new RedisLock\Client();
            $render = $c->queue('{report}:render');
            $pages = $c->queue('{report}:pages');
            $checks = [$render->enqueue('r1', null, children: [['queue' => $pages, 'id' => 'a'], ['queue' => $pages, 'id' => 'b']]) === 'added'];
            $checks[] = $render->find('r1')['children'] === 2;
            foreach ($pages->reserve(2) as $t) {
                $pages->ack($t, 'x' . $t->id());
            }
            $t = $render->reserve()[0] ?? null;
            $checks[] = $t !== null && $t->childResults() === ['{report}:pages/a' => 'xa', '{report}:pages/b' => 'xb'];
            $render = $c->queue('render');
            $thumbs = $c->queue('thumbs', ['partitions' => 3]);
            $checks[] = $render->enqueue('r2', null, children: [['queue' => 'pages', 'id' => 'a'],
                ['queue' => $thumbs, 'id' => 't1'], ['queue' => $thumbs, 'id' => 't2'], ['queue' => $thumbs, 'id' => 't3']]) === 'added';
            $checks[] = $render->find('r2')['children'] === 4;
            $done = 0;
            foreach ([$c->queue('pages'), $thumbs] as $q) {
                while ($got = $q->reserve(10)) {
                    foreach ($got as $t) {
                        $done += (int) $q->ack($t, 'x' . $t->id());
                    }
                }
            }
            $checks[] = $done === 4;
            $t = $render->reserve()[0] ?? null;
            $checks[] = $t !== null && $t->childResults() === ['pages/a' => 'xa', 'thumbs/t1' => 'xt1', 'thumbs/t2' => 'xt2', 'thumbs/t3' => 'xt3'];
            $checks[] = $t !== null && $render->ack($t) && $render->reserve() === [];
            $thumbs->enqueue('t9');
            try {
                $render->enqueue('r3', null, children: [['queue' => 'pages', 'id' => 'b'], ['queue' => $thumbs, 'id' => 't9']]);
                $checks[] = false;
            } catch (RedisLock\RedisLockException $e) {
                $checks[] = str_contains($e->getMessage(), "task 't9' of queue 'thumbs' is queued");
            }
            $checks[] = $render->find('r3') === null && $c->queue('pages')->find('b') === null;
            echo json_encode($checks);
            PHP, 10);
    }

    public function testSentinelFindsTheMaster(): void
    {
        $pair = new ReplicatedPair();
        $sentinels = [];
        for ($i = 0; $i < 3; $i++) {
            $sentinels[] = RedisServer::startWith(function (string $dir) use ($pair) {
                file_put_contents("$dir/sentinel.conf",
                    "sentinel monitor mymaster 127.0.0.1 {$pair->master->port} 2\n");
                return ["$dir/sentinel.conf", '--sentinel'];
            });
        }
        $hosts = implode(',', array_map(fn ($s) => "127.0.0.1:{$s->port}", $sentinels));
        $client = new Client("redis+sentinel://$hosts/mymaster");
        $lock = $client->lock('s');
        $this->assertTrue($lock->acquire());
        $this->assertTrue((bool) $pair->master->client()->exists('lock:{s}'));
        $this->assertTrue($lock->release());
        try {
            (new Client("redis+sentinel://$hosts/other"))->lock('s')->acquire();
            $this->fail('no such master');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('other', $e->getMessage());
        }
    }

    public function testTlsWithAnAclUser(): void
    {
        $tls = new TlsServer();
        $lock = (new Client($tls->dsn('app:s3cret')))->lock('t');
        $this->assertTrue($lock->acquire());
        $this->assertTrue((bool) $tls->server->client()->exists('lock:{t}'));
        $this->assertTrue($lock->release());
        try {
            (new Client($tls->dsn('app:wrong-pw')))->lock('t')->acquire();
            $this->fail('wrong password');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('authentication failed', $e->getMessage());
            $this->assertStringNotContainsString('wrong-pw', $e->getMessage());
        }
        // phpinfo() shows the DSN without the password.
        $info = self::php('phpinfo(INFO_MODULES);', ['redislock.default_dsn' => $tls->dsn('app:s3cret')]);
        $this->assertStringContainsString('rediss://app:***@', $info);
        $this->assertStringNotContainsString('s3cret', $info);
    }

    public function testAcquireCanWaitForReplicas(): void
    {
        $pair = new ReplicatedPair();
        $client = new Client($pair->master->dsn());
        $lock = $client->lock('w', ['replicas' => 1, 'replicaTimeout' => 0.5]);
        $this->assertTrue($lock->acquire());
        $this->assertTrue((bool) $pair->replica->client()->exists('lock:{w}'), 'on the replica when acquire returned');
        $this->assertTrue($lock->release());

        // Two replicas asked for, one exists: the acquire is undone.
        $lock = $client->lock('w', ['replicas' => 2, 'replicaTimeout' => 0.2]);
        try {
            $lock->acquire();
            $this->fail('only one replica');
        } catch (NotAcquiredException $e) {
            $this->assertStringContainsString('only 1 of 2 replicas', $e->getMessage());
        }
        $this->assertFalse($lock->isHeld());
        $this->assertFalse((bool) $pair->master->client()->exists('lock:{w}'), 'released');
        foreach ([-1, 'x', 1.5, null] as $bad) {
            try {
                $client->lock('w', ['replicas' => $bad]);
                $this->fail('replicas ' . var_export($bad, true));
            } catch (TypeError|ValueError) {
                $this->addToAssertionCount(1);
            }
        }
    }

    /**
     * A stock's takes with `replicas`: a take returns once the replica has
     * it; one that fewer replicas acknowledged than asked is undone whole
     * (units, the buyer's count, the idempotency key) and throws.
     */
    public function testAStockTakeCanWaitForReplicas(): void
    {
        $pair = new ReplicatedPair();
        $client = new Client($pair->master->dsn());
        foreach ([1, 4] as $shards) {
            $stock = $client->stock("sale$shards", ['replicas' => 1, 'replicaTimeout' => 0.5, 'shards' => $shards, 'perBuyer' => 5]);
            $this->assertTrue($stock->set(10));
            $this->assertNotFalse($stock->take(2, 'ann', ['key' => 'k1']));
            $replica = new Client($pair->replica->dsn());
            $this->assertSame(2, $replica->stock("sale$shards", ['shards' => $shards])->bought('ann'), 'on the replica when take() returned');

            $strict = $client->stock("sale$shards", ['replicas' => 2, 'replicaTimeout' => 0.2, 'shards' => $shards, 'perBuyer' => 5]);
            try {
                $strict->take(3, 'ann', ['key' => 'k2']);
                $this->fail('only one replica');
            } catch (NotAcquiredException $e) {
                $this->assertStringContainsString('only 1 of 2 replicas acknowledged the take of 3 units in time; it was undone: nothing is taken', $e->getMessage());
            }
            $this->assertSame(8, $stock->remaining(), 'the units are back');
            $this->assertSame(2, $stock->bought('ann'), 'the buyer count is back');
            // The key was forgotten: the same key takes anew.
            $this->assertNotFalse($stock->take(3, 'ann', ['key' => 'k2']));
            $this->assertSame(5, $stock->remaining());
        }
        foreach ([['replicas' => -1], ['replicas' => 'x'], ['replicas' => 1.5], ['replicaTimeout' => 0], ['replicaTimeout' => NAN],
            ['replicas' => 1, 'orders' => 'q']] as $bad) {
            try {
                $client->stock('w', $bad);
                $this->fail('stock options ' . var_export($bad, true));
            } catch (TypeError|ValueError) {
                $this->addToAssertionCount(1);
            }
        }
    }
}
