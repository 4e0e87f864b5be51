<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Console\Events\CommandFinished;
use Illuminate\Console\Events\CommandStarting;
use Illuminate\Database\Events\TransactionRolledBack;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\Looping;
use Illuminate\Support\Env;
use Illuminate\Support\ServiceProvider as BaseServiceProvider;
use RedisLock\Client;
use RedisLock\Runtime;

/**
 * Registers the `redislock` cache driver (Laravel's Redis cache store with
 * its locks on redislock) and the `redislock` queue driver (the leased
 * queue); when the rate limiter's cache store uses the `redislock` driver,
 * binds redislock's `RateLimiter` (one step per decision) and its
 * `throttle:` middleware (every limit of a request at once); when the
 * scheduler's cache store does, binds the scheduler's mutexes
 * (`onOneServer()`, `withoutOverlapping()`) to redislock; with
 * `queue.batching.driver` = `redislock`, keeps Laravel's job batches
 * (BatchRepository); and hands a failed job's exception to the job, so its release
 * records why. In processes that serve many requests it ends each one for
 * the locks (`RedisLock\Runtime::endRequest()`): a queue worker's job at
 * the next turn of its loop, an Octane request, task or tick when Octane
 * says it terminated. Auto-discovered through the package's composer.json.
 */
class ServiceProvider extends BaseServiceProvider
{
    /**
     * The events after which no lock of the request or job may remain: the
     * queue worker's loop turning to the next job (`queue:work`, Horizon;
     * never fired where a job runs inside a request, as with the `sync`
     * queue), and Octane's ends of a request, task and tick.
     */
    public const REQUEST_ENDS = [
        Looping::class,
        'Laravel\Octane\Events\RequestTerminated',
        'Laravel\Octane\Events\TaskTerminated',
        'Laravel\Octane\Events\TickTerminated',
    ];

    public function boot(): void
    {
        $this->callAfterResolving('cache', function ($cache, $app): void {
            $cache->extend('redislock', function ($app, array $config) {
                $connection = $config['connection'] ?? 'default';
                $store = new RedisStore($app['redis'], $this->getPrefix($config), $connection,
                    $app['config']['database.redis'] ?? []);
                return $this->repository($store->setLockConnection($config['lock_connection'] ?? $connection));
            });
        });
        $this->app->extend(\Illuminate\Cache\RateLimiter::class, static function ($limiter, $app) {
            $store = $app['config']->get('cache.limiter') ?? $app['config']->get('cache.default');
            $client = self::storeClient($app, $store);
            if ($client === null) {
                return $limiter;
            }
            $cache = $app['cache']->store($store);
            return new RateLimiter($cache, $client, $cache->getStore()->getPrefix() ?: 'laravel');
        });
        $this->bindScheduleMutexes();
        $this->bindBatchRepository();
        $this->app->singleton(Limiters::class, static fn ($app) => new Limiters(
            Connections::client($app['config']->get('database.redis') ?? [], 'default')));
        // Laravel's own when the rate limiter is not redislock's.
        $this->app->bind(\Illuminate\Routing\Middleware\ThrottleRequests::class, ThrottleRequests::class);
        $this->callAfterResolving('queue', function ($queue, $app): void {
            $queue->addConnector('redislock', fn () => new QueueConnector($app['config']['database.redis'] ?? []));
        });
        $this->callAfterResolving('events', function ($events): void {
            $events->listen(JobExceptionOccurred::class, function (JobExceptionOccurred $event): void {
                if ($event->job instanceof Job) {
                    $event->job->failedWith($event->exception);
                }
            });
            $events->listen(self::REQUEST_ENDS, static function (): void {
                Runtime::endRequest();
                UniqueJobs::forgetTaken();
            });
            $events->listen(TransactionRolledBack::class, static function (TransactionRolledBack $event): void {
                UniqueJobs::rolledBack($event->connectionName, $event->connection->transactionLevel());
            });
            $events->listen(CommandStarting::class, function (CommandStarting $event): void {
                if ($event->command === 'schedule:run' && self::scheduleClient($this->app) !== null) {
                    $this->app->make(ScheduleClock::class)->start();
                }
            });
            $events->listen(CommandFinished::class, function (CommandFinished $event): void {
                if ($event->command === 'schedule:run' && $this->app->resolved(ScheduleClock::class)) {
                    $this->app->make(ScheduleClock::class)->stop();
                }
            });
        });
    }

    /**
     * When `queue.batching.driver` is `redislock`, Laravel's job batches
     * are kept by redislock (BatchRepository) on the Redis connection
     * `queue.batching.connection` (default `default`), under the name
     * `queue.batching.table` (default `job_batches`).
     */
    private function bindBatchRepository(): void
    {
        $config = $this->app['config'];
        if ($config->get('queue.batching.driver') !== 'redislock') {
            return;
        }
        // Laravel's bus provider, deferred, binds its database repository
        // when first needed: it is registered first, so that this binding
        // is the one that stays.
        if (method_exists($this->app, 'loadDeferredProvider')) {
            $this->app->loadDeferredProvider(\Illuminate\Bus\BatchRepository::class);
        }
        $make = static fn ($app) => new BatchRepository($app->make(\Illuminate\Bus\BatchFactory::class),
            Connections::client($app['config']->get('database.redis') ?? [],
                (string) ($app['config']->get('queue.batching.connection') ?? 'default'))
                ->batches((string) ($app['config']->get('queue.batching.table') ?? 'job_batches')));
        $this->app->singleton(BatchRepository::class, $make);
        $this->app->singleton(\Illuminate\Bus\BatchRepository::class, static fn ($app) => $app->make(BatchRepository::class));
    }

    /**
     * When the scheduler's cache store is on the `redislock` driver, its
     * mutexes are redislock's (unless the application bound its own):
     * `onOneServer()` once per minute of the server's clock, and
     * `withoutOverlapping()` a lock; `schedule:run` then runs on that
     * minute (ScheduleClock).
     */
    private function bindScheduleMutexes(): void
    {
        // Made only when the scheduler's store is redislock's (the listeners
        // and the mutexes below check first).
        $this->app->singleton(ScheduleClock::class, static fn ($app) => new ScheduleClock(self::scheduleClient($app)
            ?? throw new \LogicException('redislock: the scheduler clock needs the scheduler\'s cache store on the redislock driver')));
        if (!$this->app->bound(\Illuminate\Console\Scheduling\SchedulingMutex::class)) {
            $this->app->bind(\Illuminate\Console\Scheduling\SchedulingMutex::class, static function ($app) {
                $client = self::scheduleClient($app);
                return $client === null
                    ? $app->make(\Illuminate\Console\Scheduling\CacheSchedulingMutex::class)
                    : new SchedulingMutex($client, $app->make(ScheduleClock::class));
            });
        }
        if (!$this->app->bound(\Illuminate\Console\Scheduling\EventMutex::class)) {
            $this->app->bind(\Illuminate\Console\Scheduling\EventMutex::class, static function ($app) {
                $client = self::scheduleClient($app);
                return $client === null
                    ? $app->make(\Illuminate\Console\Scheduling\CacheEventMutex::class)
                    : new EventMutex($client);
            });
        }
    }

    /**
     * The client of the scheduler's cache store (as Laravel's console
     * kernel picks it: `cache.schedule_store`, `SCHEDULE_CACHE_DRIVER`,
     * else the default store) when it is on the `redislock` driver.
     */
    private static function scheduleClient($app): ?Client
    {
        $config = $app['config'];
        return self::storeClient($app, $config->get('cache.schedule_store')
            ?? Env::get('SCHEDULE_CACHE_DRIVER') ?? $config->get('cache.default'));
    }

    /** The client of the cache store `$store` when it is on the `redislock` driver. */
    private static function storeClient($app, mixed $store): ?Client
    {
        $config = $app['config'];
        $settings = is_string($store) ? $config->get("cache.stores.$store") : null;
        if (!is_array($settings) || ($settings['driver'] ?? null) !== 'redislock') {
            return null;
        }
        return Connections::client($config->get('database.redis') ?? [],
            (string) ($settings['lock_connection'] ?? $settings['connection'] ?? 'default'));
    }
}
