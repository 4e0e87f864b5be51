<?php
namespace app\common\service;

/** Named locks, namespaced into the app (a ThinkPHP-style copy). */
class RedisLock
{
    private $redis;
    private $lockedNames = [];

    public function __construct()
    {
        $this->redis = new \Redis();
        $this->redis->connect('127.0.0.1', {{PORT}});
    }

    public function lock($name, $timeout = 0, $expire = 15, $waitIntervalUs = 100000)
    {
        $key = "Lock:{$name}";
        $at = time() + $expire;
        if ($this->redis->set($key, $at, ['nx', 'ex' => $expire])) {
            $this->lockedNames[$name] = $at;
            return true;
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

    public function unlockAll()
    {
        $all = true;
        foreach (array_keys($this->lockedNames) as $name) {
            $all = $this->unlock($name) && $all;
        }
        return $all;
    }
}
