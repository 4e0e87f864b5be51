<?php

declare(strict_types=1);

namespace RedisLock\Symfony;

use RedisLock\Client;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\Policy\NoLimiter;

/**
 * Symfony's `RateLimiterFactory` on redislock: the same configuration
 * (`id`, `policy`: `token_bucket`, `fixed_window`, `sliding_window` or
 * `no_limit`, `limit`, `interval`, `rate: {interval, amount}`), limiters
 * that decide in one script on the server's clock, with no storage and no
 * lock (Symfony's own takes a lock and reads and writes its storage: several
 * round trips per decision). A limiter's keys are `limit:{<id>}:...<key>`.
 *
 * Where Symfony's own differs: the sliding window is exact (at most `limit`
 * in any `interval`; Symfony's weighs the previous window) and supports
 * `reserve()`; `reserve()` waits in the call until the tokens are there
 * and returns a reservation that is due now (Symfony's returns at once with
 * a reservation due later, consumed in advance).
 */
final class RateLimiterFactory
{
    /** @var array{id: string, policy: string, limit: int, per: float, burst: int} */
    private array $config;

    /**
     * @param array{id: string, policy: string, limit?: int, interval?: string, rate?: array{interval: string, amount?: int}} $config
     */
    public function __construct(array $config, private Client $client)
    {
        $unknown = array_diff(array_keys($config), ['id', 'policy', 'limit', 'interval', 'rate', 'lock_factory', 'cache_pool', 'storage_service']);
        if ($unknown !== []) {
            throw new \InvalidArgumentException(sprintf('The rate limiter options "%s" do not exist.', implode('", "', $unknown)));
        }
        if (!isset($config['id']) || !is_string($config['id']) || $config['id'] === '') {
            throw new \InvalidArgumentException('The rate limiter option "id" is missing.');
        }
        $policy = $config['policy'] ?? null;
        if (!in_array($policy, ['token_bucket', 'fixed_window', 'sliding_window', 'no_limit'], true)) {
            throw new \LogicException(sprintf('Limiter policy "%s" does not exists, it must be either "token_bucket", "sliding_window", "fixed_window" or "no_limit".', get_debug_type($policy) === 'string' ? $policy : get_debug_type($policy)));
        }
        $limit = $config['limit'] ?? null;
        if ($policy !== 'no_limit' && (!is_int($limit) || $limit < 1)) {
            throw new \InvalidArgumentException('The rate limiter option "limit" must be an int of at least 1.');
        }
        [$limit, $per, $burst] = match ($policy) {
            'token_bucket' => [(int) ($config['rate']['amount'] ?? 1), self::seconds($config['rate']['interval'] ?? null, 'rate.interval'), $limit],
            'no_limit' => [1, 1.0, 1],
            default => [$limit, self::seconds($config['interval'] ?? null, 'interval'), $limit],
        };
        $this->config = ['id' => $config['id'], 'policy' => $policy, 'limit' => $limit, 'per' => $per, 'burst' => $burst];
    }

    /** Seconds of a Symfony interval (`'15 minutes'`), as Symfony reads it. */
    private static function seconds(mixed $interval, string $option): float
    {
        if (!is_string($interval)) {
            throw new \InvalidArgumentException(sprintf('The rate limiter option "%s" must be a string such as "1 minute".', $option));
        }
        $now = \DateTimeImmutable::createFromFormat('U', '0');
        $error = sprintf('Cannot parse interval "%s", please use a valid unit as described on https://www.php.net/datetime.formats.relative.', $interval);
        try {
            // PHP 8.3 and later throw DateMalformedStringException; earlier ones warn.
            $then = @$now->modify('+' . $interval);
        } catch (\Exception $e) {
            throw new \LogicException($error, 0, $e);
        }
        if (!$then || $then <= $now) {
            throw new \LogicException($error);
        }
        return (float) $then->getTimestamp();
    }

    public function create(?string $key = null): LimiterInterface
    {
        $c = $this->config;
        if ($c['policy'] === 'no_limit') {
            return new NoLimiter();
        }
        $options = ['limit' => $c['limit'], 'per' => $c['per'], 'policy' => $c['policy']];
        if ($c['policy'] === 'token_bucket') {
            $options['burst'] = $c['burst'];
        }
        return new Limiter($this->client->limiter($c['id'], $options), $key ?? '', $c['burst']);
    }
}
