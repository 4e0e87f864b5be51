<?php
/**
 * Queue wake-up: how long after an enqueue (or after a delayed task falls
 * due) a waiting consumer has the task. redislock's blocking reserve is
 * woken by the enqueue itself and sleeps exactly until a known due time;
 * the seed's way is to poll pop() with a sleep between tries.
 *
 *   php -d extension=... php/bench/queue_wake.php [redis-url] [tasks]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$tasks = (int) ($argv[2] ?? 100);

if (($argv[3] ?? '') === 'consumer') {
    consume($url, $argv[4], $tasks, (int) ($argv[5] ?? 0));
    exit(0);
}

/** Takes $tasks tasks; prints the hrtime (ns) at which each arrived. */
function consume(string $url, string $kind, int $tasks, int $pollUs): void
{
    $client = new RedisLock\Client($url);
    $queue = $client->queue("bench-wake-$kind");
    $seed = new RedisQueue($url);
    $out = '';
    for ($got = 0; $got < $tasks;) {
        if ($kind === 'reserve') {
            foreach ($queue->reserve(1, 30, 10) as $task) {
                $out .= $task->id() . ' ' . hrtime(true) . "\n";
                $queue->ack($task);
                $got++;
            }
        } elseif ($task = $seed->pop("bench-wake-$kind")) {
            $out .= $task['id'] . ' ' . hrtime(true) . "\n";
            $got++;
        } else {
            usleep($pollUs);
        }
    }
    echo $out;
}

/** Enqueues $tasks tasks, one every 5 ms (after $delay s each); returns the latencies in ms, sorted. */
function run(string $url, int $tasks, string $kind, float $delay, int $pollUs = 0): array
{
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $consumer = proc_open(array_merge($php, [__FILE__, $url, (string) $tasks, 'consumer', $kind, (string) $pollUs]),
        [1 => ['pipe', 'w']], $pipes) ?: exit("cannot start the consumer\n");
    usleep(300000); // the consumer is waiting
    $client = new RedisLock\Client($url);
    $queue = $client->queue("bench-wake-$kind");
    $due = [];
    for ($i = 0; $i < $tasks; $i++) {
        $due["t$i"] = hrtime(true) + (int) ($delay * 1e9);
        $queue->enqueue("t$i", null, $delay);
        usleep(5000 + random_int(0, 1000));
    }
    $latencies = [];
    foreach (explode("\n", trim(stream_get_contents($pipes[1]))) as $line) {
        [$id, $at] = explode(' ', $line);
        $latencies[] = max(0, ((int) $at - $due[$id]) / 1e6);
    }
    proc_close($consumer);
    sort($latencies);
    return $latencies;
}

function pct(array $sorted, float $p): float
{
    return $sorted[(int) min(count($sorted) - 1, floor($p * count($sorted)))];
}

$results = [
    'redislock reserve($wait), enqueue due now' => run($url, $tasks, 'reserve', 0),
    'redislock reserve($wait), task delayed 50 ms' => run($url, $tasks, 'reserve', 0.05),
    'seed pop() polling every 10 ms' => run($url, $tasks, 'poll10', 0, 10000),
    'seed pop() polling every 100 ms' => run($url, $tasks, 'poll100', 0, 100000),
];
printf("### Queue wake-up: %d tasks, enqueue (or due time) -> consumer has it\n\n", $tasks);
printf("| %-46s | %9s | %9s |\n|%s|%s|%s|\n", 'consumer', 'p50 ms', 'p99 ms', str_repeat('-', 48), str_repeat('-', 11), str_repeat('-', 11));
foreach ($results as $name => $lat) {
    printf("| %-46s | %9.3f | %9.3f |\n", $name, pct($lat, 0.5), pct($lat, 0.99));
}
