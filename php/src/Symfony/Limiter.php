<?php

declare(strict_types=1);

namespace RedisLock\Symfony;

use RedisLock\Decision;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * A Symfony rate limiter of one key, from `RateLimiterFactory::create()`:
 * each `consume()` is one script on the server (see the factory).
 */
final class Limiter implements LimiterInterface
{
    public function __construct(private \RedisLock\Limiter $limiter, private string $key, private int $limit)
    {
    }

    public function consume(int $tokens = 1): RateLimit
    {
        $this->check($tokens);
        $decision = $tokens === 0 ? $this->limiter->peek($this->key) : $this->limiter->attempt($this->key, $tokens);
        return $this->rateLimit($decision, $tokens === 0 || $decision->allowed());
    }

    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        $this->check($tokens);
        if ($tokens === 0) {
            return new Reservation(microtime(true), $this->rateLimit($this->limiter->peek($this->key), true));
        }
        $decision = $this->limiter->wait($this->key, $maxTime ?? INF, $tokens);
        $rateLimit = $this->rateLimit($decision, $decision->allowed());
        if (!$decision->allowed()) {
            throw new MaxWaitDurationExceededException(sprintf('The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).', (int) ceil($decision->retryAfter()), (int) $maxTime), $rateLimit);
        }
        return new Reservation(microtime(true), $rateLimit);
    }

    public function reset(): void
    {
        $this->limiter->reset($this->key);
    }

    private function check(int $tokens): void
    {
        if ($tokens < 0) {
            throw new \InvalidArgumentException(sprintf('Cannot consume a negative number of tokens (%d).', $tokens));
        }
        if ($tokens > $this->limit) {
            throw new \InvalidArgumentException(sprintf('Cannot reserve more tokens (%d) than the burst size of the rate limiter (%d).', $tokens, $this->limit));
        }
    }

    private function rateLimit(Decision $decision, bool $accepted): RateLimit
    {
        $retryAfter = \DateTimeImmutable::createFromFormat('U.u', sprintf('%.6F', microtime(true) + $decision->retryAfter()));
        return new RateLimit($decision->remaining(), $retryAfter, $accepted, $this->limit);
    }
}
