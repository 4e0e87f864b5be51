<?php
// A Laravel application as the tests need one (Orchestra Testbench is not
// packaged in Debian): cache, queue, bus and Redis services, the facades,
// and redislock's provider, configured for the Redis server at $host:$port.
// The `redis` cache store is on the `redislock` driver (`stock` is
// Laravel's own); the `redislock`
// queue connection is the default, and `redis` is Laravel's own driver.
// $prefix is Laravel's key prefix (`database.redis.options.prefix`).

use Illuminate\Bus\BusServiceProvider;
use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Config\Repository;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Foundation\Application;
use Illuminate\Queue\QueueServiceProvider;
use Illuminate\Redis\RedisServiceProvider;
use Illuminate\Support\Facades\Facade;

// Predis where the release has it (Debian 13 has not): Laravel then uses phpredis.
if (is_file('/usr/share/php/Predis/autoload.php')) {
    require_once '/usr/share/php/Predis/autoload.php';
}

/** Reports every exception on stderr, so a test sees what went wrong. */
final class StderrExceptionHandler implements ExceptionHandler
{
    public function report(Throwable $e)
    {
        // (The fixtures' jobs that fail on purpose say so: their line is no failure of the run.)
        $expected = preg_match('/ fails attempt \d+$/', $e->getMessage()) === 1 ? '[laravel] a job failing on purpose, as the test expects: ' : '';
        fwrite(STDERR, $expected . get_class($e) . ': ' . $e->getMessage() . "\n");
    }
    public function shouldReport(Throwable $e) { return true; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { $this->report($e); }
}

function laravel_app(string $host, int $port, array $queue = [], ?string $prefix = null): Application
{
    $app = new Application(sys_get_temp_dir());
    $redis = ['host' => $host, 'port' => $port, 'database' => 5];
    $app->instance('config', new Repository([
        'app' => ['name' => 'redislock-tests'],
        'logging' => ['default' => 'null', 'channels' => ['null' => ['driver' => 'monolog', 'handler' => Monolog\Handler\NullHandler::class]]],
        'cache' => [
            'default' => 'redis',
            'prefix' => 'laravel_cache',
            'stores' => [
                'redis' => ['driver' => 'redislock', 'connection' => 'cache', 'lock_connection' => 'default'],
                // Laravel's own store, the reference (a server not yet switched).
                'stock' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default'],
            ],
        ],
        'queue' => [
            'default' => 'redislock',
            'connections' => [
                'redislock' => $queue + ['driver' => 'redislock', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90],
                // Laravel's own driver, the reference.
                'redis' => ['driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90],
            ],
            'failed' => ['driver' => 'null'],
            // Job batches on redislock: no database.
            'batching' => ['driver' => 'redislock', 'connection' => 'default', 'table' => 'job_batches'],
        ],
        'database' => ['redis' => ['client' => class_exists(Predis\Client::class) ? 'predis' : 'phpredis',
            'default' => $redis, 'cache' => $redis] + ($prefix === null ? [] : ['options' => ['prefix' => $prefix]])],
    ]));
    $app->singleton(ExceptionHandler::class, StderrExceptionHandler::class);
    if (interface_exists(Illuminate\Contracts\Foundation\MaintenanceMode::class)) {
        // Laravel 10's worker asks whether the application is down, and
        // resets the database connections (none here) after each job.
        $app->singleton(Illuminate\Contracts\Foundation\MaintenanceMode::class, Illuminate\Foundation\FileBasedMaintenanceMode::class);
        $app->instance('db', new stdClass());
    }
    foreach ([RedisServiceProvider::class, CacheServiceProvider::class, QueueServiceProvider::class,
              BusServiceProvider::class, RedisLock\Laravel\ServiceProvider::class] as $provider) {
        $app->register($provider);
    }
    $app->boot();
    Facade::clearResolvedInstances();
    Facade::setFacadeApplication($app);
    return $app;
}
