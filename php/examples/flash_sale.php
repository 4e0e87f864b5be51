<?php
// The flash sale from seed 003: ITEMS phones, BUYERS concurrent buyer
// processes, each buying one item after another until the stock is gone.
// The stock lives in a plain file read and written without any atomicity,
// so only the lock stands between the buyers and overselling. The lock
// serves buyers first come first served: it prints how many sales went in
// the order the buyers called lock(), as their clocks saw it.
//
//   php -d extension=target/release/libredislock.so php/examples/flash_sale.php [items] [buyers] [--json]
//
// REDIS_URL (default redis://127.0.0.1:6379) says which Redis to use.

$args = array_values(array_filter(array_slice($argv, 1), fn ($a) => $a !== '--json'));
$json = in_array('--json', $argv, true);
$items = (int) ($args[0] ?? 1000);
$buyers = (int) ($args[1] ?? 200);

if (!extension_loaded('redislock')) {
    fwrite(STDERR, "load the extension: php -d extension=target/release/libredislock.so ...\n");
    exit(1);
}
if ($url = getenv('REDIS_URL')) {
    ini_set('redislock.default_dsn', $url);
}

$stockFile = tempnam(sys_get_temp_dir(), 'flash-stock-');
$salesFile = tempnam(sys_get_temp_dir(), 'flash-sales-');
file_put_contents($stockFile, (string) $items);
$sale = 'flash-sale-' . getmypid();

/**
 * One buyer: buys until sold out. Each sale is logged as "arrival stock
 * buyer served": hrtime (ns) of the buy's arrival at the lock, the stock it
 * found (which orders the sales), the buyer, hrtime of the sale.
 */
function buy(string $sale, int $buyer, string $stockFile, string $salesFile): void
{
    $lock = new RedisLock();
    while (true) {
        $arrived = hrtime(true);
        // Wait up to 30 s for our turn; the lease (5 s) frees the lock should
        // this buyer die while holding it.
        if (!$lock->lock($sale, 30, 5)) {
            return;
        }
        $stock = (int) file_get_contents($stockFile);
        if ($stock > 0) {
            usleep(200); // the order is being written
            file_put_contents($stockFile, (string) ($stock - 1));
            $served = hrtime(true);
            file_put_contents($salesFile, "$arrived $stock $buyer $served\n", FILE_APPEND);
        }
        $lock->unlock($sale);
        if ($stock <= 0) {
            return;
        }
    }
}

/**
 * Sales that went to a buy which arrived more than $slackNs after a buy
 * served later: first come first served makes that 0 (the slack covers the
 * moment between a buyer reading its clock and its request reaching Redis).
 */
function overtaken(array $sales, int $slackNs): int
{
    // In order of service: the stock each sale found, highest first.
    usort($sales, fn ($a, $b) => $b[1] <=> $a[1]);
    $n = 0;
    $earliestLater = PHP_INT_MAX;
    // Walking from the last sale back, the earliest arrival among the
    // sales served after this one.
    for ($i = count($sales) - 1; $i >= 0; $i--) {
        if ($sales[$i][0] > $earliestLater + $slackNs) {
            $n++;
        }
        $earliestLater = min($earliestLater, $sales[$i][0]);
    }
    return $n;
}

$started = microtime(true);
$children = [];
for ($b = 1; $b <= $buyers; $b++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        buy($sale, $b, $stockFile, $salesFile);
        exit(0);
    }
    $children[] = $pid;
}
$failed = 0;
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
    $failed += (int) (pcntl_wexitstatus($status) !== 0);
}
$elapsed = microtime(true) - $started;

$sales = array_map(
    fn ($line) => array_map('intval', explode(' ', $line)),
    array_filter(explode("\n", file_get_contents($salesFile)))
);
$sold = count($sales);
// 10 ms: what 200 processes on a small machine take, at worst, between a
// buyer reading the clock and its request reaching Redis.
$overtaken = overtaken($sales, 10_000_000);
// The selling window: first sale to last, without starting the processes.
$window = $sold > 1 ? (max(array_column($sales, 3)) - min(array_column($sales, 3))) / 1e9 : $elapsed;

$stockLeft = (int) file_get_contents($stockFile);
unlink($stockFile);
unlink($salesFile);
$summary = [
    'items' => $items,
    'buyers' => $buyers,
    'sold' => $sold,
    'stock_left' => $stockLeft,
    'oversold' => max(0, $sold - $items),
    // Without the lock, buyers overwrite each other's stock updates.
    'lost_updates' => abs($items - $sold - $stockLeft),
    'failed_buyers' => $failed,
    'seconds' => round($elapsed, 3),
    'sales_per_second' => round($sold / max($window, 1e-6)),
    'overtaken' => $overtaken,
];
if ($json) {
    echo json_encode($summary), "\n";
} else {
    printf("flash sale: %d items, %d concurrent buyer processes\n", $items, $buyers);
    printf("  sold:         %d\n  stock left:   %d\n  oversold:     %d\n  lost updates: %d\n",
        $sold, $stockLeft, $summary['oversold'], $summary['lost_updates']);
    printf("  sales/s:      %d (%d sales in %.3f s; %.3f s with starting the buyers)\n",
        $summary['sales_per_second'], $sold, $window, $elapsed);
    // What is measured: the buyers' clocks when they called lock(). The
    // line itself is first come first served as Redis sees the requests
    // (php/tests/FairLineTest.php); a request a busy machine holds back for
    // over 10 ms between lock() and Redis shows here as served "late".
    printf("  first come, first served: %d of %d sales in the order the buyers called lock(), give or take 10 ms%s\n",
        $sold - $overtaken, $sold,
        $overtaken === 0 ? '' : " (the others' requests reached Redis later than that: a busy machine's scheduling)");
}
$ok = $summary['oversold'] === 0 && $summary['lost_updates'] === 0 && $failed === 0 && $sold === $items;
if (!$json) {
    echo $ok ? "OK: every item sold once, none oversold\n" : "FAILED\n";
}
exit($ok ? 0 : 1);
