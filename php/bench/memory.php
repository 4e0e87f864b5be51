<?php
/**
 * Memory: the resident set of one PHP process after 1,000 and after
 * 1,000,000 lock cycles and queue operations. A leak in the extension
 * (per call, per lock, per connection use) shows as growth between the two.
 *
 *   php -d extension=... php/bench/memory.php [redis-url] [operations]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$ops = (int) ($argv[2] ?? 1000000);
ini_set('redislock.default_dsn', $url);

function rss_kb(): int
{
    preg_match('/VmRSS:\s+(\d+)/', file_get_contents('/proc/self/status'), $m);
    return (int) $m[1];
}

$lock = new RedisLock();
$api = (new RedisLock\Client())->lock('bench-mem', ['ttl' => 10]);
$queue = new RedisQueue();
$workloads = [
    '`RedisLock::lock` + `unlock`' => fn ($i) => $lock->lock('bench-mem') && $lock->unlock('bench-mem'),
    '`RedisLock\Lock::acquire` + `release`' => fn ($i) => $api->acquire() && $api->release(),
    '`RedisQueue::enqueue` / `pop` (one op each)' => fn ($i) => $i % 2 ? $queue->pop('bench-mem') : $queue->enqueue('bench-mem', "t$i"),
];
echo "### Memory of one process (resident set)\n\n| workload | after 1,000 | after " . number_format($ops) . " | growth |\n|---|---:|---:|---:|\n";
foreach ($workloads as $name => $op) {
    for ($i = 0; $i < 1000; $i++) {
        $op($i);
    }
    gc_collect_cycles();
    $before = rss_kb();
    for (; $i < $ops; $i++) {
        $op($i);
    }
    gc_collect_cycles();
    $after = rss_kb();
    printf("| %s | %.1f MB | %.1f MB | %+d kB |\n", $name, $before / 1024, $after / 1024, $after - $before);
}
echo "\n";
