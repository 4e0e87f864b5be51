<?php
/**
 * Producer/consumer throughput: one producer enqueues tasks in batches of
 * 100 while several consumer processes take and finish them, until all are
 * done. redislock's leased queue (reserve 10 + ackMany, blocking) against
 * the seed's userland queue on phpredis (lock-guarded pop of 10, polling).
 *
 *   php -d extension=... php/bench/throughput.php [redis-url] [tasks] [consumers]
 */

require __DIR__ . '/seed.php';

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$total = (int) ($argv[2] ?? 20000);
$consumers = (int) ($argv[3] ?? 4);
$p = parse_url($url);

function phpredis(array $p): Redis
{
    $r = new Redis();
    $r->connect($p['host'], $p['port'] ?? 6379);
    return $r;
}

if (($argv[4] ?? '') === 'consumer') {
    $done = 0;
    $redis = phpredis($p);
    if ($argv[5] === 'redislock') {
        $q = (new RedisLock\Client($url))->queue('bench-tp');
        while (true) {
            $tasks = $q->reserve(10, 30, 0.5);
            if (!$tasks) {
                if ($redis->get('bench-tp-produced') === 'all' && $q->metrics()['ready'] === 0) {
                    break;
                }
                continue;
            }
            $done += $q->ackMany($tasks);
        }
    } else {
        $q = new Seed\RedisQueue($redis);
        while (true) {
            $tasks = $q->pop('bench-tp-seed', 10);
            if (!$tasks) {
                if ($redis->get('bench-tp-produced') === 'all' && $redis->zCard('Queue:bench-tp-seed') === 0) {
                    break;
                }
                usleep(10000);
                continue;
            }
            $done += count($tasks);
        }
    }
    echo $done;
    exit(0);
}

function run(string $url, array $p, int $total, int $consumers, string $kind): array
{
    $redis = phpredis($p);
    $redis->del('bench-tp-produced');
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $procs = $pipes = [];
    $start = hrtime(true);
    for ($i = 0; $i < $consumers; $i++) {
        $procs[$i] = proc_open(array_merge($php, [__FILE__, $url, (string) $total, (string) $consumers, 'consumer', $kind]),
            [1 => ['pipe', 'w']], $pipe);
        $pipes[$i] = $pipe[1];
    }
    $queue = $kind === 'redislock' ? (new RedisLock\Client($url))->queue('bench-tp') : new Seed\RedisQueue($redis);
    for ($n = 0; $n < $total; $n += 100) {
        $ids = array_map(fn ($i) => "task-$i", range($n, min($total, $n + 100) - 1));
        $kind === 'redislock' ? $queue->enqueueMany(array_fill_keys($ids, null)) : $queue->enqueue('bench-tp-seed', $ids);
    }
    $redis->set('bench-tp-produced', 'all');
    $done = 0;
    foreach ($procs as $i => $proc) {
        $done += (int) stream_get_contents($pipes[$i]);
        proc_close($proc);
    }
    $seconds = (hrtime(true) - $start) / 1e9;
    return [$done, $done / $seconds];
}

$rows = [
    'redislock `RedisLock\Queue` (reserve 10 + ackMany, blocking)' => run($url, $p, $total, $consumers, 'redislock'),
    'seed userland `RedisQueue` (pop 10 under its lock, polling 10 ms)' => run($url, $p, $total, $consumers, 'seed'),
];
printf("### Producer/consumer throughput: %d tasks, 1 producer (batches of 100), %d consumers\n\n", $total, $consumers);
echo "| queue | tasks done | done twice | tasks/s |\n|---|---:|---:|---:|\n";
foreach ($rows as $name => [$done, $rate]) {
    printf("| %s | %d | %d | %s |\n", $name, $done, $done - $total, number_format($rate));
}
$names = array_keys($rows);
printf("\n- redislock / seed: %.2fx\n\n", $rows[$names[0]][1] / $rows[$names[1]][1]);
