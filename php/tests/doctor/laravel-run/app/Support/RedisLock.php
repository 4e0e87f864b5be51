<?php
namespace App\Support;

use Illuminate\Support\Facades\Redis;

/** Named locks on the framework's 'lock' connection, as this app runs them (its own copy). */
class RedisLock
{
    private $redis;

    public function __construct()
    {
        $this->redis = Redis::connection('lock');
    }

    public function lock($name, $timeout = 0, $expire = 15)
    {
        return (bool) $this->redis->set("Lock:$name", time() + $expire, 'EX', $expire, 'NX');
    }

    public function unlock($name)
    {
        return (bool) $this->redis->del("Lock:$name");
    }

    public function isLocking($name)
    {
        return $this->redis->exists("Lock:$name") === 1;
    }
}
