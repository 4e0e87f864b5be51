<?php

require_once __DIR__ . '/Network.php';
require_once __DIR__ . '/History.php';
require_once __DIR__ . '/fenced_store.php';

/**
 * Partitions, lossy and slow links and clock faults (docs/faults.md, second
 * table). Redis servers and client processes live in network namespaces
 * made by the test (Network); an independent checker (History) reads what
 * every process saw. Each test prints its measurements on stderr as a
 * "[faults]" line. `make faults` runs the long form (FAULTS_LONG=1).
 */
final class PartitionTest extends RedisLockTestCase
{
    private ?Network $net = null;
    private string $dir;

    protected function setUp(): void
    {
        parent::setUp();
        $why = Network::unavailable();
        if ($why !== null) {
            $this->markTestSkipped("no private network here: $why");
        }
        $this->net = new Network();
        $this->dir = sys_get_temp_dir() . '/redislock-partition-' . getmypid();
        @mkdir($this->dir);
        @unlink("{$this->dir}/store");
        @unlink("{$this->dir}/store.log");
    }

    protected function tearDown(): void
    {
        $this->net?->close();
        exec('rm -rf ' . escapeshellarg($this->dir));
        parent::tearDown();
    }

    private static function long(): bool
    {
        return getenv('FAULTS_LONG') === '1';
    }

    private static function report(string $scenario, array $numbers): void
    {
        $parts = [];
        foreach ($numbers as $k => $v) {
            $parts[] = "$k=" . (is_float($v) ? sprintf('%.2f', $v) : var_export($v, true));
        }
        // (A count other than 0 is what the fault shows, asserted by the test: said so, not read as a failure.)
        fwrite(STDERR, "\n[faults] $scenario, as the test expects: " . implode(' ', $parts) . "\n");
    }

    /** Starts PHP $code on $host; its lines are read with lines(). */
    private function on(string $host, string $code): array
    {
        $code = 'require ' . var_export(__DIR__ . '/fenced_store.php', true) . ';' . $code;
        $p = proc_open($this->net->on($host, self::command($code)), [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        return [$p, $pipes];
    }

    /** Reads a process's next line (waiting up to $secs). */
    private static function line(array $proc, float $secs = 20): string
    {
        stream_set_timeout($proc[1][1], (int) ceil($secs));
        $line = fgets($proc[1][1]);
        if ($line === false) {
            self::fail('no line from the process: ' . stream_get_contents($proc[1][2]));
        }
        return rtrim($line, "\n");
    }

    /** Waits for a process and returns all it printed (stdout lines; stderr must be empty). */
    private function lines(array $proc): array
    {
        $out = stream_get_contents($proc[1][1]);
        $err = stream_get_contents($proc[1][2]);
        $exit = proc_close($proc[0]);
        $this->assertSame('', $err, 'stderr of a client');
        $this->assertSame(0, $exit, "a client exited with $exit: $out");
        return $out === '' ? [] : explode("\n", rtrim($out, "\n"));
    }

    /**
     * Starts a process on $host that takes "account" with $options (PHP
     * code for an array) and then writes to the fenced store every 20 ms
     * while $while (PHP code) is true, checking nothing, as a process in
     * a GC pause or a slow request would. It prints "acquired <token>
     * <hrtime>", then "write <hrtime> <held>" with what isHeld() said just
     * before (1, 0, or E: ConnectionException). Returns the process and
     * that first line's token and time.
     */
    private function blindWriter(string $host, string $dsn, string $options, string $while): array
    {
        $p = $this->on($host, '
            $l = (new RedisLock\Client(' . var_export($dsn, true) . '))->lock("account", ' . $options . ');
            $l->acquire() or exit(3);
            $t = $l->token();
            echo "acquired $t ", hrtime(true), "\n";
            while (' . $while . ') {
                try { $held = $l->isHeld() ? "1" : "0"; } catch (RedisLock\ConnectionException $e) { $held = "E"; }
                $at = hrtime(true);
                fenced_write(' . var_export("{$this->dir}/store", true) . ', ' . var_export($host, true) . ', $t);
                echo "write $at $held\n";
                usleep(20000);
            }');
        [, $token, $from] = explode(' ', self::line($p));
        return [$p, (int) $token, (int) $from];
    }

    /**
     * A process on $host that takes "account" (waiting up to 15 s), writes
     * to the fenced store 10 times and releases it. Returns its hold.
     */
    private function taker(string $host, string $dsn): array
    {
        $took = $this->lines($this->on($host, '
            $l = (new RedisLock\Client(' . var_export($dsn, true) . '))->lock("account", ["ttl" => 5]);
            $l->acquire(15) or exit(3);
            $t = $l->token();
            echo "acquired $t ", hrtime(true), "\n";
            for ($i = 0; $i < 10; $i++) { fenced_write(' . var_export("{$this->dir}/store", true) . ', ' . var_export($host, true) . ', $t); usleep(20000); }
            $l->release();
            echo "released ", hrtime(true), "\n";'));
        [, $token, $from] = explode(' ', $took[0]);
        return ['who' => $host, 'token' => (int) $token, 'from' => (int) $from, 'to' => (int) explode(' ', $took[1])[1]];
    }

    /**
     * A holder cut off from Redis past its lease while another process
     * takes the lock. The holder goes on writing, as a process that does
     * not check would (a GC pause, a slow request): the fenced resource
     * refuses every stale write; the writes an unfenced one would have let
     * overlap the next hold are counted. The holder's isHeld() never says
     * true once the other process holds the lock, and the loss is
     * reported (isHeld() false) before the holder's run ends.
     */
    public function testAPartitionedHolderCannotWritePastTheFence(): void
    {
        $net = $this->net;
        $dsn = fn ($ip) => "redis://$ip:6379?timeout=0.2&read_timeout=0.2";
        $a = $net->host('a');
        $b = $net->host('b');
        $net->redis(6379);
        [$holder, $token, $from] = $this->blindWriter('a', $dsn($a), '["ttl" => 1, "autoRenew" => true]',
            'hrtime(true) < ' . (hrtime(true) + (self::long() ? 6 : 3) * 1_000_000_000));
        usleep(300000);
        $cut = hrtime(true);
        $net->partition('a');
        $bHold = $this->taker('b', $dsn($b));
        $held = $this->lines($holder);

        $bFrom = $bHold['from'];
        $doubt = $sawLoss = null;
        $heldLate = 0;
        foreach (array_slice($held, 1) as $line) {
            [, $at, $state] = explode(' ', $line);
            if ($state === '1' && $at > $bFrom) {
                $heldLate++;
            }
            if ($state !== '1' && $at > $cut && $doubt === null) {
                $doubt = (int) $at;
            }
            if ($state === '0' && $at > $cut && $sawLoss === null) {
                $sawLoss = (int) $at;
            }
        }
        $writes = fenced_log("{$this->dir}/store");
        $holds = [['who' => 'a', 'token' => $token, 'from' => $from, 'to' => $doubt ?? PHP_INT_MAX], $bHold];
        $this->assertGreaterThan($token, $bHold['token'], 'the next hold has a higher token');
        $this->assertGreaterThan($cut, $bFrom, 'the other process took the lock once the lease ran out');
        $this->assertSame(0, History::staleAccepted($writes), 'the fenced resource accepted no stale write');
        $this->assertSame(0, History::tokensOutOfOrder($holds));
        $this->assertSame(0, $heldLate, 'isHeld() never said true once the other process held the lock');
        $this->assertNotNull($sawLoss, 'the holder learnt the loss: ' . implode(' | ', array_slice($held, -3)));
        $this->assertSame(0, History::overlaps($holds), 'isHeld() stopped saying true (an error, then false) before the other took the lock');
        $late = History::lateWrites($writes, $holds);
        $this->assertGreaterThan(0, $late, 'the unchecked writes went on after the other took the lock (the case fencing is for)');
        $refused = count(array_filter($writes, fn ($w) => !$w['accepted']));
        $this->assertSame(History::staleWrites($writes), $refused, 'every write after the other process had written was refused, no other');
        $this->assertGreaterThanOrEqual($refused, $late);
        self::report('partitioned holder', [
            'writes after the next acquire (would overlap unfenced)' => $late,
            'of them refused by fencing (made after its first write)' => $refused,
            'stale writes accepted' => 0,
            'isHeld() not true after the cut (s)' => ($doubt - $cut) / 1e9,
            'isHeld() false (loss known) after the cut (s)' => ($sawLoss - $cut) / 1e9,
            'next holder in after the cut (s)' => ($bFrom - $cut) / 1e9,
        ]);
    }

    /**
     * A worker cut off from Redis in the middle of its leases: the tasks
     * go to another worker once the leases run out, the cut-off worker's
     * ack fails while it is cut off (outcome unknown) and returns false
     * after the link heals; every task is acked exactly once, none lost.
     */
    public function testAWorkerPartitionedMidLeaseLosesNothingAndAcksNothingTwice(): void
    {
        $net = $this->net;
        $dsn = fn ($ip) => var_export("redis://$ip:6379?timeout=0.2&read_timeout=0.2", true);
        $a = $net->host('a');
        $b = $net->host('b');
        $net->redis(6379);
        $n = self::long() ? 200 : 20;
        $this->lines($this->on('b', '$q = (new RedisLock\Client(' . $dsn($b) . '))->queue("jobs");
            for ($i = 0; $i < ' . $n . '; $i++) { $q->enqueue("t$i"); }'));
        $w = $this->on('a', '
            $q = (new RedisLock\Client(' . $dsn($a) . '))->queue("jobs", ["lease" => 1]);
            $tasks = $q->reserve(5);
            echo implode(",", array_map(fn ($t) => $t->id(), $tasks)), "\n";
            fgets(STDIN);
            try { $q->ack($tasks[0]); echo "acked while cut off\n"; } catch (RedisLock\ConnectionException $e) { echo "cut off\n"; }
            fgets(STDIN);
            foreach ($tasks as $t) { echo $t->id(), " ", $q->ack($t) ? 1 : 0, "\n"; }');
        $leased = explode(',', self::line($w));
        $this->assertCount(5, $leased);
        $net->partition('a');
        fwrite($w[1][0], "cut\n");
        $this->assertSame('cut off', self::line($w));
        $v = $this->on('b', '
            $q = (new RedisLock\Client(' . $dsn($b) . '))->queue("jobs", ["lease" => 30]);
            $done = 0;
            while ($done < ' . $n . ') {
                foreach ($q->reserve(10, null, 5) ?: exit(4) as $t) { echo $t->id(), " ", $q->ack($t) ? 1 : 0, "\n"; $done++; }
            }');
        $acks = $this->lines($v);
        $net->heal('a');
        fwrite($w[1][0], "healed\n");
        $late = $this->lines($w);
        $this->assertSame(array_map(fn ($id) => "$id 0", $leased), $late, 'every late ack refused');
        $byV = array_count_values($acks);
        ksort($byV);
        $all = array_map(fn ($i) => "t$i 1", range(0, $n - 1));
        sort($all);
        $this->assertSame(array_fill_keys($all, 1), $byV, 'every task acked once, by the worker that held its lease');
        $this->assertSame('0', $net->cli(6379, 'ZCARD', 'Queue:jobs'), 'nothing left queued');
        self::report('partitioned worker', ['tasks' => $n, 'redelivered' => count($leased), 'late acks refused' => count($late), 'acked twice' => 0, 'lost' => 0]);
    }

    /**
     * Redlock on 5 masters, A cut off from $aCut and B from $bCut (node
     * numbers 1-5); node 3 reads a libfaketime clock. A takes the lock and
     * holds it a second; meanwhile B tries for 3 s ($jump: node 3's clock
     * is set so once A holds). Returns the holds the processes believed in
     * (from acquire to release, at most the validity remaining() gave).
     */
    private function redlockRound(array $aCut, array $bCut, ?string $jump): array
    {
        $net = $this->net;
        $a = $net->host('a');
        $b = $net->host('b');
        $clock = $jump === null ? null : $net->clock('node3');
        foreach (range(1, 5) as $i) {
            $net->redis(7000 + $i, $i === 3 ? $clock : null);
        }
        $hold = '
            echo "acquired ", hrtime(true), " ", $l->remaining(), "\n";
            WAIT;
            echo "until ", hrtime(true), "\n";
            try { $l->release(); } catch (RedisLock\LockLostException $e) { echo "lost\n"; }';
        if ($aCut !== []) {
            $net->partition('a', array_map(fn ($i) => 7000 + $i, $aCut));
        }
        if ($bCut !== []) {
            $net->partition('b', array_map(fn ($i) => 7000 + $i, $bCut));
        }
        $pa = $this->on('a', '$l = new RedisLock\Redlock("r", ["nodes" => ' . self::redlockNodes($a) . ', "ttl" => 3]);
            try { $ok = $l->acquire(); } catch (RedisLock\ConnectionException $e) { echo "unreachable\n"; exit; }
            if (!$ok) { echo "busy\n"; exit; }' . str_replace('WAIT', 'usleep(1000000)', $hold));
        $first = self::line($pa);
        if ($first === 'unreachable' || $first === 'busy') {
            $this->lines($pa);
            $aHold = null;
        } else {
            $aHold = $first;
        }
        if ($jump !== null) {
            FakeClock::set($clock, $jump);
        }
        $pb = $this->on('b', '$l = new RedisLock\Redlock("r", ["nodes" => ' . self::redlockNodes($b) . ', "ttl" => 3, "retryDelay" => 0.05]);
            if (!$l->acquire(3)) { echo "busy\n"; exit; }' . str_replace('WAIT', 'usleep(200000)', $hold));
        $holds = [];
        foreach (['a' => [$aHold, $aHold === null ? [] : $this->lines($pa)], 'b' => [null, $this->lines($pb)]] as $who => [$head, $rest]) {
            $lines = $head === null ? $rest : [$head, ...$rest];
            if (($lines[0] ?? 'busy') === 'busy') {
                continue;
            }
            [, $from, $valid] = explode(' ', $lines[0]);
            $until = (int) explode(' ', $lines[1])[1];
            $holds[] = ['who' => $who, 'token' => null, 'from' => (int) $from, 'to' => min($until, (int) $from + (int) ((float) $valid * 1e9))];
        }
        return $holds;
    }

    /** The five Redlock nodes as host $ip reaches them, as PHP code. */
    private static function redlockNodes(string $ip): string
    {
        return var_export(array_map(fn ($i) => "redis://$ip:" . (7000 + $i) . '?timeout=0.3&read_timeout=0.3', range(1, 5)), true);
    }

    /**
     * Redlock measures a hold's validity by the client's own clock, from
     * before the first node was asked, less a drift allowance. A takes the
     * lock (ttl 2 s) on all five nodes, works until its validity is down
     * to 0.3 s and then stops without releasing it (a holder that used its
     * whole validity); B tries all along and gets it when the keys expire:
     * never while A still believed it held the lock. (Times are taken by
     * this test as A's lines arrive.)
     *
     * A client clock running slow cannot be injected here: PHP loads
     * extensions with RTLD_DEEPBIND, so the extension's clock_gettime is
     * glibc's, never libfaketime's (its PHP code's hrtime() is faked).
     */
    public function testRedlockValidityEndsBeforeTheKeysExpire(): void
    {
        $net = $this->net;
        $a = $net->host('a');
        $b = $net->host('b');
        foreach (range(1, 5) as $i) {
            $net->redis(7000 + $i);
        }
        $pa = $this->on('a', '$l = new RedisLock\Redlock("r", ["nodes" => ' . self::redlockNodes($a) . ', "ttl" => 2]);
            $l->acquire() or exit(3);
            echo "acquired\n";
            while ($l->remaining() > 0.3) { usleep(10000); }
            echo "done\n";
            fgets(STDIN);');
        $this->assertSame('acquired', self::line($pa));
        $aFrom = hrtime(true);
        $pb = $this->on('b', '$l = new RedisLock\Redlock("r", ["nodes" => ' . self::redlockNodes($b) . ', "ttl" => 2, "retryDelay" => 0.05]);
            $l->acquire(8) or exit(3);
            echo "acquired ", hrtime(true), "\n";
            usleep(200000);
            echo "until ", hrtime(true), "\n";
            $l->release();');
        $this->assertSame('done', self::line($pa));
        $aTo = hrtime(true);
        $bLines = $this->lines($pb);
        fwrite($pa[1][0], "end\n");
        $this->lines($pa);
        $holds = [
            ['who' => 'a', 'token' => null, 'from' => $aFrom, 'to' => $aTo],
            ['who' => 'b', 'token' => null, 'from' => (int) explode(' ', $bLines[0])[1], 'to' => (int) explode(' ', $bLines[1])[1]],
        ];
        $this->assertSame(0, History::overlaps($holds));
        self::report('redlock, a holder using its whole validity (ttl 2 s)', [
            'A believed it held it for (s)' => ($aTo - $aFrom) / 1e9,
            'B took it after A did (s)' => ($holds[1]['from'] - $aFrom) / 1e9,
            'double holds' => 0,
        ]);
    }

    /** Sane clocks: A holds through 3 of 5 nodes, B reaches the other 3 (node 3 shared) and waits its turn. */
    public function testRedlockWithAMinorityPartitionedNeverHoldsTwice(): void
    {
        $holds = $this->redlockRound([4, 5], [1, 2], null);
        $this->assertSame(['a', 'b'], array_column($holds, 'who'), 'both held it, one after the other');
        $this->assertSame(0, History::overlaps($holds));
        self::report('redlock, minority cut off each side', ['double holds' => 0]);
    }

    /** A cut off from a majority cannot take the lock; B, reaching all, can. */
    public function testRedlockCutOffFromAMajorityCannotAcquire(): void
    {
        $holds = $this->redlockRound([3, 4, 5], [], null);
        $this->assertSame(['b'], array_column($holds, 'who'));
        self::report('redlock, majority cut off', ['double holds' => 0]);
    }

    /**
     * The known unsafe case (the Redlock debate): node 3's clock jumps
     * ahead past the TTL while A holds; its key expires there, and B gets
     * a majority with it. The checker must see the double hold.
     */
    public function testRedlockWithAClockJumpOnASharedNodeHoldsTwiceAndTheCheckerSeesIt(): void
    {
        if (($why = FakeClock::unavailable()) !== null) {
            $this->markTestSkipped($why);
        }
        $holds = $this->redlockRound([4, 5], [1, 2], '+10');
        $this->assertSame(['a', 'b'], array_column($holds, 'who'));
        $this->assertSame(1, History::overlaps($holds), 'two holders at once: what Redlock cannot prevent when a clock jumps');
        self::report('redlock, a shared node\'s clock jumps +10 s (ttl 3 s)', ['double holds' => 1]);
    }

    /**
     * A Redis server whose clock runs 1.5 times as fast (libfaketime, from
     * its start): every lease ends after two thirds of its length in real
     * time, while remaining() reports the server's view. Renewal, every
     * third of the lease in the client's time, keeps a lock held (it would
     * up to a clock about 3x as fast); a lock without renewal is gone early.
     */
    public function testAServerClockRunningFastShortensLeasesAndRenewalKeepsUp(): void
    {
        if (($why = FakeClock::unavailable()) !== null) {
            $this->markTestSkipped($why);
        }
        $net = $this->net;
        $a = $net->host('a');
        $clock = $net->clock('fast');
        FakeClock::set($clock, '+0 x1.5');
        $net->redis(6379, $clock);
        $secs = self::long() ? 20 : 6;
        $p = $this->on('a', '
            $client = new RedisLock\Client(' . var_export("redis://$a:6379", true) . ');
            $plain = $client->lock("plain", ["ttl" => 3]);
            $plain->acquire() or exit(3);
            echo hrtime(true), " ", $plain->remaining(), "\n";
            $l = $client->lock("renewed", ["ttl" => 3, "autoRenew" => true]);
            $l->acquire() or exit(3);
            $end = hrtime(true) + ' . $secs . ' * 1e9;
            $states = "";
            while (hrtime(true) < $end) { $states .= $l->isHeld() ? "1" : "0"; usleep(100000); }
            echo $states, " ", $l->release() ? "released" : "lost", "\n";');
        [$from, $remaining] = explode(' ', self::line($p));
        while ($net->cli(6379, 'EXISTS', 'lock:{plain}') === '1') {
            usleep(20000);
        }
        $lasted = (hrtime(true) - (int) $from) / 1e9;
        [$states, $end] = explode(' ', $this->lines($p)[0]);
        $this->assertSame(str_repeat('1', strlen($states)), $states, 'the renewed lock was held all along');
        $this->assertSame('released', $end);
        $this->assertGreaterThan(2.9, (float) $remaining, 'remaining() is the server\'s view');
        $this->assertLessThan(2.8, $lasted, 'the 3 s lease without renewal ended early: the clock does run fast');
        self::report('server clock at 1.5x', [
            'renewed lock (ttl 3 s) held for (s)' => (float) $secs,
            'false losses' => 0,
            'lock without renewal, ttl 3 s, gone after (s)' => $lasted,
            'its remaining() right after acquire (s)' => (float) $remaining,
        ]);
    }

    /**
     * A Redis server whose clock steps back 10 s: fencing tokens still
     * increase (the counter key remembers the last one), and a lease
     * taken before the step lasts 10 s longer: a crashed holder's lock is
     * stuck that much longer.
     */
    public function testAServerClockSteppingBackKeepsTokensIncreasingAndStretchesLeases(): void
    {
        if (($why = FakeClock::unavailable()) !== null) {
            $this->markTestSkipped($why);
        }
        $net = $this->net;
        $a = $net->host('a');
        $clock = $net->clock('back');
        $net->redis(6379, $clock);
        $take = fn ($name) => '$l = (new RedisLock\Client(' . var_export("redis://$a:6379", true) . '))->lock("' . $name . '", ["ttl" => 2]);
            $l->acquire() or exit(3); echo $l->token(), "\n";';
        $before = (int) $this->lines($this->on('a', $take('stepped') . '$l->release();'))[0];
        // A holder that crashes (a request's end would release the lock).
        $crashed = $this->on('a', $take('abandoned') . 'sleep(60);');
        self::line($crashed);
        proc_terminate($crashed[0], SIGKILL);
        proc_close($crashed[0]);
        FakeClock::set($clock, '-10');
        $after = (int) $this->lines($this->on('a', $take('stepped') . '$l->release();'))[0];
        $left = (int) $net->cli(6379, 'PTTL', 'lock:{abandoned}');
        $this->assertGreaterThan($before, $after, 'the token after the step is still higher');
        $this->assertGreaterThan(10000, $left, 'the abandoned 2 s lease now has more than 10 s left');
        self::report('server clock steps back 10 s', [
            'tokens out of order' => 0,
            'abandoned 2 s lease left after the step (s)' => $left / 1000,
        ]);
    }

    public static function waits(): array
    {
        return ['without replicas' => [0], 'with replicas 1 (WAIT)' => [1]];
    }

    /**
     * Sentinel split brain: the master (6379, replicas 6380 and 6381,
     * three sentinels) is cut off from its replicas and the sentinels
     * while the clients on host a still reach it; the sentinels promote a
     * replica, host b's clients go there. On host a, A holds "account"
     * since before the cut (renewed, and writing to the fenced store as
     * a process that does not check would), and C takes and frees
     * "ledger" every 100 ms. On host b, B takes "account" on the new
     * master and writes.
     *
     * Measured: C's acquisitions the new master never saw (lost), with
     * and without the `replicas` option: without it every acquisition
     * after the cut is lost; with it none is, the isolated master's
     * acquisitions fail instead. Both ways A and B hold "account" at once
     * (WAIT checks an acquire, not a hold renewed on the old master), and
     * the fence refuses every write of A's once B has written.
     *
     * @dataProvider waits
     */
    #[PHPUnit\Framework\Attributes\DataProvider('waits')]
    public function testSentinelSplitBrainLosesAcquisitionsUnlessTheyWaitAndFencingKeepsTheResourceRight(int $replicas): void
    {
        $net = $this->net;
        $net->host('a');
        $net->host('b');
        $service = $net->service();
        $net->redis(6379);
        foreach ([6380, 6381] as $port) {
            $net->redis($port, null, ['--replicaof', $service, '6379']);
        }
        foreach ([26379, 26380, 26381] as $port) {
            $net->sentinel($port, 6379, 1000);
        }
        $ready = function () use ($net) {
            foreach ([26379, 26380, 26381] as $port) {
                $info = explode("\n", $net->cli($port, 'SENTINEL', 'master', 'mymaster'));
                $field = fn ($name) => $info[array_search($name, $info, true) + 1] ?? null;
                if ($field('num-slaves') !== '2' || $field('num-other-sentinels') !== '2') {
                    return false;
                }
            }
            foreach ([6380, 6381] as $port) {
                if (!str_contains($net->cli($port, 'INFO', 'replication'), 'master_link_status:up')) {
                    return false;
                }
            }
            return true;
        };
        for ($i = 0; $i < 300 && !$ready(); $i++) {
            usleep(100000);
        }
        $this->assertTrue($ready(), 'the sentinels know both replicas and each other');
        $dsn = "redis+sentinel://$service:26379,$service:26380,$service:26381/mymaster?timeout=0.5&read_timeout=0.5";
        $stop = var_export("{$this->dir}/stop", true);
        $options = '["replicas" => ' . $replicas . ', "replicaTimeout" => 0.3]';
        [$a, $aToken, $aFrom] = $this->blindWriter('a', $dsn, '["ttl" => 1, "autoRenew" => true] + ' . $options, "!file_exists($stop)");
        $c = $this->on('a', '
            $l = (new RedisLock\Client(' . var_export($dsn, true) . '))->lock("ledger", ["ttl" => 60] + ' . $options . ');
            while (!file_exists(' . $stop . ')) {
                try {
                    if ($l->acquire()) {
                        echo "ok ", $l->token(), " ", hrtime(true), "\n";
                        $l->release();
                    } else {
                        echo "busy ", hrtime(true), "\n";
                    }
                } catch (RedisLock\RedisLockException $e) {
                    echo "failed ", hrtime(true), " ", get_class($e), "\n";
                }
                usleep(100000);
            }');
        for ($i = 0; $i < 3; $i++) {
            $this->assertStringStartsWith('ok ', self::line($c), 'C takes the lock before the cut');
        }
        $cut = hrtime(true);
        $net->isolate(6379);
        $master = fn () => explode("\n", $net->cli(26379, 'SENTINEL', 'get-master-addr-by-name', 'mymaster'))[1] ?? '';
        for ($i = 0; $i < 300 && $master() === '6379'; $i++) {
            usleep(100000);
        }
        $promoted = (int) $master();
        $failover = hrtime(true);
        $this->assertContains($promoted, [6380, 6381], 'a replica was promoted');
        $known = (int) $net->cli($promoted, 'GET', 'lock:{ledger}:fence');
        $bHold = $this->taker('b', $dsn);
        usleep(300000);
        touch("{$this->dir}/stop");
        $aLines = $this->lines($a);
        $cLines = $this->lines($c);

        $aTo = null;
        foreach ($aLines as $line) {
            [, $at, $held] = explode(' ', $line);
            if ($held !== '1' && $aTo === null && $at > $cut) {
                $aTo = (int) $at;
            }
        }
        $holds = [['who' => 'a', 'token' => $aToken, 'from' => $aFrom, 'to' => $aTo ?? PHP_INT_MAX], $bHold];
        $ok = $failed = $lost = 0;
        $why = [];
        foreach ($cLines as $line) {
            $f = explode(' ', $line);
            if ($f[0] === 'ok' && (int) $f[2] > $cut) {
                $ok++;
                $lost += (int) $f[1] > $known ? 1 : 0;
            }
            if ($f[0] === 'failed') {
                $failed++;
                $why[$f[2]] = true;
            }
        }
        $writes = fenced_log("{$this->dir}/store");
        $late = History::lateWrites($writes, $holds);
        $refused = count(array_filter($writes, fn ($w) => !$w['accepted']));

        $this->assertSame(0, History::tokensOutOfOrder($holds));
        $this->assertSame(0, History::staleAccepted($writes), 'the fenced resource accepted no stale write');
        $this->assertSame(1, History::overlaps($holds), 'A, renewing on the old master, held it while B did: ' . implode(' | ', array_slice($aLines, -2)));
        $this->assertGreaterThan(0, $late, 'A wrote after B took the lock');
        $this->assertSame(History::staleWrites($writes), $refused, 'the fence refused every write of A made after B had written, no other');
        $this->assertGreaterThan(0, $refused, 'A wrote after B did');
        $this->assertGreaterThanOrEqual($refused, $late);
        if ($replicas === 0) {
            $this->assertGreaterThan(0, $ok, 'C went on taking the lock on the old master');
            $this->assertSame($ok, $lost, 'every acquisition after the cut is unknown to the new master');
        } else {
            $this->assertSame(0, $ok, 'no replica acknowledged an acquisition after the cut: none succeeded');
            $this->assertGreaterThan(0, $failed, 'C was told');
            $this->assertSame(['RedisLock\\NotAcquiredException'], array_keys($why), 'as NotAcquiredException');
            $this->assertSame(0, $lost);
        }
        self::report("sentinel split brain, replicas $replicas", [
            'failover after the cut (s)' => ($failover - $cut) / 1e9,
            'acquisitions after the cut: succeeded' => $ok,
            'lost (unknown to the new master)' => $lost,
            'refused' => $failed,
            'double holds (A renewing on the old master)' => 1,
            'writes of A after B acquired (would overlap unfenced)' => $late,
            'of them refused by fencing (made after B wrote)' => $refused,
            'stale writes accepted' => 0,
        ]);
    }

    public static function links(): array
    {
        $links = [
            '50 ms, 5% loss, ttl 6 s' => [50, 20, 5, 6, 1],
            '200 ms, 10% loss, ttl 10 s' => [200, 50, 10, 10, 1.5],
        ];
        if (self::long()) {
            $links['500 ms, 20% loss, ttl 20 s'] = [500, 100, 20, 20, 3];
        }
        return $links;
    }

    /**
     * Lease renewal over a slow, lossy link (a delaying proxy, one way
     * $ms + up to $jitter ms, and nftables dropping $loss% of the packets
     * both ways): the lock is never lost while the link works. Then the
     * link is cut: once Redis has let the lease run out, isHeld() never
     * says true again, and it reports the loss (false) within one lease.
     * The timeouts and the lease follow the rule docs/faults.md gives: timeouts
     * above Linux's first SYN retransmission (1 s: a lost SYN must not
     * fail a connect), and a lease of at least 6 timeouts, so that the two
     * thirds left when a renewal is due fit four timed-out tries. (A lease of 2 s with
     * 0.5 s timeouts over the 50 ms, 5% link lost the lock in one CI run.)
     *
     * @dataProvider links
     */
    #[PHPUnit\Framework\Attributes\DataProvider('links')]
    public function testRenewalHoldsOverASlowLossyLinkAndReportsTheLossWhenItIsCut(int $ms, int $jitter, int $loss, int $ttl, float $timeout): void
    {
        $net = $this->net;
        $a = $net->host('a');
        $net->redis(6379);
        $net->delay(6380, 6379, $ms, $jitter);
        $net->loss('a', $loss);
        $dsn = var_export("redis://$a:6380?timeout=$timeout&read_timeout=$timeout", true);
        $works = self::long() ? 30 : 8;
        $p = $this->on('a', '
            $l = (new RedisLock\Client(' . $dsn . '))->lock("renewed", ["ttl" => ' . $ttl . ', "autoRenew" => true]);
            // Taking it over the lossy link is not what is tested: tries
            // until it holds (a timed-out attempt may hold it until its lease).
            for ($i = 0; ; $i++) {
                try { if ($l->acquire(5)) { break; } } catch (RedisLock\ConnectionException $e) { }
                if ($i === 10) { echo "not acquired\n"; exit; }
            }
            echo $l->owner(), "\n";
            while (true) {
                try { $held = $l->isHeld() ? "1" : "0"; } catch (RedisLock\ConnectionException $e) { $held = "E"; }
                echo hrtime(true), " $held\n";
                if ($held === "0") { try { $l->release(); } catch (Throwable $e) { echo hrtime(true), " 0 ", get_class($e), ": ", $e->getMessage(), "\n"; } break; }
                usleep(100000);
            }');
        $owner = self::line($p, 90);
        $this->assertSame($owner, $net->cli(6379, 'GET', 'lock:{renewed}'));
        $end = hrtime(true) + $works * 1e9;
        $states = [];
        while (hrtime(true) < $end) {
            $line = self::line($p, 10 + 6 * $timeout);
            [$at, $state] = explode(' ', $line);
            $states[] = $state;
            $this->assertNotSame('0', $state, 'no loss while the link works: ' . implode('', $states) . ' ' . self::line($p));
        }
        $this->assertSame($owner, $net->cli(6379, 'GET', 'lock:{renewed}'), 'still held on the server');
        $slow = array_count_values($states)['E'] ?? 0;

        $cut = hrtime(true);
        $net->partition('a');
        // Until the client has reported the loss and ended, and Redis has
        // let the lease go, in either order: the client may know first (its
        // last confirmed lease ends before Redis' copy of it).
        $gone = null;
        $ended = false;
        $after = [];
        while ($gone === null || !$ended) {
            $r = [$p[1][1]];
            $w = $e = null;
            if ($ended) {
                usleep(20000);
            } elseif (stream_select($r, $w, $e, 0, 20000)) {
                $line = fgets($p[1][1]);
                if ($line === false) {
                    $ended = true;
                } else {
                    $after[] = explode(' ', trim($line), 3);
                }
            }
            if ($gone === null && $net->cli(6379, 'EXISTS', 'lock:{renewed}') === '0') {
                $gone = hrtime(true);
            }
            $this->assertLessThan($cut + 6 * $ttl * 1e9, hrtime(true), 'the loss is reported at all');
        }
        $this->lines($p);
        $this->assertNotNull($gone);
        $this->assertStringStartsWith('RedisLock\\LockLostException: ', end($after)[2] ?? '', 'release() says why');
        $this->assertSame('0', end($after)[1], 'the loss reported');
        $lateTrue = count(array_filter($after, fn ($x) => $x[1] === '1' && (int) $x[0] > $gone));
        $this->assertSame(0, $lateTrue, 'isHeld() never true after Redis let the lease go');
        $lost = (int) array_values(array_filter($after, fn ($x) => $x[1] === '0'))[0][0];
        // The renewal declares the loss when its last confirmed lease ends
        // (at most a lease after the cut); the isHeld() call under way then
        // may still wait out its connect and read timeouts.
        $this->assertLessThan($cut + ($ttl + 2 * $timeout + 0.5) * 1e9, $lost, 'the loss reported within one lease of the cut');
        self::report("renewal over $ms ms (+$jitter) one way, $loss% loss, ttl $ttl s", [
            'false losses while the link worked' => 0,
            "isHeld() calls timed out while it worked (of " . count($states) . ')' => $slow,
            'lease gone on Redis after the cut (s)' => ($gone - $cut) / 1e9,
            'isHeld() false after the cut (s)' => ($lost - $cut) / 1e9,
        ]);
    }
}
