<?php
namespace App\Support;

use Illuminate\Support\Facades\Redis;

/** Named locks on the framework's connection; a lock left without a TTL is taken over. */
class RedisLock
{
    private $redis;

    public function __construct()
    {
        $this->redis = Redis::connection('lock');
    }

    public function lock($name, $timeout = 0, $expire = 15)
    {
        $key = "Lock:$name";
        if ($this->redis->set($key, time() + $expire, 'EX', $expire, 'NX')) {
            return true;
        }
        if ($this->redis->ttl($key) === -1) {
            $this->redis->expire($key, $expire);
        }
        return false;
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
