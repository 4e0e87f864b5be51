<?php
require __DIR__ . '/lib/RedisFactory.php';
require __DIR__ . '/lib/OrderService.php';

use App\Service\OrderService;

$id = OrderService::addLock(5);
var_export([is_int($id), OrderService::addLock(5), OrderService::releaseLock(5, $id + 1)]); echo "\n";
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$redis->select(2);
echo $redis->get('order_lock_5') == $id ? 'in database 2' : 'elsewhere', ' ', $redis->ttl('order_lock_5') > 295 ? 'lease(300)' : 'other lease', "\n";
var_export(OrderService::releaseLock(5, $id)); echo "\n";
