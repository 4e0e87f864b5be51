<?php
namespace App\Lib;

/** The article's RedisLock as this app keeps it, with a log line when it takes a lock. */
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
                error_log("locked $name");
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
