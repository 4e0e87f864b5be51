<?php
// Starts a private redis-server on a free loopback port for the whole suite
// and points the extension's default DSN at it.

if (!extension_loaded('redislock')) {
    fwrite(STDERR, "the redislock extension is not loaded: run the suite with `make test`\n");
    exit(1);
}

require __DIR__ . '/RedisServer.php';
require __DIR__ . '/FakeClock.php';
require __DIR__ . '/TestCase.php';
require __DIR__ . '/FpmPool.php';
require __DIR__ . '/Browser.php';
require dirname(__DIR__, 2) . '/tools/php-fpm.php';
require __DIR__ . '/Topologies.php';

// The framework adapters (php/src), the frameworks as Debian installs them,
// and the frameworks' own store tests (tools/frameworks.sh fetches those).
$frameworkTests = dirname(__DIR__, 2) . '/target/frameworks/symfony/src/Symfony/Component';
foreach (['Lock', 'Semaphore', 'Messenger', 'EventDispatcher'] as $component) {
    require_once "/usr/share/php/Symfony/Component/$component/autoload.php";
}
// Where the release packages it (tools/deps.sh: optional).
if (is_file('/usr/share/php/Symfony/Component/RateLimiter/autoload.php')) {
    require_once '/usr/share/php/Symfony/Component/RateLimiter/autoload.php';
}
require_once '/usr/share/php/Illuminate/autoload.php';
// Laravel's own BusBatchTest mocks with it (tools/deps.sh installs it).
if (is_file('/usr/share/php/Mockery/autoload.php')) {
    require_once '/usr/share/php/Mockery/autoload.php';
}
require_once __DIR__ . '/frameworks/laravel/app.php';
spl_autoload_register(function (string $class) use ($frameworkTests): void {
    $roots = [
        'RedisLock\\Symfony\\' => dirname(__DIR__) . '/src/Symfony/',
        'RedisLock\\Laravel\\' => dirname(__DIR__) . '/src/Laravel/',
        'Orchestra\\Testbench\\' => __DIR__ . '/frameworks/testbench/',
        'Illuminate\\Tests\\' => dirname(__DIR__, 2) . '/target/frameworks/php-laravel-framework/tests/',
        'Symfony\\Component\\Lock\\Tests\\' => "$frameworkTests/Lock/Tests/",
        'Symfony\\Component\\Semaphore\\Tests\\' => "$frameworkTests/Semaphore/Tests/",
    ];
    foreach ($roots as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
        }
    }
});

RedisServer::$main = RedisServer::start();
ini_set('redislock.default_dsn', RedisServer::$main->dsn());
