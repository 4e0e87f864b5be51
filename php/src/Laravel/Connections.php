<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use RedisLock\Client;

/** redislock clients for the connections of Laravel's `database.redis`. */
final class Connections
{
    /**
     * The client for the connection named `$name`: its url, or its host
     * (a path: a unix socket), port, database, username, password and
     * timeouts; `scheme` tls for TLS; and Laravel's key prefix of that
     * connection (prefix()) before every key, so two applications (or
     * staging and production) on one Redis keep their queues and locks
     * apart, as with Laravel's own drivers.
     *
     * @param array<string, mixed> $connections the `database.redis` config
     */
    public static function client(array $connections, string $name): Client
    {
        $config = $connections[$name] ?? null;
        if (!is_array($config)) {
            throw new \InvalidArgumentException("Redis connection [{$name}] not configured.");
        }
        $options = [];
        if (!empty($config['url']) && class_exists(\Illuminate\Support\ConfigurationUrlParser::class)) {
            $config = self::parsed($config);
        }
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
        // phpredis reads a timeout of 0 as "no limit": the extension's own
        // timeouts (redislock.connect_timeout, read_timeout) apply then.
        foreach (['timeout', 'read_timeout'] as $key) {
            if (isset($options[$key]) && is_numeric($options[$key]) && (float) $options[$key] === 0.0) {
                unset($options[$key]);
            }
        }
        $prefix = self::prefix($connections, $name);
        if ($prefix !== '') {
            $options['prefix'] = $prefix;
        }
        return new Client($options);
    }

    /**
     * A connection's config as Laravel's RedisManager reads it: the url's
     * parts (host, port, database from its path, user, password, query
     * options) over the connection's keys, and `scheme` tls for a `tls://`
     * url. So `['url' => 'redis://h:6379/3', 'database' => '0']` is
     * database 3, as Laravel's own clients use it.
     *
     * @param array<string, mixed> $config
     * @return array<string, mixed>
     */
    private static function parsed(array $config): array
    {
        $parsed = (new \Illuminate\Support\ConfigurationUrlParser())->parseConfiguration($config);
        $driver = strtolower((string) ($parsed['driver'] ?? ''));
        if (in_array($driver, ['tcp', 'tls'], true)) {
            $parsed['scheme'] = $driver;
        }
        unset($parsed['driver'], $parsed['url']);
        return $parsed;
    }

    /**
     * The key prefix Laravel's Redis client applies on the connection
     * `$name`, chosen as Laravel's connectors choose it: the connection's
     * `prefix`, else its `options.prefix`, else the global
     * `options.prefix`; with phpredis before Laravel 9.12 (laravel/framework
     * #42279) the connection's `options.prefix`, else the global one, else
     * the connection's `prefix`.
     *
     * @param array<string, mixed> $connections the `database.redis` config
     */
    public static function prefix(array $connections, string $name): string
    {
        $own = $connections[$name]['prefix'] ?? null;
        $local = $connections[$name]['options']['prefix'] ?? null;
        $global = $connections['options']['prefix'] ?? null;
        $before912 = ($connections['client'] ?? 'phpredis') !== 'predis'
            && version_compare(\Illuminate\Foundation\Application::VERSION, '9.12.0', '<');
        return (string) ($before912 ? $local ?? $global ?? $own : $own ?? $local ?? $global);
    }
}
