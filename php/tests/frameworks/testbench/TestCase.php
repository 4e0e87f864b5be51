<?php

namespace Orchestra\Testbench;

use Illuminate\Foundation\Application;
use Illuminate\Support\Facades\Facade;

/**
 * What Laravel's own integration tests need of Orchestra Testbench (not
 * packaged in Debian): `$this->app`, the application of laravel/app.php on
 * the suite's private Redis server.
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
        require_once dirname(__DIR__) . '/laravel/app.php';
        $this->app = laravel_app($host, $port);
    }

    protected function tearDown(): void
    {
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication(null);
    }
}
