<?php
/**
 * Once per slot and leaders, in one run: `Client::once()` claims per
 * second against the one-`SET NX` ceiling (phpredis setting the slot's key
 * with an expiry), both on new slots (every claim wins) and on a taken slot
 * (every claim loses), 5 rounds in turns, medians; and a leader's failover
 * after SIGKILL (ttl 2 s): from the kill to the next candidate's lead.
 * Prints markdown.
 *
 *   REDISLOCK_SO=... php -d extension=... php/bench/once.php [redis-url] [seconds per loop]
 */

$url = $argv[1] ?? (getenv('REDIS_URL') ?: 'redis://127.0.0.1:6379');
$seconds = (float) ($argv[2] ?? 2.5);
$p = parse_url($url);
[$host, $port] = [$p['host'], $p['port'] ?? 6379];
const ROUNDS = 5;

$phpredis = new Redis();
$phpredis->connect($host, $port);
$phpredis->flushAll();
$client = new RedisLock\Client($url);

$ops = [
    'ceiling-new' => fn ($i) => $phpredis->set("slot:$i", 'x', ['nx', 'px' => 86400000]) === true,
    'once-new' => fn ($i) => $client->once('bench', "s$i")->won(),
    'ceiling-taken' => fn ($i) => $phpredis->set('slot:taken', 'x', ['nx', 'px' => 86400000]) === false,
    'once-taken' => fn ($i) => !$client->once('bench', 'taken')->won(),
];
$phpredis->set('slot:taken', 'x');
$client->once('bench', 'taken');

function measure(callable $op, float $seconds, int $from): float
{
    $n = 0;
    $start = hrtime(true);
    $end = $start + (int) ($seconds * 1e9);
    do {
        for ($j = 0; $j < 50; $j++, $n++) {
            if (!$op($from + $n)) {
                throw new RuntimeException('an unexpected answer');
            }
        }
        $now = hrtime(true);
    } while ($now < $end);
    return $n / (($now - $start) / 1e9);
}

$runs = array_fill_keys(array_keys($ops), []);
for ($round = 0; $round < ROUNDS; $round++) {
    foreach ($ops as $name => $op) {
        $runs[$name][] = measure($op, $seconds / ROUNDS, ($round + 1) * 10000000);
    }
}
$rate = array_map(function (array $r) {
    sort($r);
    return $r[intdiv(count($r), 2)];
}, $runs);

// Failover: a leader in a process of its own, SIGKILLed; the next one
// waits in line.
$failover = [];
$so = getenv('REDISLOCK_SO') ?: throw new RuntimeException('REDISLOCK_SO: the built extension, for the leader process');
for ($i = 0; $i < 3; $i++) {
    $leader = proc_open([PHP_BINARY, '-d', "extension=$so", '-r', '$l = (new RedisLock\Client("' . $url . '"))->leader("bench-leader", ["ttl" => 2]);
        echo $l->campaign(10) ? "leading\n" : "no\n"; sleep(60);'], [1 => ['pipe', 'w']], $pipes);
    if (fgets($pipes[1]) !== "leading\n") {
        throw new RuntimeException('the leader process did not lead');
    }
    $next = $client->leader('bench-leader', ['ttl' => 2]);
    $pid = proc_get_status($leader)['pid'];
    usleep(500000);
    posix_kill($pid, SIGKILL);
    $killed = microtime(true);
    $next->campaign(30);
    $failover[] = microtime(true) - $killed;
    proc_close($leader);
    $next->resign();
}
sort($failover);

echo "### Once per slot and leaders\n\n";
printf("One process, one loopback connection each; claims per second, median of %d rounds in turns.\n\n", ROUNDS);
echo "| contender | claims/s | / ceiling |\n|---|---:|---:|\n";
printf("| `SET NX PX` of a new slot's key (phpredis): the ceiling | %s | 1.00x |\n", number_format($rate['ceiling-new']));
printf("| redislock `Client::once()`, a new slot (wins, records who and since when) | %s | %.2fx |\n", number_format($rate['once-new']), $rate['once-new'] / $rate['ceiling-new']);
printf("| `SET NX PX` of a taken slot's key: the ceiling | %s | 1.00x |\n", number_format($rate['ceiling-taken']));
printf("| redislock `Client::once()`, a taken slot (loses) | %s | %.2fx |\n", number_format($rate['once-taken']), $rate['once-taken'] / $rate['ceiling-taken']);
printf("\nLeader failover after SIGKILL, ttl 2 s (renewed every third of it): %s s (3 runs; target: within the ttl plus one renewal interval, 2.67 s).\n\n",
    implode(', ', array_map(fn ($s) => sprintf('%.2f', $s), $failover)));
$phpredis->flushAll();
