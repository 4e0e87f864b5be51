<?php
namespace App\Infra;

/** The article's order locks, renamed, beside a named lock of this app's own keys: one file. */
class OrderLock
{
    public static function lock($orderId, $expire = 60)
    {
        $redis = self::redis();
        $id = $redis->incr('lock_unique_id');
        return $redis->set("order_lock_$orderId", $id, ['nx', 'ex' => $expire]) ? $id : false;
    }

    public static function unlock($orderId, $lockId)
    {
        $redis = self::redis();
        return $redis->get("order_lock_$orderId") == $lockId && $redis->del("order_lock_$orderId") > 0;
    }

    private static function redis(): \Redis
    {
        $redis = new \Redis();
        $redis->connect('10.0.0.5', 6379);
        return $redis;
    }
}

class RedisLock
{
    private $redis;
    public function __construct(\Redis $redis) { $this->redis = $redis; }
    public function lock($name, $timeout = 0, $expire = 8) { return (bool) $this->redis->set("lock:$name", 1, ['nx', 'ex' => $expire]); }
    public function unlock($name) { return (bool) $this->redis->del("lock:$name"); }
    public function isLocking($name) { return (bool) $this->redis->exists("lock:$name"); }
}
