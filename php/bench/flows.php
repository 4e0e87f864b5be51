<?php
/**
 * What a workflow's child costs the Redis server beside a plain task: the
 * same number of tasks, each enqueued, reserved (10 at a time) and acked
 * one by one, as plain tasks (`enqueueMany()`) and as the children of
 * parents of CHILDREN children each (`enqueue(..., children: ...)`, acked
 * with a result; the parents reserved and acked after). Redis CPU (INFO
 * cpu) and commands (INFO commandstats, script-internal calls included)
 * per task, over the run; the two run in turns, ROUNDS times, median.
 *
 *   php -d extension=... php/bench/flows.php [redis-url] [tasks] [children]
 */

require __DIR__ . '/server.php';
require __DIR__ . '/stats.php';

$url = ($argv[1] ?? '') ?: (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$tasks = (int) (($argv[2] ?? '') ?: 2000);
$children = max(1, (int) (($argv[3] ?? '') ?: 100));
const ROUNDS = 5;
$client = new RedisLock\Client($url);
$parts = parse_url($url);
$redis = new Redis();
$redis->connect($parts['host'] ?? '127.0.0.1', (int) ($parts['port'] ?? 6379));

/** Reserves and acks every task of $queue, 10 at a time, each with $result. */
function drain(RedisLock\Queue $queue, ?string $result): int
{
    $n = 0;
    while ($got = $queue->reserve(10)) {
        foreach ($got as $task) {
            $queue->ack($task, $result);
            $n++;
        }
    }
    return $n;
}

$kinds = [
    'plain' => function (int $round) use ($client, $tasks): void {
        $queue = $client->queue("bench-flows-plain-$round");
        for ($i = 0; $i < $tasks; $i += 1000) {
            $batch = [];
            for ($j = $i; $j < min($tasks, $i + 1000); $j++) {
                $batch["t$j"] = 'payload';
            }
            $queue->enqueueMany($batch);
        }
        drain($queue, null) === $tasks || exit("plain: not every task ran\n");
    },
    'flow' => function (int $round) use ($client, $tasks, $children): void {
        $parents = $client->queue("bench-flows-parents-$round");
        $queue = $client->queue("bench-flows-children-$round");
        $made = 0;
        for ($p = 0; $made < $tasks; $p++) {
            $specs = [];
            for ($j = 0; $j < $children && $made < $tasks; $j++, $made++) {
                $specs[] = ['queue' => $queue, 'id' => "t$made", 'payload' => 'payload'];
            }
            $parents->enqueue("p$p", null, 0, null, null, null, $specs);
        }
        drain($queue, 'result') === $tasks || exit("flow: not every child ran\n");
        drain($parents, null) === $p || exit("flow: not every parent ran\n");
    },
];

$cpu = $commands = [];
for ($round = 0; $round < ROUNDS; $round++) {
    foreach ($kinds as $kind => $run) {
        $redis->flushAll();
        $before = serverCost($redis);
        $run($round);
        [$calls, $seconds] = serverCostSince($before, serverCost($redis));
        unset($calls['info'], $calls['flushall']);
        $cpu[$kind][] = $seconds / $tasks * 1e6;
        $commands[$kind][] = array_sum($calls) / $tasks;
    }
}
echo "### A workflow's child against a plain task\n\n";
echo "$tasks tasks enqueued, reserved 10 at a time and acked one by one: plain, and as children of parents of $children (acked with a result; the parents' own work counted in). Median of " . ROUNDS . " rounds.\n\n";
echo "| tasks | Redis CPU per task (µs) | ratio | Redis commands per task |\n|---|---:|---:|---:|\n";
foreach (['plain' => 'plain tasks', 'flow' => "children of a flow ($children a parent)"] as $kind => $label) {
    printf("| %s | %.1f | %.2fx | %.1f |\n", $label, median($cpu[$kind]), median($cpu[$kind]) / median($cpu['plain']), median($commands[$kind]));
}
echo "\n";
