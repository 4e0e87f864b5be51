<?php

use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Http\Exceptions\ThrottleRequestsException;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Routing\Route;
use Illuminate\Support\Facades\Queue;
use Orchestra\Testbench\TestCase;

/**
 * redislock's Laravel rate limiter, bound when the limiter's cache store is
 * on the `redislock` driver: the facade's methods answer as Laravel's
 * own, counts are exact under concurrency (Laravel's own is the control),
 * `throttle:` decides every limit of a request at once, and a job held back
 * by `RateLimited` keeps its tries.
 *
 * (Laravel's own ThrottleRequestsTest and RateLimitedTest move the client's
 * clock with Carbon::setTestNow(); these limits read the server's clock by
 * design, so those tests do not apply: the same behaviours are tested here
 * in real time.)
 */
final class LaravelRateLimiterTest extends TestCase
{
    use Processes;

    private Redis $redis;

    protected function setUp(): void
    {
        parent::setUp();
        $this->redis = RedisServer::$main->client();
        $this->redis->select(5);
        $this->redis->flushDb();
    }

    /** Laravel's own limiter on its own Redis cache store: the reference. */
    private function stock(): Illuminate\Cache\RateLimiter
    {
        return new Illuminate\Cache\RateLimiter($this->app['cache']->store('stock'));
    }

    public function testTheBoundLimiterAnswersAsLaravelsOwn(): void
    {
        $limiter = $this->app->make(Illuminate\Cache\RateLimiter::class);
        $this->assertInstanceOf(RedisLock\Laravel\RateLimiter::class, $limiter);
        $this->assertSame($limiter, $this->app->make(Illuminate\Cache\RateLimiter::class), 'one instance');
        $script = function (Illuminate\Cache\RateLimiter $l): array {
            $out = [];
            $out[] = $l->attempt('send:7', 2, fn () => 'sent');
            $out[] = $l->attempt('send:7', 2, fn () => null);
            $out[] = $l->attempt('send:7', 2, fn () => 'sent');
            $out[] = $l->tooManyAttempts('send:7', 2);
            $out[] = $l->tooManyAttempts('send:7', 3);
            $out[] = $l->attempts('send:7');
            $out[] = $l->remaining('send:7', 5);
            $out[] = $l->retriesLeft('send:7', 1);
            $out[] = $l->availableIn('send:7') > 55;
            $out[] = $l->hit('other', 30);
            $out[] = $l->hit('other', 30);
            $out[] = $l->attempts('never');
            $out[] = $l->availableIn('never');
            $out[] = $l->tooManyAttempts('never', 1);
            $l->clear('send:7');
            $out[] = $l->attempts('send:7');
            $out[] = $l->tooManyAttempts('send:7', 2);
            $out[] = $l->resetAttempts('other');
            $out[] = $l->attempts('other');
            $out[] = $l->attempt("caf\u{e9} & <b>", 1, fn () => 'unicode');
            return $out;
        };
        $expected = $script($this->stock());
        $this->assertEquals(['sent', true, false, true, false, 2, 3, -1, true, 1, 2, 0, 0, false, 0, false, true, 0, 'unicode'], $expected, "Laravel's own answers");
        // (Laravel's reads a count back as the cache stored it, a string.)
        $this->assertEquals($expected, $script($limiter));
        // No attempts allowed means none (Laravel's own lets the first of
        // each window through).
        $this->assertFalse($limiter->attempt('zero', 0, fn () => 'never'));
        $this->assertSame(['limit:{laravel_cache:}:f:cafe a lbg'], $this->redis->keys('limit:*'), "the count in redislock's key, under the cache prefix, the key cleaned as Laravel cleans it");
    }

    public function testConcurrentAttemptsNeverPassTheLimit(): void
    {
        $code = 'require "' . __DIR__ . '/laravel/boot.php";
            $app = laravel_app("127.0.0.1", ' . RedisServer::$main->port . ');
            $limiter = $app->make(Illuminate\Cache\RateLimiter::class);
            $n = 0;
            for ($i = 0; $i < 20; $i++) { if ($limiter->attempt("checkout", 25, fn () => true, 60)) { $n++; } }
            echo $n, "\n";';
        $outs = self::phpMany(array_fill(0, 30, $code), self::laravelIni());
        $this->assertSame(25, array_sum(array_map('intval', $outs)), implode('', $outs));
    }

    public function testThrottleDecidesEveryLimitOfARequestAtOnce(): void
    {
        $limiter = $this->app->make(Illuminate\Cache\RateLimiter::class);
        $throttle = $this->app->make(Illuminate\Routing\Middleware\ThrottleRequests::class);
        $this->assertInstanceOf(RedisLock\Laravel\ThrottleRequests::class, $throttle);
        $request = Request::create('/orders', 'POST', server: ['REMOTE_ADDR' => '203.0.113.9']);
        $request->setRouteResolver(fn () => (new Route('POST', '/orders', fn () => 'ok'))->bind($request));
        $ok = fn () => new Response('yes');

        $response = $throttle->handle($request, $ok, 2, 1);
        $this->assertSame(['yes', '2', '1'], [$response->getContent(), $response->headers->get('X-RateLimit-Limit'), $response->headers->get('X-RateLimit-Remaining')]);
        $throttle->handle($request, $ok, 2, 1);
        try {
            $throttle->handle($request, $ok, 2, 1);
            $this->fail('a third request within the minute');
        } catch (ThrottleRequestsException $e) {
            $this->assertSame(429, $e->getStatusCode());
            $this->assertSame('0', (string) $e->getHeaders()['X-RateLimit-Remaining']);
            $this->assertGreaterThan(55, $e->getHeaders()['Retry-After']);
        }

        // A named limiter of two limits: a global one and one per user. A
        // request the user's limit refuses is not counted on the global one.
        $limiter->for('checkout', fn (Request $r) => [
            Limit::perMinute(10),
            Limit::perMinute(1)->by((string) $r->input('user')),
        ]);
        $as = function (string $user) use ($request): Request {
            $r = $request->duplicate(['user' => $user]);
            $r->setRouteResolver($request->getRouteResolver());
            return $r;
        };
        $throttle->handle($as('alice'), $ok, 'checkout');
        for ($i = 0; $i < 3; $i++) {
            try {
                $throttle->handle($as('alice'), $ok, 'checkout');
                $this->fail('alice twice in a minute');
            } catch (ThrottleRequestsException) {
            }
        }
        $this->assertSame(1, $limiter->attempts(md5('checkout')), 'the global limit counted alice once, not four times');
        $throttle->handle($as('bob'), $ok, 'checkout');
        $this->assertSame(2, $limiter->attempts(md5('checkout')));
    }

    public function testAThrottledJobIsReleasedWithoutSpendingATry(): void
    {
        require_once __DIR__ . '/laravel/ThrottledJob.php';
        $this->app->make(Illuminate\Cache\RateLimiter::class)->for('mail', fn () => Limit::perMinute(1));
        foreach ([1, 2, 3] as $n) {
            Queue::connection('redislock')->push(new ThrottledJob($n));
        }
        $worker = $this->app['queue.worker'];
        $options = new Illuminate\Queue\WorkerOptions(name: 'default', backoff: 0, memory: 512, timeout: 60, sleep: 0, maxTries: 2);
        // Five turns: one job runs, the others are held back each time
        // (more turns than their two tries).
        for ($turn = 0; $turn < 5; $turn++) {
            $this->releaseNow();
            $worker->runNextJob('redislock', 'default', $options);
        }
        $sent = $this->redis->lRange('sent', 0, -1);
        $this->assertCount(1, $sent, 'one a minute');
        $this->assertMatchesRegularExpression('/^[123] 1$/', $sent[0]);
        $queue = $this->app['queue']->connection('redislock')->queue('default');
        $this->assertSame(0, $queue->metrics()['dead'], 'no job failed for being held back');
        $this->assertSame([0, 0], array_map(fn ($t) => $t['attempts'], $queue->peek()), 'their tries untouched');
    }

    public function testThrottleAndFunnelBuildersKeepLaravelsSemantics(): void
    {
        $limiters = $this->app->make(RedisLock\Laravel\Limiters::class);
        $ran = [];
        foreach (range(1, 4) as $i) {
            $ran[] = $limiters->throttle('mail-api')->allow(3)->every(60)->block(0)
                ->then(fn () => "sent $i", fn (Illuminate\Contracts\Redis\LimiterTimeoutException $e) => 'later');
        }
        $this->assertSame(['sent 1', 'sent 2', 'sent 3', 'later'], $ran);
        $this->assertSame(['limit:{mail-api}:f:'], $this->redis->keys('limit:*'));
        try {
            $limiters->throttle('mail-api')->allow(3)->every(60)->block(0.01)->then(fn () => 'sent');
            $this->fail('a full window');
        } catch (Illuminate\Contracts\Redis\LimiterTimeoutException) {
        }
        $this->assertSame('soon', $limiters->throttle('fast')->allow(1)->every(1)->block(5)
            ->then(fn () => $limiters->throttle('fast')->allow(1)->every(1)->block(5)->then(fn () => 'soon')), 'waited for the next window');

        // A funnel of 2: at most two callbacks at once across processes; one
        // that throws gives its permit back.
        try {
            $limiters->funnel('pdf')->limit(2)->then(fn () => throw new RuntimeException('boom'));
        } catch (RuntimeException) {
        }
        $code = 'require "' . __DIR__ . '/laravel/boot.php";
            $app = laravel_app("127.0.0.1", ' . RedisServer::$main->port . ');
            $r = $app["redis"]->connection("default");
            echo $app->make(RedisLock\Laravel\Limiters::class)->funnel("pdf")->limit(2)->releaseAfter(30)->block(30)->then(function () use ($r) {
                $inside = $r->incr("inside");
                usleep(100000);
                $r->decr("inside");
                return $inside;
            }), "\n";';
        $outs = self::phpMany(array_fill(0, 6, $code), self::laravelIni());
        $inside = array_map('intval', $outs);
        $this->assertCount(6, array_filter($inside), implode('', $outs));
        $this->assertLessThanOrEqual(2, max($inside), 'never three at once');
        $this->assertSame([], $this->redis->keys('semaphore:*'), 'every permit given back');
    }

    /** Makes the released jobs due now, as if their delay had passed. */
    private function releaseNow(): void
    {
        foreach ($this->redis->zRange('Queue:queues:default', 0, -1) as $id) {
            $this->redis->zAdd('Queue:queues:default', ['XX'], 0, $id);
        }
    }
}
