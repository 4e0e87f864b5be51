<?php
// Prometheus metrics of the queues and locks (text exposition 0.0.4): point
// a scrape job at this script, served by PHP-FPM with the extension loaded.
// Environment: REDISLOCK_URL, the Redis DSN (default: redislock.default_dsn).
// Restrict who reaches it (an nginx `allow`/`deny`): it lists queue names.

if (!extension_loaded('redislock')) {
    http_response_code(503);
    header('Content-Type: text/plain; charset=utf-8');
    echo "redislock: the redislock extension is not loaded in the PHP that serves this page\n";
    return;
}
foreach (['Report', 'Prometheus', 'Cli'] as $class) {
    require_once dirname(__DIR__) . "/src/Operator/$class.php";
}
try {
    $body = (new RedisLock\Operator\Report(new RedisLock\Client(getenv('REDISLOCK_URL') ?: null)))->metrics();
    header('Content-Type: ' . RedisLock\Operator\Prometheus::CONTENT_TYPE);
    echo $body;
} catch (RedisLock\RedisLockException | ValueError $e) {
    // Prometheus records a failed scrape (up == 0) on any status but 200.
    http_response_code(503);
    header('Content-Type: text/plain; charset=utf-8');
    echo RedisLock\Operator\Cli::message($e), "\n";
}
