<?php
require __DIR__ . '/lib/Store.php';
require __DIR__ . '/lib/TRedisLock.php';
require __DIR__ . '/lib/LockingStore.php';

$a = new App\Cache\LockingStore({{PORT}});
$b = new App\Cache\LockingStore({{PORT}});
var_export($a->lock('report')); echo "\n";
var_export($b->lock('report')); echo "\n";
var_export($a->isLocking('report')); echo "\n";
var_export($b->isLocking('report')); echo "\n";
var_export($a->unlock('report')); echo "\n";
var_export($b->lock('report')); echo "\n";
var_export($b->unlockAll()); echo "\n";
var_export($a->lock('report')); echo "\n";
var_export($a->get('x')); echo "\n";
