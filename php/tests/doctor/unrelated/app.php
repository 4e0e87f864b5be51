<?php
require_once __DIR__ . '/lib/RedisLock.php';

$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$lock = RedisLock::getInstance($redis);
var_export($lock->tryLock('import')); echo "\n";
var_export(RedisLock::getInstance(null)->tryLock('import')); echo "\n";
var_export($lock->release('import')); echo "\n";
