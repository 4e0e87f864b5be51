<?php
require __DIR__ . '/RedisLock.php';

$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$a = new RedisLock($redis);
$b = new RedisLock($redis);
var_export($a->lock('job')); echo "\n";
var_export($b->lock('job')); echo "\n";
var_export($a->isLocking('job')); echo "\n";
var_export($b->onLock('job', fn () => 'ran')); echo "\n";
var_export($a->delLock('job')); echo "\n";
var_export($b->onLock('job', fn () => 'ran')); echo "\n";
var_export($b->isLocking('job')); echo "\n";
