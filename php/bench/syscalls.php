<?php
/**
 * System calls per operation, counted by `strace -c` (deterministic, unlike
 * time), and the client's CPU time per operation (user + system, from the
 * kernel's accounting of the loop's process): redislock against phpredis
 * doing the same round trips. Each contender runs twice in a process of its
 * own, for N and N + K operations; the difference over K is what one
 * operation costs, start-up and shutdown cancelled out. CPU time is measured
 * in rounds, every contender in turn. Prints markdown.
 *
 *   php -d extension=... php/bench/syscalls.php [redis-url]
 *   php -d extension=... php/bench/syscalls.php [redis-url] run NAME COUNT   (one loop)
 */

require __DIR__ . '/stats.php';

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];

/** name => [what it is compared with, a function of the connection(s) returning the operation] */
$contenders = [
    'redislock `RedisLock::lock/unlock`' => ['lock cycle', function () use ($url) {
        $rl = new RedisLock($url);
        return fn () => $rl->lock('sys') && $rl->unlock('sys');
    }],
    'redislock `RedisLock\Lock::acquire/release`' => ['lock cycle', function () use ($url) {
        $lock = (new RedisLock\Client($url))->lock('sys-api');
        return fn () => $lock->acquire() && $lock->release();
    }],
    'phpredis `SET NX PX` + `EVALSHA` compare-and-delete' => ['lock cycle', function () use ($host, $port) {
        $r = new Redis();
        $r->connect($host, $port);
        $sha = $r->script('load', "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
        return function () use ($r, $sha) {
            $token = bin2hex(random_bytes(16));
            return $r->set('sys-floor', $token, ['NX', 'PX' => 30000]) && $r->evalSha($sha, ['sys-floor', $token], 1);
        };
    }],
    'redislock `RedisQueue::enqueue` (one task)' => ['enqueue', function () use ($url) {
        $q = new RedisQueue($url);
        $i = 0;
        return fn () => $q->enqueue('sys', 't' . $i++);
    }],
    'phpredis `ZADD`' => ['enqueue', function () use ($host, $port) {
        $r = new Redis();
        $r->connect($host, $port);
        $i = 0;
        return fn () => $r->zAdd('sys-zadd', microtime(true), 't' . $i++);
    }],
    'redislock `RedisQueue::pop` (one task)' => ['pop', function () use ($url) {
        $q = new RedisQueue($url);
        $q->enqueue('sys-pop', array_map(fn ($i) => "t$i", range(1, 25000)));
        return fn () => $q->pop('sys-pop');
    }],
    'phpredis one `EVALSHA` (ZRANGEBYSCORE + ZREM)' => ['pop', function () use ($host, $port) {
        $r = new Redis();
        $r->connect($host, $port);
        $args = [];
        for ($i = 1; $i <= 25000; $i++) {
            array_push($args, 0, "t$i");
        }
        $r->zAdd('sys-pop-floor', ...$args);
        $sha = $r->script('load', "local t = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1) if t[1] then redis.call('ZREM', KEYS[1], t[1]) end return t");
        return fn () => $r->evalSha($sha, ['sys-pop-floor', (string) microtime(true)], 1);
    }],
];

if (($argv[2] ?? '') === 'run') {
    $op = $contenders[$argv[3]][1]();
    for ($i = 0, $n = (int) $argv[4]; $i < $n; $i++) {
        $op();
    }
    exit(0);
}

/** strace's count per system call of one loop of $count operations of $name. */
function counted(string $url, string $name, int $count): array
{
    $out = tempnam(sys_get_temp_dir(), 'syscalls');
    // This PHP with the same ini (tools/php.sh exported its scan dir), and
    // not the wrapper, whose start-up reads vary from run to run.
    $cmd = ['strace', '-f', '-c', '-o', $out, PHP_BINARY, '-d', 'extension=' . getenv('REDISLOCK_SO'), __FILE__, $url, 'run', $name, (string) $count];
    $p = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    if (proc_close($p) !== 0) {
        throw new RuntimeException("the loop of $name failed");
    }
    $calls = [];
    foreach (file($out) as $line) {
        // % time  seconds  usecs/call  calls  [errors]  syscall
        if (preg_match('/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/', $line, $m) && $m[2] !== 'total') {
            $calls[$m[2]] = (int) $m[1];
        }
    }
    unlink($out);
    return $calls;
}

/** The CPU time (user + system, µs) of one loop of $count operations of $name, in its own process. */
function cpu(string $url, string $name, int $count): float
{
    $cmd = [PHP_BINARY, '-d', 'extension=' . getenv('REDISLOCK_SO'), __FILE__, $url, 'run', $name, (string) $count];
    $before = getrusage(1);
    $p = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    if (proc_close($p) !== 0) {
        throw new RuntimeException("the loop of $name failed");
    }
    $after = getrusage(1);
    $us = fn (array $r) => $r['ru_utime.tv_sec'] * 1e6 + $r['ru_utime.tv_usec'] + $r['ru_stime.tv_sec'] * 1e6 + $r['ru_stime.tv_usec'];
    return $us($after) - $us($before);
}

$flush = new Redis();
$flush->connect($host, $port);
$flush->flushAll();

// CPU time is not deterministic, and drifts with the machine: every loop
// runs once per round, in turns with the others, and each contender gets
// the median of its rounds, and of its ratios to the phpredis loop of its
// operation in the same round.
const ROUNDS = 5;
$cpu = [];
for ($round = 0; $round < ROUNDS; $round++) {
    foreach ($contenders as $name => $_) {
        $cpu[$name][] = (cpu($url, $name, 20200) - cpu($url, $name, 200)) / 20000;
    }
}
$floor = [];
foreach ($contenders as $name => [$what]) {
    if (str_starts_with($name, 'phpredis')) {
        $floor[$what] = $name;
    }
}

echo "### System calls and client CPU per operation (one process; system calls by `strace -c`, the difference of 1,200 and 200 operations; CPU time the difference of 20,200 and 200, the median of " . ROUNDS . " rounds in turns, and of its ratios to phpredis' in each round)\n\n";
echo "| operation | contender | system calls | of which | client CPU µs (user + system) | vs phpredis |\n|---|---|---:|---|---:|---:|\n";
foreach ($contenders as $name => [$what]) {
    $few = counted($url, $name, 200);
    $many = counted($url, $name, 1200);
    $per = [];
    foreach ($many as $call => $n) {
        $d = ($n - ($few[$call] ?? 0)) / 1000;
        if ($d >= 0.05) {
            $per[$call] = $d;
        }
    }
    arsort($per);
    $parts = array_map(fn ($c, $d) => sprintf('%s %.1f', $c, $d), array_keys($per), $per);
    $ratios = array_map(fn ($mine, $theirs) => $mine / $theirs, $cpu[$name], $cpu[$floor[$what]]);
    printf("| %s | %s | %.1f | %s | %.1f | %.2fx |\n", $what, $name, array_sum($per), implode(', ', $parts), median($cpu[$name]), median($ratios));
}
echo "\n";
