<?php
// The redislock dashboard: serve this directory with PHP-FPM (or `php -S`
// for a look), with the extension loaded. Environment:
//   REDISLOCK_DASHBOARD_PASSWORD  the password (required: without it the page stays shut)
//   REDISLOCK_URL                 the Redis DSN (default: redislock.default_dsn)

foreach (['Report', 'Dashboard'] as $class) {
    require_once dirname(__DIR__) . "/src/Operator/$class.php";
}
(new RedisLock\Operator\Dashboard(
    (string) getenv('REDISLOCK_DASHBOARD_PASSWORD'),
    getenv('REDISLOCK_URL') ?: null,
))->handle();
