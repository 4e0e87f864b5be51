<?php

/**
 * RedisLock\MultiLock: all or none, one round trip when it can, no deadlock
 * between callers asking for overlapping sets in different orders.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class MultiLockTest extends RedisLockTestCase
{
    private function client(): RedisLock\Client
    {
        return new RedisLock\Client(RedisServer::$main->dsn());
    }

    public function testAllOrNone(): void
    {
        $c = $this->client();
        $m = $c->lockMany(['b', 'a', 'c', 'a']);
        $this->assertSame(['a', 'b', 'c'], $m->names(), 'sorted, duplicates dropped');
        $other = $c->lock('c');
        $this->assertTrue($other->acquire());
        $this->assertFalse($m->acquire());
        $this->assertFalse($m->acquire(0.2));
        $this->assertSame([], $m->tokens());
        $held = array_filter(array_keys($this->snapshot()), fn ($k) => !str_ends_with($k, ':fence'));
        $this->assertSame(['lock:{c}'], array_values($held), 'none of the others was kept');
        $other->release();
        $this->assertTrue($m->acquire());
        $this->assertTrue($m->isHeld());
        $this->assertSame(['a', 'b', 'c'], array_keys($m->tokens()));
        $this->assertFalse($c->lock('a')->acquire());
        $this->assertTrue($m->extend(60));
        $this->assertEqualsWithDelta(60000, $this->redis->pTtl('lock:{b}'), 1000);
        $this->assertTrue($m->release());
        $this->assertFalse($m->isHeld());
        $this->expectException(RedisLock\NotHeldException::class);
        $m->release();
    }

    public function testTheFirstTryIsOneRoundTrip(): void
    {
        $c = $this->client();
        // Connected, and the script loaded.
        $warm = $c->lockMany(['w1', 'w2']);
        $warm->acquire();
        $warm->release();
        $m = $c->lockMany(['x', 'y', 'z']);
        $scripts = fn (): int => $this->scriptCalls();
        $before = $scripts();
        $this->assertTrue($m->acquire());
        $this->assertSame(1, $scripts() - $before, 'one script took all three');
        $this->assertCount(3, $m->tokens());
    }

    public function testAWaitingLockIsTakenWhenReleased(): void
    {
        $c = $this->client();
        $holder = $c->lock('q');
        $holder->acquire();
        $p = proc_open(self::command('
            $m = (new RedisLock\Client())->lockMany(["p", "q"]);
            echo $m->acquire(20) ? "got" : "timeout";'), [1 => ['pipe', 'w']], $pipes);
        $deadline = microtime(true) + 20;
        while ($this->redis->lLen('lock:{q}:line') !== 1) {
            $this->assertLessThan($deadline, microtime(true));
            usleep(5000);
        }
        $holder->release();
        $this->assertSame('got', stream_get_contents($pipes[1]));
        proc_close($p);
    }

    public function testOverlappingSetsInAnyOrderNeitherDeadlockNorOverlap(): void
    {
        $dir = sys_get_temp_dir() . '/multi' . getmypid();
        @mkdir($dir);
        $names = ['r1', 'r2', 'r3', 'r4'];
        $codes = [];
        for ($p = 0; $p < 8; $p++) {
            $codes[] = '
                mt_srand(' . $p . ');
                $c = new RedisLock\Client();
                $names = ' . var_export($names, true) . ';
                $overlaps = $timeouts = 0;
                for ($i = 0; $i < 20; $i++) {
                    shuffle($names);
                    $set = array_slice($names, 0, mt_rand(2, 4));
                    $m = $c->lockMany($set, ["ttl" => 30]);
                    if (!$m->acquire(60)) { $timeouts++; continue; }
                    $files = [];
                    foreach ($set as $n) {
                        $f = fopen("' . $dir . '/$n", "c");
                        if (!flock($f, LOCK_EX | LOCK_NB)) { $overlaps++; }
                        $files[] = $f;
                    }
                    usleep(300);
                    foreach ($files as $f) { flock($f, LOCK_UN); fclose($f); }
                    $m->release();
                }
                echo "$overlaps $timeouts\n";';
        }
        $records = self::records(self::phpMany($codes));
        array_map('unlink', glob("$dir/*"));
        rmdir($dir);
        $this->assertCount(8, $records);
        $this->assertSame(0, array_sum(array_column($records, 0)), 'two holders of one name');
        $this->assertSame(0, array_sum(array_column($records, 1)), 'a caller waited a minute: a deadlock');
    }

    public function testUnconfirmedByReplicasNoneIsKept(): void
    {
        // This server has no replica: WAIT finds none for the first lock.
        $m = $this->client()->lockMany(['r1', 'r2', 'r3'], ['replicas' => 1, 'replicaTimeout' => 0.05]);
        try {
            $m->acquire();
            $this->fail('acquired without the replica asked for');
        } catch (RedisLock\NotAcquiredException $e) {
            $this->assertStringContainsString('replicas', $e->getMessage());
        }
        $held = array_filter(array_keys($this->snapshot()), fn ($k) => !str_ends_with($k, ':fence'));
        $this->assertSame([], array_values($held), 'a lock taken by the script was left behind');
        $this->assertFalse($m->isHeld());
    }

    public function testBadInputIsRefused(): void
    {
        $c = $this->client();
        $this->assertAllRefused([
            fn () => $c->lockMany([]),
            fn () => $c->lockMany('a'),
            fn () => $c->lockMany(null),
            fn () => $c->lockMany(['a', '']),
            fn () => $c->lockMany(['a', []]),
            fn () => $c->lockMany(['a'], ['reentrant' => true]),
            fn () => $c->lockMany(['a'], ['ttl' => NAN]),
            fn () => $c->lockMany(['a'])->acquire(-1),
            fn () => $c->lockMany(['a'])->acquire(NAN),
            fn () => $c->lockMany(['a'])->extend(0),
        ]);
        $this->assertSame([], $this->snapshot());
        $m = $c->lockMany(["a\0b", "\xff", str_repeat('n', 100000)]);
        $this->assertTrue($m->acquire());
        $this->assertCount(3, $m->tokens());
        $this->assertTrue($m->release());
    }
}
