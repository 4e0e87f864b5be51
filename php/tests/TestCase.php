<?php

abstract class RedisLockTestCase extends PHPUnit\Framework\TestCase
{
    use Processes;

    protected Redis $redis;

    protected function setUp(): void
    {
        $this->redis = RedisServer::$main->client();
        $this->redis->flushAll();
    }

    /**
     * Waiters killed while in line leave their place and the wake-ups sent
     * to them behind, each with a TTL of at most two places (4 s): once
     * those ran out, nothing may be left.
     */
    protected function assertNothingLeftOnceKilledWaitersExpire(): void
    {
        $deadline = microtime(true) + 6;
        while ($this->snapshot() !== [] && microtime(true) < $deadline) {
            usleep(100000);
        }
        $this->assertSame([], $this->snapshot());
    }

    /**
     * Every key in Redis with its value (strings) or members (zsets),
     * besides the records kept for operators, which outlive locks and tasks
     * by design (OperatorTest checks them): the processes that took locks,
     * the queue registry and each queue's counters.
     */
    protected function snapshot(): array
    {
        $keys = array_filter(
            $this->redis->keys('*'),
            // Operator records: process descriptions, the queue registry and
            // its prefixes, a queue's counters, its workers and its recent
            // attempts.
            fn (string $k) => !str_starts_with($k, 'redislock:holder:') && $k !== 'redislock:queues' && $k !== 'redislock:prefixes'
                && !str_ends_with($k, '}:stats') && !str_ends_with($k, '}:workers') && !str_ends_with($k, '}:workers-done')
                && !str_ends_with($k, '}:recent'),
        );
        sort($keys);
        $out = [];
        foreach ($keys as $k) {
            $out[$k] = $this->redis->type($k) === Redis::REDIS_ZSET
                ? $this->redis->zRange($k, 0, -1, true)
                : $this->redis->get($k);
        }
        return $out;
    }

    /**
     * What the seed's `RedisLock::isLocking()` says of a lock its instance
     * holds: the lock's expiry time in whole unix seconds, as a string.
     */
    protected function assertLocking(mixed $isLocking, string $message = ''): void
    {
        $this->assertIsString($isLocking, $message);
        $this->assertMatchesRegularExpression('/^[1-9][0-9]{9,}$/', $isLocking, $message);
        $this->assertGreaterThanOrEqual(time() - 1, (int) $isLocking, $message);
    }

    /** How many scripts the server ran: as functions, or with EVAL/EVALSHA. */
    protected function scriptCalls(): int
    {
        return $this->commandCalls('evalsha', 'eval', 'fcall');
    }

    /** How many times the main server ran each of $commands (`INFO commandstats`), summed. */
    protected function commandCalls(string ...$commands): int
    {
        $stats = $this->redis->info('commandstats');
        $calls = 0;
        foreach ($commands as $command) {
            if (preg_match('/calls=(\d+)/', $stats["cmdstat_$command"] ?? '', $m)) {
                $calls += (int) $m[1];
            }
        }
        return $calls;
    }

    /**
     * Each case must throw a TypeError or ValueError of PHP's own wording
     * (never one of the extension's "redislock: ..." errors).
     */
    protected function assertAllRefused(array $cases): void
    {
        foreach ($cases as $i => $case) {
            try {
                $case();
                $this->fail("case $i was accepted");
            } catch (TypeError | ValueError $e) {
                $this->assertStringNotContainsString('redislock: ', $e->getMessage(), "case $i");
            }
        }
    }

    /** Waits until the waiter line at key $line has $n waiters. */
    protected function lineReaches(string $line, int $n): void
    {
        $deadline = microtime(true) + 20;
        while ($this->redis->lLen($line) !== $n) {
            $this->assertLessThan($deadline, microtime(true), "line $line never reached $n");
            usleep(5000);
        }
    }

}

/** PHP processes with the extension loaded, for tests of any base class. */
trait Processes
{
    /**
     * Of the extensions `$names`, those a `php -n` child must load: the
     * shared ones (a PHP built with them in, as the ZTS build, has them).
     */
    protected static function shared(string ...$names): array
    {
        $dir = ini_get('extension_dir');
        return array_values(array_filter($names, fn (string $ext) => is_file("$dir/$ext.so")));
    }

    /**
     * The `extension` values that load phpredis into a process started
     * with -n: the shared extensions it requires (trixie's needs igbinary)
     * first.
     */
    protected static function phpredisExtensions(): array
    {
        $required = array_keys((new ReflectionExtension('redis'))->getDependencies(), 'Required', true);
        return [...self::shared(...$required), 'redis'];
    }

    /**
     * The ini of a PHP process that runs the Laravel test application:
     * mbstring, tokenizer (Laravel's closure serializer reads a closure's
     * code with it), and phpredis where Predis is not packaged (Debian 13).
     */
    protected static function laravelIni(): array
    {
        return ['extension' => [...self::shared('mbstring', 'tokenizer'), ...(class_exists(Predis\Client::class) ? [] : self::phpredisExtensions())]];
    }

    /**
     * The command line of a new PHP process with the extension loaded; an
     * ini value may be a list (`extension`).
     */
    protected static function command(string $code, array $ini = []): array
    {
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        // The parent's include_path: a PHP whose built-in one differs from
        // Debian's (the ZTS build) still finds the frameworks.
        $ini += ['redislock.default_dsn' => RedisServer::$main->dsn(), 'include_path' => get_include_path()];
        $cmd = [PHP_BINARY, '-n', '-d', "extension=$so"];
        foreach ($ini as $k => $values) {
            foreach ((array) $values as $v) {
                // Quoted, so a DSN's '=' and '&' stay part of the value.
                array_push($cmd, '-d', strpbrk($v, '=&?') === false ? "$k=$v" : "$k=\"$v\"");
            }
        }
        array_push($cmd, '-r', $code);
        return $cmd;
    }

    /**
     * Runs PHP scripts as concurrent processes; returns their outputs
     * (stdout then stderr) and sets $exits to their exit codes.
     */
    protected static function phpMany(array $codes, array $ini = [], ?array &$exits = null): array
    {
        $procs = [];
        foreach ($codes as $i => $code) {
            $p = proc_open(self::command($code, $ini), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $procs[$i] = [$p, $pipes];
        }
        $outs = $exits = [];
        foreach ($procs as $i => [$p, $pipes]) {
            $outs[$i] = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
            $exits[$i] = proc_close($p);
        }
        return $outs;
    }

    /** Starts $code in a PHP process; returns [process, pipes, pid]. */
    protected static function start(string $code, array $ini = []): array
    {
        $p = proc_open(self::command($code, $ini), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        return [$p, $pipes, proc_get_status($p)['pid']];
    }

    /** Waits for a process of start() to end; returns its output. */
    protected static function finish(array $proc): string
    {
        $out = stream_get_contents($proc[1][1]) . stream_get_contents($proc[1][2]);
        proc_close($proc[0]);
        return $out;
    }

    /** Runs one PHP script in a new process; returns its output. */
    protected static function php(string $code, array $ini = [], ?int &$exit = null): string
    {
        $out = self::phpMany([$code], $ini, $exits)[0];
        $exit = $exits[0];
        return $out;
    }

    /**
     * The lines the processes printed, each split into integers (e.g. a
     * fencing token and hrtime stamps of a critical section), sorted.
     */
    protected static function records(array $outs): array
    {
        $records = [];
        foreach ($outs as $out) {
            foreach (explode("\n", trim($out)) as $line) {
                $records[] = array_map('intval', explode(' ', $line));
            }
        }
        sort($records);
        return $records;
    }
}

/**
 * What the install and release tests share: the repository, its version,
 * shell commands, and a throwaway root (tools/throwaway-root.sh: an overlay
 * of this machine's root in a private mount namespace) to install in.
 */
trait Installs
{
    private static function root(): string
    {
        return dirname(__DIR__, 2);
    }

    /** Cargo.toml's version. */
    private static function version(): string
    {
        preg_match('/^version = "([^"]+)"/m', file_get_contents(self::root() . '/Cargo.toml'), $m);
        return $m[1];
    }

    /** Runs a shell command (in the repository by default); returns [exit code, stdout + stderr]. */
    private static function sh(string $cmd, ?string $cwd = null, array $env = []): array
    {
        $proc = proc_open(['bash', '-c', "exec 2>&1; $cmd"], [1 => ['pipe', 'w']], $pipes, $cwd ?? self::root(), $env + getenv());
        $out = stream_get_contents($pipes[1]);
        return [proc_close($proc), $out];
    }

    /** Runs a shell command as root in a throwaway root; skips where the machine has none. */
    private function inThrowawayRoot(string $cmd): string
    {
        [$code, $out] = self::sh(self::root() . '/tools/throwaway-root.sh ' . escapeshellarg($cmd));
        if ($code === 77) {
            $this->markTestSkipped("no throwaway root on this machine: $out");
        }
        $this->assertSame(0, $code, $out);
        return $out;
    }
}
