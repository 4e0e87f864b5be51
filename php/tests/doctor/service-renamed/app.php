<?php
require __DIR__ . '/src/common/service/RedisLock.php';

use app\common\service\RedisLock;

$id = RedisLock::lock('order-7');
var_export($id); echo "\n";
var_export(RedisLock::lock('order-7')); echo "\n";
var_export(RedisLock::unlock('order-7', $id + 1)); echo "\n";
var_export(RedisLock::unlock('order-7', $id)); echo "\n";
var_export(RedisLock::lock('')); echo "\n";
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$again = RedisLock::lock('order-8');
echo $redis->ttl('order_lock_order-8') > 3 ? 'lease(8)' : 'other lease', ' ', $redis->get('order_lock_order-8') == $again ? 'same id' : 'other id', "\n";
