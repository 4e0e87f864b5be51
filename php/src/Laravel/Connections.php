<?php

namespace RedisLock\Laravel;

use RedisLock\Client;

/** redislock clients for the connections of Laravel's `database.redis`. */
final class Connections
{
    /**
     * The client for the connection named `$name`: its url, or its host
     * (a path: a unix socket), port, database, username, password and
     * timeouts; `scheme` tls for TLS. Laravel's key prefix is not taken:
     * the stores and queues add their own.
     *
     * @param array<string, mixed> $connections
     */
    public static function client(array $connections, string $name): Client
    {
        $config = $connections[$name] ?? null;
        if (!is_array($config)) {
            throw new \InvalidArgumentException("Redis connection [{$name}] not configured.");
        }
        $options = [];
        if (!empty($config['url'])) {
            $options['dsn'] = (string) $config['url'];
        } elseif (str_starts_with((string) ($config['host'] ?? ''), '/')) {
            $options['socket'] = (string) $config['host'];
        } else {
            $host = (string) ($config['host'] ?? '127.0.0.1');
            $port = (int) ($config['port'] ?? 6379);
            if (($config['scheme'] ?? '') === 'tls' || str_starts_with($host, 'tls://')) {
                $options['dsn'] = 'rediss://' . preg_replace('#^tls://#', '', $host) . ':' . $port;
            } else {
                $options['host'] = $host;
                $options['port'] = (string) $port;
            }
        }
        foreach (['database', 'username', 'password', 'timeout', 'read_timeout'] as $key) {
            if (isset($config[$key]) && $config[$key] !== '') {
                $options[$key] = (string) $config[$key];
            }
        }
        return new Client($options);
    }
}
