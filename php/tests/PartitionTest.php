<?php

require_once __DIR__ . '/Network.php';
require_once __DIR__ . '/History.php';
require_once __DIR__ . '/fenced_store.php';

/**
 * Partitions, lossy and slow links and clock faults (FAULTS.md, second
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
        fwrite(STDERR, "\n[faults] $scenario: " . implode(' ', $parts) . "\n");
    }

    /** Starts PHP $code on $host; its lines are read with lines(). */
    private function on(string $host, string $code): array
    {
        $code = 'require ' . var_export(__DIR__ . '/fenced_store.php', true) . ';' . $code;
        $p = proc_open($this->net->on($host, self::command($code)), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
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
        $store = var_export("{$this->dir}/store", true);
        $ttl = 1;
        $holder = $this->on('a', '
            $l = (new RedisLock\Client(' . var_export($dsn($a), true) . '))->lock("account", ["ttl" => ' . $ttl . ', "autoRenew" => true]);
            $l->acquire() or exit(3);
            $t = $l->token();
            echo "acquired $t ", hrtime(true), "\n";
            $end = hrtime(true) + ' . (self::long() ? 6 : 3) . ' * 1e9;
            while (hrtime(true) < $end) {
                try { $held = $l->isHeld() ? "1" : "0"; } catch (RedisLock\ConnectionException $e) { $held = "E"; }
                $at = hrtime(true);
                fenced_write(' . $store . ', "a", $t);
                echo "write $at $held\n";
                usleep(20000);
            }');
        [, $token, $from] = explode(' ', self::line($holder));
        usleep(300000);
        $cut = hrtime(true);
        $net->partition('a');
        $taker = $this->on('b', '
            $l = (new RedisLock\Client(' . var_export($dsn($b), true) . '))->lock("account", ["ttl" => 5]);
            $l->acquire(10) or exit(3);
            $t = $l->token();
            echo "acquired $t ", hrtime(true), "\n";
            for ($i = 0; $i < 10; $i++) { fenced_write(' . $store . ', "b", $t); usleep(20000); }
            $l->release();
            echo "released ", hrtime(true), "\n";');
        $took = $this->lines($taker);
        $held = $this->lines($holder);

        [, $bToken, $bFrom] = explode(' ', $took[0]);
        $bTo = (int) explode(' ', $took[1])[1];
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
        $holds = [
            ['who' => 'a', 'token' => (int) $token, 'from' => (int) $from, 'to' => $doubt ?? PHP_INT_MAX],
            ['who' => 'b', 'token' => (int) $bToken, 'from' => (int) $bFrom, 'to' => $bTo],
        ];
        $this->assertGreaterThan((int) $token, (int) $bToken, 'the next hold has a higher token');
        $this->assertGreaterThan($cut, (int) $bFrom, 'the other process took the lock once the lease ran out');
        $this->assertSame(0, History::staleAccepted($writes), 'the fenced resource accepted no stale write');
        $this->assertSame(0, History::tokensOutOfOrder($holds));
        $this->assertSame(0, $heldLate, 'isHeld() never said true once the other process held the lock');
        $this->assertNotNull($sawLoss, 'the holder learnt the loss: ' . implode(' | ', array_slice($held, -3)));
        $this->assertSame(0, History::overlaps($holds), 'isHeld() stopped saying true (an error, then false) before the other took the lock');
        $late = History::lateWrites($writes, $holds);
        $this->assertGreaterThan(0, $late, 'the unchecked writes went on after the other took the lock (the case fencing is for)');
        $refused = count(array_filter($writes, fn ($w) => !$w['accepted']));
        $this->assertSame($late, $refused, 'every late write was refused, no other');
        self::report('partitioned holder', [
            'late writes refused by fencing (would overlap unfenced)' => $late,
            'stale writes accepted' => 0,
            'isHeld() not true after the cut (s)' => ($doubt - $cut) / 1e9,
            'isHeld() false (loss known) after the cut (s)' => ($sawLoss - $cut) / 1e9,
            'next holder in after the cut (s)' => ($bFrom - $cut) / 1e9,
        ]);
    }
}
