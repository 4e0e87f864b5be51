<?php
require_once 'Predis/Autoloader.php';
Predis\Autoloader::register();
require_once __DIR__ . '/lib/Lock_Service.php';

use App\Services\Lock_Service;

$id = Lock_Service::addLock('31');
var_export(is_int($id) && $id > 0); echo "\n";
var_export(Lock_Service::addLock('31')); echo "\n";
var_export(Lock_Service::releaseLock('31', $id)); echo "\n";
var_export(Lock_Service::releaseLock('31', $id)); echo "\n";
$again = Lock_Service::addLock('31', 30);
var_export($again > $id); echo "\n";
var_export(Lock_Service::addLock('')); echo "\n";
