<?php
// What a child process of the Laravel tests loads: Laravel as Debian
// installs it, the adapters (php/src/Laravel), the test app and
// the test job.

require_once '/usr/share/php/Illuminate/autoload.php';
spl_autoload_register(function (string $class): void {
    if (str_starts_with($class, 'RedisLock\\Laravel\\')) {
        require dirname(__DIR__, 3) . '/src/Laravel/' . substr($class, strlen('RedisLock\\Laravel\\')) . '.php';
    }
});
require_once __DIR__ . '/app.php';
require_once __DIR__ . '/RecordedJob.php';
require_once __DIR__ . '/BatchedJob.php';
require_once __DIR__ . '/LockingJob.php';
require_once __DIR__ . '/UniqueJob.php';
