<?php

/** A message of the Messenger worker tests (see worker.php). */
final class Recorded
{
    public function __construct(public int $n, public int $ms = 0, public int $fail = 0)
    {
    }

    public function handle(string $file): void
    {
        $tries = (int) @file_get_contents("$file.tries.{$this->n}");
        file_put_contents("$file.tries.{$this->n}", (string) ($tries + 1));
        if ($tries < $this->fail) {
            throw new RuntimeException("message {$this->n} fails delivery " . ($tries + 1));
        }
        usleep($this->ms * 1000);
        file_put_contents($file, "{$this->n} " . getmypid() . "\n", FILE_APPEND | LOCK_EX);
    }
}
