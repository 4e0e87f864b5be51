<?php
require __DIR__ . '/RedisLock.php';

ini_set('error_log', '/dev/stdout');
ini_set('log_errors', '1');
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$lock = new App\Lib\RedisLock($redis);
var_export([$lock->lock('report'), (new App\Lib\RedisLock($redis))->lock('report'), $lock->isLocking('report')]); echo "\n";
var_export([$lock->unlock('report'), $lock->isLocking('report'), $lock->lock('report', 1)]); echo "\n";
