<?php
/** Named locks (this app's copy waits 10 s by default). */
class RedisLock
{
    private $redis;
    private $lockedNames = [];

    public function __construct($param = null)
    {
        $this->redis = RedisFactory::get($param);
    }

    public function lock($name, $timeout = 10, $expire = 15, $waitIntervalUs = 100000)
    {
        if ($name == null) return false;
        $now = time();
        $timeoutAt = $now + $timeout;
        $expireAt = $now + $expire;
        $key = "Lock:{$name}";
        while (true) {
            if ($this->redis->setnx($key, $expireAt)) {
                $this->redis->expire($key, $expire);
                $this->lockedNames[$name] = $expireAt;
                return true;
            }
            if ($this->redis->ttl($key) < 0) {
                $this->redis->set($key, $expireAt);
                $this->lockedNames[$name] = $expireAt;
                return true;
            }
            if ($timeout <= 0 || $timeoutAt < microtime(true)) break;
            usleep($waitIntervalUs);
        }
        return false;
    }

    public function unlock($name)
    {
        if ($this->isLocking($name) && $this->redis->del("Lock:$name")) {
            unset($this->lockedNames[$name]);
            return true;
        }
        return false;
    }

    public function unlockAll()
    {
        $all = true;
        foreach ($this->lockedNames as $name => $at) {
            if (false === $this->unlock($name)) $all = false;
        }
        return $all;
    }

    public function expire($name, $expire)
    {
        return $this->isLocking($name) && $this->redis->expire("Lock:$name", max($expire, 1));
    }

    public function isLocking($name)
    {
        if (isset($this->lockedNames[$name])) {
            return (string) $this->lockedNames[$name] = (string) $this->redis->get("Lock:$name");
        }
        return false;
    }
}
