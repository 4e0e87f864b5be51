<?php
// The classes of Debian's redislock-tools package: the operator tools and
// the Laravel and Symfony adapters (RedisLock\Operator\, RedisLock\Laravel\,
// RedisLock\Symfony\), loaded on first use. The frameworks themselves come
// from their own packages (php-laravel-framework, php-symfony-*).

spl_autoload_register(function (string $class): void {
    foreach (['Operator', 'Laravel', 'Symfony'] as $part) {
        $prefix = "RedisLock\\$part\\";
        if (str_starts_with($class, $prefix)) {
            $file = __DIR__ . "/$part/" . strtr(substr($class, strlen($prefix)), '\\', '/') . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
