<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use RedisLock\Client;
use Symfony\Component\Messenger\Transport\Serialization\SerializerInterface;
use Symfony\Component\Messenger\Transport\TransportFactoryInterface;
use Symfony\Component\Messenger\Transport\TransportInterface;

/**
 * `redislock://host:port[/db][?queues=a,b&lease=3600&wait=1&max_attempts=5&partitions=1]`
 * (`redislocks://` for TLS): the DSN is the extension's (`redis://`), the
 * transport's own query parameters are taken out of it. The same names
 * work as transport options.
 */
final class TransportFactory implements TransportFactoryInterface
{
    private const OPTIONS = ['queues', 'lease', 'wait', 'max_attempts', 'partitions'];

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
            self::number($options, 'lease', 3600, false),
            self::number($options, 'wait', 1, true),
            (int) self::number($options, 'max_attempts', 5, true, true),
            isset($options['partitions']) ? (int) self::number($options, 'partitions', 1, false, true) : null,
        );
    }

    /**
     * An option's number, refused when it is not one (`lease=abc` read as
     * 0 failed only at the first send, `wait=abc` waited 0 s): seconds above
     * 0 (or from 0, `$zero`), or a whole count (`$whole`).
     */
    private static function number(array $options, string $name, float $default, bool $zero, bool $whole = false): float
    {
        $value = $options[$name] ?? $default;
        $ok = is_numeric($value) && is_finite((float) $value)
            && ((float) $value > 0 || ($zero && (float) $value == 0))
            && (!$whole || (float) $value == floor((float) $value));
        if (!$ok) {
            $shown = is_scalar($value) ? var_export((string) $value, true) : get_debug_type($value);
            throw new \Symfony\Component\Messenger\Exception\InvalidArgumentException(sprintf('redislock transport: the %s option must be %s, %s given',
                $name, $whole ? 'a whole number >= 0' : ($zero ? 'a number of seconds >= 0' : 'a number of seconds above 0'), $shown));
        }
        return (float) $value;
    }

    public function supports(string $dsn, array $options): bool
    {
        return str_starts_with($dsn, 'redislock://') || str_starts_with($dsn, 'redislocks://');
    }
}
