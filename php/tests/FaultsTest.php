<?php

use RedisLock\ConnectionException;

/**
 * Faults: Redis killed or paused under working processes, lock holders
 * killed. Nothing hangs, nothing crashes, nothing is believed held that is
 * not, and everything recovers without restarting PHP. `make faults` runs
 * the long form (FAULTS_LONG=1): more processes, longer outages.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class FaultsTest extends RedisLockTestCase
{
    private static function long(): bool
    {
        return getenv('FAULTS_LONG') === '1';
    }

    /**
     * 8 processes lock, unlock, enqueue and pop in a loop; Redis is killed
     * mid-run and restarted on the same port. Every call while it is down
     * fails with ConnectionException, none hangs, no process crashes, and
     * each recovers on its own next call.
     */
    public function testRedisKilledUnderWorkingProcesses(): void
    {
        $server = RedisServer::start();
        $dsn = $server->dsn() . '?timeout=0.5&read_timeout=0.5';
        $downFor = self::long() ? 5 : 1.5;
        $runFor = $downFor + 3;
        $worker = '
            $lock = new RedisLock(' . var_export($dsn, true) . ');
            $queue = new RedisQueue(' . var_export($dsn, true) . ');
            $s = ["ok" => 0, "down" => 0, "other" => [], "slowest" => 0.0, "last" => ""];
            $end = microtime(true) + ' . $runFor . ';
            for ($i = 0; microtime(true) < $end; $i++) {
                $t = microtime(true);
                try {
                    $name = "w" . getmypid() . "-" . $i;
                    if (!$lock->lock($name, 0, 5) || !$lock->unlock($name)) { throw new LogicException("lock $name"); }
                    $queue->enqueue("faults", $name);
                    $queue->pop("faults");
                    $s["ok"]++; $s["last"] = "ok";
                } catch (RedisLock\ConnectionException $e) {
                    $s["down"]++; $s["last"] = "down";
                } catch (Throwable $e) {
                    $s["other"][] = get_class($e) . ": " . $e->getMessage();
                }
                $s["slowest"] = max($s["slowest"], microtime(true) - $t);
                usleep(20000);
            }
            echo json_encode($s);';
        $procs = [];
        for ($i = 0; $i < 8; $i++) {
            $procs[] = proc_open(self::command($worker), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $outs[] = $pipes;
        }
        usleep(1000000);
        $server->stop();
        usleep((int) ($downFor * 1e6));
        $server->restart();
        foreach ($procs as $i => $p) {
            $out = stream_get_contents($outs[$i][1]) . stream_get_contents($outs[$i][2]);
            $this->assertSame(0, proc_close($p), "worker $i exited cleanly: $out");
            $s = json_decode($out, true);
            $this->assertIsArray($s, $out);
            $this->assertSame([], $s['other'], 'only ConnectionException while Redis was down');
            $this->assertGreaterThan(0, $s['down'], 'calls failed while Redis was down');
            $this->assertGreaterThan(0, $s['ok']);
            $this->assertSame('ok', $s['last'], 'recovered without a restart');
            // Connect and read timeouts are 0.5 s; a hang would be far longer.
            $this->assertLessThan(3.0, $s['slowest'], 'no call hung');
        }
    }

    public static function pauses(): array
    {
        return [
            'SIGSTOP' => ['sigstop'],
            'DEBUG SLEEP' => ['debug sleep'],
            'CLIENT PAUSE' => ['client pause'],
        ];
    }

    /**
     * Redis stops answering while a lock is being acquired: the read timeout
     * ends the call with ConnectionException; the caller does not hold the
     * lock, and if Redis carried the command out later, the key expires by
     * its lease. The connection that timed out is never used again, so the
     * next calls read their own replies.
     *
     * @dataProvider pauses
     */
    #[PHPUnit\Framework\Attributes\DataProvider('pauses')]
    public function testAPausedRedisTimesOutAndTheConnectionIsNotReused(string $how): void
    {
        $server = RedisServer::start();
        $admin = $server->client();
        $lock = new RedisLock($server->dsn() . '?read_timeout=0.3');
        $queue = new RedisQueue($server->dsn() . '?read_timeout=0.3');
        $this->assertTrue($lock->lock('warm'), 'connected before the pause');
        $this->assertSame(1, $queue->enqueue('q', 'warm') ? 1 : 0);
        $resume = match ($how) {
            'sigstop' => (function () use ($server) {
                posix_kill($server->pid(), SIGSTOP);
                return fn () => posix_kill($server->pid(), SIGCONT);
            })(),
            'debug sleep' => (function () use ($server) {
                $p = proc_open(['redis-cli', '-p', (string) $server->port, 'DEBUG', 'SLEEP', '1'], [1 => ['file', '/dev/null', 'w']], $pipes);
                usleep(100000);
                return fn () => proc_close($p);
            })(),
            'client pause' => (function () use ($admin) {
                RedisServer::requires('pauseWrite', 'CLIENT PAUSE ms WRITE (>= 6.2)');
                // An error here (a server without WRITE) must not pass for a pause.
                $this->assertTrue($admin->rawCommand('CLIENT', 'PAUSE', '1000', 'WRITE'));
                return fn () => usleep(1000000);
            })(),
        };
        $t = microtime(true);
        try {
            $lock->lock('x', 0, 10);
            $this->fail('answered while paused');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString((string) $server->port, $e->getMessage());
        }
        $this->assertLessThan(2.0, microtime(true) - $t, 'the read timeout was honoured');
        $resume();
        $admin = $server->client();
        $this->assertFalse($lock->isLocking('x'), 'the caller does not believe it holds x');
        $ttl = $admin->pTtl('Lock:x');
        $this->assertTrue($ttl === -2 || ($ttl > 0 && $ttl <= 10000), "x is free or expires by its lease ($ttl)");
        // A reused connection would hand these calls the replies of the
        // timed-out command.
        $this->assertTrue($queue->enqueue('q', 'after'));
        $this->assertSame(['warm', 'after'], array_column($queue->top('q', 10), 'id'));
        $this->assertTrue($lock->lock('y'));
        $this->assertLocking($lock->isLocking('y'));
        $this->assertSame(1, $admin->exists('Lock:y'));
    }

    /**
     * Holders killed with SIGKILL: their locks stay taken until the lease
     * runs out (never before) and are free after it, for the seed classes
     * and for a renewed `RedisLock\Lock` (the renewal thread dies with its
     * process).
     */
    public function testLocksOfKilledHoldersFreeAfterTheirLeaseNeverBefore(): void
    {
        $holders = [
            'Lock:seed' => '$l = new RedisLock(); $l->lock("seed", 0, 1.5);',
            'lock:{api}' => '$l = (new RedisLock\Client())->lock("api", ["ttl" => 1.5, "autoRenew" => true]); $l->acquire();',
            'order_lock_77' => 'Lock_Service::addLock(77, 2);',
        ];
        foreach ($holders as $key => $code) {
            $p = proc_open(self::command($code . ' echo "held\n"; sleep(60);'), [1 => ['pipe', 'w']], $pipes);
            $this->assertSame("held\n", fgets($pipes[1]), $key);
            proc_terminate($p, 9);
            proc_close($p);
            $ttl = $this->redis->pTtl($key);
            $this->assertGreaterThan(0, $ttl, "$key still taken right after the kill");
            usleep(max(0, $ttl - 300) * 1000);
            $this->assertSame(1, $this->redis->exists($key), "$key not freed before its lease ran out");
            usleep(600000);
            $this->assertSame(0, $this->redis->exists($key), "$key freed after its lease");
        }
    }
}
