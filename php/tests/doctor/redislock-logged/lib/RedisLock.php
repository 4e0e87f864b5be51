<?php
namespace App\Support;

/** Named locks that log what they take, and answer whether they hold from their own record. */
class RedisLock
{
    private $redis;
    private $lockedNames = [];

    public function __construct(\Redis $redis)
    {
        $this->redis = $redis;
    }

    public function lock($name, $timeout = 0, $expire = 15)
    {
        if ($this->redis->set("Lock:$name", 1, ['nx', 'ex' => $expire])) {
            $this->lockedNames[$name] = true;
            \Log::info("locked $name");
            return true;
        }
        return false;
    }

    public function unlock($name)
    {
        unset($this->lockedNames[$name]);
        return (bool) $this->redis->del("Lock:$name");
    }

    public function held(): array
    {
        return array_keys($this->lockedNames);
    }
}
