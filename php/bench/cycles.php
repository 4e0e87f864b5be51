<?php
/**
 * Single-process loops over one loopback connection, side by side in one
 * run: lock cycles (acquire + release) and queue operations, redislock
 * against the seed's userland code, symfony/lock, a php-lock-style
 * predis lock, and the floor of raw phpredis commands. Prints markdown.
 *
 *   php -d extension=... php/bench/cycles.php [redis-url] [seconds per loop]
 */

require __DIR__ . '/seed.php';
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require '/usr/share/php/Predis/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$seconds = (float) ($argv[2] ?? 1.5);
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];

$phpredis = new Redis();
$phpredis->pconnect($host, $port);
$predis = new Predis\Client("tcp://$host:$port");
Seed\Lock_Service::$host = $host;
Seed\Lock_Service::$port = $port;
ini_set('redislock.default_dsn', $url);

/**
 * Runs $op for about $seconds (after 200 warm-up calls), at most $limit
 * counted calls; returns operations per second. $op gets a call number
 * that is new on every call, warm-up included.
 */
function measure(callable $op, float $seconds, int $limit = PHP_INT_MAX): float
{
    for ($i = 0; $i < 200; $i++) {
        $op($i);
    }
    $n = 0;
    $start = hrtime(true);
    $end = $start + (int) ($seconds * 1e9);
    do {
        for ($j = 0; $j < 100 && $n < $limit; $j++, $n++) {
            $op(200 + $n);
        }
        $now = hrtime(true);
    } while ($now < $end && $n < $limit);
    return $n / (($now - $start) / 1e9);
}

/**
 * Measures every op of `$ops` (name => op) in turns: `$rounds` rounds, each
 * running every op for `$seconds / $rounds`; returns name => the median of
 * its rounds' ops/s. A loop measured seconds after another on a busy
 * machine can run 30% faster or slower for reasons of its own; in turns,
 * such drift hits every contender alike. `$limits` (name => calls) caps an
 * op's calls over all rounds, warm-ups included (a pop stops before its
 * queue runs dry).
 */
function measureInTurns(array $ops, float $seconds, int $rounds = 5, array $limits = []): array
{
    $runs = [];
    for ($r = 0; $r < $rounds; $r++) {
        foreach ($ops as $name => $op) {
            $limit = isset($limits[$name]) ? max(1, intdiv($limits[$name], $rounds) - 200) : PHP_INT_MAX;
            $runs[$name][] = measure($op, $seconds / $rounds, $limit);
        }
    }
    return array_map(function (array $rates): float {
        sort($rates);
        return $rates[intdiv(count($rates), 2)];
    }, $runs);
}

function table(string $title, array $rows, string $ours, array $peers): void
{
    echo "### $title\n\n| contender | ops/s | redislock ($ours) / this |\n|---|---:|---:|\n";
    foreach ($rows as $name => $ops) {
        $ratio = $name === $ours ? '1.00' : sprintf('%.2f', $rows[$ours] / $ops);
        printf("| %s | %s | %s |\n", $name, number_format($ops), $ratio);
    }
    echo "\n";
    foreach ($peers as $peer => $label) {
        printf("- %s: %.2fx\n", $label, $rows[$ours] / $rows[$peer]);
    }
    echo "\n";
}

$flush = fn () => $phpredis->flushAll();

/**
 * The commands one run of `$op` sends (each as its words), read with
 * `MONITOR` once its scripts are loaded: replayed through phpredis, they
 * are the same round trips and the same server work from another client.
 */
function sentCommands(callable $op, string $host, int $port): array
{
    $op();
    $monitor = stream_socket_client("tcp://$host:$port");
    fwrite($monitor, "MONITOR\r\n");
    fgets($monitor);
    $op();
    stream_set_timeout($monitor, 0, 300000);
    $calls = [];
    while (($line = fgets($monitor)) !== false) {
        // A client's command, not one a script ran ("[0 lua]").
        if (!preg_match('/^\+[\d.]+ \[\d+ [\d.]+:\d+\] (.*)$/', $line, $client)) {
            continue;
        }
        preg_match_all('/"((?:[^"\\\\]|\\\\.)*)"/', $client[1], $m);
        $calls[] = array_map('stripcslashes', $m[1]);
    }
    fclose($monitor);
    return $calls;
}

/**
 * Replays `$calls` of sentCommands() through phpredis, with a new owner
 * token of the same length in place of `$token`: each script (`FCALL` or
 * `EVALSHA`) in a round trip of its own, the plain commands between them in
 * one pipeline (as redislock sends them).
 */
function replay(Redis $redis, array $calls, string $token): bool
{
    $new = substr($token, 0, -12) . bin2hex(random_bytes(6));
    $ok = true;
    $plain = [];
    $flush = function () use ($redis, &$plain, &$ok) {
        if ($plain) {
            $pipe = $redis->multi(Redis::PIPELINE);
            foreach ($plain as $words) {
                $pipe->rawCommand(...$words);
            }
            $ok = $pipe->exec() !== false && $ok;
            $plain = [];
        }
    };
    foreach ($calls as $call) {
        $call = array_map(fn ($a) => str_replace($token, $new, $a), $call);
        $command = strtoupper($call[0]);
        if ($command !== 'EVALSHA' && $command !== 'FCALL') {
            $plain[] = $call;
            continue;
        }
        $flush();
        $ok = ($command === 'FCALL'
            ? $redis->rawCommand(...$call)
            : $redis->evalSha($call[1], array_slice($call, 3), (int) $call[2])) !== false && $ok;
    }
    $flush();
    return $ok;
}

// ---- lock cycle: acquire + release of one uncontended lock
$flush();
$rl = new RedisLock();
$client = new RedisLock\Client();
$lockApi = $client->lock('bench');
$seedLock = new Seed\RedisLock($phpredis);
$symfony = (new LockFactory(new RedisStore($phpredis)));
$release = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
$releaseSha = $phpredis->script('load', $release);
// The server work of a redislock cycle (its commands and scripts, with the
// fair line's check and, for `RedisLock\Lock`, the fencing token), sent by
// phpredis.
$seedCalls = sentCommands(fn () => $rl->lock('bench') && $rl->unlock('bench'), $host, $port);
$lockCalls = sentCommands(fn () => $lockApi->acquire() && $lockApi->release(), $host, $port);
// The owner token: the value of a plain SET, or the first argument of the
// first script.
$tokenOf = fn (array $calls) => strtoupper($calls[0][0]) === 'SET'
    ? $calls[0][2] : $calls[0][3 + (int) $calls[0][2]];
$lockRows = measureInTurns([
    'redislock `RedisLock::lock/unlock`' => fn () => $rl->lock('bench') && $rl->unlock('bench'),
    'redislock `Lock_Service::addLock/releaseLock`' => fn () => Lock_Service::releaseLock(42, Lock_Service::addLock(42)),
    'redislock `RedisLock\Lock::acquire/release`' => fn () => $lockApi->acquire() && $lockApi->release(),
    'seed userland `RedisLock` (phpredis)' => fn () => $seedLock->lock('bench') && $seedLock->unlock('bench'),
    'seed userland `Lock_Service` (phpredis, connects per call)' => fn () => Seed\Lock_Service::releaseLock(42, Seed\Lock_Service::addLock(42)),
    'symfony/lock `RedisStore` (phpredis)' => function () use ($symfony) {
        $l = $symfony->createLock('bench');
        $l->acquire();
        $l->release();
    },
    'php-lock style: SET NX PX + Lua release (predis)' => function () use ($predis, $release) {
        $token = bin2hex(random_bytes(16));
        $predis->set('bench-predis', $token, 'PX', 15000, 'NX');
        $predis->eval($release, 1, 'bench-predis', $token);
    },
    'phpredis `SET NX PX` + `EVALSHA` compare-and-delete (safe, 2 round trips)' => function () use ($phpredis, $releaseSha) {
        $token = bin2hex(random_bytes(16));
        $phpredis->set('bench-safe', $token, ['nx', 'px' => 15000]);
        $phpredis->evalSha($releaseSha, ['bench-safe', $token], 1);
    },
    'floor: phpredis `SET NX PX` + `DEL` (2 round trips)' => function () use ($phpredis) {
        $phpredis->set('bench-floor', '1', ['nx', 'px' => 15000]);
        $phpredis->del('bench-floor');
    },
    'phpredis sending `RedisLock::lock/unlock`\'s commands (same round trips and server work)' => fn () => replay($phpredis, $seedCalls, $tokenOf($seedCalls)),
    'phpredis sending `RedisLock\Lock::acquire/release`\'s commands (same round trips and server work)' => fn () => replay($phpredis, $lockCalls, $tokenOf($lockCalls)),
], 2 * $seconds);
table('Lock cycle (acquire + release, uncontended)', $lockRows, 'redislock `RedisLock::lock/unlock`', [
    'floor: phpredis `SET NX PX` + `DEL` (2 round trips)' => 'vs the raw phpredis floor (target >= 0.9x)',
    'phpredis `SET NX PX` + `EVALSHA` compare-and-delete (safe, 2 round trips)' => 'vs phpredis at equal round trips (target >= 1.0x)',
    'phpredis sending `RedisLock::lock/unlock`\'s commands (same round trips and server work)' => 'vs phpredis doing the same server work (the client alone)',
    'seed userland `Lock_Service` (phpredis, connects per call)' => 'redislock `Lock_Service` vs the seed `Lock_Service` (target >= 3x) uses the row below',
    'symfony/lock `RedisStore` (phpredis)' => 'vs symfony/lock (target >= 6x)',
]);
printf("- redislock `RedisLock\\Lock` / phpredis doing its server work: %.2fx\n",
    $lockRows['redislock `RedisLock\Lock::acquire/release`'] / $lockRows['phpredis sending `RedisLock\Lock::acquire/release`\'s commands (same round trips and server work)']);
printf("- redislock `Lock_Service` / seed `Lock_Service`: %.2fx\n\n",
    $lockRows['redislock `Lock_Service::addLock/releaseLock`'] / $lockRows['seed userland `Lock_Service` (phpredis, connects per call)']);

// ---- queue: enqueue, then pop what was enqueued; single tasks and batches of 100
$queue = new RedisQueue();
$seedQueue = new Seed\RedisQueue($phpredis);
$api = $client->queue('bench-api');
$popScript = "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end return due";
$popSha = $phpredis->script('load', $popScript);
// The same pop returning what the seed's pop() returns (each task's score
// too), shaped as it shapes it: the floor for the same output.
$shapedScript = "local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1) end return due";
$shapedSha = $phpredis->script('load', $shapedScript);
// The floors of a queue that keeps what redislock's must: due times on the
// server's clock, and a count per 10 s period (the operator counters). The
// least one script doing that does: an enqueue of ids (ARGV) ...
$countedEnqueueSha = $phpredis->script('load', "local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local due = string.format('%.17g', now)
local args = {}
for i = 1, #ARGV do args[#args + 1] = due args[#args + 1] = ARGV[i] end
local added = redis.call('ZADD', KEYS[1], 'NX', unpack(args))
if added > 0 then redis.call('HINCRBY', KEYS[2], 'enqueued:' .. math.floor(now / 10), added) end
return added");
// ... and a pop of at most ARGV[1] tasks due by now, with their scores.
$countedPopSha = $phpredis->script('load', "local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, ARGV[1])
if #due > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #due / 2 - 1)
  redis.call('HINCRBY', KEYS[2], 'popped:' .. math.floor(now / 10), #due / 2)
end
return due");
$shapedPop = function (string $key, int $size, bool $counted = false) use ($phpredis, $shapedSha, $countedPopSha) {
    $due = $counted
        ? $phpredis->evalSha($countedPopSha, [$key, "$key:stats", $size], 2)
        : $phpredis->evalSha($shapedSha, [$key, (string) microtime(true), $size], 1);
    $out = [];
    for ($i = 0, $n = count($due); $i < $n; $i += 2) {
        $out[] = ['id' => $due[$i], 'score' => (float) $due[$i + 1]];
    }
    return $size === 1 ? ($out[0] ?? false) : $out;
};
$batch = fn (string $p, int $n) => array_map(fn ($i) => "$p-$n-$i", range(0, 99));
$queueRows = [];
foreach ([1, 100] as $size) {
    $flush();
    $ids = fn (string $p, int $n) => $size === 1 ? "$p-$n" : $batch($p, $n);
    // Each enqueue loop counts its calls, so each pop loop below stops
    // before its queue runs dry (popping an empty queue is another thing).
    $calls = ['r' => 0, 's' => 0, 'a' => 0, 'f' => 0, 'c' => 0, 'g' => 0];
    // Ids come from each loop's own call count: unique across the rounds
    // of measureInTurns().
    $count = function (string $p, callable $op) use (&$calls) {
        return function () use ($p, $op, &$calls) {
            $op($calls[$p]++);
        };
    };
    $zadd = fn (string $key, string $p) => $count($p, function ($n) use ($phpredis, $ids, $key, $p) {
        $args = [$key, ['NX']];
        foreach ((array) $ids($p, $n) as $id) {
            array_push($args, microtime(true), $id);
        }
        $phpredis->zAdd(...$args);
    });
    // In turns (drift hits every row alike); the last op fills the queue
    // of the same-output pop below, and is not a row.
    $rows = measureInTurns([
        'redislock `RedisQueue::enqueue`' => $count('r', fn ($n) => $queue->enqueue('bench', $ids('r', $n))),
        'seed userland `RedisQueue::enqueue` (phpredis)' => $count('s', fn ($n) => $seedQueue->enqueue('bench-seed', $ids('s', $n))),
        'redislock `RedisLock\Queue::enqueue` / `enqueueMany`' => $size === 1
            ? $count('a', fn ($n) => $api->enqueue("a-$n"))
            : $count('a', fn ($n) => $api->enqueueMany(array_fill_keys($batch('a', $n), null))),
        'floor: phpredis `ZADD`' => $zadd('bench-floor', 'f'),
        'floor with a server clock and the counter: phpredis one `EVALSHA` (`TIME`, `ZADD NX`, `HINCRBY`)' => $count('c',
            fn ($n) => $phpredis->evalSha($countedEnqueueSha, array_merge(['bench-counted', 'bench-counted:stats'], (array) $ids('c', $n)), 2)),
        'fill' => $zadd('bench-shaped', 'g'),
    ], $seconds);
    unset($rows['fill']);
    table("Queue enqueue, " . ($size === 1 ? 'one task' : 'batches of 100') . ' (ops = calls)', $rows,
        'redislock `RedisQueue::enqueue`', [
            'floor: phpredis `ZADD`' => 'vs the one-round-trip floor (target >= 0.9x)',
            'floor with a server clock and the counter: phpredis one `EVALSHA` (`TIME`, `ZADD NX`, `HINCRBY`)' => 'vs the floor with a server clock and the counter',
            'seed userland `RedisQueue::enqueue` (phpredis)' => 'vs the seed userland queue (target >= 3x)',
        ]);
    // In turns too, each pop loop stopping before its queue runs dry: name
    // => [pop, the enqueue loop that filled its queue].
    $popLoops = [
        'redislock `RedisQueue::pop`' => [fn () => $queue->pop('bench', $size), 'r'],
        'seed userland `RedisQueue::pop` (phpredis)' => [fn () => $seedQueue->pop('bench-seed', $size), 's'],
        'redislock `RedisLock\Queue::reserve` + `ackMany` (leased, 2 round trips)' => [fn () => $api->ackMany($api->reserve($size)), 'a'],
        'floor: phpredis one `EVALSHA` (ZRANGEBYSCORE + ZREM)' => [fn () => $phpredis->evalSha($popSha, ['bench-floor', (string) microtime(true), $size], 1), 'f'],
        'phpredis one `EVALSHA` with scores, shaped as the seed\'s `pop()`' => [fn () => $shapedPop('bench-shaped', $size), 'g'],
        'floor with a server clock and the counter: phpredis one `EVALSHA`, shaped as the seed\'s `pop()`' => [fn () => $shapedPop('bench-counted', $size, true), 'c'],
    ];
    $pops = measureInTurns(array_map(fn ($l) => $l[0], $popLoops), $seconds, 5,
        array_map(fn ($l) => $calls[$l[1]], $popLoops));
    table("Queue pop, " . ($size === 1 ? 'one task' : 'batches of 100') . ' (ops = calls; queues filled by the enqueue run above)', $pops,
        'redislock `RedisQueue::pop`', [
            'floor: phpredis one `EVALSHA` (ZRANGEBYSCORE + ZREM)' => 'vs the one-round-trip floor (target >= 0.9x)',
            'phpredis one `EVALSHA` with scores, shaped as the seed\'s `pop()`' => 'vs the same output from phpredis',
            'floor with a server clock and the counter: phpredis one `EVALSHA`, shaped as the seed\'s `pop()`' => 'vs the same output with a server clock and the counter',
            'seed userland `RedisQueue::pop` (phpredis)' => 'vs the seed userland queue (target >= 3x)',
        ]);
}

// ---- what keeping the recent attempts costs: the same leased cycles on a
// queue that keeps them (the default, its last 100) and one that keeps none
$flush();
$on = $client->queue('bench-recent-on');
$off = $client->queue('bench-recent-off');
$off->keepRecent(0);
foreach ([1, 100] as $size) {
    // Each cycle enqueues what it takes: the queue stays at 100 tasks.
    $cycle = fn (RedisLock\Queue $q) => function ($n) use ($q, $size, $batch) {
        $q->enqueueMany(array_fill_keys($size === 1 ? ["t-$n"] : $batch('t', $n), null));
        $q->ackMany($q->reserve($size));
    };
    foreach ([$on, $off] as $q) {
        $q->enqueueMany(array_fill_keys($batch('seed', 0), null));
    }
    $rows = measureInTurns([
        'recent attempts kept (default: the last 100)' => $cycle($on),
        'recent attempts off (`keepRecent(0)`)' => $cycle($off),
    ], $seconds * 2);
    table('Leased queue, reserve + ack + enqueue, ' . ($size === 1 ? 'one task' : 'batches of 100') . ', recent attempts on and off (ops = cycles)', $rows,
        'recent attempts kept (default: the last 100)', [
            'recent attempts off (`keepRecent(0)`)' => 'on vs off (target >= 0.95x)',
        ]);
    $on->clear();
    $off->clear();
}

// ---- what groups cost: the same leased cycles on a queue whose tasks are
// in 10 groups, which reserve() takes in turn, and on a plain one
$flush();
$grouped = $client->queue('bench-grouped');
$plain = $client->queue('bench-plain');
// The same groups, each held to 50 leased tasks (a limit no cycle
// reaches: what counting the leases costs).
$limited = $client->queue('bench-limited');
$limited->setGroupConcurrency(50);
foreach ([1, 100] as $size) {
    // Each cycle enqueues what it takes (into the next group): the queue
    // stays at 1,000 tasks.
    $cycle = fn (RedisLock\Queue $q, bool $groups) => function ($n) use ($q, $groups, $size, $batch) {
        $q->enqueueMany(array_fill_keys($size === 1 ? ["t-$n"] : $batch('t', $n), null), 0, null, null, $groups ? 'g' . $n % 10 : null);
        $q->ackMany($q->reserve($size));
    };
    foreach (range(0, 9) as $g) {
        $grouped->enqueueMany(array_fill_keys($batch("seed-$g", 0), null), 0, null, null, "g$g");
        $limited->enqueueMany(array_fill_keys($batch("seed-$g", 0), null), 0, null, null, "g$g");
        $plain->enqueueMany(array_fill_keys($batch("seed-$g", 0), null));
    }
    $rows = measureInTurns([
        'groups: 10, reserve() in turn' => $cycle($grouped, true),
        'the same, each group held to 50 leased' => $cycle($limited, true),
        'no groups' => $cycle($plain, false),
    ], $seconds * 3);
    table('Leased queue, reserve + ack + enqueue, ' . ($size === 1 ? 'one task' : 'batches of 100') . ', with groups and without (ops = cycles)', $rows,
        'groups: 10, reserve() in turn', [
            'no groups' => 'grouped vs plain reserve (target >= 0.9x)',
            'the same, each group held to 50 leased' => 'without limits vs with a group concurrency',
        ]);
    $grouped->clear();
    $limited->clear();
    $plain->clear();
}
