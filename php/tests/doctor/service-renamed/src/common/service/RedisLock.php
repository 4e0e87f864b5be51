<?php
namespace app\common\service;

/** Order locks: the article's Lock_Service, renamed and with methods of this app's names. */
class RedisLock
{
    const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';
    const REDIS_CONFIG_HOST = '127.0.0.1';
    const REDIS_CONFIG_PORT = {{PORT}};

    /** Locks an order; the lock's id, or false. */
    public static function lock($orderId, $expire = 8)
    {
        if (empty($orderId)) {
            return false;
        }
        $redis = self::redis();
        $id = $redis->incr('lock_unique_id');
        return $redis->set(sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $orderId), $id, ['nx', 'ex' => $expire]) ? $id : false;
    }

    public static function unlock($orderId, $lockId)
    {
        $redis = self::redis();
        $key = sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $orderId);
        if ($redis->get($key) == $lockId) {
            return (bool) $redis->del($key);
        }
        return false;
    }

    private static function redis(): \Redis
    {
        $redis = new \Redis();
        $redis->connect(self::REDIS_CONFIG_HOST, self::REDIS_CONFIG_PORT);
        return $redis;
    }
}
