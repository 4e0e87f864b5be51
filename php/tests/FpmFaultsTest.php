<?php

/**
 * Faults under Debian's php-fpm: workers recycled by pm.max_requests, a
 * worker killed in the middle of a request that holds a lock, and a soak
 * run that watches the workers' memory across requests.
 */
final class FpmFaultsTest extends RedisLockTestCase
{
    private const SCRIPTS = [
        'work.php' => '<?php
            $l = new RedisLock();
            $ok = $l->lock("w", 5, 10);
            $q = (new RedisLock\Client())->queue("soak");
            $q->enqueue("t" . mt_rand(), "payload");
            $done = $q->ackMany($q->reserve(10));
            echo getmypid(), " ", $ok && $l->unlock("w") && $done > 0 ? "ok" : "fail";',
        'hold.php' => '<?php
            $l = (new RedisLock\Client())->lock("held", ["ttl" => 1, "autoRenew" => true]);
            $l->acquire(5);
            file_put_contents(__DIR__ . "/holder.pid", getmypid());
            sleep(30);',
    ];

    /**
     * The pids of the connections named by redislock, one entry each (but
     * this test process's own).
     */
    private function namedConnections(): array
    {
        preg_match_all('/ name=redislock-(\d+) /', $this->redis->rawCommand('CLIENT', 'LIST'), $m);
        return array_values(array_diff(array_map('intval', $m[1]), [getmypid()]));
    }

    private function privateKb(int $master): int
    {
        $kb = 0;
        foreach (glob('/proc/[0-9]*/stat') as $stat) {
            $fields = explode(' ', (string) @file_get_contents($stat));
            if ((int) ($fields[3] ?? 0) === $master) {
                preg_match_all('/^Private_(?:Clean|Dirty):\s+(\d+)/m', (string) @file_get_contents(dirname($stat) . '/smaps_rollup'), $m);
                $kb += array_sum(array_map('intval', $m[1]));
            }
        }
        return $kb;
    }

    public function testRecycledWorkersEachOpenTheirOwnConnection(): void
    {
        $pool = new FpmPool(self::SCRIPTS, ['pm.max_requests' => '4']);
        $pids = [];
        for ($i = 0; $i < 24; $i++) {
            [$pid, $result] = explode(' ', $pool->request('work.php'));
            $this->assertSame('ok', $result);
            $pids[(int) $pid] = true;
        }
        $this->assertGreaterThanOrEqual(6, count($pids), 'workers were recycled');
        usleep(200000);
        $named = $this->namedConnections();
        $this->assertNotContains($pool->pid(), $named, 'the master never connects');
        foreach (array_count_values($named) as $pid => $n) {
            $this->assertArrayHasKey($pid, $pids, 'every connection belongs to a worker that served');
            $this->assertSame(1, $n, "worker $pid has one connection, shared with no one");
        }
        $this->assertLessThanOrEqual(2, count($named), "recycled workers' connections are closed");
        $this->assertSame(0, $this->redis->exists('Lock:w'));
        $pool->stop();
    }

    public function testAWorkerKilledMidRequestLeavesNoLockBehindItsLease(): void
    {
        $pool = new FpmPool(self::SCRIPTS);
        $request = $pool->requestAsync('hold.php');
        for ($i = 0; $i < 100 && !file_exists($pool->dir . '/holder.pid'); $i++) {
            usleep(50000);
        }
        $holder = (int) file_get_contents($pool->dir . '/holder.pid');
        $this->assertGreaterThan(0, $holder);
        $this->assertSame(1, $this->redis->exists('lock:{held}'));
        posix_kill($holder, SIGKILL);
        proc_close($request);
        $this->assertSame(1, $this->redis->exists('lock:{held}'), 'held until its lease runs out');
        usleep(1500000);
        $this->assertSame(0, $this->redis->exists('lock:{held}'), 'no renewal after the worker died');
        for ($i = 0; $i < 6; $i++) {
            $this->assertStringEndsWith('ok', $pool->request('work.php'), 'the pool serves on');
        }
        $pool->stop();
    }

    /** Workers' private memory across many requests: no growth per request. */
    public function testSoakWorkersMemoryStaysFlat(): void
    {
        $pool = new FpmPool(self::SCRIPTS);
        $requests = getenv('FAULTS_LONG') === '1' ? 5000 : 400;
        for ($i = 0; $i < 100; $i++) {
            $pool->request('work.php');
        }
        $before = $this->privateKb($pool->pid());
        for ($i = 0; $i < $requests; $i++) {
            $this->assertStringEndsWith('ok', $pool->request('work.php'));
        }
        $after = $this->privateKb($pool->pid());
        fwrite(STDERR, sprintf("\n[soak] %d requests: workers' private memory %d kB -> %d kB\n", $requests, $before, $after));
        $this->assertLessThan(1024, $after - $before, 'less than 1 MB over all the requests');
        $this->assertSame(0, $this->redis->zCard('Queue:soak'));
        $pool->stop();
    }
}
