<?php
namespace App\Locks;

/** The article's RedisLock as this app renamed it: acquire() and release(). */
class KeyLock
{
    private $redis;

    public function __construct(\Redis $redis)
    {
        $this->redis = $redis;
    }

    public function acquire($key, $ttl = 10)
    {
        return $this->redis->set("Lock:$key", uniqid(), ['nx', 'ex' => $ttl]);
    }

    public function release($key)
    {
        return $this->redis->del("Lock:$key") > 0;
    }

    public function prolong($key, $ttl)
    {
        return $this->redis->expire("Lock:$key", $ttl);
    }

    public function held($key)
    {
        return $this->redis->exists("Lock:$key") === 1;
    }
}
