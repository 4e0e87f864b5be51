<?php

use Illuminate\Support\Facades\Queue;
use Orchestra\Testbench\TestCase;

/**
 * `ShouldBeUnique` jobs on the redislock cache store and queue: Laravel's
 * own unique-job contract (the cases of its UniqueJobTest), and none of
 * its leaks or double runs: a push that fails releases the dispatch's
 * lock (laravel/framework#48483), and so does a rollback of the
 * transaction it waited for (#55420); a job releases only its own dispatch's
 * lock (#59567), a killed worker's job keeps the lock until it runs
 * again. Laravel's own store and queue are the control.
 */
final class LaravelUniqueJobTest extends TestCase
{
    use Processes;

    private Redis $redis;

    protected function setUp(): void
    {
        parent::setUp();
        require_once __DIR__ . '/laravel/UniqueJob.php';
        $this->redis = RedisServer::$main->client();
        $this->redis->select(5);
        $this->redis->flushDb();
    }

    protected function tearDown(): void
    {
        // The locks of jobs left queued are held past their objects (as
        // Laravel's are): this process forgets them, as a request's end does,
        // so that the tests after this one start holding nothing.
        RedisLock\Runtime::endRequest();
        parent::tearDown();
    }

    /**
     * The default cache store from now on: Laravel's dispatch and worker
     * take the unique lock from the store resolved once (`cache.store`).
     */
    private function useStore(string $store): void
    {
        $this->app['config']->set('cache.default', $store);
        $this->app->forgetInstance('cache.store');
    }

    /** Whether a dispatch of the unique key $key holds its lock now. */
    private function locked(string $key, string $class = UniqueJob::class): bool
    {
        return (bool) $this->redis->exists("laravel_cache:laravel_unique_job:$class$key");
    }

    /** Laravel's worker runs the next job of $connection, as `queue:work --once`. */
    private function work(string $connection = 'redislock'): void
    {
        $options = new Illuminate\Queue\WorkerOptions(name: 'default', backoff: 0, memory: 512, timeout: 0, sleep: 0, maxTries: 0);
        app('queue.worker')->runNextJob($connection, 'default', $options);
    }

    /** @return list<string> the "<n> <attempt>" of the jobs that ran to their end */
    private function done(): array
    {
        return $this->redis->lRange('done', 0, -1);
    }

    public function testLaravelsUniqueJobContract(): void
    {
        // Not dispatched again while one is queued; free once it ran.
        UniqueJob::dispatch(1);
        UniqueJob::dispatch(2);
        $this->assertSame(1, Queue::size());
        $this->assertTrue($this->locked('k'));
        $this->work();
        $this->assertSame(['1 1'], $this->done());
        $this->assertFalse($this->locked('k'));

        // Free once it failed for good.
        UniqueJob::dispatch(3, 'f', fail: 1);
        $this->work();
        $this->assertFalse($this->locked('f'));

        // Kept while a failed attempt waits for its retry, and while a released job waits.
        UniqueJob::dispatch(4, 'r', fail: 1, tries: 2);
        UniqueJob::dispatch(5, 'l', release: true, tries: 2);
        $this->work();
        $this->work();
        $this->assertTrue($this->locked('r'));
        $this->assertTrue($this->locked('l'));
        $this->work();
        $this->assertSame(['1 1', '4 2'], $this->done());
        $this->assertFalse($this->locked('r'));

        // Until processing: free as soon as a worker starts it.
        Queue::connection('redislock')->clear('default');
        UniqueUntilProcessingJob::dispatch(6, 'u', fail: 1, tries: 2);
        $this->assertTrue($this->locked('u', UniqueUntilProcessingJob::class));
        $this->work();
        $this->assertFalse($this->locked('u', UniqueUntilProcessingJob::class));
        UniqueUntilProcessingJob::dispatch(7, 'u');
        $this->assertSame(2, Queue::size(), 'the retry and the new one');
    }

    public function testAPushThatFailsReleasesTheDispatchsLock(): void
    {
        // A queue key of the wrong type: the push fails after the dispatch took the lock.
        $this->redis->set('Queue:queues:default', 'not a queue');
        $this->assertDispatchFails(fn () => UniqueJob::dispatch(1));
        $this->assertFalse($this->locked('k'), 'released: the job was never queued');
        $this->redis->del('Queue:queues:default');
        UniqueJob::dispatch(2);
        $this->assertSame(1, Queue::size());

        // The control: Laravel's own store and queue keep the lock, and the job can never be dispatched again.
        $this->useStore('stock');
        $this->redis->set('queues:default', 'not a queue');
        try {
            // (Predis throws; phpredis answers false, and Laravel's push returns it.)
            UniqueJob::dispatch(3, 's')->onConnection('redis');
        } catch (Predis\Response\ServerException) {
        }
        $this->assertSame('not a queue', $this->redis->get('queues:default'), 'not queued');
        $this->assertTrue($this->locked('s'), 'Laravel\'s own keeps the lock of a job it did not queue');
    }

    public function testAPayloadThatCannotBeEncodedReleasesTheDispatchsLock(): void
    {
        // Bytes that are no UTF-8: Laravel cannot make the job's JSON payload.
        foreach (['push' => fn () => UnencodableUniqueJob::dispatch(1),
            'later' => fn () => UnencodableUniqueJob::dispatch(2)->delay(30),
            ] as $how => $dispatch) {
            try {
                $dispatch();
                $this->fail("$how: the dispatch succeeded");
            } catch (Illuminate\Queue\InvalidPayloadException) {
            }
            $this->assertFalse($this->locked('k', UnencodableUniqueJob::class), "$how: released, the job was never queued");
        }
        // bulk() takes no lock itself: one taken as a dispatch does, then a bulk push of its job.
        $this->assertTrue(cache()->lock('laravel_unique_job:' . UnencodableUniqueJob::class . 'k', 60)->get());
        $this->assertTrue($this->locked('k', UnencodableUniqueJob::class));
        try {
            Queue::connection('redislock')->bulk([new UnencodableUniqueJob(4)]);
        } catch (Illuminate\Queue\InvalidPayloadException) {
        }
        $this->assertFalse($this->locked('k', UnencodableUniqueJob::class), 'bulk: released');
        $this->assertSame(0, Queue::size());
        UniqueJob::dispatch(5);
        $this->assertSame(1, Queue::size(), 'the next dispatch of a key is queued');
    }

    private function assertDispatchFails(Closure $dispatch): void
    {
        try {
            $dispatch();
            $this->fail('the push succeeded');
        } catch (RedisLock\ServerException $e) {
            $this->assertStringContainsString('WRONGTYPE', $e->getMessage());
        }
    }

    public function testARolledBackDispatchReleasesItsLock(): void
    {
        if (!extension_loaded('pdo_sqlite')) {
            $this->markTestSkipped('pdo_sqlite is not loaded (Debian: php-sqlite3)');
        }
        $this->app['config']->set('database.default', 'sqlite');
        $this->app['config']->set('database.connections.sqlite', ['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => '']);
        $this->app->register(Illuminate\Database\DatabaseServiceProvider::class);
        $db = $this->app['db'];
        foreach (['redislock' => 'redis', 'redis' => 'stock'] as $connection => $store) {
            $this->redis->flushDb();
            $this->useStore($store);
            // A dispatch waiting for the commit of a transaction that rolls back.
            try {
                $db->transaction(function () use ($connection): void {
                    UniqueJob::dispatch(1, 'tx')->onConnection($connection)->afterCommit();
                    throw new RuntimeException('the order could not be saved');
                });
            } catch (RuntimeException) {
            }
            $leaked[$connection] = $this->locked('tx');
            // A savepoint rolled back inside a transaction that commits: the outer dispatch is queued, locked.
            $db->transaction(function () use ($db, $connection): void {
                UniqueJob::dispatch(2, 'outer')->onConnection($connection)->afterCommit();
                try {
                    $db->transaction(function () use ($connection): void {
                        UniqueJob::dispatch(3, 'inner')->onConnection($connection)->afterCommit();
                        throw new RuntimeException('one line failed');
                    });
                } catch (RuntimeException) {
                }
            });
            $outer[$connection] = [$this->locked('outer'), Queue::connection($connection)->size()];
            $inner[$connection] = $this->locked('inner');
        }
        $this->assertFalse($leaked['redislock'], 'released with the rollback');
        $this->assertTrue($leaked['redis'], 'Laravel\'s own keeps the lock of a job that was never queued');
        $this->assertSame([true, 1], $outer['redislock'], 'the committed dispatch is queued and keeps its lock');
        $this->assertFalse($inner['redislock']);
        $this->assertTrue($inner['redis']);
    }

    public function testAJobReleasesOnlyItsOwnDispatchsLock(): void
    {
        foreach (['redislock' => 'redis', 'redis' => 'stock'] as $connection => $store) {
            $this->redis->flushDb();
            $this->useStore($store);
            // The first dispatch's lock runs out before its job runs; a second dispatch takes it anew.
            UniqueJob::dispatch(1, 'e', uniqueFor: 1)->onConnection($connection);
            usleep(1_200_000);
            UniqueJob::dispatch(2, 'e', uniqueFor: 60)->onConnection($connection);
            $this->work($connection);
            $this->assertSame(['1 1'], $this->done());
            // A third while the second is queued.
            UniqueJob::dispatch(3, 'e', uniqueFor: 60)->onConnection($connection);
            $queued[$connection] = Queue::connection($connection)->size();
        }
        $this->assertSame(1, $queued['redislock'], 'the second dispatch keeps its lock: the third is not queued');
        $this->assertSame(2, $queued['redis'], 'Laravel\'s own: the first job released the second\'s lock, and two are queued');
    }

    public function testAKilledWorkersJobKeepsItsLockUntilItRunsAgain(): void
    {
        $worker = self::start('$argv = ["worker", "127.0.0.1", "' . RedisServer::$main->port . '", "1", "1"]; require "'
            . __DIR__ . '/laravel/worker.php";', self::laravelIni());
        UniqueJob::dispatch(1, ms: 5000, tries: 2);
        $queue = Queue::connection('redislock')->queue();
        for ($i = 0; $i < 200 && count($queue->leased()) === 0; $i++) {
            usleep(25_000);
        }
        $this->assertCount(1, $queue->leased(), 'the worker runs it');
        posix_kill($worker[2], SIGKILL);
        self::finish($worker);
        UniqueJob::dispatch(2);
        $this->assertTrue($this->locked('k'), 'held while its job waits to run again');
        $this->assertSame(1, Queue::size());
        usleep(1_100_000);
        $this->work();
        $this->assertSame(['1 2'], $this->done(), 'the second attempt ran it');
        $this->assertFalse($this->locked('k'));
    }
}
