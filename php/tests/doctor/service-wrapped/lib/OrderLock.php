<?php
namespace App\Lib;

/** The article's order locks in this app: answers wrapped for its API, log lines, its own name for the id helper. */
class OrderLock
{
    const KEY = 'order_lock_%s';

    public static function addLock($orderId, $ttl = 60)
    {
        if (empty($orderId)) {
            return echoArr(0, 'no order');
        }
        $redis = self::conn();
        $lockId = self::getUniqueLockId();
        $taken = $redis->set(sprintf(self::KEY, $orderId), $lockId, ['nx', 'ex' => $ttl]);
        error_log("order $orderId: " . ($taken ? 'locked' : 'busy'));
        return $taken ? echoArr(1, 'ok', ['lockId' => $lockId]) : echoArr(0, 'busy');
    }

    public static function releaseLock($orderId, $lockId)
    {
        $redis = self::conn();
        $key = sprintf(self::KEY, $orderId);
        if ($redis->get($key) != $lockId) {
            error_log("order $orderId: not ours");
            return echoArr(0, 'not held');
        }
        $redis->del($key);
        return echoArr(1, 'released');
    }

    public static function getUniqueLockId()
    {
        return self::conn()->incr('lock_unique_id');
    }

    private static function conn(): \Redis
    {
        $redis = new \Redis();
        $redis->connect('127.0.0.1', {{PORT}});
        return $redis;
    }
}

function echoArr($code, $msg, $data = [])
{
    return ['code' => $code, 'msg' => $msg, 'data' => $data];
}
