<?php

namespace RedisLock\Laravel;

use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Support\ServiceProvider as BaseServiceProvider;

/**
 * Registers the `redislock` cache driver (Laravel's Redis cache store with
 * its locks on redislock) and the `redislock` queue driver (the leased
 * queue), and hands a failed job's exception to the job, so its release
 * records why. Auto-discovered through the package's composer.json.
 */
class ServiceProvider extends BaseServiceProvider
{
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
        $this->callAfterResolving('queue', function ($queue, $app): void {
            $queue->addConnector('redislock', fn () => new QueueConnector($app['config']['database.redis'] ?? []));
        });
        $this->callAfterResolving('events', function ($events): void {
            $events->listen(JobExceptionOccurred::class, function (JobExceptionOccurred $event): void {
                if ($event->job instanceof Job) {
                    $event->job->failedWith($event->exception);
                }
            });
        });
    }
}
