<?php

use PHPUnit\Framework\TestCase;

/**
 * Laravel's scheduler with redislock's mutexes (bound when the scheduler's
 * cache store is on the `redislock` driver): Laravel's own `schedule:run`
 * on three "servers", processes whose clocks (libfaketime) are 2 s behind,
 * right, and 2 s ahead, started together at each tick a few seconds from
 * the minute, as a cron that does not fire on the second does. The Redis
 * server's clock is faked too, so the ticks are minutes apart on every
 * clock while the test takes seconds. Laravel's own mutexes are the
 * control.
 */
final class LaravelScheduleTest extends TestCase
{
    use Processes;

    private const TICKS = 20;
    /** Seconds from the minute at which the three are started, tick after tick. */
    private const JITTER = [1.0, -3.0];
    /** The servers' clocks against the Redis server's. */
    private const SKEW = [-2.0, 0.0, 2.0];

    private string $dir;

    protected function setUp(): void
    {
        if (($why = FakeClock::unavailable()) !== null) {
            $this->markTestSkipped($why);
        }
        $this->dir = sys_get_temp_dir() . '/redislock-schedule-' . getmypid();
        @mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        @array_map('unlink', glob("{$this->dir}/*") ?: []);
        @rmdir($this->dir);
    }

    public function testOnOneServerRunsEachEventOncePerMinuteWhateverTheServersClocks(): void
    {
        $redisClock = FakeClock::file($this->dir, 'redis');
        $server = RedisServer::startWithClock($redisClock);
        // The first tick's minute, well ahead of the real clock.
        $base = (intdiv(time(), 60) + 10) * 60;

        [$runs, $outputs] = $this->ticks($server, $redisClock, 'redis', $base);
        $expected = [];
        for ($tick = 0; $tick < self::TICKS; $tick++) {
            $expected['minute'][$tick] = 1;
            $expected['five'][$tick] = (intdiv($base, 60) + $tick) % 5 === 0 ? 1 : 0;
        }
        $this->assertSame($expected, $runs, "each event once per minute it is due, on the Redis server's clock:\n$outputs");
        // Each minute is a slot of once(), outside the cache.
        $redis = $server->client();
        $redis->select(5);
        $keys = $redis->keys('once:{schedule:*');
        $this->assertCount(self::TICKS + self::TICKS / 5, $keys);

        // The control: Laravel's own mutexes, keyed by each server's own minute.
        [$stock] = $this->ticks($server, $redisClock, 'stock', $base + 3600);
        $doubled = $missed = 0;
        foreach ($stock['minute'] as $n) {
            $doubled += $n > 1 ? 1 : 0;
            $missed += $n === 0 ? 1 : 0;
        }
        $this->assertGreaterThan(0, $doubled, 'Laravel\'s own mutexes run a minute twice: ' . json_encode($stock));
        fwrite(STDERR, sprintf("\n[schedule] %d ticks, 3 servers at -2/0/+2 s: redislock 0 doubled, 0 missed; the peer shown for contrast, as expected: Laravel's own %d doubled, %d missed\n",
            self::TICKS, $doubled, $missed));
    }

    public function testWithoutOverlappingIsALockThatCacheClearKeeps(): void
    {
        $server = RedisServer::$main;
        $app = self::app();
        $redis = $server->client();
        $redis->select(5);
        $redis->flushDb();
        $schedule = new Illuminate\Console\Scheduling\Schedule();
        $event = $schedule->call(fn () => null)->name('report')->withoutOverlapping(2);
        $mutex = $app->make(Illuminate\Console\Scheduling\EventMutex::class);
        $this->assertInstanceOf(RedisLock\Laravel\EventMutex::class, $mutex);

        $this->assertTrue($mutex->create($event));
        $this->assertFalse($mutex->create($event), 'a second run while the first runs');
        $this->assertTrue($mutex->exists($event));
        $key = 'lock:{schedule-running:' . $event->mutexName() . '}';
        $this->assertEqualsWithDelta(120, $redis->pttl($key) / 1000, 2, 'Laravel\'s expiry, in minutes');
        $app['cache']->store()->flush();
        $this->assertTrue($mutex->exists($event), 'cache:clear does not end it');
        // schedule:finish, in another process, ends a run in the background.
        $this->assertSame('gone', trim(self::php('require "' . __DIR__ . '/laravel/boot.php";
            $app = laravel_app("127.0.0.1", ' . $server->port . ');
            $event = (new Illuminate\Console\Scheduling\Schedule())->call(fn () => null)->name("report")->withoutOverlapping(2);
            $app->make(Illuminate\Console\Scheduling\EventMutex::class)->forget($event);
            echo $app->make(Illuminate\Console\Scheduling\EventMutex::class)->exists($event) ? "held" : "gone";', self::laravelIni())));
        $this->assertFalse($mutex->exists($event));
        $mutex->forget($event);
        $this->assertTrue($mutex->create($event), 'free again');
        $mutex->forget($event);

        // The stock store keeps Laravel's own.
        $app['config']->set('cache.default', 'stock');
        $this->assertInstanceOf(Illuminate\Console\Scheduling\CacheEventMutex::class, $app->make(Illuminate\Console\Scheduling\EventMutex::class));
        $this->assertInstanceOf(Illuminate\Console\Scheduling\CacheSchedulingMutex::class, $app->make(Illuminate\Console\Scheduling\SchedulingMutex::class));
    }

    public function testAMinuteIsClaimedOnceAndCanBeAskedAbout(): void
    {
        $server = RedisServer::$main;
        $app = self::app();
        $redis = $server->client();
        $redis->select(5);
        $redis->flushDb();
        $event = (new Illuminate\Console\Scheduling\Schedule())->call(fn () => null)->name('sweep')->onOneServer();
        $mutex = $app->make(Illuminate\Console\Scheduling\SchedulingMutex::class);
        $this->assertInstanceOf(RedisLock\Laravel\SchedulingMutex::class, $mutex);
        $now = Illuminate\Support\Facades\Date::now();
        $this->assertFalse($mutex->exists($event, $now));
        $this->assertTrue($mutex->create($event, $now));
        $this->assertFalse($mutex->create($event, $now));
        $this->assertTrue($mutex->exists($event, $now));
        $app['cache']->store()->flush();
        $this->assertFalse($mutex->create($event, $now), 'cache:clear does not free the minute');
    }

    public function testARunKeepsAClockTheApplicationFaked(): void
    {
        $clock = new RedisLock\Laravel\ScheduleClock(new RedisLock\Client());
        Carbon\Carbon::setTestNow('2030-05-06 07:08:31');
        try {
            $clock->start();
            $this->assertSame('2030-05-06 07:08:31', Carbon\Carbon::now()->format('Y-m-d H:i:s'));
            $this->assertSame((new DateTimeImmutable('2030-05-06 07:09:00'))->getTimestamp(), $clock->minute());
            $clock->stop();
            $this->assertSame('2030-05-06 07:08:31', Carbon\Carbon::now()->format('Y-m-d H:i:s'));
        } finally {
            Carbon\Carbon::setTestNow();
        }
        // Unfaked: the run reads the server's minute, and ends where it began.
        $clock->start();
        $start = Carbon\Carbon::now();
        $this->assertSame(0, $start->second, 'the run starts on its minute');
        $this->assertEqualsWithDelta($clock->minute(), $start->getTimestamp(), 1);
        $this->assertSame($start->getTimestamp(), Carbon\CarbonImmutable::now()->getTimestamp());
        $clock->stop();
        $this->assertFalse(Carbon\Carbon::hasTestNow());
        $this->assertFalse(Carbon\CarbonImmutable::hasTestNow());
        $this->assertEqualsWithDelta(microtime(true), (float) Carbon\Carbon::now()->format('U.u'), 1);
    }

    /**
     * The test application with its cache connection on a database of its
     * own, as Laravel's skeleton has it (`cache`: database 1, `default`: 0):
     * `cache:clear` empties that database; the mutexes are on the store's
     * `lock_connection` (database 5 here).
     */
    private static function app(): Illuminate\Foundation\Application
    {
        $app = laravel_app('127.0.0.1', RedisServer::$main->port);
        $app['config']->set('database.redis.cache.database', 6);
        return $app;
    }

    /**
     * Runs self::TICKS ticks of three `schedule:run`s on the store $store,
     * the first at the minute $base of the Redis server's clock; returns
     * the runs of each event at each tick, and what the processes said.
     *
     * @return array{array<string, array<int, int>>, string}
     */
    private function ticks(RedisServer $server, string $redisClock, string $store, int $base): array
    {
        $log = "{$this->dir}/runs-$store";
        touch($log);
        $clocks = array_map(fn ($i) => FakeClock::file($this->dir, "server-$i"), array_keys(self::SKEW));
        $ini = self::laravelIni();
        array_push($ini['extension'], ...self::shared('intl', 'dom'));
        $outputs = '';
        for ($tick = 0; $tick < self::TICKS; $tick++) {
            $at = $base + 60 * $tick + self::JITTER[$tick % count(self::JITTER)];
            $now = microtime(true);
            FakeClock::set($redisClock, sprintf('%+.3f', $at - $now));
            $procs = [];
            foreach (self::SKEW as $i => $skew) {
                FakeClock::set($clocks[$i], sprintf('%+.3f', $at + $skew - $now));
                $code = '$argv = ' . var_export(['schedule', '127.0.0.1', (string) $server->port, $store, $log, (string) $tick], true)
                    . '; require "' . __DIR__ . '/laravel/schedule.php";';
                $procs[] = proc_open(FakeClock::process(self::command($code, $ini), $clocks[$i]),
                    [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
                $pipesOf[] = $pipes;
            }
            foreach ($procs as $i => $p) {
                $out = stream_get_contents($pipesOf[$i][1]) . stream_get_contents($pipesOf[$i][2]);
                $exit = proc_close($p);
                $this->assertSame(0, $exit, "schedule:run at tick $tick: $out");
                $outputs .= "tick $tick, server {$i}: " . trim($out) . "\n";
            }
            $pipesOf = [];
        }
        $runs = ['minute' => array_fill(0, self::TICKS, 0), 'five' => array_fill(0, self::TICKS, 0)];
        foreach (file($log, FILE_IGNORE_NEW_LINES) as $line) {
            [$event, $tick] = explode(' ', $line);
            $runs[$event][(int) $tick]++;
        }
        return [$runs, $outputs];
    }
}
