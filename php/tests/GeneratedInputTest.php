<?php

/**
 * Random values of every PHP type into every public method and argument:
 * references, recursive and deep arrays, objects with __toString, enums,
 * closures, resources, huge and invalid UTF-8 strings, NAN/INF. Each batch
 * runs in a process of its own that must not crash; after every TypeError or
 * ValueError the whole Redis dataset must be as it was (DEBUG DIGEST).
 * `make test` runs GENERATED_CASES (default 5,000); `make faults` 50,000.
 */
final class GeneratedInputTest extends RedisLockTestCase
{
    private const BATCH = 500;

    /** The child's code: generator, calls, and the loop over one batch. */
    private static function batch(int $seed, int $cases, int $port): string
    {
        return <<<PHP
        mt_srand($seed);
        enum Suit: string { case Hearts = 'h'; case Spades = 's'; }
        final class Named { public function __toString(): string { return 'named'; } }
        \$sock = stream_socket_client('tcp://127.0.0.1:$port');
        function command(\$sock, string ...\$args): string {
            \$out = '*' . count(\$args) . "\\r\\n";
            foreach (\$args as \$a) { \$out .= '$' . strlen(\$a) . "\\r\\n\$a\\r\\n"; }
            fwrite(\$sock, \$out);
            return trim(fgets(\$sock));
        }
        // A key expiring between two digests would look like a change.
        command(\$sock, 'DEBUG', 'SET-ACTIVE-EXPIRE', '0');
        register_shutdown_function(fn () => command(\$sock, 'DEBUG', 'SET-ACTIVE-EXPIRE', '1'));
        function digest(\$sock): string { return command(\$sock, 'DEBUG', 'DIGEST'); }
        function pick(array \$a) { return \$a[mt_rand(0, count(\$a) - 1)]; }
        function value(int \$depth = 0) {
            switch (mt_rand(0, 17)) {
                case 0: return null;
                case 1: return (bool) mt_rand(0, 1);
                case 2: return pick([0, 1, -1, 7, PHP_INT_MAX, PHP_INT_MIN, mt_rand()]);
                case 3: return pick([0.0, -0.0, 1.5, 0.1 + 0.2, NAN, INF, -INF, 5e-324, 1e300, -2.5]);
                case 4: return pick(['', '0', '1', '0.5', '-3', ' 7', '1e3', 'abc', "a\\0b", "\\xff\\xfe", 'NAN', 'redis://x']);
                case 5: return str_repeat(chr(mt_rand(0, 255)), mt_rand(0, 3) ? mt_rand(1, 64) : 1 << 20);
                case 6: return random_bytes(mt_rand(1, 40));
                case 7: if (\$depth < 3) { \$a = []; for (\$i = mt_rand(0, 4); \$i > 0; \$i--) { \$a[] = value(\$depth + 1); } return \$a; } return [];
                case 8: if (\$depth < 3) { \$a = []; for (\$i = mt_rand(0, 4); \$i > 0; \$i--) { \$a[pick(['ttl', 'lease', 'prefix', 'dsn', 'nodes', 'x', '0'])] = value(\$depth + 1); } return \$a; } return ['x' => 1];
                case 9: \$r = []; \$r[] = &\$r; return \$r;
                case 10: \$d = []; for (\$i = 0; \$i < 20000; \$i++) { \$d = [\$d]; } return \$d;
                case 11: return new stdClass();
                case 12: return new Named();
                case 13: return pick([Suit::Hearts, Suit::Spades]);
                case 14: return fn () => 1;
                case 15: return fopen('php://memory', 'r');
                case 16: \$v = 'ref'; \$w = &\$v; return \$w;
                default: return pick(['name', 'q', 'i', 5, 0.5, ['a' => null]]);
            }
        }
        \$client = new RedisLock\\Client();
        \$calls = [
            fn (\$a) => new RedisLock(\$a[0]),
            fn (\$a) => (new RedisLock())->lock(\$a[0], \$a[1], \$a[2], \$a[3]),
            fn (\$a) => (new RedisLock())->unlock(\$a[0]),
            fn (\$a) => RedisLock\\Runtime::endRequest(\$a[0]),
            fn (\$a) => RedisLock\\Runtime::held(\$a[0]),
            fn (\$a) => (new RedisLock())->expire(\$a[0], \$a[1]),
            fn (\$a) => (new RedisLock())->isLocking(\$a[0]),
            fn (\$a) => new RedisQueue(\$a[0]),
            fn (\$a) => (new RedisQueue())->enqueue(\$a[0], \$a[1], \$a[2], \$a[3]),
            fn (\$a) => (new RedisQueue())->dequeue(\$a[0], \$a[1], \$a[2], \$a[3]),
            fn (\$a) => (new RedisQueue())->pop(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => (new RedisQueue())->top(\$a[0], \$a[1]),
            fn (\$a) => Lock_Service::addLock(\$a[0], \$a[1]),
            fn (\$a) => Lock_Service::releaseLock(\$a[0], \$a[1]),
            fn (\$a) => new RedisLock\\Client(\$a[0]),
            fn (\$a) => \$client->lock(\$a[0], \$a[1]),
            fn (\$a) => \$client->lock('g')->acquire(\$a[0]),
            fn (\$a) => \$client->lock('g')->extend(\$a[0]),
            fn (\$a) => \$client->lock('g')->synchronized(\$a[0], \$a[1]),
            fn (\$a) => \$client->queue(\$a[0], \$a[1]),
            fn (\$a) => \$client->reserve(\$a[0], \$a[1], \$a[2], 0),
            fn (\$a) => \$client->queue('g')->enqueue(\$a[0], \$a[1], \$a[2], \$a[3]),
            fn (\$a) => \$client->queue('g')->enqueueMany(\$a[0], \$a[1], \$a[2], \$a[3]),
            fn (\$a) => \$client->queue('g')->enqueue('t', null, 0, null, \$a[0], \$a[1]),
            fn (\$a) => \$client->queue('g')->enqueueMany(['t' => null], 0, null, null, \$a[0]),
            fn (\$a) => \$client->queue('g')->tagged(\$a[0], \$a[1]),
            fn (\$a) => \$client->queue('g')->reserve(\$a[0], \$a[1], 0),
            fn (\$a) => \$client->queue('g')->ack(\$a[0]),
            fn (\$a) => \$client->queue('g')->ackMany(\$a[0]),
            fn (\$a) => \$client->queue('g')->dead(\$a[0]),
            fn (\$a) => \$client->queue('g')->retryDead(\$a[0]),
            fn (\$a) => \$client->queue('g')->purgeDead(\$a[0]),
            fn (\$a) => new RedisLock\\Redlock(\$a[0], \$a[1]),
            fn (\$a) => \$client->stock(\$a[0], \$a[1]),
            fn (\$a) => \$client->stock('g')->set(\$a[0], \$a[1]),
            fn (\$a) => \$client->stock('g')->take(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->stock('{g}', ['orders' => '{g}:o'])->take(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->stock('g')->giveBack(\$a[0], \$a[1]),
            fn (\$a) => \$client->stock('g')->bought(\$a[0]),
            fn (\$a) => \$client->limiter(\$a[0], \$a[1]),
            fn (\$a) => \$client->limiter('g', ['limit' => 3, 'per' => 60] + (is_array(\$a[0]) ? \$a[0] : []))->attempt(\$a[1], \$a[2]),
            fn (\$a) => \$client->limiter('g', ['limit' => 3, 'per' => 60, 'policy' => 'sliding_window'])->peek(\$a[0], \$a[1]),
            fn (\$a) => \$client->limiter('g', ['limit' => 3, 'per' => 60, 'policy' => 'fixed_window'])->wait(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->limiter('g', ['limit' => 3, 'per' => 60])->reset(\$a[0]),
            fn (\$a) => \$client->attempt(\$a[0], \$a[1]),
            fn (\$a) => \$client->once(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->once('g', 's', \$a[0])->done(),
            fn (\$a) => \$client->leader(\$a[0], \$a[1]),
            fn (\$a) => \$client->leader('g', ['ttl' => 5])->campaign(\$a[0]),
            fn (\$a) => \$client->semaphore(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->semaphore('g', 3)->acquire(\$a[0], \$a[1]),
            fn (\$a) => \$client->semaphore('g', 3)->extend(\$a[0]),
            fn (\$a) => \$client->readLock(\$a[0], \$a[1]),
            fn (\$a) => \$client->writeLock('g', \$a[0])->acquire(\$a[1]),
            fn (\$a) => \$client->lockMany(\$a[0], \$a[1]),
            fn (\$a) => \$client->lockMany(['g', 'h'])->acquire(\$a[0]),
            fn (\$a) => \$client->lockState(\$a[0], \$a[1]),
            fn (\$a) => \$client->forceRelease(\$a[0], \$a[1]),
            fn (\$a) => \$client->locks(\$a[0], \$a[1]),
            fn (\$a) => \$client->queues(),
            fn (\$a) => \$client->queue(\$a[0])->history(),
            fn (\$a) => \$client->queue(\$a[0])->metrics(),
            fn (\$a) => \$client->queue('g')->recent(\$a[0], \$a[1], \$a[2]),
            fn (\$a) => \$client->queue('g')->keepRecent(\$a[0], \$a[1]),
        ];
        // A random wait may meet a lock still held: an alarm (a signal with
        // a handler) ends any wait within 2 s, as it ends sleep().
        pcntl_async_signals(true);
        pcntl_signal(SIGALRM, function () {});
        \$outcomes = [];
        for (\$n = 0; \$n < $cases; \$n++) {
            \$call = mt_rand(0, count(\$calls) - 1);
            \$args = [value(), value(), value(), value()];
            // What the last case left (an exception whose trace holds a
            // lock object) goes now, not in the middle of this one.
            unset(\$e);
            gc_collect_cycles();
            if (\$n % 100 === 0) {
                // A digest reads the whole dataset: keep it small.
                command(\$sock, 'FLUSHALL');
            }
            \$before = digest(\$sock);
            pcntl_alarm(2);
            try {
                \$calls[\$call](\$args);
                \$outcome = 'ok';
            } catch (TypeError | ValueError \$e) {
                \$outcome = 'refused';
                if (\$e->getMessage() === '') { echo "case \$n: empty message\\n"; exit(2); }
                if (strlen(\$e->getMessage()) > 4096) { echo "case \$n (call \$call): a message of ", strlen(\$e->getMessage()), " bytes\\n"; exit(2); }
                if (digest(\$sock) !== \$before) { echo "case \$n (call \$call): Redis changed by a refused call: ", \$e->getMessage(), "\\n"; exit(2); }
            } catch (RedisLock\\RedisLockException \$e) {
                \$outcome = 'redislock';
            } catch (ArgumentCountError \$e) {
                \$outcome = 'refused';
            }
            pcntl_alarm(0);
            \$outcomes[\$outcome] = (\$outcomes[\$outcome] ?? 0) + 1;
        }
        echo json_encode(\$outcomes);
        PHP;
    }

    public function testRandomValuesNeverCrashAndRefusedCallsLeaveRedisAlone(): void
    {
        $cases = (int) (getenv('GENERATED_CASES') ?: 5000);
        $port = RedisServer::$main->port;
        $seed = (int) (getenv('GENERATED_SEED') ?: random_int(1, PHP_INT_MAX >> 8));
        $codes = [];
        for ($done = 0, $batch = 0; $done < $cases; $done += self::BATCH, $batch++) {
            $codes[] = self::batch($seed + $batch, min(self::BATCH, $cases - $done), $port);
        }
        $totals = [];
        // One batch at a time: a digest covers the whole server.
        foreach ($codes as $i => $code) {
            $outs = self::phpMany([$i => $code], [], $exits);
            foreach ($outs as $i => $out) {
                $this->assertSame(0, $exits[$i], "batch seed " . ($seed + $i) . " (GENERATED_SEED=$seed): $out");
                $counts = json_decode($out, true);
                $this->assertIsArray($counts, $out);
                foreach ($counts as $k => $n) {
                    $totals[$k] = ($totals[$k] ?? 0) + $n;
                }
            }
        }
        $this->assertSame($cases, array_sum($totals));
        $this->assertGreaterThan(0, $totals['refused'] ?? 0, 'hostile values were refused');
        $this->assertGreaterThan(0, $totals['ok'] ?? 0, 'valid values went through');
    }
}
