<?php

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job of the worker-runtime tests: appends "<n> <attempt> <locks held
 * when it started> <1 if it took the lock>" to the Redis list `locking`,
 * takes the lock `job-lock` and leaves it in a static; odd jobs then
 * throw on their first attempt, mid-hold.
 */
final class LockingJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public static ?RedisLock\Lock $parked = null;

    public $tries = 2;
    public $backoff = 0;

    public function __construct(public int $n)
    {
    }

    public function handle(): void
    {
        $held = count(RedisLock\Runtime::held());
        self::$parked = (new RedisLock\Client())->lock('job-lock', ['ttl' => 30]);
        $took = self::$parked->acquire() ? 1 : 0;
        app('redis')->connection('default')->rpush('locking', "{$this->n} {$this->attempts()} $held $took");
        if ($this->n % 2 === 1 && $this->attempts() === 1) {
            throw new RuntimeException("job {$this->n} fails while holding the lock");
        }
    }
}
