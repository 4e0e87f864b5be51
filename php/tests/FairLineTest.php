<?php

/**
 * Waiting in line, with real processes: first come first served, one holder
 * at a time, dead waiters skipped within the documented bound, waiters that
 * survive a Redis restart, and old userland clients that barge in.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class FairLineTest extends RedisLockTestCase
{
    public function testSixtyFourProcessesAreServedInArrivalOrderOneAtATime(): void
    {
        $n = 64;
        $holder = (new RedisLock\Client(RedisServer::$main->dsn()))->lock('fifo', ['ttl' => 30]);
        $this->assertTrue($holder->acquire());
        $inside = tempnam(sys_get_temp_dir(), 'fifo');
        $served = tempnam(sys_get_temp_dir(), 'served');
        $procs = [];
        for ($arrival = 0; $arrival < $n; $arrival++) {
            // Each process arrives once the one before it stands in line.
            $procs[] = self::start('
                $l = (new RedisLock\Client())->lock("fifo", ["ttl" => 30]);
                if (!$l->acquire(120)) { exit(3); }
                $in = fopen("' . $inside . '", "c+");
                $overlap = flock($in, LOCK_EX | LOCK_NB) ? 0 : 1;
                file_put_contents("' . $served . '", "' . $arrival . '\n", FILE_APPEND);
                usleep(500);
                flock($in, LOCK_UN);
                $token = $l->token();
                $l->release();
                echo "' . $arrival . ' $token $overlap";');
            $this->lineReaches('lock:{fifo}:line', $arrival + 1);
        }
        $holder->release();
        $rows = [];
        foreach ($procs as $proc) {
            $rows[] = array_map('intval', explode(' ', self::finish($proc)));
        }
        $order = array_map('intval', file($served, FILE_IGNORE_NEW_LINES));
        unlink($inside);
        unlink($served);
        $this->assertCount($n, array_filter($rows, fn ($r) => count($r) === 3), json_encode($rows));
        $this->assertSame(0, array_sum(array_column($rows, 2)), 'two holders at once');
        $this->assertSame(range(0, $n - 1), $order, 'served in arrival order');
        // Tokens in the order of service: increasing with every handoff.
        $byArrival = array_column($rows, 1, 0);
        $tokens = array_map(fn ($a) => $byArrival[$a], $order);
        $sorted = $tokens;
        sort($sorted);
        $this->assertSame($sorted, $tokens, 'fencing tokens increase with every handoff');
        $this->assertSame(['lock:{fifo}:fence'], array_keys($this->snapshot()));
    }

    /** Waits until Redis has seen every connection of process $pid close. */
    private function connectionsGone(int $pid): void
    {
        $deadline = microtime(true) + 10;
        while (str_contains($this->redis->rawCommand('CLIENT', 'LIST'), "name=redislock-$pid ")) {
            $this->assertLessThan($deadline, microtime(true), 'Redis never saw the process go');
            usleep(5000);
        }
    }

    /**
     * A waiter killed in line holds the next one up at most half a place
     * plus a renewal (1.5 s; a lock lease is 60 s here): handed the lock
     * while its place is still kept, the handoff goes unclaimed and the next
     * in line frees it; once its place ran out (2 s) it is skipped at once.
     *
     * @testWith ["just before the handoff", 1500]
     *           ["long before the handoff", 200]
     */
    #[PHPUnit\Framework\Attributes\TestWith(["just before the handoff", 1500])]
    #[PHPUnit\Framework\Attributes\TestWith(["long before the handoff", 200])]
    public function testAWaiterKilledInLineStallsTheLockBoundedly(string $when, int $boundMs): void
    {
        $client = new RedisLock\Client(RedisServer::$main->dsn());
        $holder = $client->lock('stall', ['ttl' => 60]);
        $this->assertTrue($holder->acquire());
        $code = '$l = (new RedisLock\Client())->lock("stall", ["ttl" => 60]);
            $ok = $l->acquire(30); echo $ok ? sprintf("%.0f", hrtime(true) / 1e6) : "no"; $l->release();';
        $victim = self::start($code);
        $this->lineReaches('lock:{stall}:line', 1);
        $next = self::start($code);
        $this->lineReaches('lock:{stall}:line', 2);
        $pid = proc_get_status($victim[0])['pid'];
        posix_kill($pid, SIGKILL);
        self::finish($victim);
        $this->connectionsGone($pid);
        if ($when === 'long before the handoff') {
            usleep(2200000);
        }
        $released = hrtime(true) / 1e6;
        $holder->release();
        $got = self::finish($next);
        $this->assertMatchesRegularExpression('/^\d+$/', $got, 'the next waiter got the lock');
        $stall = (int) $got - $released;
        // The bound plus scheduling slack on a loaded machine: far below the
        // 60 s a lock lease would cost.
        $this->assertLessThan($boundMs + 700, $stall, "stalled $stall ms");
    }

    public function testWaitersRecoverFromARedisRestartWithoutTwoHolders(): void
    {
        $server = RedisServer::start();
        $dsn = $server->dsn();
        $inside = tempnam(sys_get_temp_dir(), 'restart');
        $code = '$l = (new RedisLock\Client("' . $dsn . '"))->lock("r", ["ttl" => 5]);
            $overlaps = 0; $done = 0; $errors = 0;
            $end = microtime(true) + 4;
            while (microtime(true) < $end) {
                try {
                    if (!$l->acquire(10)) { continue; }
                } catch (RedisLock\ConnectionException $e) { $errors++; usleep(50000); continue; }
                $in = fopen("' . $inside . '", "c+");
                if (!flock($in, LOCK_EX | LOCK_NB)) { $overlaps++; }
                usleep(1000);
                flock($in, LOCK_UN);
                try { $l->release(); $done++; } catch (RedisLock\RedisLockException $e) { $errors++; }
            }
            echo "$overlaps $done";';
        $procs = [];
        for ($i = 0; $i < 6; $i++) {
            $procs[] = self::start($code);
        }
        usleep(1500000);
        $server->restart();
        $outs = array_map(fn ($p) => self::finish($p), $procs);
        unlink($inside);
        foreach ($outs as $out) {
            $this->assertMatchesRegularExpression('/^0 [1-9]\d*$/', $out, 'no overlap, and work done');
        }
    }

    public function testOldClientsBargingInNeverMakeTwoHolders(): void
    {
        $inside = tempnam(sys_get_temp_dir(), 'barge');
        $port = RedisServer::$main->port;
        // The seed's userland lock: SETNX, then EXPIRE, DEL when done (over
        // a raw socket: the processes have no phpredis).
        $old = '$s = stream_socket_client("tcp://127.0.0.1:' . $port . '");
            $r = function (...$args) use ($s) {
                $out = "*" . count($args) . "\r\n";
                foreach ($args as $a) { $out .= "$" . strlen($a) . "\r\n$a\r\n"; }
                fwrite($s, $out);
                return (int) substr(fgets($s), 1);
            };
            $overlaps = 0; $n = 0;
            $end = microtime(true) + 3;
            while (microtime(true) < $end) {
                if (!$r("SETNX", "Lock:barge", (string) (time() + 10))) { usleep(1000); continue; }
                $r("EXPIRE", "Lock:barge", "10");
                $in = fopen("' . $inside . '", "c+");
                if (!flock($in, LOCK_EX | LOCK_NB)) { $overlaps++; }
                usleep(500); flock($in, LOCK_UN);
                $r("DEL", "Lock:barge"); $n++;
            }
            echo "$overlaps $n";';
        $new = '$l = new RedisLock(); $overlaps = 0; $n = 0;
            $end = microtime(true) + 3;
            while (microtime(true) < $end) {
                if (!$l->lock("barge", 5, 10, 20000)) { continue; }
                $in = fopen("' . $inside . '", "c+");
                if (!flock($in, LOCK_EX | LOCK_NB)) { $overlaps++; }
                usleep(500); flock($in, LOCK_UN);
                $l->unlock("barge"); $n++;
                usleep(5000);
            }
            echo "$overlaps $n";';
        $outs = self::phpMany([$old, $old, $new, $new, $new, $new], [], $exits);
        unlink($inside);
        foreach ($outs as $i => $out) {
            $this->assertMatchesRegularExpression('/^0 \d+$/', $out, "process $i: no overlap");
        }
        [$oldTurns, $newTurns] = [0, 0];
        foreach ($outs as $i => $out) {
            $turns = (int) explode(' ', $out)[1];
            $i < 2 ? $oldTurns += $turns : $newTurns += $turns;
        }
        // While the line is never empty the old clients never see the key
        // free (handoffs pass it on directly); between the line's turns they
        // barge in, as the README says.
        $this->assertGreaterThan(0, $oldTurns, 'old clients got turns');
        $this->assertGreaterThan(0, $newTurns, 'the line got turns');
    }

    public function testAnEnqueueWakesOneBlockedConsumerPerTask(): void
    {
        $code = '$q = (new RedisLock\Client())->queue("wake");
            $t = $q->reserve(1, null, 30); echo $t ? $t[0]->id() : "none";';
        $procs = [];
        for ($i = 0; $i < 8; $i++) {
            $procs[] = self::start($code);
        }
        $this->lineReaches('{Queue:wake}:line', 8);
        $q = (new RedisLock\Client(RedisServer::$main->dsn()))->queue('wake');
        $q->enqueue('a');
        $this->lineReaches('{Queue:wake}:line', 7);
        usleep(200000);
        $this->assertSame(7, $this->redis->lLen('{Queue:wake}:line'), 'the others still wait');
        $q->enqueueMany(['b' => null, 'c' => null, 'd' => null]);
        $this->lineReaches('{Queue:wake}:line', 4);
        $q->enqueueMany(['e' => null, 'f' => null, 'g' => null, 'h' => null]);
        $ids = array_map(fn ($p) => self::finish($p), $procs);
        sort($ids);
        $this->assertSame(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], $ids);
    }
}
