<?php
// What Composer's autoloader gives an application that requires
// redislock/redislock and the frameworks: loaded before each example of
// the docs (DocsExamplesTest).

foreach (['Lock', 'Semaphore', 'Messenger', 'RateLimiter'] as $component) {
    if (is_file("/usr/share/php/Symfony/Component/$component/autoload.php")) {
        require_once "/usr/share/php/Symfony/Component/$component/autoload.php";
    }
}
spl_autoload_register(function (string $class): void {
    if (str_starts_with($class, 'RedisLock\\')) {
        $file = dirname(__DIR__) . '/src/' . str_replace('\\', '/', substr($class, strlen('RedisLock\\'))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
