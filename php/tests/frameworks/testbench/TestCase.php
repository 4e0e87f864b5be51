<?php

namespace Orchestra\Testbench;

use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Config\Repository;
use Illuminate\Foundation\Application;
use Illuminate\Queue\QueueServiceProvider;
use Illuminate\Redis\RedisServiceProvider;
use Illuminate\Support\Facades\Facade;
use RedisLock\Laravel\ServiceProvider;

/**
 * What Laravel's own integration tests need of Orchestra Testbench (not
 * packaged in Debian): `$this->app`, a Laravel application with the cache,
 * queue and Redis services and the facades, configured as an application
 * using redislock: the `redis` cache store on the `redislock` driver and a
 * `redislock` queue connection, on the suite's private Redis server.
 */
abstract class TestCase extends \PHPUnit\Framework\TestCase
{
    /** @var Application */
    protected $app;

    protected function setUp(): void
    {
        [$host, $port] = ["127.0.0.1", \RedisServer::$main->port];
        // InteractsWithRedis (Laravel's trait) reads these.
        foreach (['REDIS_HOST' => $host, 'REDIS_PORT' => $port] as $name => $value) {
            putenv("$name=$value");
            $_SERVER[$name] = $_ENV[$name] = $value;
        }
        $app = new Application(sys_get_temp_dir());
        $app->instance('config', new Repository([
            'app' => ['name' => 'redislock-tests'],
            'cache' => [
                'default' => 'redis',
                'prefix' => 'laravel_cache',
                'stores' => ['redis' => ['driver' => 'redislock', 'connection' => 'cache', 'lock_connection' => 'default']],
            ],
            'queue' => [
                'default' => 'redislock',
                'connections' => ['redislock' => ['driver' => 'redislock', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90]],
                'failed' => ['driver' => 'null'],
            ],
            'database' => ['redis' => [
                'client' => 'phpredis',
                'options' => ['prefix' => 'laravel_database_'],
                'default' => ['host' => $host, 'port' => $port, 'database' => 5],
                'cache' => ['host' => $host, 'port' => $port, 'database' => 5],
            ]],
        ]));
        foreach ([RedisServiceProvider::class, CacheServiceProvider::class, QueueServiceProvider::class, ServiceProvider::class] as $provider) {
            $app->register($provider);
        }
        $app->boot();
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);
        $this->app = $app;
    }

    protected function tearDown(): void
    {
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication(null);
    }
}
