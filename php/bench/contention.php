<?php
/**
 * Contention: N processes on one lock, a 200-buyer flash sale, and blocked
 * consumers, each contender in the same run on the same Redis. Redis-side
 * costs come from INFO commandstats and INFO cpu deltas (script-internal
 * calls included), client CPU from the workers' getrusage().
 *
 *   php -d extension=... php/bench/contention.php [redis-url] [seconds per run]
 *
 * Contenders: redislock's RedisLock\Lock and seed-API RedisLock::lock (both
 * waiting in line, handed the lock by the release), SET NX polling at 100 ms
 * and at 10 ms (phpredis), a userland fair queue with direct handoff
 * (waiters in a Redis list; the release script gives the lock to the head
 * and wakes only it through a per-waiter list it BLPOPs; phpredis), and the
 * same queue with the guarantees redislock's line keeps: a place per waiter
 * that a live waiter renews (a dead one is skipped), a fencing token per
 * acquire, a wake-up that expires when nobody takes it, a line that expires.
 *
 * For a quick look at one row: CONTENTION_ONLY="fair,guarded,seed" and
 * CONTENTION_N="8" keep those contenders and numbers of processes (the lock
 * table alone).
 */

require __DIR__ . '/server.php';
require __DIR__ . '/stats.php';

$url = ($argv[1] ?? '') ?: (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$seconds = (float) ($argv[2] ?? 2);
$parts = parse_url($url);
$host = $parts['host'] ?? '127.0.0.1';
$port = (int) ($parts['port'] ?? 6379);

const CONTENDERS = [
    'redislock' => 'redislock RedisLock\\Lock',
    'seed' => 'redislock RedisLock::lock (seed API)',
    'poll100' => 'SET NX polling, 100 ms',
    'poll10' => 'SET NX polling, 10 ms',
    'fair' => 'userland fair queue, direct handoff',
    'guarded' => 'fair queue + the line\'s guarantees',
];

const FAIR_ACQUIRE = <<<'LUA'
if redis.call('LLEN', KEYS[2]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 0
LUA;
const FAIR_RELEASE = <<<'LUA'
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local nxt = redis.call('LPOP', KEYS[2])
if nxt then
  redis.call('SET', KEYS[1], nxt, 'PX', ARGV[2])
  redis.call('RPUSH', 'bench:wake:' .. nxt, 1)
else
  redis.call('DEL', KEYS[1])
end
return 1
LUA;
// The fair queue with redislock's guarantees, its commands those of the
// line's scripts: KEYS lock, fencing counter, line, the caller's place;
// ARGV token, lease ms, place ms. Returns the fencing token, or 0: in line.
const GUARDED_ACQUIRE = <<<'LUA'
if redis.call('LLEN', KEYS[3]) == 0 and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[3], 2 * ARGV[3])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
return 0
LUA;
// A waiter's renewal (every 0.5 s): the fencing token when the lock was
// handed to it meanwhile, else 0 with its place kept (back in line if it
// was dropped). Same keys and arguments as the acquire, KEYS[5] its wake list.
const GUARDED_RENEW = <<<'LUA'
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return tonumber(redis.call('LPOP', KEYS[5]) or redis.call('GET', KEYS[2]))
end
if redis.call('EXISTS', KEYS[4]) == 0 then
  redis.call('LREM', KEYS[3], 0, ARGV[1])
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
redis.call('PEXPIRE', KEYS[3], 2 * ARGV[3])
redis.call('SET', KEYS[4], '1', 'PX', ARGV[3])
return 0
LUA;
// KEYS lock, fencing counter, line; ARGV token, lease ms, place ms, the
// prefix of the waiters' places ('a:' token) and wake lists ('w:' token).
const GUARDED_RELEASE = <<<'LUA'
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for _ = 1, 1000 do
  local nxt = redis.call('LPOP', KEYS[3])
  if not nxt then break end
  if redis.call('DEL', ARGV[4] .. 'a:' .. nxt) == 1 then
    redis.call('SET', KEYS[1], nxt, 'PX', ARGV[2])
    local wake = ARGV[4] .. 'w:' .. nxt
    redis.call('RPUSH', wake, redis.call('INCR', KEYS[2]))
    redis.call('PEXPIRE', wake, ARGV[3])
    return 1
  end
end
redis.call('DEL', KEYS[1])
return 1
LUA;
const POLL_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const SALE_SCRIPT = "local s = tonumber(redis.call('GET', KEYS[1]) or '0') if s > 0 then redis.call('DECR', KEYS[1]) redis.call('INCR', KEYS[2]) return 1 end return 0";

/** acquire() and release() closures for a contender, on lock $name. */
function contender(string $kind, string $url, Redis $r, string $name): array
{
    // redislock connects on first use: the process's connection (both of its
    // APIs share it) is opened now, before the start, as $r's is.
    (new RedisLock\Client($url))->lockState($name);
    switch ($kind) {
        case 'redislock':
            $lock = (new RedisLock\Client($url))->lock($name, ['ttl' => 10]);
            return [fn () => $lock->acquire(120), fn () => $lock->release()];
        case 'seed':
            $lock = new RedisLock($url);
            return [fn () => $lock->lock($name, 120, 10), fn () => $lock->unlock($name)];
        case 'poll100':
        case 'poll10':
            $us = $kind === 'poll100' ? 100000 : 10000;
            $token = '';
            return [
                function () use ($r, $name, $us, &$token) {
                    $token = bin2hex(random_bytes(8));
                    while (!$r->set("poll:$name", $token, ['nx', 'px' => 10000])) {
                        usleep($us);
                    }
                    return true;
                },
                function () use ($r, $name, &$token) {
                    return $r->eval(POLL_RELEASE, ["poll:$name", $token], 1);
                },
            ];
        case 'fair':
            $token = '';
            return [
                function () use ($r, $name, &$token) {
                    $token = bin2hex(random_bytes(8));
                    if (!$r->eval(FAIR_ACQUIRE, ["fair:$name", "fair:$name:q", $token, 10000], 2)) {
                        $r->blPop(["bench:wake:$token"], 120);
                    }
                    return true;
                },
                function () use ($r, $name, &$token) {
                    return $r->eval(FAIR_RELEASE, ["fair:$name", "fair:$name:q", $token, 10000], 2);
                },
            ];
        case 'guarded':
            $token = '';
            $p = "{guarded:$name}:";
            $lock = ["{guarded:$name}", "{$p}fence", "{$p}line"];
            return [
                function () use ($r, $lock, $p, &$token) {
                    $token = bin2hex(random_bytes(8));
                    $keys = array_merge($lock, ["{$p}a:$token"]);
                    $fence = $r->eval(GUARDED_ACQUIRE, array_merge($keys, [$token, 10000, 2000]), 4);
                    while (!$fence) {
                        // (phpredis' blPop() takes whole seconds only.)
                        $woken = $r->rawCommand('BLPOP', "{$p}w:$token", '0.5');
                        $fence = $woken ? (int) $woken[1]
                            : $r->eval(GUARDED_RENEW, array_merge($keys, ["{$p}w:$token", $token, 10000, 2000]), 5);
                    }
                    return $fence;
                },
                function () use ($r, $lock, $p, &$token) {
                    return $r->eval(GUARDED_RELEASE, array_merge($lock, [$token, 10000, 2000, $p]), 3);
                },
            ];
    }
    throw new InvalidArgumentException($kind);
}

function connect(string $host, int $port): Redis
{
    $r = new Redis();
    $r->connect($host, $port, 2.0);
    return $r;
}

/** Sleeps until hrtime $at (ns): every worker starts at once. */
function startAt(int $at): void
{
    $left = $at - hrtime(true);
    if ($left > 0) {
        usleep(intdiv($left, 1000));
    }
}

function cpuSeconds(): float
{
    $u = getrusage();
    return $u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6 + $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6;
}

/** Worker of the lock table: turns for $seconds; prints JSON. */
function lockWorker(string $url, string $host, int $port, string $kind, float $seconds, int $pauseUs, int $at): void
{
    $r = connect($host, $port);
    [$acquire, $release] = contender($kind, $url, $r, 'table');
    startAt($at);
    $cpu0 = cpuSeconds();
    $end = hrtime(true) + (int) ($seconds * 1e9);
    $waits = [];
    while (hrtime(true) < $end) {
        $t0 = hrtime(true);
        $acquire();
        $waits[] = (hrtime(true) - $t0) / 1e6;
        // The section: a few commands of the protected work, and 200 us.
        $r->get('bench:balance');
        $r->incr('bench:balance');
        $r->get('bench:orders');
        $r->incr('bench:orders');
        usleep(200);
        $release();
        if ($pauseUs > 0) {
            usleep($pauseUs);
        }
    }
    echo json_encode(['waits' => $waits, 'cpu' => cpuSeconds() - $cpu0]);
}

/** Worker of the flash sale: buys until sold out; prints JSON. */
function saleWorker(string $url, string $host, int $port, string $kind, int $at): void
{
    $r = connect($host, $port);
    if ($kind !== 'lua') {
        [$acquire, $release] = contender($kind, $url, $r, 'sale');
    }
    startAt($at);
    $bought = 0;
    while (true) {
        if ($kind === 'lua') {
            if (!$r->eval(SALE_SCRIPT, ['sale:stock', 'sale:sold'], 2)) {
                break;
            }
            $bought++;
            continue;
        }
        $acquire();
        $stock = (int) $r->get('sale:stock');
        if ($stock > 0) {
            $r->set('sale:stock', $stock - 1);
            $r->incr('sale:sold');
            $bought++;
        }
        $release();
        if ($stock <= 0) {
            break;
        }
    }
    echo json_encode(['bought' => $bought, 'done' => hrtime(true)]);
}

/** Consumer of the blocked-consumers table: reserves and acks until killed. */
function consumeWorker(string $url): void
{
    $queue = (new RedisLock\Client($url))->queue('bench-consumers');
    while (true) {
        foreach ($queue->reserve(1, 30, 2) as $task) {
            $queue->ack($task);
        }
    }
}

if (($argv[3] ?? '') === 'lock') {
    lockWorker($url, $host, $port, $argv[4], $seconds, (int) $argv[5], (int) $argv[6]);
    exit(0);
}
if (($argv[3] ?? '') === 'sale') {
    saleWorker($url, $host, $port, $argv[4], (int) $argv[5]);
    exit(0);
}
if (($argv[3] ?? '') === 'consume') {
    consumeWorker($url);
    exit(0);
}

/** Starts $n workers of one mode; returns their decoded outputs. */
function spawn(string $url, float $seconds, int $n, array $args): array
{
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $procs = [];
    for ($i = 0; $i < $n; $i++) {
        $procs[] = proc_open(array_merge($php, [__FILE__, $url, (string) $seconds], $args),
            [1 => ['pipe', 'w']], $pipes) ?: exit("cannot start a worker\n");
        $outs[] = $pipes[1];
    }
    $results = [];
    foreach ($procs as $i => $p) {
        $results[] = json_decode(stream_get_contents($outs[$i]), true);
        proc_close($p);
    }
    return $results;
}

function pct(array $sorted, float $p): float
{
    return $sorted ? $sorted[(int) min(count($sorted) - 1, floor($p * count($sorted)))] : 0.0;
}

$admin = connect($host, $port);
$admin->flushAll();

// ---------------------------------------------------------------- locks
// Each N's contenders run in turns, ROUNDS times: a machine that drifts
// between runs (this benchmark's rows moved by 0.1x-0.3x between runs of one
// build) drifts for all of them alike. Each column is the median of the
// rounds; "vs fair q" and "vs guarded" also give the lowest and highest of
// the rounds' ratios, each round's contender against that round's fair
// queue (bare, or with the line's guarantees).
const ROUNDS = 3;
$only = getenv('CONTENTION_ONLY');
$kinds = $only ? array_values(array_unique(['fair', ...explode(',', $only)])) : array_keys(CONTENDERS);
$ns = getenv('CONTENTION_N') ? array_map('intval', explode(',', getenv('CONTENTION_N'))) : [2, 8, 32, 64];
$table = [];
foreach ([0, 2000] as $pauseUs) {
    foreach ($ns as $n) {
        $rounds = [];
        for ($round = 0; $round < ROUNDS; $round++) {
            foreach ($kinds as $kind) {
                $admin->flushAll();
                $before = serverCost($admin);
                $at = hrtime(true) + (int) ((0.5 + $n * 0.03) * 1e9);
                $workers = spawn($url, $seconds, $n, ['lock', $kind, (string) $pauseUs, (string) $at]);
                [$calls, $redisCpu] = serverCostSince($before, serverCost($admin));
                $turns = array_map(fn ($w) => count($w['waits'] ?? []), $workers);
                $handoffs = max(1, array_sum($turns));
                $waits = array_merge(...array_map(fn ($w) => $w['waits'] ?? [], $workers));
                sort($waits);
                // The admin connection's own INFO calls are not the contenders'.
                unset($calls['info'], $calls['flushall']);
                $rounds[$kind][] = [
                    'rate' => $handoffs / $seconds,
                    'commands' => array_sum($calls) / $handoffs,
                    'redis_us' => $redisCpu / $handoffs * 1e6,
                    'client_us' => array_sum(array_column($workers, 'cpu')) / $handoffs * 1e6,
                    'p50' => pct($waits, 0.5),
                    'p99' => pct($waits, 0.99),
                    'max' => $waits ? end($waits) : 0,
                    'spread' => min($turns) > 0 ? max($turns) / min($turns) : INF,
                ];
            }
        }
        foreach ($rounds as $kind => $runs) {
            $table[$pauseUs][$n][$kind] = array_map(
                fn ($metric) => median(array_column($runs, $metric)),
                array_combine(array_keys($runs[0]), array_keys($runs[0])),
            );
            // Each round's contender against that round's reference.
            foreach (['fair', 'guarded'] as $ref) {
                if (isset($rounds[$ref])) {
                    $ratios = array_map(fn ($run, $r) => $run['rate'] / max(1, $r['rate']), $runs, $rounds[$ref]);
                    $table[$pauseUs][$n][$kind][$ref] = [min($ratios), max($ratios)];
                }
            }
        }
    }
}

printf("### Contention: N processes on one lock, %g s each, %d rounds in turns (medians)\n\n", $seconds, ROUNDS);
echo "Section: GET, INCR, GET, INCR on phpredis and a 200 us sleep. Commands per handoff count every\n";
echo "command Redis ran (INFO commandstats, script-internal calls and the section's 4 included).\n";
echo "Turns: most/least critical sections of one process over another in the same run.\n";
echo "vs fair q, vs guarded (the fair queue with the line's guarantees): the medians' ratio, then the\n";
echo "lowest and highest of the rounds' ratios.\n";
foreach ($table as $pauseUs => $byN) {
    printf("\n%s\n\n", $pauseUs ? "With a 2 ms pause outside the lock:" : "No pause outside the lock (every process retries at once):");
    printf("| %-36s | %3s | %10s | %19s | %19s | %8s | %9s | %8s | %8s | %8s | %11s |\n", 'contender', 'N', 'handoffs/s', 'vs fair q', 'vs guarded', 'cmds/h', 'Redis us/h', 'p50 ms', 'p99 ms', 'max ms', 'most/least');
    echo '|', str_repeat('-', 38), '|-----|', str_repeat('-', 12), '|', str_repeat('-', 21), '|', str_repeat('-', 21), '|', str_repeat('-', 10), '|', str_repeat('-', 12), '|', str_repeat('-', 10), '|', str_repeat('-', 10), '|', str_repeat('-', 10), '|', str_repeat('-', 13), "|\n";
    foreach ($byN as $n => $byKind) {
        foreach ($byKind as $kind => $m) {
            $vs = fn ($ref) => isset($m[$ref])
                ? sprintf('%.2fx (%.2f-%.2f)', $m['rate'] / max(1, $byKind[$ref]['rate']), ...$m[$ref]) : '';
            printf("| %-36s | %3d | %10.0f | %19s | %19s | %8.1f | %10.1f | %8.2f | %8.2f | %8.1f | %11s |\n",
                CONTENDERS[$kind], $n, $m['rate'], $vs('fair'), $vs('guarded'),
                $m['commands'], $m['redis_us'], $m['p50'], $m['p99'], $m['max'],
                is_finite($m['spread']) ? sprintf('%.2f', $m['spread']) : 'starved');
        }
    }
}
$n = max($ns);
printf("\nClient CPU per handoff (us), no pause, N = %d: %s\n", $n, implode(', ', array_map(
    fn ($k) => CONTENDERS[$k] . ' ' . round($table[0][$n][$k]['client_us']), $kinds)));
if ($only) {
    exit(0);
}

// ----------------------------------------------------------- flash sale
// Each contender ROUNDS times, in turns; its best run (a sale's time is
// from the common start to its last buyer: a buyer started late only ever
// makes a run slower).
$buyers = 200;
$items = 2000;
$sale = [];
for ($round = 0; $round < ROUNDS; $round++) {
    foreach (array_merge(array_keys(CONTENDERS), ['lua']) as $kind) {
        $admin->flushAll();
        $admin->set('sale:stock', $items);
        $at = hrtime(true) + 8_000_000_000;
        $workers = spawn($url, $seconds, $buyers, ['sale', $kind, (string) $at]);
        $done = max(array_column($workers, 'done'));
        $bought = array_sum(array_column($workers, 'bought'));
        $sale[$kind]['rate'] = max($sale[$kind]['rate'] ?? 0, $items / max(1e-6, ($done - $at) / 1e9));
        $sale[$kind]['oversold'] = ($sale[$kind]['oversold'] ?? 0) + max(0, $bought - $items);
    }
}
printf("\n### Flash sale: %d buyer processes, %d items, best of %d runs in turns; a buy = lock, GET stock, SET stock - 1, INCR sold, release\n\n", $buyers, $items, ROUNDS);
printf("| %-46s | %9s | %9s | %10s | %8s |\n|%s|%s|%s|%s|%s|\n", 'contender', 'sales/s', 'vs fair q', 'vs guarded', 'oversold', str_repeat('-', 48), str_repeat('-', 11), str_repeat('-', 11), str_repeat('-', 12), str_repeat('-', 10));
foreach ($sale as $kind => $m) {
    $name = $kind === 'lua' ? 'one Lua check-and-decrement (no lock: ceiling)' : CONTENDERS[$kind];
    printf("| %-46s | %9.0f | %8.2fx | %9.2fx | %8d |\n", $name, $m['rate'], $m['rate'] / max(1, $sale['fair']['rate']),
        $m['rate'] / max(1, $sale['guarded']['rate']), $m['oversold']);
}
echo "\nOversold: summed over the runs.\n";

// ---------------------------------------------------- blocked consumers
$tasks = 300;
printf("\n### Blocked consumers: %d tasks enqueued one by one (2 ms apart), consumers in reserve(\$wait)\n\n", $tasks);
printf("| %9s | %15s | %21s | %20s |\n|%s|%s|%s|%s|\n", 'consumers', 'scripts/task', 'client requests/task', 'Redis commands/task', str_repeat('-', 11), str_repeat('-', 17), str_repeat('-', 23), str_repeat('-', 22));
$queue = (new RedisLock\Client($url))->queue('bench-consumers');
foreach ([1, 2, 32] as $consumers) {
    $admin->flushAll();
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $procs = [];
    for ($i = 0; $i < $consumers; $i++) {
        $procs[] = [proc_open(array_merge($php, [__FILE__, $url, '0', 'consume']), [1 => ['pipe', 'w']], $pipes), $pipes[1]];
    }
    // Everyone waiting in line before the first task.
    while ($admin->lLen('{Queue:bench-consumers}:line') < $consumers) {
        usleep(10000);
    }
    $before = serverCost($admin);
    for ($i = 0; $i < $tasks; $i++) {
        $queue->enqueue("t$i");
        usleep(2000);
    }
    // Until every task is taken and acked (the queue's keys are gone).
    while ($admin->exists('Queue:bench-consumers', '{Queue:bench-consumers}:leased') > 0) {
        usleep(5000);
    }
    [$calls] = serverCostSince($before, serverCost($admin));
    unset($calls['info'], $calls['exists']);
    $scripts = ($calls['evalsha'] ?? 0) + ($calls['eval'] ?? 0) + ($calls['fcall'] ?? 0);
    $requests = $scripts + ($calls['blpop'] ?? 0);
    foreach ($procs as [$p, $out]) {
        proc_terminate($p, 9);
        proc_close($p);
    }
    printf("| %9d | %15.1f | %21.1f | %20.1f |\n", $consumers, $scripts / $tasks, $requests / $tasks, array_sum($calls) / $tasks);
}
echo "\nPer task: the producer's enqueue, the woken consumer's BLPOP, reserve and ack, and the consumers'\n";
echo "renewals of their places in line (one script per consumer every 0.5 s).\n";
