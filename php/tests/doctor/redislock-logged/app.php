<?php
require __DIR__ . '/lib/RedisLock.php';

/** The app's logger. */
class Log
{
    public static function info(string $line): void
    {
        echo "log: $line\n";
    }
}

$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$lock = new App\Support\RedisLock($redis);
var_export([$lock->lock('report'), (new App\Support\RedisLock($redis))->lock('report'), $lock->held()]); echo "\n";
var_export([$lock->unlock('report'), $lock->held(), $lock->lock('report')]); echo "\n";
