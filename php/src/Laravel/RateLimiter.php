<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Closure;
use Illuminate\Contracts\Cache\Repository as Cache;
use RedisLock\Client;
use RedisLock\Limiter;

/**
 * Laravel's `RateLimiter` (the `RateLimiter` facade, `throttle:` routes,
 * the `RateLimited` job middleware) counting on the server in one script
 * per decision: `attempt()` checks and counts in one step, so concurrent
 * requests never pass a limit together (Laravel's own checks, then counts:
 * two steps). The same fixed windows as Laravel's: a key's window starts at
 * its first hit and lasts `$decaySeconds`; the limit is the caller's, per
 * call. Counts live in redislock's keys (`limit:{<name>}:f:<key>`), on the
 * server's clock; named limiters (`for()`) are Laravel's. Bound by the
 * service provider when the rate limiter's cache store (`cache.limiter`,
 * else the default) uses the `redislock` driver.
 */
class RateLimiter extends \Illuminate\Cache\RateLimiter
{
    /** The limit of a count that limits nothing (`hit()`, `attempts()`). */
    private const UNLIMITED = 1000000000;

    /** @param string $name the limiter's name: its keys are `limit:{<name>}:f:<key>` */
    public function __construct(Cache $cache, private Client $client, private string $name = 'laravel')
    {
        parent::__construct($cache);
    }

    /** The fixed window of `$limit` per `$decaySeconds` over every key. */
    private function window(int $limit, int|float $decaySeconds): Limiter
    {
        return $this->client->limiter($this->name, [
            'limit' => max(1, min(self::UNLIMITED, $limit)),
            'per' => max(1.0, (float) $decaySeconds),
            'policy' => 'fixed_window',
        ]);
    }

    public function attempt($key, $maxAttempts, Closure $callback, $decaySeconds = 60)
    {
        if ((int) $maxAttempts < 1
            || !$this->window((int) $maxAttempts, $decaySeconds)->attempt($this->cleanRateLimiterKey($key))->allowed()) {
            return false;
        }
        return $callback() ?: true;
    }

    public function tooManyAttempts($key, $maxAttempts)
    {
        return (int) $maxAttempts < 1
            || !$this->window((int) $maxAttempts, 60)->peek($this->cleanRateLimiterKey($key))->allowed();
    }

    public function hit($key, $decaySeconds = 60)
    {
        $left = $this->window(self::UNLIMITED, $decaySeconds)->attempt($this->cleanRateLimiterKey($key))->remaining();
        return self::UNLIMITED - $left;
    }

    /** Laravel 10 and later: `hit()` by `$amount`. */
    public function increment($key, $decaySeconds = 60, $amount = 1)
    {
        if ((int) $amount < 1) {
            return $this->attempts($key);
        }
        $left = $this->window(self::UNLIMITED, $decaySeconds)->attempt($this->cleanRateLimiterKey($key), (int) $amount)->remaining();
        return self::UNLIMITED - $left;
    }

    public function attempts($key)
    {
        return self::UNLIMITED - $this->window(self::UNLIMITED, 60)->peek($this->cleanRateLimiterKey($key))->remaining();
    }

    public function resetAttempts($key)
    {
        return $this->window(1, 60)->reset($this->cleanRateLimiterKey($key));
    }

    public function remaining($key, $maxAttempts)
    {
        return (int) $maxAttempts - $this->attempts($key);
    }

    public function clear($key)
    {
        $this->resetAttempts($key);
    }

    public function availableIn($key)
    {
        $decision = $this->window(self::UNLIMITED, 60)->peek($this->cleanRateLimiterKey($key));
        return $decision->remaining() === self::UNLIMITED ? 0 : (int) ceil($decision->resetAfter());
    }

    /**
     * Counts a hit on every limit of `$limits` (objects with `key`,
     * `maxAttempts` and `decayMinutes` or `decaySeconds`, as `ThrottleRequests` and
     * `RateLimited` build them) if every one allows it, in one step; none
     * when one refuses. Returns the first limit that refused, or null.
     *
     * @param list<object> $limits
     */
    public function attemptAll(array $limits): ?object
    {
        $asked = [];
        foreach ($limits as $limit) {
            if ((int) $limit->maxAttempts < 1) {
                return $limit;
            }
            // Laravel 11 and later say decaySeconds; earlier ones decayMinutes.
            $decay = $limit->decaySeconds ?? $limit->decayMinutes * 60;
            $asked[] = [$this->window((int) $limit->maxAttempts, $decay), $this->cleanRateLimiterKey($limit->key)];
        }
        if ($asked === []) {
            return null;
        }
        $decision = $this->client->attempt($asked);
        if ($decision->allowed()) {
            return null;
        }
        foreach ($limits as $limit) {
            if ($this->cleanRateLimiterKey($limit->key) === $decision->key()) {
                return $limit;
            }
        }
        return $limits[0];
    }
}
