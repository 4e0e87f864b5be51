<?php
namespace App\Cache;

/** The framework's cache driver the app's store extends. */
class Store
{
    protected \Redis $redis;

    public function __construct(int $port)
    {
        $this->redis = new \Redis();
        $this->redis->connect('127.0.0.1', $port);
    }

    public function get(string $key): mixed
    {
        return $this->redis->get("cache:$key");
    }
}
