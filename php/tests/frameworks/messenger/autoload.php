<?php
// The adapter's Messenger classes, loaded as Composer would.
spl_autoload_register(function (string $class): void {
    $prefix = 'RedisLock\\Symfony\\Messenger\\';
    if (str_starts_with($class, $prefix)) {
        require dirname(__DIR__, 3) . '/src/Symfony/Messenger/' . substr($class, strlen($prefix)) . '.php';
    }
});
