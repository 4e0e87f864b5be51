<?php
require __DIR__ . '/src/KeyLock.php';

$lease = fn (int $ttl, int $set) => $ttl > $set - 5 && $ttl <= $set ? "lease($set)" : "ttl $ttl";
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$a = new App\Locks\KeyLock($redis);
$b = new App\Locks\KeyLock($redis);
var_export([$a->acquire('report'), $b->acquire('report'), $lease($redis->ttl('Lock:report'), 10), $a->held('report'), $a->release('report'), $a->held('report'), $b->acquire('report', 20)]); echo "\n";
echo $lease($redis->ttl('Lock:report'), 20), ' ', var_export($b->prolong('report', 50), true), ' ', $lease($redis->ttl('Lock:report'), 50), "\n";
