<?php
namespace App\Service;

/** Order locks on the app's 'order' connection (database 2), as its factory makes it. */
class OrderService
{
    public static function addLock($orderId, $expire = 300)
    {
        $redis = \RedisFactory::get('order');
        $id = $redis->incr('lock_unique_id');
        if (!$redis->setnx("order_lock_$orderId", $id)) {
            return false;
        }
        $redis->expire("order_lock_$orderId", $expire);
        return $id;
    }

    public static function releaseLock($orderId, $lockId)
    {
        $redis = \RedisFactory::get('order');
        if ($redis->get("order_lock_$orderId") == $lockId) {
            return $redis->del("order_lock_$orderId") === 1;
        }
        return false;
    }
}
