<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Redis\Factory as Redis;
use RedisLock\Client;

/**
 * Laravel's Redis cache store, with its locks on redislock: cache values
 * stay where they are (the `connection`), locks go to the server of the
 * `lock_connection` through the extension, on Laravel's own lock keys
 * (`<cache prefix><name>`): Laravel's store and this one exclude each other.
 */
class RedisStore extends \Illuminate\Cache\RedisStore
{
    /** @var array<string, Client> per connection name */
    private array $clients = [];

    /**
     * @param array<string, array<string, mixed>> $connections the
     *        `database.redis` connections, by name
     */
    public function __construct(Redis $redis, $prefix, $connection, private array $connections)
    {
        parent::__construct($redis, $prefix, $connection);
    }

    public function lock($name, $seconds = 0, $owner = null)
    {
        $connection = $this->lockConnection ?? $this->connection;
        $this->clients[$connection] ??= Connections::client($this->connections, $connection);
        return new Lock($this->clients[$connection], $connection, $this->prefix . $name, $seconds, $owner);
    }

    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }
}
