<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

/**
 * Laravel's `RateLimited` job middleware (`new RateLimited('name')` in a
 * job's `middleware()`), deciding the named limiter's limits at once on
 * redislock's `RateLimiter`, and releasing a throttled job of the
 * `redislock` queue without spending one of its tries (Laravel's release
 * counts the attempt: a throttled job fails after `$tries` throttles).
 */
class RateLimited extends \Illuminate\Queue\Middleware\RateLimited
{
    protected function handleJob($job, $next, array $limits)
    {
        if (!$this->limiter instanceof RateLimiter) {
            return parent::handleJob($job, $next, $limits);
        }
        $refused = $this->limiter->attemptAll($limits);
        if ($refused === null) {
            return $next($job);
        }
        if (!$this->shouldRelease) {
            return false;
        }
        $delay = $this->getTimeUntilNextRetry($refused->key);
        $queued = $job->job ?? null;
        return $queued instanceof Job ? $queued->releaseUnspent($delay) : $job->release($delay);
    }
}
