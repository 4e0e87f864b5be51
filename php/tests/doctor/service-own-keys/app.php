<?php
require __DIR__ . '/lib/Lock_Service.php';

// The app's own keys stay its own: old processes and new ones share them.
$id = Lock_Service::addLock(7, 60);
var_export([is_int($id), Lock_Service::addLock(7, 60), Lock_Service::releaseLock(7, $id + 1)]); echo "\n";
$redis = new Redis();
$redis->connect('127.0.0.1', {{PORT}});
echo $redis->get('staging_lock_7') == $id ? 'staging_lock_7 holds the id' : 'other key', ', ', $redis->get('staging_lock_id') >= $id ? 'from staging_lock_id' : 'other counter', "\n";
echo $redis->exists('order_lock_7') ? 'order_lock_7 too' : 'no order_lock_7', "\n";
var_export(Lock_Service::releaseLock(7, $id)); echo "\n";
// A process still running the copy holds order 8: the swapped code sees it.
$redis->set('staging_lock_8', 99, ['nx', 'ex' => 60]);
var_export(Lock_Service::addLock(8, 60)); echo "\n";
