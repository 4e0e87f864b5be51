<?php
/** Named locks with helpers of this app's own. */
class RedisLock
{
    private $redis;
    public function __construct($redis) { $this->redis = $redis; }
    public function lock($name, $timeout = 0, $expire = 8) { return (bool) $this->redis->set("lock:$name", 1, ['nx', 'ex' => $expire]); }
    public function unlock($name) { return (bool) $this->redis->del("lock:$name"); }
    public function isLocking($name) { return (bool) $this->redis->exists("lock:$name"); }
    public function onLock($name, callable $fn) { if ($this->lock($name)) { try { return $fn(); } finally { $this->unlock($name); } } return null; }
    public function delLock($name) { return $this->unlock($name); }
}
