<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Closure;

/**
 * Laravel's `throttle:` route middleware, deciding every limit of a request
 * at once on redislock's `RateLimiter`: a request is counted on all its
 * limits or, when one refuses, on none (Laravel's own checks and counts
 * each limit in turn: concurrent requests pass together, and a refused
 * request has already counted on the limits before the one that refused).
 * Bound in place of Laravel's by the service provider with the rate limiter.
 */
class ThrottleRequests extends \Illuminate\Routing\Middleware\ThrottleRequests
{
    protected function handleRequest($request, Closure $next, array $limits)
    {
        if (!$this->limiter instanceof RateLimiter) {
            return parent::handleRequest($request, $next, $limits);
        }
        $refused = $this->limiter->attemptAll($limits);
        if ($refused !== null) {
            throw $this->buildException($request, $refused->key, $refused->maxAttempts, $refused->responseCallback ?? null);
        }
        $response = $next($request);
        foreach ($limits as $limit) {
            $response = $this->addHeaders(
                $response,
                $limit->maxAttempts,
                $this->calculateRemainingAttempts($limit->key, $limit->maxAttempts),
            );
        }
        return $response;
    }
}
