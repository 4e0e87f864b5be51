<?php
require_once __DIR__ . '/lib/RedisFactory.php';
require_once __DIR__ . '/lib/RedisLock.php';

$a = new RedisLock('lock');
$b = new RedisLock('lock');
var_export($a->lock('report', 0, 1)); echo "\n";
var_export($b->lock('report')); echo " (waited for the 1 s lease)\n";
var_export($a->isLocking('report') === false); echo "\n";
var_export($b->expire('report', 60)); echo "\n";
var_export($b->unlock('report')); echo "\n";
var_export($b->unlockAll()); echo "\n";
