<?php
namespace App\Utils;

use Hyperf\Redis\Redis;
use function Hyperf\Support\make;

/** Named locks on Hyperf's pooled connection, from its container. */
class RedisLock
{
    private $redis;

    public function __construct()
    {
        $this->redis = make(Redis::class);
    }

    public function lock($name, $timeout = 0, $expire = 15)
    {
        return (bool) $this->redis->set("Lock:$name", 1, ['nx', 'ex' => $expire]);
    }

    public function unlock($name)
    {
        return (bool) $this->redis->del("Lock:$name");
    }
}
