<?php
/** Order locks on the app's lock server, named in properties of its own. */
class Lock_Service
{
    private static $host = '10.20.30.40';
    private static $port = 6380;

    public static function addLock($intOrderId, $intExpireTime = 86400)
    {
        $redis = new Redis();
        $host = self::$host;
        $redis->connect($host, self::$port);
        $id = $redis->incr('lock_unique_id');
        return $redis->set("order_lock_$intOrderId", $id, ['nx', 'ex' => $intExpireTime]) ? $id : false;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        $redis = new Redis();
        $host = self::$host;
        $redis->connect($host, self::$port);
        $script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
        return (bool) $redis->eval($script, ["order_lock_$intOrderId", $intLockId], 1);
    }
}
