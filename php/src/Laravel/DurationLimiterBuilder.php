<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\InteractsWithTime;
use RedisLock\Client;

/**
 * Laravel's `DurationLimiterBuilder` (`Redis::throttle()`) on a redislock
 * fixed-window limiter named `$name`: `then()` runs its callback once the
 * window has room, waiting up to `block()` seconds (default 3) as long as
 * the limit says, else runs `$failure` or throws `LimiterTimeoutException`.
 */
final class DurationLimiterBuilder
{
    use InteractsWithTime;

    /** @var int */
    public $maxLocks = 1;
    /** @var int */
    public $decay = 60;
    /** @var int|float */
    public $timeout = 3;

    public function __construct(private Client $client, public string $name)
    {
    }

    public function allow($maxLocks): self
    {
        $this->maxLocks = (int) $maxLocks;
        return $this;
    }

    public function every($decay): self
    {
        $this->decay = $this->secondsUntil($decay);
        return $this;
    }

    public function block($timeout): self
    {
        $this->timeout = $timeout;
        return $this;
    }

    public function then(callable $callback, ?callable $failure = null): mixed
    {
        $limiter = $this->client->limiter($this->name, [
            'limit' => max(1, $this->maxLocks),
            'per' => max(1, $this->decay),
            'policy' => 'fixed_window',
        ]);
        if ($this->maxLocks < 1 || !$limiter->wait(null, max(0.0, (float) $this->timeout))->allowed()) {
            $e = new LimiterTimeoutException();
            if ($failure) {
                return $failure($e);
            }
            throw $e;
        }
        return $callback();
    }
}
