<?php

/**
 * The extension under Debian's php-fpm: a static pool of 2 workers, requests
 * sent with cgi-fcgi. Module startup forks the workers, so each must open its
 * own connection lazily and reuse it across requests.
 */
final class FpmTest extends RedisLockTestCase
{
    private static ?FpmPool $pool = null;

    public static function setUpBeforeClass(): void
    {
        self::$pool = new FpmPool([
            'lock.php' => '<?php
                $l = new RedisLock();
                $ok = $l->lock("fpm", 5, 10);
                if (($_GET["die"] ?? "") === "fatal") { echo "held "; undefined_function(); }
                echo $ok && $l->unlock("fpm") ? "ok" : "fail";',
            'api.php' => '<?php
                if (($_GET["keep"] ?? "") === "1") { ini_set("redislock.release_at_request_end", "0"); }
                $l = (new RedisLock\Client())->lock("fpm-api", ["ttl" => 1, "autoRenew" => true]);
                echo $l->acquire(5) ? "held " : "busy ";
                match ($_GET["end"] ?? "") { "fatal" => undefined_function(), "exit" => exit(0), default => null };
                echo "done";',
        ]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$pool?->stop();
    }

    private static function request(string $query = '', string $script = 'lock.php'): string
    {
        return self::$pool->request($script, $query);
    }

    public function testWorkersLockAndReuseTheirOwnConnections(): void
    {
        $this->assertTrue(self::$pool->started(), 'php-fpm started');
        for ($i = 0; $i < 20; $i++) {
            $this->assertSame('ok', self::request());
        }
        // 20 requests on 2 workers: one connection each, kept open (named
        // by the worker's pid; counted whatever ran before in the pool).
        preg_match_all('/ name=redislock-(\d+) /', $this->redis->rawCommand('CLIENT', 'LIST'), $m);
        $perWorker = array_count_values(array_diff($m[1], [(string) getmypid()]));
        $this->assertGreaterThanOrEqual(1, count($perWorker));
        $this->assertLessThanOrEqual(2, count($perWorker));
        $this->assertSame(array_fill_keys(array_keys($perWorker), 1), $perWorker);
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
