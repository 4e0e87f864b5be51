<?php
/** Order locks on the app's lock server, named without its port. */
class Lock_Service
{
    public static function addLock($intOrderId, $intExpireTime = 86400)
    {
        $redis = new Redis();
        $redis->connect('10.20.30.40');
        $id = $redis->incr('lock_unique_id');
        return $redis->set("order_lock_$intOrderId", $id, ['nx', 'ex' => $intExpireTime]) ? $id : false;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        $redis = new Redis();
        $redis->connect('10.20.30.40');
        $script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
        return (bool) $redis->eval($script, ["order_lock_$intOrderId", $intLockId], 1);
    }
}
