<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\InteractsWithTime;
use RedisLock\Client;

/**
 * Laravel's `ConcurrencyLimiterBuilder` (`Redis::funnel()`) on a redislock
 * semaphore named `$name` with `limit()` permits, each leased for
 * `releaseAfter()` seconds (default 60): `then()` runs its callback holding
 * a permit, waiting up to `block()` seconds (default 3) in the semaphore's
 * line, and gives the permit back when the callback returns or throws (and
 * at the request's or job's end, if PHP stops inside it).
 */
final class ConcurrencyLimiterBuilder
{
    use InteractsWithTime;

    /** @var int */
    public $maxLocks = 1;
    /** @var int */
    public $releaseAfter = 60;
    /** @var int|float */
    public $timeout = 3;

    public function __construct(private Client $client, public string $name)
    {
    }

    public function limit($maxLocks): self
    {
        $this->maxLocks = (int) $maxLocks;
        return $this;
    }

    public function releaseAfter($releaseAfter): self
    {
        $this->releaseAfter = $this->secondsUntil($releaseAfter);
        return $this;
    }

    public function block($timeout): self
    {
        $this->timeout = $timeout;
        return $this;
    }

    public function then(callable $callback, ?callable $failure = null): mixed
    {
        $permits = $this->client->semaphore($this->name, max(1, $this->maxLocks), ['ttl' => max(1, $this->releaseAfter)]);
        if ($this->maxLocks < 1 || !$permits->acquire(1, max(0.0, (float) $this->timeout))) {
            $e = new LimiterTimeoutException();
            if ($failure) {
                return $failure($e);
            }
            throw $e;
        }
        try {
            return $callback();
        } finally {
            try {
                $permits->release();
            } catch (\RedisLock\LockLostException) {
                // Held past releaseAfter: the permit had gone back, as in Laravel.
            }
        }
    }
}
