<?php
/**
 * One hot stock over a Redis Cluster of 3 primaries (started here, on
 * loopback ports), kept in 1, 2, 4, 8 and 16 shards: a sale drained to
 * sold out by buyers one unit at a time. Per shard count: the Redis CPU
 * per unit sold (`INFO commandstats`, every command, summed over the
 * primaries) against one shard's, and the busiest primary's share of it.
 * Prints markdown.
 *
 *   php -d extension=... php/bench/shards.php [redis-url] [units] [buyers] [rounds]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$units = (int) ($argv[2] ?? 20000);
$buyerCount = (int) ($argv[3] ?? 20000);
$rounds = (int) ($argv[4] ?? 3);
$dir = sys_get_temp_dir() . '/redislock-bench-cluster-' . getmypid();
@mkdir($dir);

/** A port nobody listens on, nor on it + 10000 (the cluster bus). */
function freePort(): int
{
    for (;;) {
        $port = random_int(20000, 50000);
        $busy = false;
        foreach ([$port, $port + 10000] as $p) {
            $s = @stream_socket_server("tcp://127.0.0.1:$p");
            if ($s === false) {
                $busy = true;
            } else {
                fclose($s);
            }
        }
        if (!$busy) {
            return $port;
        }
    }
}

$ports = [];
$pids = [];
for ($i = 0; $i < 3; $i++) {
    $port = freePort();
    @mkdir("$dir/$port");
    $cmd = sprintf('cd %s && exec redis-server --port %d --bind 127.0.0.1 --save "" --appendonly no --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 > /dev/null 2>&1 & echo $!', escapeshellarg("$dir/$port"), $port);
    $pids[] = (int) shell_exec($cmd);
    $ports[] = $port;
}
register_shutdown_function(function () use ($pids, $dir) {
    foreach ($pids as $pid) {
        posix_kill($pid, SIGTERM);
    }
    usleep(200000);
    shell_exec('rm -rf ' . escapeshellarg($dir));
});
$nodes = [];
foreach ($ports as $port) {
    for ($t = 0; $t < 100; $t++) {
        try {
            $n = new Redis();
            $n->connect('127.0.0.1', $port);
            $n->ping();
            $nodes[$port] = $n;
            break;
        } catch (RedisException) {
            usleep(50000);
        }
    }
}
shell_exec('redis-cli --cluster create ' . implode(' ', array_map(fn ($p) => "127.0.0.1:$p", $ports)) . ' --cluster-replicas 0 --cluster-yes > /dev/null 2>&1');
for ($t = 0; $t < 200; $t++) {
    $ok = true;
    foreach ($nodes as $n) {
        $ok = $ok && str_contains($n->rawCommand('CLUSTER', 'INFO'), 'cluster_state:ok');
    }
    if ($ok) {
        break;
    }
    usleep(50000);
}
$client = new RedisLock\Client('redis+cluster://' . implode(',', array_map(fn ($p) => "127.0.0.1:$p", $ports)));

/**
 * Microseconds of the commands the client sends (a script's time holds
 * the commands it runs), each node's, by port.
 */
function busy(array $nodes): array
{
    $sent = ['cmdstat_fcall', 'cmdstat_evalsha', 'cmdstat_hdel'];
    $us = [];
    foreach ($nodes as $port => $n) {
        $us[$port] = 0;
        foreach ($n->info('commandstats') as $cmd => $line) {
            if (in_array($cmd, $sent, true) && preg_match('/usec=(\d+)/', $line, $m)) {
                $us[$port] += (int) $m[1];
            }
        }
    }
    return $us;
}

/** The median of $xs. */
function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

/** One sale of $units drained: [µs per unit, busiest share, moves]. */
function sale(RedisLock\Client $client, array $nodes, int $shards, int $units, int $buyerCount): array
{
    $stock = $client->stock("hot$shards", ['shards' => $shards]);
    $stock->set($units);
    foreach ($nodes as $n) {
        $n->rawCommand('CONFIG', 'RESETSTAT');
    }
    $sold = 0;
    for ($b = 0; $sold < $units; $b = ($b + 1) % $buyerCount) {
        if ($stock->take(1, "buyer$b") !== false) {
            $sold++;
        } elseif ($stock->remaining() === 0) {
            break;
        }
    }
    $us = busy($nodes);
    $moves = 0;
    foreach ($nodes as $n) {
        $line = $n->info('commandstats')['cmdstat_hdel'] ?? '';
        $moves += preg_match('/calls=(\d+)/', $line, $m) ? (int) $m[1] : 0;
    }
    $stock->delete();
    return [array_sum($us) / max(1, $sold), max($us) / max(1, array_sum($us)), $moves];
}

/**
 * Microseconds of the scripts the client sent (with the commands they
 * ran), each node's, by port: a queue's registration (once per queue and
 * partition) is left out.
 */
function scripts(array $nodes): array
{
    $us = [];
    foreach ($nodes as $port => $n) {
        $us[$port] = 0;
        foreach ($n->info('commandstats') as $cmd => $line) {
            if (in_array($cmd, ['cmdstat_fcall', 'cmdstat_evalsha', 'cmdstat_eval'], true) && preg_match('/usec=(\d+)/', $line, $m)) {
                $us[$port] += (int) $m[1];
            }
        }
    }
    return $us;
}

/**
 * One queue in $partitions partitions: $tasks enqueued one at a time, then
 * reserved and acked one at a time until none is left: [µs per task,
 * busiest share].
 */
function cycles(RedisLock\Client $client, array $nodes, int $partitions, int $tasks): array
{
    $queue = $client->queue("hotq$partitions", ['partitions' => $partitions]);
    $queue->clear();
    foreach ($nodes as $n) {
        $n->rawCommand('CONFIG', 'RESETSTAT');
    }
    for ($i = 0; $i < $tasks; $i++) {
        $queue->enqueue("task$i", 'payload');
    }
    $done = 0;
    while ($done < $tasks && ($got = $queue->reserve())) {
        $done += $queue->ack($got[0]) ? 1 : 0;
    }
    $us = scripts($nodes);
    return [array_sum($us) / max(1, $done), max($us) / max(1, array_sum($us))];
}

$counts = [1, 2, 4, 8, 16];
$single = parse_url($url);
$alone = new Redis();
$alone->connect($single['host'], $single['port'] ?? 6379);
$aloneClient = new RedisLock\Client($url);
$rows = $aloneRows = [];
for ($round = 0; $round < $rounds; $round++) {
    $one = $aloneOne = null;
    foreach ($counts as $shards) {
        [$perUnit, $share, $moves] = sale($client, $nodes, $shards, $units, $buyerCount);
        $one ??= $perUnit;
        $rows[$shards][] = [$perUnit, $perUnit / $one, $share, $moves];
        [$perUnit] = sale($aloneClient, [$single['port'] ?? 6379 => $alone], $shards, $units, $buyerCount);
        $aloneOne ??= $perUnit;
        $aloneRows[$shards][] = [$perUnit, $perUnit / $aloneOne];
    }
}

$qrows = [];
for ($round = 0; $round < $rounds; $round++) {
    $one = $aloneOne = null;
    foreach ($counts as $partitions) {
        [$perTask, $share] = cycles($client, $nodes, $partitions, $units);
        $one ??= $perTask;
        [$alonePerTask] = cycles($aloneClient, [$single['port'] ?? 6379 => $alone], $partitions, $units);
        $aloneOne ??= $alonePerTask;
        $qrows[$partitions][] = [$perTask, $perTask / $one, $share, $alonePerTask, $alonePerTask / $aloneOne];
    }
}

echo "### One hot stock over a Cluster of 3 primaries (`shards.php`)\n\n";
echo "A sale of $units units drained by $buyerCount buyers (taken in turn, one unit at a time,\n";
echo "until sold out), one process, $rounds rounds in turns, medians. Redis CPU per unit sold:\n";
echo "the commands the client sent (the scripts, with what they ran; the clearing of\n";
echo "moves), `INFO commandstats`, summed over the primaries. On a 2-core machine the three\n";
echo "servers and PHP share the cores: more busy servers inflate each one's time.\n\n";
echo "The last two columns run the same sales on the one server of `make bench`: the\n";
echo "cost of the shards themselves, without the cores shared by three servers.\n\n";
echo "| shards | Redis CPU per unit, µs | vs 1 shard | busiest primary's share | moves | one server: µs per unit | vs 1 shard |\n|---:|---:|---:|---:|---:|---:|---:|\n";
foreach ($rows as $shards => $r) {
    printf(
        "| %d | %.1f | %.2fx | %.0f%% | %d | %.1f | %.2fx |\n",
        $shards,
        median(array_column($r, 0)),
        median(array_column($r, 1)),
        100 * median(array_column($r, 2)),
        median(array_column($r, 3)),
        median(array_column($aloneRows[$shards], 0)),
        median(array_column($aloneRows[$shards], 1)),
    );
}
echo "\nTargets (issue 84): the busiest primary at most 40%, the cost per unit at most 1.2x one shard's.\n";

echo "\n### One hot queue over a Cluster of 3 primaries (`shards.php`)\n\n";
echo "$units tasks enqueued one at a time, then reserved and acked one at a time until\n";
echo "none is left, one process, $rounds rounds in turns, medians. Redis CPU per task: the\n";
echo "scripts the client sent, summed over the primaries; the last two columns on one server.\n\n";
echo "| partitions | Redis CPU per task, µs | vs 1 partition | busiest primary's share | one server: µs per task | vs 1 partition |\n|---:|---:|---:|---:|---:|---:|\n";
foreach ($qrows as $partitions => $r) {
    printf(
        "| %d | %.1f | %.2fx | %.0f%% | %.1f | %.2fx |\n",
        $partitions,
        median(array_column($r, 0)),
        median(array_column($r, 1)),
        100 * median(array_column($r, 2)),
        median(array_column($r, 3)),
        median(array_column($r, 4)),
    );
}
echo "\nTargets (issue 84): the busiest primary at most 40%, the cost per task at most 1.2x one partition's.\n";
