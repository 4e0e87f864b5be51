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
 * queue), and hands a failed job's exception to the job, so its release
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
