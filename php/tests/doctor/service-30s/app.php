<?php
include __DIR__ . '/lib/Lock_Service.php';

$id = Lock_Service::addLock(42);
echo Lock_Service::getRedisConn()->ttl('order_lock_42'), "\n";
var_export(Lock_Service::releaseLock(42, $id)); echo "\n";
