<?php
/**
 * Redis CPU per operation, each of redislock's operations against the
 * least script that keeps the same promise (bench/floors/*.lua: each file
 * says what it keeps and what it leaves out), from `INFO commandstats`:
 * the microseconds of the commands the client sends (a script's time
 * includes the commands it runs), per operation. Rounds in turns,
 * medians of the per-round ratios. Prints markdown.
 *
 *   php -d extension=... php/bench/floors.php [redis-url] [calls] [rounds]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$calls = (int) ($argv[2] ?? 5000);
$rounds = (int) ($argv[3] ?? 5);
$p = parse_url($url);
$r = new Redis();
$r->connect($p['host'], $p['port'] ?? 6379);
$r->flushAll();

/** The SHA of bench/floors/$name.lua, loaded. */
function floorScript(Redis $r, string $name): string
{
    return $r->script('load', file_get_contents(dirname(__DIR__, 2) . "/bench/floors/$name.lua"));
}

/** Microseconds and calls of the commands the client sends ($sent), so far. */
function sent(Redis $r, array $sent): array
{
    $us = $n = 0;
    foreach ($r->info('commandstats') as $cmd => $line) {
        if (in_array(substr($cmd, 8), $sent, true) && preg_match('/calls=(\d+),usec=(\d+)/', $line, $m)) {
            $n += (int) $m[1];
            $us += (int) $m[2];
        }
    }
    return [$us, $n];
}

$client = new RedisLock\Client($url);
$seedLock = new RedisLock($url);
$seedQueue = new RedisQueue($url);
ini_set('redislock.default_dsn', $url);
$cad = floorScript($r, 'compare_and_delete');
$fenced = floorScript($r, 'fenced_lock');
$order = floorScript($r, 'order_lock');
$enqueue = floorScript($r, 'enqueue');
$pop = floorScript($r, 'pop');
$take = floorScript($r, 'stock_take');
$bucket = floorScript($r, 'token_bucket');
$fixedFloor = floorScript($r, 'fixed_window');
$slidingFloor = floorScript($r, 'sliding_window');
$leased = floorScript($r, 'reserve_ack');
$scripts = ['fcall', 'evalsha', 'fcall_ro', 'evalsha_ro'];

// A lock held and released, as the raw floor does it.
$lockCycle = function (string $key) use ($r, $cad): bool {
    $token = bin2hex(random_bytes(16));
    return $r->set($key, $token, ['nx', 'px' => 30000]) && $r->evalSha($cad, [$key, $token], 1) === 1;
};
// The leased floor's cycle: enqueue what it takes, reserve, ack.
$floorCycle = function (int $i, int $n) use ($r, $leased): bool {
    $keys = ['{fl}:q', '{fl}:leased', '{fl}:payloads', '{fl}:stats'];
    $args = ['enqueue'];
    for ($k = 0; $k < $n; $k++) {
        array_push($args, "t$i-$k", 'payload');
    }
    $r->evalSha($leased, [...$keys, ...$args], 4);
    $got = $r->evalSha($leased, [...$keys, 'reserve', $n, 30], 4);
    $ack = ['ack'];
    for ($k = 0; $k < count($got); $k += 3) {
        array_push($ack, $got[$k], $got[$k + 1]);
    }
    return count($got) === 3 * $n && $r->evalSha($leased, [...$keys, ...$ack], 4) === $n;
};
$queue = $client->queue('fl-ours');
$ourCycle = function (int $i, int $n) use ($queue): bool {
    $tasks = [];
    for ($k = 0; $k < $n; $k++) {
        $tasks["t$i-$k"] = 'payload';
    }
    $n === 1 ? $queue->enqueue("t$i-0", 'payload') : $queue->enqueueMany($tasks);
    $got = $queue->reserve($n);
    return count($got) === $n && $queue->ackMany($got) === $n;
};
$stock = $client->stock('fl-ours');
$stock->set(1000000000000);
$r->set('{fl}:units', 1000000000000);
$limiter = $client->limiter('fl-ours', ['limit' => 1000000000, 'per' => 1]);
$sliding = $client->limiter('fl-sliding', ['limit' => 1000000000, 'per' => 1, 'policy' => 'sliding_window']);
$fixed = $client->limiter('fl-fixed', ['limit' => 1000000000, 'per' => 1, 'policy' => 'fixed_window']);

// [operation, reference file, [ours, commands it sends], [reference, commands it sends]]
$rows = [
    ['`RedisLock\Lock::acquire` + `release` (fencing tokens)', 'fenced_lock',
        [fn ($i) => ($l = $client->lock('fl-ours')) && $l->acquire() && $l->release(), $scripts],
        [function ($i) use ($r, $fenced, $cad) {
            $token = bin2hex(random_bytes(16));
            return $r->evalSha($fenced, ['{fl-ref}', '{fl-ref}:fence', $token, 30000, 3600000], 2) > 0
                && $r->evalSha($cad, ['{fl-ref}', $token], 1) === 1;
        }, ['evalsha']]],
    ['`RedisLock::lock` + `unlock` (drop-in; no fencing tokens)', 'compare_and_delete',
        [fn ($i) => $seedLock->lock('fl-seed') && $seedLock->unlock('fl-seed'), array_merge($scripts, ['set', 'llen', 'pttl'])],
        [fn ($i) => $lockCycle('fl-ref'), ['set', 'evalsha']]],
    ['`Lock_Service::addLock` + `releaseLock` (drop-in)', 'order_lock',
        [fn ($i) => Lock_Service::releaseLock($i + 1, Lock_Service::addLock($i + 1, 30)), $scripts],
        [function ($i) use ($r, $order, $cad) {
            $id = $r->evalSha($order, ["fl_order_$i", 'fl_unique_id', 30000], 2);
            return $id > 0 && $r->evalSha($cad, ["fl_order_$i", (string) $id], 1) === 1;
        }, ['evalsha']]],
    ['`RedisQueue::enqueue` of one task (drop-in)', 'enqueue',
        [fn ($i) => $seedQueue->enqueue('fl-ours', "t$i"), $scripts],
        [fn ($i) => $r->evalSha($enqueue, ['Queue:fl-ref', '{Queue:fl-ref}:stats', 0, "t$i"], 2) === 1, ['evalsha']]],
    ['`RedisQueue::pop` of one task (drop-in; queues filled by the row above)', 'pop',
        [fn ($i) => $seedQueue->pop('fl-ours') !== false, $scripts],
        [fn ($i) => count($r->evalSha($pop, ['Queue:fl-ref', '{Queue:fl-ref}:stats', 1], 2)) === 2, ['evalsha']]],
    ['`Stock::take` with a per-buyer limit', 'stock_take',
        [fn ($i) => $stock->take(1, 'b' . ($i % 1000), ['perBuyer' => 1000000]) !== false, $scripts],
        [fn ($i) => $r->evalSha($take, ['{fl}:units', '{fl}:buyers', 1, 'b' . ($i % 1000), 1000000], 2) >= 0, ['evalsha']]],
    ['`Limiter::attempt`, token bucket', 'token_bucket',
        [fn ($i) => $limiter->attempt('k' . ($i % 1000))->allowed(), $scripts],
        [fn ($i) => $r->evalSha($bucket, ['fl-bucket:' . ($i % 1000), 1000000000, 1000000, 1000000000], 1)[0] === 0, ['evalsha']]],
    ['`Limiter::attempt`, sliding window', 'sliding_window',
        [fn ($i) => $sliding->attempt('k' . ($i % 1000))->allowed(), $scripts],
        [fn ($i) => $r->evalSha($slidingFloor, ['{fl-sliding:' . ($i % 1000) . '}', '{fl-sliding:' . ($i % 1000) . '}:seq', 1000000000, 1000000], 2)[0] === 0, ['evalsha']]],
    ['`Limiter::attempt`, fixed window', 'fixed_window',
        [fn ($i) => $fixed->attempt('k' . ($i % 1000))->allowed(), $scripts],
        [fn ($i) => $r->evalSha($fixedFloor, ['fl-fixed:' . ($i % 1000), 1000000000, 1000000, 1], 1)[0] === 0, ['evalsha']]],
    ['`once()`, a new slot (won)', 'SET NX PX',
        [fn ($i) => $client->once('fl-ours', "s$i")->won(), array_merge($scripts, ['set'])],
        [fn ($i) => $r->set("fl-once:s$i", '1', ['nx', 'px' => 86400000]), ['set']]],
    ['`once()`, a taken slot (lost)', 'SET NX PX',
        [fn ($i) => !$client->once('fl-ours', "s$i")->won(), array_merge($scripts, ['set'])],
        [fn ($i) => !$r->set("fl-once:s$i", '1', ['nx', 'px' => 86400000]), ['set']]],
    ['`Queue::enqueue` + `reserve` + `ackMany`, one task', 'reserve_ack',
        [fn ($i) => $ourCycle($i, 1), $scripts],
        [fn ($i) => $floorCycle($i, 1), ['evalsha']]],
    ['`Queue::enqueueMany` + `reserve` + `ackMany`, 100 tasks', 'reserve_ack',
        [fn ($i) => $ourCycle($i, 100), $scripts],
        [fn ($i) => $floorCycle($i, 100), ['evalsha']]],
];

$us = [];
foreach ($rows as $row => [$name, , $ours, $ref]) {
    $n = str_contains($name, '100 tasks') ? max(1, intdiv($calls, 50)) : $calls;
    for ($round = 0; $round < $rounds; $round++) {
        foreach (['ours' => $ours, 'ref' => $ref] as $side => [$op, $sent]) {
            // Each round and side its own operations (the lost slots are
            // those the row before won).
            $from = ($round * 2 + ($side === 'ref' ? 1 : 0)) * $n;
            [$u0, $c0] = sent($r, $sent);
            for ($i = $from; $i < $from + $n; $i++) {
                if (!$op($i)) {
                    fwrite(STDERR, "$name ($side) failed at $i\n");
                    exit(1);
                }
            }
            [$u1, $c1] = sent($r, $sent);
            $us[$row][$side][] = ($u1 - $u0) / $n;
            $us[$row]["$side trips"] = ($c1 - $c0) / $n;
        }
    }
}

$median = function (array $v): float {
    sort($v);
    return $v[intdiv(count($v), 2)];
};
echo "### Redis CPU per operation against the least script that keeps its promise\n\n";
printf("Microseconds of Redis CPU per operation (`INFO commandstats` of the commands the client sends; a script's includes what it runs), %s operations (batches: %s), medians of %d rounds in turns; the ratio is the median of the rounds' ratios. The references are in `bench/floors/`.\n\n",
    number_format($calls), number_format(max(1, intdiv($calls, 50))), $rounds);
echo "| operation | redislock µs | reference µs | redislock / reference | reference | commands sent (ours / ref) |\n|---|---:|---:|---:|---|---:|\n";
foreach ($rows as $row => [$name, $file]) {
    // (A round whose reference took no whole microsecond in commandstats, as a short run's cheapest
    // rows can, has no ratio: said, not divided by.)
    $ratios = array_values(array_filter(array_map(fn ($o, $f) => $f > 0 ? $o / $f : null, $us[$row]['ours'], $us[$row]['ref']), 'is_float'));
    printf("| %s | %.1f | %.1f | %s | %s | %.1f / %.1f |\n", $name, $median($us[$row]['ours']), $median($us[$row]['ref']),
        $ratios === [] ? 'n/a (reference under 1 µs in all)' : sprintf('%.2fx', $median($ratios)),
        str_contains($file, ' ') ? "`$file`" : "[`$file.lua`](floors/$file.lua)", $us[$row]['ours trips'], $us[$row]['ref trips']);
}
echo "\n";
