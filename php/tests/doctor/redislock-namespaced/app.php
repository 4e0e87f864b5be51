<?php
spl_autoload_register(function ($class) {
    $file = __DIR__ . '/src/' . str_replace(['app\\', '\\'], ['', '/'], $class) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

use app\common\service\RedisLock;

$lock = new RedisLock();
var_export($lock->lock('stock:1')); echo "\n";
var_export((new RedisLock())->lock('stock:1')); echo "\n";
var_export($lock->unlock('stock:1')); echo "\n";
var_export($lock->unlockAll()); echo "\n";
