<?php
require_once __DIR__ . '/lib/Lock_Service.php';

$id = Lock_Service::addLock('666666');
var_export($id); echo "\n";
var_export(Lock_Service::addLock('666666')); echo "\n";
var_export(Lock_Service::releaseLock('666666', $id)); echo "\n";
var_export(Lock_Service::releaseLock('666666', $id)); echo "\n";
var_export(Lock_Service::addLock('')); echo "\n";
