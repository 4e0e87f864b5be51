<?php

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job of the worker tests: appends "<n> <attempt> <pid>" to the Redis
 * list `done` when it ran (to the end), after sleeping `$ms`. With `$fail`
 * it throws on its first `$fail` attempts.
 */
final class RecordedJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 5;
    public $backoff = 0;

    public function __construct(public int $n, public int $ms = 0, public int $fail = 0)
    {
    }

    public function handle(): void
    {
        if ($this->attempts() <= $this->fail) {
            throw new RuntimeException("job {$this->n} fails attempt {$this->attempts()}");
        }
        usleep($this->ms * 1000);
        $redis = app('redis')->connection('default');
        $redis->rpush('done', "{$this->n} {$this->attempts()} " . getmypid());
    }
}
