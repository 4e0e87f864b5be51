<?php
// The flash sale from seed 003: ITEMS phones, BUYERS concurrent buyer
// processes. The stock lives in a plain file read and written without any
// atomicity, so only the lock stands between the buyers and overselling.
//
//   php -d extension=target/release/libredislock.so php/examples/flash_sale.php [items] [buyers] [--json]
//
// REDIS_URL (default redis://127.0.0.1:6379) says which Redis to use.

$args = array_values(array_filter(array_slice($argv, 1), fn ($a) => $a !== '--json'));
$json = in_array('--json', $argv, true);
$items = (int) ($args[0] ?? 10);
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

function buy(string $sale, int $buyer, string $stockFile, string $salesFile): void
{
    $lock = new RedisLock();
    // Wait up to 30 s for our turn; the lease (5 s) frees the lock should
    // this buyer die while holding it.
    if (!$lock->lock($sale, 30, 5)) {
        return;
    }
    $stock = (int) file_get_contents($stockFile);
    if ($stock > 0) {
        usleep(200); // the order is being written
        file_put_contents($stockFile, (string) ($stock - 1));
        file_put_contents($salesFile, "$buyer\n", FILE_APPEND);
    }
    $lock->unlock($sale);
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

$sold = count(array_filter(explode("\n", file_get_contents($salesFile))));
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
];
if ($json) {
    echo json_encode($summary), "\n";
} else {
    printf("flash sale: %d items, %d concurrent buyer processes\n", $items, $buyers);
    printf("  sold:         %d\n  stock left:   %d\n  oversold:     %d\n  lost updates: %d\n  time:         %.3f s\n",
        $sold, $stockLeft, $summary['oversold'], $summary['lost_updates'], $elapsed);
}
$ok = $summary['oversold'] === 0 && $summary['lost_updates'] === 0 && $failed === 0 && $sold === min($items, $buyers);
if (!$json) {
    echo $ok ? "OK: every item sold once, none oversold\n" : "FAILED\n";
}
exit($ok ? 0 : 1);
