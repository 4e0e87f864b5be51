<?php

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/**
 * A unique job of the unique-job tests: appends "<n> <attempt>" to the Redis
 * list `done` when it ran to its end, after sleeping `$ms`; throws on its
 * first `$fail` attempts; releases itself instead with `$release`. Unique
 * per `$key`, for `$uniqueFor` seconds (0: until it ends).
 */
class UniqueJob implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable;

    public $tries = 1;
    public $backoff = 0;

    public function __construct(public int $n, public string $key = 'k', public int $uniqueFor = 0,
        public int $ms = 0, public int $fail = 0, public bool $release = false, int $tries = 1)
    {
        $this->tries = $tries;
    }

    public function uniqueId(): string
    {
        return $this->key;
    }

    public function handle(): void
    {
        if ($this->release) {
            $this->release();
            return;
        }
        if ($this->attempts() <= $this->fail) {
            throw new RuntimeException("unique job {$this->n} fails attempt {$this->attempts()}");
        }
        usleep($this->ms * 1000);
        app('redis')->connection('default')->rpush('done', "{$this->n} {$this->attempts()}");
    }
}

/** Unique until a worker starts it. */
class UniqueUntilProcessingJob extends UniqueJob implements ShouldBeUniqueUntilProcessing
{
}

/** A unique job whose payload Laravel cannot encode (bytes that are no UTF-8). */
class UnencodableUniqueJob extends UniqueJob
{
    public string $raw = "\xff\xfe";
}
