<?php
require __DIR__ . '/src/KeyLock.php';

$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$a = new App\Locks\KeyLock($redis);
$b = new App\Locks\KeyLock($redis);
var_export([$a->acquire('report'), $b->acquire('report'), $redis->ttl('Lock:report'), $a->held('report'), $a->release('report'), $a->held('report'), $b->acquire('report', 20)]); echo "\n";
echo $redis->ttl('Lock:report'), ' ', var_export($b->prolong('report', 50), true), ' ', $redis->ttl('Lock:report'), "\n";
