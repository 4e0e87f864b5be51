<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Queue\Connectors\ConnectorInterface;

/**
 * The `redislock` queue driver. Connection options: `connection` (a
 * `database.redis` connection, default `default`), `queue` (default
 * `default`), `retry_after` (the lease, s, default 90), `block_for` (s a
 * `pop()` waits for a job, default 0), `max_attempts` (deliveries before the
 * queue's dead letters take a job, default 0: never), `after_commit`,
 * `partitions` (each queue kept in that many partitions, default: as
 * `redislock.partitions` says, else 1: docs/past-one-node.md; every
 * process of the app must have the same).
 */
class QueueConnector implements ConnectorInterface
{
    /** @param array<string, array<string, mixed>> $connections */
    public function __construct(private array $connections)
    {
    }

    public function connect(array $config)
    {
        return new Queue(
            Connections::client($this->connections, (string) ($config['connection'] ?? 'default')),
            (string) ($config['queue'] ?? 'default'),
            (float) ($config['retry_after'] ?? 90),
            (float) ($config['block_for'] ?? 0),
            (int) ($config['max_attempts'] ?? 0),
            (bool) ($config['after_commit'] ?? false),
            isset($config['partitions']) ? (int) $config['partitions'] : null,
        );
    }
}
