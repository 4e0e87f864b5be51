<?php

use RedisLock\Client;
use RedisLock\Limiter;

/**
 * Rate limiters (docs/limits.md): each policy's admissions and answers, all
 * or none over several limits, waiting without polling, keys, hostile input,
 * and 200 processes hammering one key without passing the limit.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class LimiterTest extends RedisLockTestCase
{
    private const POLICIES = ['token_bucket', 'sliding_window', 'fixed_window'];

    private function limiter(string $name, string $policy, int $limit = 3, float $per = 60, array $more = []): Limiter
    {
        return (new Client())->limiter($name, ['limit' => $limit, 'per' => $per, 'policy' => $policy] + $more);
    }

    public function testEachPolicyAdmitsItsLimitThenRefusesUntilItsRetryTime(): void
    {
        // A refused attempt at 3 per 60 s waits for one token (20 s) in a
        // bucket, for the oldest admission to leave (60 s) in a sliding
        // window, for the window's end (60 s) in a fixed one.
        $retry = ['token_bucket' => 20.0, 'sliding_window' => 60.0, 'fixed_window' => 60.0];
        foreach (self::POLICIES as $policy) {
            $l = $this->limiter("api-$policy", $policy);
            $this->assertSame(3, $l->peek('ip')->remaining(), $policy);
            foreach ([2, 1, 0] as $left) {
                $d = $l->attempt('ip');
                $this->assertTrue($d->allowed(), $policy);
                $this->assertSame($left, $d->remaining(), $policy);
                $this->assertSame(0.0, $d->retryAfter(), $policy);
                $this->assertNull($d->limiter());
                $this->assertNull($d->key());
            }
            $refused = $l->attempt('ip');
            $this->assertFalse($refused->allowed(), $policy);
            $this->assertSame(0, $refused->remaining(), $policy);
            $this->assertSame("api-$policy", $refused->limiter());
            $this->assertSame('ip', $refused->key());
            $this->assertGreaterThan($retry[$policy] - 2, $refused->retryAfter(), $policy);
            $this->assertLessThanOrEqual($retry[$policy] + 0.002, $refused->retryAfter(), $policy);
            $this->assertGreaterThanOrEqual($refused->retryAfter(), $refused->resetAfter() + 0.002, $policy);
            $this->assertEqualsWithDelta($this->redis->time()[0], $refused->at(), 2, "$policy: the server's clock");
            // Another key is a limit of its own; a peek takes nothing.
            $this->assertSame(3, $l->peek('other')->remaining());
            $this->assertSame(3, $l->peek('other')->remaining());
            $this->assertTrue($l->reset('ip'));
            $this->assertFalse($l->reset('ip'));
            $this->assertSame(2, $l->attempt('ip')->remaining(), "$policy: full after reset()");
        }
    }

    public function testATokenBucketHoldsItsBurstAndRefillsAtItsRate(): void
    {
        $l = $this->limiter('burst', 'token_bucket', 600, 60, ['burst' => 2]);
        $this->assertSame(1, $l->attempt()->remaining());
        $this->assertSame(0, $l->attempt()->remaining());
        $refused = $l->attempt();
        $this->assertFalse($refused->allowed());
        // 600 a minute: a token every 0.1 s, whatever the attempts made.
        $this->assertLessThanOrEqual(0.1, $refused->retryAfter());
        $this->assertLessThanOrEqual(0.2, $refused->resetAfter());
        usleep((int) ($refused->retryAfter() * 1e6) + 1000);
        $this->assertTrue($l->attempt()->allowed());
        $this->assertFalse($l->attempt('', 1)->allowed());
        try {
            $l->attempt('', 3);
            $this->fail('a cost past the burst can never be allowed');
        } catch (ValueError $e) {
            $this->assertStringContainsString("more than limiter 'burst' can ever allow (2)", $e->getMessage());
        }
    }

    public function testTheKeysAreTheDocumentedOnesAndGoWhenIdle(): void
    {
        $c = new Client();
        $c->limiter('api', ['limit' => 5, 'per' => 2])->attempt('203.0.113.9');
        $c->limiter('api', ['limit' => 5, 'per' => 2, 'policy' => 'fixed_window'])->attempt('203.0.113.9');
        $c->limiter('api', ['limit' => 5, 'per' => 2, 'policy' => 'sliding_window'])->attempt('203.0.113.9', 2);
        $keys = $this->redis->keys('*');
        sort($keys);
        $this->assertSame([
            'limit:{api}:f:203.0.113.9',
            'limit:{api}:n:203.0.113.9',
            'limit:{api}:s:203.0.113.9',
            'limit:{api}:t:203.0.113.9',
        ], $keys);
        foreach ($keys as $key) {
            $ttl = $this->redis->pttl($key);
            $this->assertGreaterThan(0, $ttl, $key);
            $this->assertLessThanOrEqual(2000, $ttl, "$key: gone once idle for its period");
        }
        $this->assertEquals(['n' => '2', 's' => '1'], $this->redis->hGetAll('limit:{api}:n:203.0.113.9'), 'sliding: the cost in the window, the last sequence');
        $this->assertCount(1, $this->redis->zRange('limit:{api}:s:203.0.113.9', 0, -1), 'sliding: one admission of cost 2');
        $this->assertSame('1', $this->redis->get('limit:{api}:f:203.0.113.9'), 'fixed: the count');
    }

    public function testHostileNamesAndKeysAreLimitsOfTheirOwn(): void
    {
        $c = new Client();
        $names = ['a', 'a:t:b', '{t}:leases', 'x:dead', "n\0ul", "\xff\xfe", str_repeat('n', 10000), '{a}'];
        $keys = ['', 'b:t:c', ':t:', '{t}:leases', "k\0", "\xff", str_repeat('k', 100000), '}'];
        foreach (self::POLICIES as $policy) {
            foreach ($names as $name) {
                foreach ($keys as $key) {
                    $d = $c->limiter($name, ['limit' => 1, 'per' => 60, 'policy' => $policy])->attempt($key);
                    $this->assertTrue($d->allowed(), "$policy: no earlier name or key reached this one's limit");
                }
            }
        }
        $one = $c->limiter('{t}:leases', ['limit' => 1, 'per' => 60, 'policy' => 'sliding_window']);
        $refused = $one->attempt("k\0");
        $this->assertFalse($refused->allowed());
        $this->assertSame("k\0", $refused->key());
        $this->assertSame('{t}:leases', $refused->limiter());
    }

    /**
     * One token bucket is decided by a path of its own in the script (the
     * common call, without the loop over several limits): its decisions
     * are those the same bucket gets beside another limit, cost by cost,
     * refusals and peeks included.
     */
    public function testOneTokenBucketDecidesAsItDoesBesideAnotherLimit(): void
    {
        $c = new Client();
        $terms = ['limit' => 7, 'per' => 3600, 'burst' => 10];
        $alone = $c->limiter('{same}:alone', $terms);
        $beside = $c->limiter('{same}:beside', $terms);
        $wide = $c->limiter('{same}:wide', ['limit' => 1000000000, 'per' => 3600]);
        $allowed = 0;
        foreach ([1, 2, 1, 3, 5, 1, 1, 2, 4, 1, 10, 1] as $step => $cost) {
            $peek = $alone->peek('k', $cost);
            $a = $alone->attempt('k', $cost);
            $b = $c->attempt([[$beside, 'k'], $wide], $cost);
            $this->assertSame($b->allowed(), $a->allowed(), "step $step");
            $this->assertSame($b->remaining(), $a->remaining(), "step $step");
            $this->assertEqualsWithDelta($b->retryAfter(), $a->retryAfter(), 0.5, "step $step");
            $this->assertEqualsWithDelta($b->resetAfter(), $a->resetAfter(), 0.5, "step $step");
            $this->assertSame($a->allowed(), $peek->allowed(), "step $step: the peek foretold it");
            $this->assertSame($a->allowed() ? $a->remaining() + $cost : $a->remaining(), $peek->remaining(), "step $step");
            $allowed += $a->allowed() ? 1 : 0;
        }
        $this->assertGreaterThan(2, $allowed);
        $this->assertLessThan(12, $allowed, 'some were refused');
    }

    public function testSeveralLimitsAreAllOrNone(): void
    {
        $c = new Client();
        $ip = $c->limiter('{shop}:ip', ['limit' => 3, 'per' => 60]);
        $user = $c->limiter('{shop}:user', ['limit' => 1, 'per' => 60, 'policy' => 'sliding_window']);
        $global = $c->limiter('{shop}:global', ['limit' => 100, 'per' => 60, 'policy' => 'fixed_window']);
        $all = fn (string $who) => $c->attempt([[$ip, '1.2.3.4'], [$user, $who], $global]);
        $first = $all('alice');
        $this->assertTrue($first->allowed());
        $this->assertSame(0, $first->remaining(), 'the least left: the user limit');
        $refused = $all('alice');
        $this->assertFalse($refused->allowed());
        $this->assertSame('{shop}:user', $refused->limiter());
        $this->assertSame('alice', $refused->key());
        $this->assertGreaterThan(58, $refused->retryAfter());
        $this->assertSame(2, $ip->peek('1.2.3.4')->remaining(), 'the refusal took nothing from the IP');
        $this->assertSame(99, $global->peek()->remaining(), 'nor from the global limit');
        $this->assertTrue($all('bob')->allowed());
        $this->assertTrue($all('carol')->allowed());
        $ipRefused = $all('dave');
        $this->assertSame('{shop}:ip', $ipRefused->limiter(), 'the first that refuses is named');
        $this->assertSame(1, $user->peek('dave')->remaining());
        $this->assertSame(97, $global->peek()->remaining());
        // One limiter twice with another key is two limits.
        $this->assertTrue($c->attempt([[$user, 'x'], [$user, 'y']])->allowed());
        $this->assertAllRefused([
            fn () => $c->attempt([]),
            fn () => $c->attempt([[$user, 'z'], [$user, 'z']]),
            fn () => $c->attempt([$user, $user]),
            fn () => $c->attempt([[$user, null], [$user, '']]),
            fn () => $c->attempt([(new Client(['database' => 3]))->limiter('x', ['limit' => 1, 'per' => 1])]),
            fn () => $c->attempt(['x']),
            fn () => $c->attempt([[$user]]),
            fn () => $c->attempt([[$user, 'a', 'b']]),
            fn () => $c->attempt([[$user, []]]),
            fn () => $c->attempt([['k', $user]]),
            fn () => $c->attempt([$ip], 4),
            fn () => $c->attempt([$ip], 0),
            fn () => $c->attempt([$ip], -1),
            fn () => $c->attempt('x'),
            fn () => $c->attempt(null),
        ]);
    }

    public function testWaitSleepsAsLongAsTheLimitSaysWithoutPolling(): void
    {
        $l = $this->limiter('sms', 'token_bucket', 20, 1, ['burst' => 1]);
        $this->assertTrue($l->attempt('to')->allowed());
        $calls = $this->scriptCalls();
        $this->assertTrue($l->wait('to', 5)->allowed(), 'a token comes after 0.05 s');
        $this->assertLessThanOrEqual(2, $this->scriptCalls() - $calls, 'one refusal, one admission: no polling');
        $calls = $this->scriptCalls();
        $d = $l->wait('to', 0.001);
        $this->assertFalse($d->allowed(), 'the next token is further away than the time given');
        $this->assertSame(1, $this->scriptCalls() - $calls, 'given up at once');
        $sliding = $this->limiter('slow', 'sliding_window', 1, 600);
        $sliding->attempt();
        $this->assertFalse($sliding->wait(null, 5)->allowed());
        $this->assertAllRefused([
            fn () => $l->wait('to', -1),
            fn () => $l->wait('to', NAN),
            fn () => $l->wait('to', 'soon'),
            fn () => $l->wait('to', 1, 2),
            fn () => $l->wait([], 1),
        ]);
    }

    public function testASignalWithAHandlerEndsAWait(): void
    {
        $out = self::php('
            pcntl_async_signals(true);
            $ran = false;
            pcntl_signal(SIGALRM, function () use (&$ran) { $ran = true; });
            $l = (new RedisLock\Client())->limiter("sig", ["limit" => 1, "per" => 30]);
            $l->attempt();
            pcntl_alarm(1);
            $t = microtime(true);
            $d = $l->wait(null, 60);
            printf("%s %s %d\n", var_export($d->allowed(), true), var_export($ran, true), microtime(true) - $t < 20);');
        $this->assertSame("false true 1\n", $out, 'the wait for a token 30 s away ended with the handled signal');
    }

    public function testHandWrittenKeysAreNamedAndNothingIsConsumed(): void
    {
        $c = new Client();
        $ok = $c->limiter('{h}:ok', ['limit' => 5, 'per' => 60]);
        $bad = $c->limiter('{h}:bad', ['limit' => 5, 'per' => 60, 'policy' => 'sliding_window']);
        $ok->attempt();
        $this->redis->set('limit:{h}#7:{h}:bad:n:u', 'text');
        $before = $this->redis->get('limit:{h}#6:{h}:ok:t:');
        foreach ([fn () => $c->attempt([$ok, [$bad, 'u']]), fn () => $bad->attempt('u')] as $call) {
            try {
                $call();
                $this->fail('a hash key holding a string');
            } catch (RedisLock\ServerException $e) {
                $this->assertStringContainsString(':n:u holds a string, where redislock keeps a hash', $e->getMessage());
            }
        }
        $this->assertSame($before, $this->redis->get('limit:{h}#6:{h}:ok:t:'), 'the other limit took nothing');
        $this->assertSame(4, $ok->peek()->remaining());
        $this->redis->set('limit:{f}:f:', 'many');
        try {
            $c->limiter('f', ['limit' => 5, 'per' => 60, 'policy' => 'fixed_window'])->attempt();
            $this->fail('a count that is not a number');
        } catch (RedisLock\ServerException $e) {
            $this->assertStringContainsString('limit:{f}:f: holds "many"', $e->getMessage());
        }
        $this->assertSame('many', $this->redis->get('limit:{f}:f:'));
    }

    public function testLostStateForgetsUseAndNeverBlocks(): void
    {
        foreach (self::POLICIES as $policy) {
            $l = $this->limiter("lost-$policy", $policy, 1, 60);
            $l->attempt();
            $this->assertFalse($l->attempt()->allowed());
            $this->redis->flushAll();
            $this->assertTrue($l->attempt()->allowed(), "$policy: a server that lost its data admits again");
        }
        // A count without its expiry (written by an old client) gets the window's.
        $this->redis->set('limit:{nottl}:f:', '1');
        $fixed = $this->limiter('nottl', 'fixed_window', 1, 30);
        $this->assertFalse($fixed->attempt()->allowed());
        $this->assertGreaterThan(0, $this->redis->pttl('limit:{nottl}:f:'));
    }

    public function testBadInputIsRefusedAndChangesNothing(): void
    {
        $c = new Client();
        $l = $c->limiter('bad', ['limit' => 2, 'per' => 60]);
        $l->attempt('k');
        $before = $this->redis->get('limit:{bad}:t:k');
        $options = fn (array $o) => fn () => $c->limiter('x', $o + ['limit' => 1, 'per' => 1]);
        $this->assertAllRefused([
            fn () => $c->limiter('', ['limit' => 1, 'per' => 1]),
            fn () => $c->limiter(null, ['limit' => 1, 'per' => 1]),
            fn () => $c->limiter([], ['limit' => 1, 'per' => 1]),
            fn () => $c->limiter('x'),
            fn () => $c->limiter('x', []),
            fn () => $c->limiter('x', ['limit' => 1]),
            fn () => $c->limiter('x', ['per' => 1]),
            fn () => $c->limiter('x', 'fast'),
            $options(['limit' => 0]),
            $options(['limit' => -1]),
            $options(['limit' => 1.5]),
            $options(['limit' => '5.5']),
            $options(['limit' => 'five']),
            $options(['limit' => PHP_INT_MAX]),
            $options(['limit' => null]),
            $options(['per' => 0]),
            $options(['per' => -1]),
            $options(['per' => NAN]),
            $options(['per' => INF]),
            $options(['per' => 0.0001]),
            $options(['per' => 1e12]),
            $options(['per' => []]),
            $options(['policy' => 'leaky']),
            $options(['policy' => '']),
            $options(['policy' => []]),
            $options(['policy' => "token_bucket\0"]),
            $options(['policy' => 'sliding_window', 'burst' => 2]),
            $options(['burst' => 0]),
            $options(['burst' => -3]),
            $options(['nope' => 1]),
            fn () => $l->attempt([]),
            fn () => $l->attempt('k', 0),
            fn () => $l->attempt('k', -1),
            fn () => $l->attempt('k', 3),
            fn () => $l->attempt('k', PHP_INT_MAX),
            fn () => $l->attempt('k', NAN),
            fn () => $l->attempt('k', '1.5'),
            fn () => $l->attempt('k', null),
            fn () => $l->peek('k', 0),
            fn () => $l->peek([]),
            fn () => $l->reset([]),
        ]);
        $this->assertSame($before, $this->redis->get('limit:{bad}:t:k'));
        $this->assertSame(1, $l->peek('k')->remaining());
        // Numbers in strings are taken as PHP's own int parameters take them, the messages say the whole range.
        $this->assertSame(4, $c->limiter('s', ['limit' => '5', 'per' => '60'])->attempt('k', '1')->remaining());
        $this->assertSame(1, $l->peek('k', '1')->remaining());
        foreach ([['limit' => -1], ['limit' => 0], ['burst' => -1]] as $bad) {
            try {
                $options($bad)();
                $this->fail('accepted ' . json_encode($bad));
            } catch (ValueError $e) {
                $this->assertStringContainsString('must be between 1 and', $e->getMessage());
            }
        }
        $this->expectExceptionMessage('Cannot create RedisLock\Limiter with new');
        new Limiter();
    }

    /**
     * 200 processes attempt one key for 3 s; each admission is recorded with
     * the server's time of its decision. A sliding window never admits more
     * than its limit in any window; a token bucket's admissions replay as
     * conforming to GCRA (none before the bucket had a token); a fixed
     * window of a minute admits its limit, and no more.
     */
    public function testTwoHundredProcessesNeverPassTheLimit(): void
    {
        foreach ([
            ['sliding_window', 40, 1.0, []],
            ['token_bucket', 40, 1.0, ['burst' => 10]],
            ['fixed_window', 40, 60.0, []],
        ] as [$policy, $limit, $per, $more]) {
            $admitted = self::hammer(
                '$l = (new RedisLock\Client())->limiter("crowd", ' . var_export(['limit' => $limit, 'per' => $per, 'policy' => $policy] + $more, true) . ');
                 $try = fn () => ($d = $l->attempt("k"))->allowed() ? (int) round($d->at() * 1e6) : null;'
            );
            $this->assertGreaterThanOrEqual($limit, count($admitted), "$policy: the crowd took what the limit allows");
            $this->assertSame([], self::overshoot($policy, $admitted, $limit, $per, $more['burst'] ?? $limit), $policy);
        }
    }

    /**
     * The same harness on Laravel's stock RateLimiter (the control): its
     * check and its hit are two round trips, so the crowd passes the limit
     * of its one-minute window.
     */
    public function testTheSameCrowdPassesLaravelsStockRateLimiter(): void
    {
        if (!is_file('/usr/share/php/Illuminate/autoload.php')) {
            $this->markTestSkipped('Laravel (php-laravel-framework) is not installed');
        }
        $port = RedisServer::$main->port;
        $admitted = self::hammer(
            'require_once "/usr/share/php/Illuminate/autoload.php";
             $redis = new Illuminate\Redis\RedisManager(new Illuminate\Container\Container(), "phpredis",
                 ["default" => ["host" => "127.0.0.1", "port" => ' . $port . ', "database" => 0]]);
             $limiter = new Illuminate\Cache\RateLimiter(new Illuminate\Cache\Repository(
                 new Illuminate\Cache\RedisStore($redis, "laravel:", "default")));
             $try = fn () => $limiter->attempt("k", 40, fn () => true, 60) ? 1 : null;',
            ['extension' => [...self::shared('mbstring'), ...self::phpredisExtensions()]],
        );
        $this->assertGreaterThan(40, count($admitted), 'Laravel\'s limiter passed its limit of 40 a minute');
    }

    /**
     * Runs `$setup` (which defines `$try`: one attempt, the admission's
     * server time in microseconds or null), then `$try` in 200 processes
     * forked from it for 3 s; returns every admission's time, sorted.
     */
    private static function hammer(string $setup, array $ini = []): array
    {
        $dir = sys_get_temp_dir() . '/limiter-' . getmypid();
        @mkdir($dir);
        $out = self::php($setup . '
            $start = microtime(true) + 1.0;
            for ($i = 0; $i < 200; $i++) {
                if (pcntl_fork() === 0) {
                    // The first attempt connects (every client connects on
                    // first use, in its own process); it counts too.
                    $times = [];
                    if (($t = $try()) !== null) { $times[] = $t; }
                    time_sleep_until(max($start, microtime(true) + 0.001));
                    while (microtime(true) < $start + 3) {
                        if (($t = $try()) !== null) { $times[] = $t; }
                    }
                    file_put_contents("' . $dir . '/" . getmypid(), implode("\n", $times));
                    exit(0);
                }
            }
            while (pcntl_wait($status) > 0) {
                if (!pcntl_wifexited($status) || pcntl_wexitstatus($status) !== 0) { echo "a worker failed\n"; }
            }
            echo "done\n";', $ini);
        $times = [];
        foreach (glob("$dir/*") as $file) {
            $text = file_get_contents($file);
            if ($text !== '') {
                array_push($times, ...array_map('intval', explode("\n", $text)));
            }
            unlink($file);
        }
        rmdir($dir);
        if ($out !== "done\n") {
            throw new RuntimeException($out);
        }
        sort($times);
        return $times;
    }

    /**
     * The admissions (microseconds, sorted) that pass the limit: in a
     * sliding window, each one with `$limit` others in the `$per` seconds
     * before it; in a token bucket, each one GCRA refuses when the
     * admissions are replayed (1 µs allowed for the float time); in a fixed
     * window (one, for the run), each one past the limit.
     */
    private static function overshoot(string $policy, array $times, int $limit, float $per, int $burst): array
    {
        $per = (int) round($per * 1e6);
        $over = [];
        if ($policy === 'fixed_window') {
            return array_slice($times, $limit);
        }
        if ($policy === 'token_bucket') {
            $step = $per / $limit;
            $tat = 0.0;
            foreach ($times as $t) {
                if ($t + 1 < $tat - ($burst - 1) * $step) {
                    $over[] = $t;
                }
                $tat = max($tat, $t) + $step;
            }
            return $over;
        }
        // An admission at s counts at t while s > t - per (1 µs allowed).
        $from = 0;
        foreach ($times as $i => $t) {
            while ($times[$from] <= $t - $per + 1) {
                $from++;
            }
            if ($i - $from + 1 > $limit) {
                $over[] = $t;
            }
        }
        return $over;
    }
}
