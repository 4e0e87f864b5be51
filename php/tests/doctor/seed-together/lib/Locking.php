<?php
namespace Shop\Infra;

/** The three seed classes, kept together in one file of this app. */
class Lock_Service
{
    const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';
    const REDIS_LOCK_DEFAULT_EXPIRE_TIME = 86400;
    const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';

    public static function addLock($intOrderId, $intExpireTime = self::REDIS_LOCK_DEFAULT_EXPIRE_TIME)
    {
        if (empty($intOrderId) || $intExpireTime <= 0) {
            return false;
        }
        $objRedisConn = self::getRedisConn();
        $intUniqueLockId = self::generateUniqueLockId();
        $strKey = sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId);
        $bolRes = $objRedisConn->set($strKey, $intUniqueLockId, ['nx', 'ex' => $intExpireTime]);
        return $bolRes ? $intUniqueLockId : $bolRes;
    }

    public static function releaseLock($intOrderId, $intLockId)
    {
        if (empty($intOrderId) || empty($intLockId)) {
            return false;
        }
        $objRedisConn = self::getRedisConn();
        $strKey = sprintf(self::REDIS_LOCK_KEY_TEMPLATE, $intOrderId);
        $objRedisConn->watch($strKey);
        if ($intLockId == $objRedisConn->get($strKey)) {
            $objRedisConn->multi()->del($strKey)->exec();
            return true;
        }
        $objRedisConn->unwatch();
        return false;
    }

    public static function getRedisConn($strIp = '127.0.0.1', $intPort = {{PORT}})
    {
        $objRedis = new \Redis();
        $objRedis->connect($strIp, $intPort);
        return $objRedis;
    }

    public static function generateUniqueLockId()
    {
        return self::getRedisConn()->incr(self::REDIS_LOCK_UNIQUE_ID_KEY);
    }
}

class RedisLock
{
    private array $lockedNames = [];

    public function __construct(private \Redis $redis)
    {
    }

    public function lock($name, $timeout = 0, $expire = 15, $waitIntervalUs = 100000)
    {
        if ($name == null) {
            return false;
        }
        $expireAt = time() + $expire;
        while (true) {
            if ($this->redis->setnx("Lock:$name", $expireAt)) {
                $this->redis->expire("Lock:$name", $expire);
                $this->lockedNames[$name] = $expireAt;
                return true;
            }
            if ($timeout <= 0) {
                break;
            }
            usleep($waitIntervalUs);
            $timeout -= $waitIntervalUs / 1000000;
        }
        return false;
    }

    public function unlock($name)
    {
        if (isset($this->lockedNames[$name]) && $this->redis->del("Lock:$name")) {
            unset($this->lockedNames[$name]);
            return true;
        }
        return false;
    }

    public function isLocking($name)
    {
        return isset($this->lockedNames[$name]) && (string) $this->lockedNames[$name] === $this->redis->get("Lock:$name");
    }
}

class RedisQueue
{
    public function __construct(private \Redis $redis)
    {
    }

    public function enqueue($name, $id, $timeout = 10, $afterInterval = 0)
    {
        if (empty($name) || empty($id) || $timeout <= 0) {
            return false;
        }
        foreach ((array) $id as $one) {
            if ($this->redis->zScore("Queue:$name", $one) === false) {
                $this->redis->zAdd("Queue:$name", microtime(true) + $afterInterval, $one);
            }
        }
        return true;
    }

    public function pop($name, $count = 1, $timeout = 10)
    {
        if (empty($name) || $count <= 0) {
            return [];
        }
        $result = [];
        foreach ($this->redis->zRangeByScore("Queue:$name", '-inf', sprintf('%.6f', microtime(true)), ['withscores' => true, 'limit' => [0, $count]]) as $id => $score) {
            if ($this->redis->zRem("Queue:$name", $id)) {
                $result[] = ['id' => $id, 'score' => (float) $score];
            }
        }
        return $count == 1 ? (empty($result) ? false : $result[0]) : $result;
    }
}
