<?php

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RedisLock\Laravel\RateLimited;

/**
 * A job of the rate limiter tests, behind the named limiter `mail`
 * (RedisLock\Laravel\RateLimited): appends "<n> <attempt>" to the Redis
 * list `sent` when it ran.
 */
final class ThrottledJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 2;

    public function __construct(public int $n)
    {
    }

    public function middleware(): array
    {
        return [new RateLimited('mail')];
    }

    public function handle(): void
    {
        app('redis')->connection('default')->rpush('sent', "{$this->n} {$this->attempts()}");
    }
}
