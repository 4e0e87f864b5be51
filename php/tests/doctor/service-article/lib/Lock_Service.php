<?php
/** Order locks, as the article wrote them (this app's copy). */
class Lock_Service
{
    const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';
    const REDIS_LOCK_DEFAULT_EXPIRE_TIME = 86400;
    const REDIS_CONFIG_HOST = '127.0.0.1';
    const REDIS_CONFIG_PORT = {{PORT}};
    const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';

    public static function addLock($intOrderId, $intExpireTime = self::REDIS_LOCK_DEFAULT_EXPIRE_TIME)
    {
        if (empty($intOrderId) || $intExpireTime <= 0) {
            return false;
        }
        $redis = self::getRedisConn();
        $id = self::generateUniqueLockId();
        $ok = $redis->set(sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId), $id, ['nx', 'ex' => $intExpireTime]);
        return $ok ? $id : $ok;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        if (empty($intOrderId) || empty($intLockId)) {
            return false;
        }
        $redis = self::getRedisConn();
        $key = sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId);
        $redis->watch($key);
        if ($intLockId == $redis->get($key)) {
            $redis->multi()->del($key)->exec();
            return true;
        }
        $redis->unwatch();
        return false;
    }

    public static function getRedisConn($strIp = self::REDIS_CONFIG_HOST, $intPort = self::REDIS_CONFIG_PORT)
    {
        $redis = new Redis();
        $redis->connect($strIp, $intPort);
        return $redis;
    }

    public static function generateUniqueLockId()
    {
        return self::getRedisConn()->incr(self::REDIS_LOCK_UNIQUE_ID_KEY);
    }
}
