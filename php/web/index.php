<?php
// The redislock dashboard: serve this directory with PHP-FPM (or `php -S`
// for a look), with the extension loaded. Environment:
//   REDISLOCK_DASHBOARD_PASSWORD  the password (required: without it the page stays shut)
//   REDISLOCK_URL                 the Redis DSN (default: redislock.default_dsn)
//   REDISLOCK_GONE_AFTER          seconds unseen after which a worker running none of its
//                                 queue's tasks is marked gone (default 600)

foreach (['Report', 'Dashboard'] as $class) {
    require_once dirname(__DIR__) . "/src/Operator/$class.php";
}
(new RedisLock\Operator\Dashboard(
    (string) getenv('REDISLOCK_DASHBOARD_PASSWORD'),
    getenv('REDISLOCK_URL') ?: null,
    is_numeric(getenv('REDISLOCK_GONE_AFTER')) && (float) getenv('REDISLOCK_GONE_AFTER') > 0 ? (float) getenv('REDISLOCK_GONE_AFTER') : RedisLock\Operator\Report::GONE_AFTER,
))->handle();
