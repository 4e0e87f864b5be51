<?php
require __DIR__ . '/lib/Locking.php';

use Shop\Infra\Lock_Service;
use Shop\Infra\RedisLock;
use Shop\Infra\RedisQueue;

$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
$id = Lock_Service::addLock(42, 60);
var_export([is_int($id), Lock_Service::addLock(42, 60), Lock_Service::releaseLock(42, $id + 1), Lock_Service::releaseLock(42, $id)]); echo "\n";
$lock = new RedisLock($redis);
var_export([$lock->lock('report'), (new RedisLock($redis))->lock('report'), $lock->isLocking('report'), $lock->unlock('report'), $lock->isLocking('report')]); echo "\n";
$queue = new RedisQueue($redis);
var_export([$queue->enqueue('mail', [7, 'x']), count($queue->pop('mail', 5)), $queue->pop('mail')]); echo "\n";
