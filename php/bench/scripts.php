<?php
/**
 * The server's CPU time per operation with the scripts as Redis functions
 * (`FCALL`, the default on Redis 7 and later) against the same scripts with
 * `EVALSHA` (what an ACL user without `+fcall` gets), from `INFO
 * commandstats` (every command the server ran, script-internal calls
 * included). Each variant runs in a process of its own, in turns, 3 rounds;
 * medians. Prints markdown.
 *
 *   php -d extension=... php/bench/scripts.php [redis-url]
 *   php -d extension=... php/bench/scripts.php [redis-url] run   (one process: JSON)
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];
const CALLS = 10000;

/** Microseconds of server CPU the commands took so far. */
function serverUs(Redis $redis): int
{
    $us = 0;
    foreach ($redis->info('commandstats') as $cmd => $line) {
        if ($cmd !== 'cmdstat_info' && preg_match('/usec=(\d+)/', $line, $m)) {
            $us += (int) $m[1];
        }
    }
    return $us;
}

if (($argv[2] ?? '') === 'run') {
    $admin = new Redis();
    $admin->connect($host, $port);
    $seed = new RedisLock($url);
    $queue = new RedisQueue($url);
    $client = new RedisLock\Client($url);
    $fenced = $client->lock('bench-scripts-fenced');
    $leased = $client->queue('bench-scripts-leased');
    $stock = $client->stock('bench-scripts-stock');
    $stock->set(10 * CALLS);
    $ops = [
        '`RedisLock::lock/unlock`' => fn ($i) => $seed->lock('bench-scripts') && $seed->unlock('bench-scripts'),
        '`RedisLock\Lock::acquire/release`' => fn ($i) => $fenced->acquire() && $fenced->release(),
        '`RedisQueue::enqueue` of one task' => fn ($i) => $queue->enqueue('bench-scripts', "t$i") !== false,
        '`RedisQueue::pop` of one task' => fn ($i) => $queue->pop('bench-scripts') !== false,
        '`Queue::enqueue` + `reserve` + `ack`' => function ($i) use ($leased) {
            $leased->enqueue("t$i");
            $tasks = $leased->reserve();
            return $tasks && $leased->ack($tasks[0]);
        },
        '`Stock::take` with a per-buyer limit' => fn ($i) => $stock->take(1, 'b' . ($i % 1000), ['perBuyer' => 1000]) !== false,
    ];
    $out = [];
    foreach ($ops as $name => $op) {
        for ($i = 0; $i < 200; $i++) {
            $op($i);
        }
        $before = serverUs($admin);
        for ($i = 0; $i < CALLS; $i++) {
            if (!$op(200 + $i)) {
                fwrite(STDERR, "$name failed\n");
                exit(1);
            }
        }
        $out[$name] = (serverUs($admin) - $before) / CALLS;
    }
    echo json_encode($out);
    exit(0);
}

/** One process's server µs per operation, as `$dsn`. */
function measured(string $dsn): array
{
    $cmd = [PHP_BINARY, '-d', 'extension=' . getenv('REDISLOCK_SO'), __FILE__, $dsn, 'run'];
    $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    $json = stream_get_contents($pipes[1]);
    if (proc_close($p) !== 0) {
        throw new RuntimeException("the loop as $dsn failed");
    }
    return json_decode($json, true);
}

$admin = new Redis();
$admin->connect($host, $port);
echo "### Server CPU per operation: scripts as Redis functions against `EVALSHA`\n\n";
try {
    $admin->rawCommand('FUNCTION', 'STATS');
} catch (RedisException $e) {
    echo "This server has no functions: every script runs with `EVALSHA`.\n\n";
    exit(0);
}
// A user the ACL keeps from FCALL: redislock runs its scripts with EVALSHA.
$admin->rawCommand('ACL', 'SETUSER', 'bench-evalsha', 'on', '>bench', '~*', '&*', '+@all', '-fcall');
$evalsha = preg_replace('#^(rediss?://)(?:[^@/]*@)?#', '$1bench-evalsha:bench@', $url);
$runs = ['functions' => [], 'evalsha' => []];
for ($round = 0; $round < 3; $round++) {
    $admin->flushAll();
    $runs['functions'][] = measured($url);
    $admin->flushAll();
    $runs['evalsha'][] = measured($evalsha);
}
$admin->rawCommand('ACL', 'DELUSER', 'bench-evalsha');
$admin->flushAll();

$median = function (array $rounds, string $op): float {
    $v = array_column($rounds, $op);
    sort($v);
    return $v[intdiv(count($v), 2)];
};
printf("Microseconds of server CPU per operation (`INFO commandstats`, every command, %s operations, median of 3 rounds in turns):\n\n", number_format(CALLS));
echo "| operation | as functions (`FCALL`) | with `EVALSHA` | functions / `EVALSHA` |\n|---|---:|---:|---:|\n";
foreach (array_keys($runs['functions'][0]) as $op) {
    $f = $median($runs['functions'], $op);
    $e = $median($runs['evalsha'], $op);
    printf("| %s | %.1f | %.1f | %.2f |\n", $op, $f, $e, $f / $e);
}
echo "\n";
