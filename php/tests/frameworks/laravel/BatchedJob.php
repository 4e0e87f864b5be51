<?php

use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A job of the batch and chain tests: appends "<n> <attempt>" to the Redis
 * list `batched` when it ran to its end, after sleeping `$ms` (marked
 * `in-job:<pid>` for its first quarter), or "<n>
 * skipped" when its batch was cancelled (`$this->batch()`, as Laravel's
 * docs write it). With `$fail` it throws on every attempt: it has one.
 */
final class BatchedJob implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 5;
    public $backoff = 0;

    public function __construct(public int $n, public int $ms = 0, public bool $fail = false)
    {
        if ($fail) {
            $this->tries = 1;
        }
    }

    public function handle(): void
    {
        $redis = app('redis')->connection('default');
        if ($this->batch()?->cancelled()) {
            $redis->rpush('batched', "{$this->n} skipped");
            return;
        }
        if ($this->ms > 0) {
            // Its worker is killed only while this mark lives: in the first
            // quarter of its sleep (LaravelBatchTest::work()).
            $redis->set('in-job:' . getmypid(), '1', 'PX', max(1, intdiv($this->ms, 4)));
        }
        usleep($this->ms * 1000);
        if ($this->fail) {
            throw new RuntimeException("job {$this->n} fails attempt {$this->attempts()}");
        }
        $redis->rpush('batched', "{$this->n} {$this->attempts()}");
    }
}

/**
 * The callbacks of the batch and chain tests, made here so that the
 * workers, which load this file, can unserialize them: each appends its
 * line to the Redis list `callbacks`, `{id}` and `{pending}` the batch's,
 * `{message}` the exception's.
 */
final class BatchCallbacks
{
    public static function say(string $line): Closure
    {
        return static function ($subject, $e = null) use ($line): void {
            $e = $subject instanceof Throwable ? $subject : $e;
            $batch = $subject instanceof Illuminate\Bus\Batch ? $subject : null;
            app('redis')->connection('default')->rpush('callbacks', strtr($line, [
                '{id}' => $batch?->id, '{pending}' => $batch?->pendingJobs, '{message}' => $e?->getMessage(),
            ]));
        };
    }
}
