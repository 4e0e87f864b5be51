<?php
namespace App\Services;

/** The article's order locks on Predis, as this app runs them (its own copy). */
class Lock_Service
{
    const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';
    const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';

    private static function redis(): \Predis\Client
    {
        return new \Predis\Client(['host' => '127.0.0.1', 'port' => {{PORT}}]);
    }

    public static function addLock($intOrderId, $intExpireTime = 600)
    {
        if (empty($intOrderId)) {
            return false;
        }
        $redis = self::redis();
        $id = $redis->incr(self::REDIS_LOCK_UNIQUE_ID_KEY);
        $ok = $redis->set(sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId), $id, 'EX', $intExpireTime, 'NX');
        return $ok ? $id : $ok;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        $script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
        return (bool) self::redis()->eval($script, 1, sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId), $intLockId);
    }
}
