<?php
require __DIR__ . '/lib/OrderLock.php';

use App\Lib\OrderLock;

ini_set('error_log', '/dev/stdout');
ini_set('log_errors', '1');
$first = OrderLock::addLock(9);
$lockId = $first['data']['lockId'];
echo $first['code'], ' ', $first['msg'], ' ', is_int($lockId) ? 'an int id' : 'no id', "\n";
echo json_encode(OrderLock::addLock(9)), "\n";
echo json_encode(OrderLock::addLock('')), "\n";
echo json_encode(OrderLock::releaseLock(9, $lockId + 1)), "\n";
echo json_encode(OrderLock::releaseLock(9, $lockId)), "\n";
// One id sequence: the id helper counts in the counter the locks' ids come from.
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$next = OrderLock::getUniqueLockId();
echo $next > $lockId ? 'increasing' : "not increasing ($lockId, $next)", ' ', $redis->get('lock_unique_id') == $next ? 'in lock_unique_id' : 'elsewhere', "\n";
