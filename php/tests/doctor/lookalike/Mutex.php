<?php
namespace App\Jobs;

/** Not a copy: a job with a lock() of its own that logs 'Lock:' lines. */
class ReportJob
{
    public function lock(): bool
    {
        error_log('Lock: report job started');
        return true;
    }

    public function run(): string
    {
        return $this->lock() ? 'ran' : 'skipped';
    }
}
