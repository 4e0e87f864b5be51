<?php
/** Not a copy: this app's own lock helper, a singleton over an injected client. */
class redisLock
{
    private static $instance;
    private $redis;

    private function __construct($redis) { $this->redis = $redis; }

    public static function getInstance($redis)
    {
        return self::$instance ??= new self($redis);
    }

    public function tryLock($key, $seconds = 5)
    {
        return (bool) $this->redis->set("app:lock:$key", getmypid(), ['nx', 'ex' => $seconds]);
    }

    public function release($key)
    {
        return (bool) $this->redis->del("app:lock:$key");
    }
}
