<?php
/**
 * Rate-limit decisions, side by side in one run on one loopback
 * connection: redislock's limiters against the one-`EVALSHA` ceiling (the
 * same token bucket arithmetic in one script, sent by phpredis), Laravel's
 * stock `RateLimiter::attempt` and Symfony's token bucket (`RateLimiter`
 * with its cache storage and a lock, as its docs configure it for several
 * processes), each deciding on 1,000 keys, every decision allowed.
 * Decisions per second (5 rounds in turns, medians) and round trips per
 * decision (the commands the server received from the client, counted with
 * MONITOR, script-internal calls left out). Prints markdown.
 *
 *   php -d extension=... php/bench/limits.php [redis-url] [seconds per loop]
 */

require '/usr/share/php/Illuminate/autoload.php';
require '/usr/share/php/Symfony/Component/RateLimiter/autoload.php';
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Cache\Adapter\RedisAdapter;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\RateLimiter\RateLimiterFactory;
use Symfony\Component\RateLimiter\Storage\CacheStorage;

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$seconds = (float) ($argv[2] ?? 2.5);
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];
const KEYS = 1000;
const ROUNDS = 5;

$phpredis = new Redis();
$phpredis->connect($host, $port);
$phpredis->flushAll();

// The ceiling: a token bucket (GCRA) in one script, on the server's clock.
const CEILING = <<<'LUA'
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local step = tonumber(ARGV[1])
local after = tat + step
if after - tonumber(ARGV[2]) * step > now then return 0 end
redis.call('SET', KEYS[1], string.format('%.17g', after), 'PX', math.ceil((after - now) / 1000))
return 1
LUA;
$sha = $phpredis->script('load', CEILING);

$client = new RedisLock\Client($url);
$terms = ['limit' => 1000000, 'per' => 1];
$bucket = $client->limiter('bench-bucket', $terms);
$sliding = $client->limiter('bench-sliding', $terms + ['policy' => 'sliding_window']);
$fixed = $client->limiter('bench-fixed', $terms + ['policy' => 'fixed_window']);
$ip = $client->limiter('{bench}:ip', $terms);
$user = $client->limiter('{bench}:user', $terms + ['policy' => 'sliding_window']);
$global = $client->limiter('{bench}:global', $terms + ['policy' => 'fixed_window']);

$laravelRedis = new Illuminate\Redis\RedisManager(new Illuminate\Container\Container(), 'phpredis', [
    'default' => ['host' => $host, 'port' => $port, 'database' => 0],
]);
$laravel = new Illuminate\Cache\RateLimiter(new Illuminate\Cache\Repository(
    new Illuminate\Cache\RedisStore($laravelRedis, 'laravel:', 'default'),
));

$symfonyRedis = new Redis();
$symfonyRedis->connect($host, $port);
$symfony = new RateLimiterFactory(
    ['id' => 'bench', 'policy' => 'token_bucket', 'limit' => 1000000, 'rate' => ['interval' => '1 second', 'amount' => 1000000]],
    new CacheStorage(new RedisAdapter($symfonyRedis)),
    new LockFactory(new RedisStore($symfonyRedis)),
);

$ops = [
    'ceiling' => fn ($i) => $phpredis->evalSha($sha, ['ceiling:' . $i % KEYS, 1, 1000000], 1) === 1,
    'bucket' => fn ($i) => $bucket->attempt((string) ($i % KEYS))->allowed(),
    'sliding' => fn ($i) => $sliding->attempt((string) ($i % KEYS))->allowed(),
    'fixed' => fn ($i) => $fixed->attempt((string) ($i % KEYS))->allowed(),
    'three' => fn ($i) => $client->attempt([[$ip, (string) ($i % KEYS)], [$user, (string) ($i % 97)], $global])->allowed(),
    'laravel' => fn ($i) => $laravel->attempt('l' . $i % KEYS, 1000000, fn () => true, 60) !== false,
    'symfony' => fn ($i) => $symfony->create('s' . $i % KEYS)->consume(1)->isAccepted(),
];
$names = [
    'ceiling' => 'one `EVALSHA` of a token bucket (phpredis): the ceiling',
    'bucket' => 'redislock `Limiter::attempt`, token bucket',
    'sliding' => 'redislock `Limiter::attempt`, sliding window',
    'fixed' => 'redislock `Limiter::attempt`, fixed window',
    'three' => 'redislock `Client::attempt`, three limits at once',
    'laravel' => 'Laravel `RateLimiter::attempt` (stock, phpredis)',
    'symfony' => 'Symfony token bucket (`CacheStorage` + `RedisStore` lock)',
];

/** Runs $op for about $seconds (after 200 warm-up calls); returns decisions per second. */
function measure(callable $op, float $seconds, int $from): float
{
    for ($i = 0; $i < 200; $i++) {
        $op($from + $i);
    }
    $n = 0;
    $start = hrtime(true);
    $end = $start + (int) ($seconds * 1e9);
    do {
        for ($j = 0; $j < 50; $j++, $n++) {
            if (!$op($from + 200 + $n)) {
                throw new RuntimeException('a decision was refused');
            }
        }
        $now = hrtime(true);
    } while ($now < $end);
    return $n / (($now - $start) / 1e9);
}

/** The commands the server received from clients while $op ran 100 times (MONITOR). */
function roundTrips(callable $op, string $host, int $port): float
{
    $monitor = stream_socket_client("tcp://$host:$port");
    fwrite($monitor, "MONITOR\r\n");
    fgets($monitor);
    for ($i = 0; $i < 100; $i++) {
        $op(900000 + $i);
    }
    $marker = new Redis();
    $marker->connect($host, $port);
    $marker->echo('bench-limits-end');
    $n = 0;
    while (($line = fgets($monitor)) !== false) {
        if (str_contains($line, 'bench-limits-end')) {
            break;
        }
        // Script-internal calls are shown as from "lua".
        if (!str_contains($line, ' lua] ') && !str_contains($line, '"MONITOR"')) {
            $n++;
        }
    }
    fclose($monitor);
    return $n / 100;
}

$runs = array_fill_keys(array_keys($ops), []);
for ($round = 0; $round < ROUNDS; $round++) {
    foreach ($ops as $name => $op) {
        $runs[$name][] = measure($op, $seconds / ROUNDS, $round * 10000000);
    }
}
$rate = array_map(function (array $r) {
    sort($r);
    return $r[intdiv(count($r), 2)];
}, $runs);
$trips = [];
foreach ($ops as $name => $op) {
    $trips[$name] = roundTrips($op, $host, $port);
}

echo "### Rate-limit decisions: redislock against the one-script ceiling, Laravel and Symfony\n\n";
printf("One process, one loopback connection each, %s keys, every decision allowed; decisions per second: median of %d rounds in turns. Round trips: commands the server received per decision (MONITOR, script-internal calls left out).\n\n", number_format(KEYS), ROUNDS);
echo "| contender | decisions/s | / ceiling | redislock token bucket / this | round trips per decision |\n|---|---:|---:|---:|---:|\n";
foreach ($ops as $name => $op) {
    printf("| %s | %s | %.2fx | %.2fx | %.1f |\n", $names[$name], number_format($rate[$name]), $rate[$name] / $rate['ceiling'], $rate['bucket'] / $rate[$name], $trips[$name]);
}
echo "\n";
$phpredis->flushAll();
