<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\Looping;
use Illuminate\Support\ServiceProvider as BaseServiceProvider;
use RedisLock\Runtime;

/**
 * Registers the `redislock` cache driver (Laravel's Redis cache store with
 * its locks on redislock) and the `redislock` queue driver (the leased
 * queue); when the rate limiter's cache store uses the `redislock` driver,
 * binds redislock's `RateLimiter` (one step per decision) and its
 * `throttle:` middleware (every limit of a request at once); and hands a failed job's exception to the job, so its release
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
            $config = $app['config'];
            $store = $config->get('cache.limiter') ?? $config->get('cache.default');
            $settings = $config->get("cache.stores.$store");
            if (!is_array($settings) || ($settings['driver'] ?? null) !== 'redislock') {
                return $limiter;
            }
            $cache = $app['cache']->store($store);
            $client = Connections::client($config->get('database.redis') ?? [],
                (string) ($settings['lock_connection'] ?? $settings['connection'] ?? 'default'));
            return new RateLimiter($cache, $client, $cache->getStore()->getPrefix() ?: 'laravel');
        });
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
            });
        });
    }
}
