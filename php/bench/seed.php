<?php
/**
 * The seed articles' userland classes, as written there, on phpredis: the
 * baseline redislock replaces. Namespaced, so they load beside the
 * extension's classes of the same names. Only the Redis wrapper calls of
 * seed 003 (RedisFactory's string/zset/lock helpers) are spelled out as the
 * phpredis calls they make.
 */

namespace Seed;

/** Seed 001: connects on every call, INCR + SET NX EX, WATCH/GET/MULTI/DEL/EXEC. */
class Lock_Service
{
    const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';
    const REDIS_LOCK_DEFAULT_EXPIRE_TIME = 86400;
    const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';
    public static string $host = '127.0.0.1';
    public static int $port = 6379;

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

    public static function getRedisConn($strIp = null, $intPort = null)
    {
        $objRedis = new \Redis();
        $objRedis->connect($strIp ?? self::$host, $intPort ?? self::$port);
        return $objRedis;
    }

    public static function generateUniqueLockId()
    {
        return self::getRedisConn()->incr(self::REDIS_LOCK_UNIQUE_ID_KEY);
    }
}

/** Seed 003: SETNX + EXPIRE (+ TTL when taken), polling with usleep; unlock = GET + DEL. */
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
        $now = time();
        $timeoutAt = $now + $timeout;
        $expireAt = $now + $expire;
        $redisKey = "Lock:{$name}";
        while (true) {
            $result = $this->redis->setnx($redisKey, $expireAt);
            if ($result != false) {
                $this->redis->expire($redisKey, $expireAt);
                $this->lockedNames[$name] = $expireAt;
                return true;
            }
            $ttl = $this->redis->ttl($redisKey);
            if ($ttl < 0) {
                $this->redis->set($redisKey, $expireAt);
                $this->lockedNames[$name] = $expireAt;
                return true;
            }
            if ($timeout <= 0 || $timeoutAt < microtime(true)) {
                break;
            }
            usleep($waitIntervalUs);
        }
        return false;
    }

    public function unlock($name)
    {
        if ($this->isLocking($name)) {
            if ($this->redis->del("Lock:$name")) {
                unset($this->lockedNames[$name]);
                return true;
            }
        }
        return false;
    }

    public function isLocking($name)
    {
        if (isset($this->lockedNames[$name])) {
            return (string) $this->lockedNames[$name] == (string) $this->redis->get("Lock:$name");
        }
        return false;
    }
}

/** Seed 003: every operation inside the RedisLock above, ZSCORE/ZADD, ZRANGEBYSCORE + ZREM per task. */
class RedisQueue
{
    private RedisLock $lock;

    public function __construct(private \Redis $redis)
    {
        $this->lock = new RedisLock($redis);
    }

    public function enqueue($name, $id, $timeout = 10, $afterInterval = 0)
    {
        if (empty($name) || empty($id) || $timeout <= 0) {
            return false;
        }
        if (!$this->lock->lock("Queue:{$name}", $timeout)) {
            return false;
        }
        $score = microtime(true) + $afterInterval;
        foreach ((array) $id as $item) {
            if (false === $this->redis->zScore("Queue:$name", $item)) {
                $this->redis->zAdd("Queue:$name", $score, $item);
            }
        }
        $this->lock->unlock("Queue:$name");
        return true;
    }

    public function pop($name, $count = 1, $timeout = 10)
    {
        if (empty($name) || $count <= 0) {
            return [];
        }
        if (!$this->lock->lock("Queue:$name", $timeout)) {
            return false;
        }
        $result = [];
        $array = $this->redis->zRangeByScore("Queue:$name", '-inf', (string) microtime(true),
            ['withscores' => true, 'limit' => [0, $count]]);
        foreach ($array as $id => $score) {
            $result[] = ['id' => $id, 'score' => $score];
            $this->redis->zRem("Queue:$name", $id);
        }
        $this->lock->unlock("Queue:$name");
        return $count == 1 ? (empty($result) ? false : $result[0]) : $result;
    }
}
