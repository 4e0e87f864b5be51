<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use RedisLock\Client;

/**
 * `Redis::throttle()` and `Redis::funnel()` with Laravel's builders and
 * semantics, on redislock: `throttle($name)->allow(10)->every(60)->then(...)`
 * counts in one script on the server's clock and waits without polling
 * (Laravel's reads the client's clock and tries every 750 ms);
 * `funnel($name)->limit(3)->then(...)` holds a semaphore permit (Laravel's
 * tries every 250 ms), given back when the callback returns or throws, and
 * at the end of the request or job when PHP stops on a fatal error. Bound
 * in the container by the service provider (`app(Limiters::class)`), on
 * the `default` Redis connection.
 */
final class Limiters
{
    public function __construct(private Client $client)
    {
    }

    /** A rate: at most `allow()` calls per `every()` seconds (a fixed window from the first). */
    public function throttle(string $name): DurationLimiterBuilder
    {
        return new DurationLimiterBuilder($this->client, $name);
    }

    /** A concurrency limit: at most `limit()` callbacks at once. */
    public function funnel(string $name): ConcurrencyLimiterBuilder
    {
        return new ConcurrencyLimiterBuilder($this->client, $name);
    }
}
