<?php

/**
 * The extension under Debian's php-fpm: a static pool of 2 workers, requests
 * sent with cgi-fcgi. Module startup forks the workers, so each must open its
 * own connection lazily and reuse it across requests.
 */
final class FpmTest extends RedisLockTestCase
{
    private static $fpm;
    private static string $dir;
    private static string $socket;

    public static function setUpBeforeClass(): void
    {
        $bin = '/usr/sbin/php-fpm8.2';
        if (!is_executable($bin) || !is_executable('/usr/bin/cgi-fcgi')) {
            self::markTestSkipped('php8.2-fpm and libfcgi-bin are installed by make test');
        }
        self::$dir = sys_get_temp_dir() . '/redislock-fpm-' . getmypid();
        @mkdir(self::$dir);
        self::$socket = self::$dir . '/fpm.sock';
        $so = getenv('REDISLOCK_SO') ?: dirname(__DIR__, 2) . '/target/release/libredislock.so';
        file_put_contents(self::$dir . '/fpm.conf', implode("\n", [
            '[global]', 'error_log = ' . self::$dir . '/fpm.log', 'daemonize = no',
            '[pool]', 'listen = ' . self::$socket, 'pm = static', 'pm.max_children = 2',
            'catch_workers_output = yes', '',
        ]));
        file_put_contents(self::$dir . '/lock.php', '<?php
            $l = new RedisLock();
            $ok = $l->lock("fpm", 5, 10);
            if (($_GET["die"] ?? "") === "fatal") { echo "held "; undefined_function(); }
            echo $ok && $l->unlock("fpm") ? "ok" : "fail";');
        file_put_contents(self::$dir . '/api.php', '<?php
            if (($_GET["keep"] ?? "") === "1") { ini_set("redislock.release_at_request_end", "0"); }
            $l = (new RedisLock\Client())->lock("fpm-api", ["ttl" => 1, "autoRenew" => true]);
            echo $l->acquire(5) ? "held " : "busy ";
            match ($_GET["end"] ?? "") { "fatal" => undefined_function(), "exit" => exit(0), default => null };
            echo "done";');
        self::$fpm = proc_open([$bin, '-n', '-R', '-d', "extension=$so", '-d', 'redislock.default_dsn=' . RedisServer::$main->dsn(),
                     '-y', self::$dir . '/fpm.conf', '-F'],
            [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        for ($i = 0; $i < 100 && !file_exists(self::$socket); $i++) {
            usleep(50000);
        }
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$fpm) {
            proc_terminate(self::$fpm);
            proc_close(self::$fpm);
        }
        @array_map('unlink', glob(self::$dir . '/*') ?: []);
        @rmdir(self::$dir);
    }

    private static function request(string $query = '', string $script = 'lock.php'): string
    {
        $env = ['SCRIPT_FILENAME' => self::$dir . "/$script", 'REQUEST_METHOD' => 'GET',
                'QUERY_STRING' => $query, 'SCRIPT_NAME' => "/$script"];
        $p = proc_open(['cgi-fcgi', '-bind', '-connect', self::$socket], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = stream_get_contents($pipes[1]);
        proc_close($p);
        return trim(substr($out, strpos($out, "\r\n\r\n") + 4));
    }

    private function clientIds(): array
    {
        preg_match_all('/^id=(\d+) /m', $this->redis->rawCommand('CLIENT', 'LIST'), $m);
        return $m[1];
    }

    public function testWorkersLockAndReuseTheirOwnConnections(): void
    {
        $this->assertFileExists(self::$socket, 'php-fpm started');
        $before = $this->clientIds();
        for ($i = 0; $i < 20; $i++) {
            $this->assertSame('ok', self::request());
        }
        $new = array_diff($this->clientIds(), $before);
        // 20 requests on 2 workers: at most one connection each, kept open.
        $this->assertGreaterThanOrEqual(1, count($new));
        $this->assertLessThanOrEqual(2, count($new));
    }

    public function testAFatalErrorInARequestReleasesItsLock(): void
    {
        $this->assertStringStartsWith('held', self::request('die=fatal'));
        $this->assertFalse((bool) $this->redis->exists('Lock:fpm'));
        $this->assertSame('ok', self::request());
    }

    public function testLockObjectsAreReleasedAtTheEndOfEveryKindOfRequest(): void
    {
        foreach (['end=fatal', 'end=exit', ''] as $query) {
            $this->assertStringStartsWith('held', self::request($query, 'api.php'), $query);
            $this->assertFalse((bool) $this->redis->exists('lock:{fpm-api}'), "released after '$query'");
        }
    }

    public function testRenewalStopsAtRequestEndWhileTheWorkerLivesOn(): void
    {
        // Release at request end switched off: the lease (1 s) must run out
        // once the request is over, so the worker's thread stopped renewing.
        $this->assertSame('held done', self::request('keep=1', 'api.php'));
        $this->assertTrue((bool) $this->redis->exists('lock:{fpm-api}'));
        usleep(1500000);
        $this->assertFalse((bool) $this->redis->exists('lock:{fpm-api}'), 'not renewed after the request');
        $this->assertSame('held done', self::request('', 'api.php'), 'the worker still serves');
    }
}
