<?php

/**
 * Clocks of test processes and servers set by libfaketime: a process run
 * through command() reads its time from a clock file, which set() changes
 * while it runs ('+40' jumps it 40 s ahead of the real clock, '-5' back,
 * '+0 x1.5' runs it 1.5 times as fast).
 */
final class FakeClock
{
    private const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
    /**
     * libfaketime cannot start inside a process whose malloc is jemalloc
     * (Debian's redis-server): jemalloc reads the clock while libfaketime
     * sets itself up (libfaketime issue #130). tcmalloc, preloaded first,
     * takes malloc over.
     */
    private const TCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4';

    /** Why clocks cannot be faked here; null when they can. */
    public static function unavailable(): ?string
    {
        foreach ([self::LIBFAKETIME => 'faketime', self::TCMALLOC => 'libtcmalloc-minimal4'] as $file => $package) {
            if (!is_file($file)) {
                return "$file is missing (Debian: $package)";
            }
        }
        return null;
    }

    /** Skips the test when the redis-server on PATH cannot have a faked clock. */
    public static function skipUnlessServersCanHaveOne(): void
    {
        if (($why = self::unavailable() ?? self::serverNotFakeable()) !== null) {
            $f = RedisServer::features();
            PHPUnit\Framework\Assert::markTestSkipped("{$f['name']} {$f['version']}: its clock cannot be faked ($why)");
        }
    }

    /**
     * The redis-server command $cmd, run with its time read from the clock
     * file $clock (with tcmalloc, for a server built with jemalloc).
     */
    public static function server(array $cmd, string $clock): array
    {
        return ['env', 'LD_PRELOAD=' . self::TCMALLOC . ' ' . self::LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE=$clock",
            'FAKETIME_NO_CACHE=1', ...$cmd];
    }

    /**
     * The command $cmd (a PHP process), run with its time read from the
     * clock file $clock; its monotonic clock (timeouts, leases) stays real.
     */
    public static function process(array $cmd, string $clock): array
    {
        return ['env', 'LD_PRELOAD=' . self::LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE=$clock", 'FAKETIME_NO_CACHE=1',
            'DONT_FAKE_MONOTONIC=1', ...$cmd];
    }

    /** A clock file in $dir, at the real time to start with. */
    public static function file(string $dir, string $name): string
    {
        $file = "$dir/clock-$name";
        file_put_contents($file, "+0\n");
        return $file;
    }

    public static function set(string $file, string $spec): void
    {
        file_put_contents("$file.tmp", "$spec\n");
        rename("$file.tmp", $file);
    }

    /**
     * Why libfaketime cannot set this redis-server's clock, or null when it
     * can: a statically linked build never loads it, and some builds crash
     * under it (Debian 12 backports' Valkey 8.0). Asked once: a server
     * started at a faked 2001 must say it is 2001.
     */
    private static function serverNotFakeable(): ?string
    {
        static $why = false;
        if ($why !== false) {
            return $why;
        }
        $dir = sys_get_temp_dir() . '/redislock-faketime-' . getmypid();
        @mkdir($dir);
        $port = RedisServer::freePort();
        $file = "$dir/clock";
        file_put_contents($file, "@2001-01-01 00:00:00\n");
        $p = proc_open([...self::server(['redis-server'], $file), '--port', (string) $port, '--bind', '127.0.0.1',
            '--save', '', '--appendonly', 'no', '--dir', $dir], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        $time = null;
        // (An ended process's exit status is told once: kept.)
        for ($i = 0; $i < 200 && $time === null && ($status = proc_get_status($p))['running']; $i++) {
            usleep(25000);
            $time = @shell_exec("redis-cli -p $port TIME 2>/dev/null | head -1") ?: null;
            $time = is_numeric(trim((string) $time)) ? (int) $time : null;
        }
        if ($status['running']) {
            proc_terminate($p, SIGKILL);
        }
        proc_close($p);
        @unlink($file);
        @rmdir($dir);
        $why = match (true) {
            $time !== null && $time < 1_000_000_000 => null,
            $time !== null => 'libfaketime has no hold on it: a statically linked build',
            $status['signaled'] => "it crashes under libfaketime (signal {$status['termsig']})",
            default => 'it does not start under libfaketime',
        };
        return $why;
    }
}
