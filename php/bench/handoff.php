<?php
/**
 * Contended handoff: N processes take turns on one lock; the handoff time is
 * from one holder's release to the next holder's acquire, counted when the
 * next holder was already waiting at the release (hrtime: one clock for all
 * processes); turns/s counts every critical section over the run's length,
 * so it shows what polling costs even where few handoffs are seen (a poller
 * often finds the lock already free). redislock's waiters are woken by the release; the
 * polling loop (the seed's way, on phpredis) sleeps between SET NX tries.
 * The second table runs the same turns through the frameworks' lock APIs:
 * Symfony's `Lock::acquire(true)` and Laravel's `block()`, each on its stock
 * Redis store (phpredis) and on redislock's adapter (php/src).
 *
 *   php -d extension=... php/bench/handoff.php [redis-url] [processes] [rounds]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$workers = (int) ($argv[2] ?? 8);
$rounds = (int) ($argv[3] ?? 50);

if (($argv[4] ?? '') === 'worker') {
    worker($url, $argv[5], $rounds);
    exit(0);
}

function phpredis(string $url): Redis
{
    $p = parse_url($url);
    $redis = new Redis();
    $redis->pconnect($p['host'], $p['port'] ?? 6379);
    return $redis;
}

/** The adapters of php/src, by their Composer namespaces. */
function autoloadAdapters(): void
{
    spl_autoload_register(function (string $class): void {
        foreach (['RedisLock\\Symfony\\' => 'Symfony/', 'RedisLock\\Laravel\\' => 'Laravel/'] as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                require dirname(__DIR__) . "/src/$dir" . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            }
        }
    });
}

/** [acquire, release] of one contender kind, ready to be called in turns. */
function contender(string $url, string $kind): array
{
    switch ($kind) {
        case 'redislock':
            $lock = (new RedisLock\Client($url))->lock('bench-handoff', ['ttl' => 10]);
            return [fn () => $lock->acquire(60), fn () => $lock->release()];
        case 'poll-10ms':
        case 'poll-100ms':
            $redis = phpredis($url);
            $token = bin2hex(random_bytes(16));
            $pollUs = $kind === 'poll-10ms' ? 10000 : 100000;
            return [
                function () use ($redis, $token, $pollUs) {
                    while (!$redis->set('bench-handoff-poll', $token, ['nx', 'px' => 10000])) {
                        usleep($pollUs);
                    }
                },
                fn () => $redis->eval(
                    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
                    ['bench-handoff-poll', $token], 1),
            ];
        case 'symfony-stock':
        case 'symfony-redislock':
            require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
            autoloadAdapters();
            $store = $kind === 'symfony-stock'
                ? new Symfony\Component\Lock\Store\RedisStore(phpredis($url))
                : new RedisLock\Symfony\LockStore(new RedisLock\Client($url));
            $lock = (new Symfony\Component\Lock\LockFactory($store))->createLock("bench-$kind", 10.0, false);
            return [fn () => $lock->acquire(true), fn () => $lock->release()];
        case 'laravel-stock':
        case 'laravel-redislock':
            require_once '/usr/share/php/Illuminate/autoload.php';
            autoloadAdapters();
            $lock = $kind === 'laravel-stock'
                ? new Illuminate\Cache\RedisLock(new Illuminate\Redis\Connections\PhpRedisConnection(phpredis($url)), "bench-$kind", 10)
                : new RedisLock\Laravel\Lock(new RedisLock\Client($url), 'default', "bench-$kind", 10);
            return [fn () => $lock->block(60), fn () => $lock->release()];
    }
    throw new ValueError("unknown contender $kind");
}

/** One contender: prints "enter exit wait-start" (ns) per critical section. */
function worker(string $url, string $kind, int $rounds): void
{
    [$acquire, $release] = contender($url, $kind);
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

/** Runs the contenders; returns [handoff times in ms, sorted; critical sections per second]. */
function run(string $url, int $workers, int $rounds, string $kind): array
{
    // Children load the same php.ini (phpredis) plus the extension under test.
    $so = getenv('REDISLOCK_SO');
    $php = $so ? [PHP_BINARY, '-d', "extension=$so"] : [PHP_BINARY];
    $procs = $outs = [];
    for ($w = 0; $w < $workers; $w++) {
        $cmd = array_merge($php, [__FILE__, $url, (string) $workers, (string) $rounds, 'worker', $kind]);
        $procs[] = proc_open($cmd, [1 => ['pipe', 'w']], $pipes) ?: exit("cannot start a worker\n");
        $outs[] = $pipes[1];
    }
    $sections = [];
    foreach ($outs as $w => $pipe) {
        foreach (explode("\n", trim(stream_get_contents($pipe))) as $line) {
            $sections[] = array_map('intval', explode(' ', $line));
        }
        if (proc_close($procs[$w]) !== 0) {
            exit("a $kind worker failed\n");
        }
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
    $seconds = (end($sections)[1] - $sections[0][0]) / 1e9;
    return [$gaps, count($sections) / $seconds];
}

function pct(array $sorted, float $p): float
{
    return $sorted ? $sorted[(int) min(count($sorted) - 1, floor($p * count($sorted)))] : NAN;
}

/** Prints one table; `$contenders` maps a row name to a contender kind. */
function table(string $title, string $url, int $workers, int $rounds, array $contenders): void
{
    printf("### %s: %d processes x %d rounds on one lock, release -> acquire by a waiter\n\n", $title, $workers, $rounds);
    printf("| %-56s | %9s | %9s | %9s | %9s |\n|%s|%s|%s|%s|%s|\n", 'contender', 'turns/s', 'handoffs', 'p50 ms', 'p99 ms',
        str_repeat('-', 58), str_repeat('-', 11), str_repeat('-', 11), str_repeat('-', 11), str_repeat('-', 11));
    foreach ($contenders as $name => $kind) {
        [$gaps, $rate] = run($url, $workers, $rounds, $kind);
        printf("| %-56s | %9.0f | %9d | %9.3f | %9.3f |\n", $name, $rate, count($gaps), pct($gaps, 0.5), pct($gaps, 0.99));
    }
}

table('Contended handoff', $url, $workers, $rounds, [
    'redislock RedisLock\Lock (woken by release)' => 'redislock',
    'polling SET NX, 10 ms sleep (phpredis)' => 'poll-10ms',
    'polling SET NX, 100 ms sleep (the seed\'s default)' => 'poll-100ms',
]);
echo "\n";
// The stock stores poll (Symfony ~100 ms, Laravel 250 ms between tries), so
// fewer rounds keep the run short.
table('Framework locks, blocking handoff', $url, $workers, (int) ceil($rounds / 2), [
    'Symfony Lock, acquire(true), stock RedisStore' => 'symfony-stock',
    'Symfony Lock, acquire(true), RedisLock\Symfony\LockStore' => 'symfony-redislock',
    'Laravel block(), stock RedisLock (Cache::lock)' => 'laravel-stock',
    'Laravel block(), RedisLock\Laravel\Lock' => 'laravel-redislock',
]);
