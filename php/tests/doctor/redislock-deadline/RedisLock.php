<?php
/** Named locks that wait until a deadline of their own, and count their tries. */
class RedisLock
{
    private $redis;
    public $tries = 0;

    public function __construct(\Redis $redis)
    {
        $this->redis = $redis;
    }

    public function lock($name, $timeout = 0, $expire = 15, $waitIntervalUs = 100000)
    {
        $deadline = microtime(true) + $timeout;
        do {
            $this->tries++;
            if ($this->redis->set("Lock:$name", 1, ['nx', 'ex' => $expire])) {
                return true;
            }
            usleep($waitIntervalUs);
        } while (microtime(true) < $deadline);
        return false;
    }

    public function unlock($name)
    {
        return (bool) $this->redis->del("Lock:$name");
    }

    public function isLocking($name)
    {
        return $this->redis->ttl("Lock:$name") > 0 ? 'yes' : false;
    }
}
