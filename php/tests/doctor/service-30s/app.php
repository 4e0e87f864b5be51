<?php
include __DIR__ . '/lib/Lock_Service.php';

$id = Lock_Service::addLock(42);
$ttl = Lock_Service::getRedisConn()->ttl('order_lock_42');
echo $ttl > 25 && $ttl <= 30 ? 'lease(30)' : "ttl $ttl", "\n";
var_export(Lock_Service::releaseLock(42, $id)); echo "\n";
