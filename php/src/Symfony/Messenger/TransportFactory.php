<?php

namespace RedisLock\Symfony\Messenger;

use RedisLock\Client;
use Symfony\Component\Messenger\Transport\Serialization\SerializerInterface;
use Symfony\Component\Messenger\Transport\TransportFactoryInterface;
use Symfony\Component\Messenger\Transport\TransportInterface;

/**
 * `redislock://host:port[/db][?queues=a,b&lease=30&wait=1&max_attempts=5]`
 * (`redislocks://` for TLS): the DSN is the extension's (`redis://`), the
 * transport's own query parameters are taken out of it. The same names
 * work as transport options.
 */
final class TransportFactory implements TransportFactoryInterface
{
    private const OPTIONS = ['queues', 'lease', 'wait', 'max_attempts'];

    public function createTransport(string $dsn, array $options, SerializerInterface $serializer): TransportInterface
    {
        $parts = explode('?', $dsn, 2);
        parse_str($parts[1] ?? '', $query);
        $options += array_intersect_key($query, array_flip(self::OPTIONS));
        $rest = http_build_query(array_diff_key($query, array_flip(self::OPTIONS)));
        $redis = preg_replace('#^redislock(s?)://#', 'redis$1://', $parts[0]) . ($rest !== '' ? "?$rest" : '');
        $queues = $options['queues'] ?? ['messages'];
        return new Transport(
            new Client($redis),
            is_string($queues) ? explode(',', $queues) : $queues,
            $serializer,
            (float) ($options['lease'] ?? 30),
            (float) ($options['wait'] ?? 1),
            (int) ($options['max_attempts'] ?? 5),
        );
    }

    public function supports(string $dsn, array $options): bool
    {
        return str_starts_with($dsn, 'redislock://') || str_starts_with($dsn, 'redislocks://');
    }
}
