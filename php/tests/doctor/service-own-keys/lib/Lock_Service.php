<?php
define('APP_ENV', 'staging');

/** Order locks per environment: two environments share one Redis. */
class Lock_Service
{
    const REDIS_LOCK_KEY_TEMPLATE = APP_ENV . '_lock_%s';
    const REDIS_LOCK_UNIQUE_ID_KEY = APP_ENV . '_lock_id';

    public static function addLock($intOrderId, $intExpireTime = 86400)
    {
        $redis = self::getRedisConn();
        $id = $redis->incr(self::REDIS_LOCK_UNIQUE_ID_KEY);
        return $redis->set(sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId), $id, ['nx', 'ex' => $intExpireTime]) ? $id : false;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        $redis = self::getRedisConn();
        $key = sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId);
        return $redis->get($key) == $intLockId && $redis->del($key) > 0;
    }

    public static function getRedisConn()
    {
        $redis = new Redis();
        $redis->connect('127.0.0.1', {{PORT}});
        return $redis;
    }
}
