<?php
// Laravel's Redis facade on the 'lock' connection (database 3), as an
// app's bootstrap gives it: Laravel as Debian installs it.
require_once '/usr/share/php/Illuminate/autoload.php';
require_once __DIR__ . '/app/Support/RedisLock.php';

use Illuminate\Container\Container;
use Illuminate\Redis\RedisManager;
use Illuminate\Support\Facades\Facade;

$app = new Container();
$app->instance('redis', new RedisManager($app, 'phpredis', ['lock' => ['host' => '127.0.0.1', 'port' => {{PORT}}, 'database' => 3]]));
Facade::setFacadeApplication($app);

$a = new App\Support\RedisLock();
$b = new App\Support\RedisLock();
var_export($a->lock('report')); echo "\n";
var_export($b->lock('report')); echo "\n";
var_export($a->isLocking('report')); echo "\n";
var_export($a->unlock('report')); echo "\n";
var_export($b->lock('report', 0, 5)); echo "\n";
var_export($b->isLocking('report')); echo "\n";
var_export($b->unlock('report')); echo "\n";
var_export($a->isLocking('report')); echo "\n";
