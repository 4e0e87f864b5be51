<?php
// The redislock dashboard: serve this directory with PHP-FPM (or `php -S`
// for a look), with the extension loaded. Environment:
//   REDISLOCK_DASHBOARD_PASSWORD  the password (required: without it the page stays shut)
//   REDISLOCK_URL                 the Redis DSN (default: redislock.default_dsn)
//   REDISLOCK_GONE_AFTER          seconds unseen after which a worker running none of its
//                                 queue's tasks is marked gone (default 600)

foreach (['Report', 'View', 'Dashboard'] as $class) {
    require_once dirname(__DIR__) . "/src/Operator/$class.php";
}
try {
    $goneAfter = RedisLock\Operator\Report::goneAfterFromEnvironment();
} catch (InvalidArgumentException $e) {
    // A setting the operator got wrong says so, rather than being ignored.
    http_response_code(500);
    header('Content-Type: text/plain; charset=utf-8');
    echo 'redislock dashboard: ', $e->getMessage(), "\n";
    return;
}
(new RedisLock\Operator\Dashboard(
    (string) getenv('REDISLOCK_DASHBOARD_PASSWORD'),
    getenv('REDISLOCK_URL') ?: null,
    $goneAfter,
))->handle();
