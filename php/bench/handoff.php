<?php
/**
 * Contended handoff: N processes take turns on one lock; the handoff time is
 * from one holder's release to the next holder's acquire, counted when the
 * next holder was already waiting at the release (hrtime: one clock for all
 * processes). redislock's waiters are woken by the release; the
 * polling loop (the seed's way, on phpredis) sleeps between SET NX tries.
 *
 *   php -d extension=... php/bench/handoff.php [redis-url] [processes] [rounds]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$workers = (int) ($argv[2] ?? 8);
$rounds = (int) ($argv[3] ?? 50);

if (($argv[4] ?? '') === 'worker') {
    worker($url, $argv[5], $rounds, (int) ($argv[6] ?? 0));
    exit(0);
}

/** One contender: prints "enter exit wait-start" (ns) per critical section. */
function worker(string $url, string $kind, int $rounds, int $pollUs): void
{
    if ($kind === 'redislock') {
        $lock = (new RedisLock\Client($url))->lock('bench-handoff', ['ttl' => 10]);
        $acquire = fn () => $lock->acquire(60);
        $release = fn () => $lock->release();
    } else {
        $p = parse_url($url);
        $redis = new Redis();
        $redis->pconnect($p['host'], $p['port'] ?? 6379);
        $token = bin2hex(random_bytes(16));
        $acquire = function () use ($redis, $token, $pollUs) {
            while (!$redis->set('bench-handoff-poll', $token, ['nx', 'px' => 10000])) {
                usleep($pollUs);
            }
            return true;
        };
        $release = fn () => $redis->eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
            ['bench-handoff-poll', $token], 1);
    }
    $out = '';
    for ($i = 0; $i < $rounds; $i++) {
        $start = hrtime(true);
        $acquire();
        $enter = hrtime(true);
        usleep(200);
        $exit = hrtime(true);
        $release();
        $out .= "$enter $exit $start\n";
        usleep(500); // work outside the lock, so others get their turn
    }
    echo $out;
}

/** Runs the contenders; returns the handoff times in ms, sorted. */
function run(string $url, int $workers, int $rounds, string $kind, int $pollUs = 0): array
{
    // Children load the same php.ini (phpredis) plus the extension under test.
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $procs = $outs = [];
    for ($w = 0; $w < $workers; $w++) {
        $cmd = array_merge($php, [__FILE__, $url, (string) $workers, (string) $rounds, 'worker', $kind, (string) $pollUs]);
        $procs[] = proc_open($cmd, [1 => ['pipe', 'w']], $pipes) ?: exit("cannot start a worker\n");
        $outs[] = $pipes[1];
    }
    $sections = [];
    foreach ($outs as $w => $pipe) {
        foreach (explode("\n", trim(stream_get_contents($pipe))) as $line) {
            $sections[] = array_map('intval', explode(' ', $line));
        }
        proc_close($procs[$w]);
    }
    sort($sections);
    $gaps = [];
    for ($i = 1; $i < count($sections); $i++) {
        // Only real handoffs: the next holder was already waiting when the
        // lock was released.
        if ($sections[$i][2] < $sections[$i - 1][1]) {
            $gaps[] = ($sections[$i][0] - $sections[$i - 1][1]) / 1e6;
        }
    }
    sort($gaps);
    return $gaps;
}

function pct(array $sorted, float $p): float
{
    return $sorted[(int) min(count($sorted) - 1, floor($p * count($sorted)))];
}

$results = [
    'redislock RedisLock\Lock (woken by release)' => run($url, $workers, $rounds, 'redislock'),
    'polling SET NX, 10 ms sleep (phpredis)' => run($url, $workers, $rounds, 'poll', 10000),
    'polling SET NX, 100 ms sleep (the seed\'s default)' => run($url, $workers, $rounds, 'poll', 100000),
];
printf("### Contended handoff: %d processes x %d rounds on one lock, release -> acquire by a waiter\n\n", $workers, $rounds);
printf("| %-50s | %9s | %9s | %9s |\n|%s|%s|%s|%s|\n", 'contender', 'handoffs', 'p50 ms', 'p99 ms',
    str_repeat('-', 52), str_repeat('-', 11), str_repeat('-', 11), str_repeat('-', 11));
foreach ($results as $name => $gaps) {
    printf("| %-50s | %9d | %9.3f | %9.3f |\n", $name, count($gaps), pct($gaps, 0.5), pct($gaps, 0.99));
}
