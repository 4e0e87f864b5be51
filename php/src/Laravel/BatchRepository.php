<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Carbon\CarbonImmutable;
use Closure;
use DateTimeInterface;
use Illuminate\Bus\BatchFactory;
use Illuminate\Bus\PendingBatch;
use Illuminate\Bus\PrunableBatchRepository;
use Illuminate\Bus\UpdatedBatchJobCounts;
use RedisLock\Batches;

/**
 * Laravel's job batches (`Bus::batch()`) kept by redislock in Redis
 * (`RedisLock\Batches`) instead of a `job_batches` table: each count a
 * job changes is one script, where the database locks the batch's row.
 * Chosen with `queue.batching.driver` = `redislock` (ServiceProvider).
 */
class BatchRepository implements PrunableBatchRepository
{
    public function __construct(private BatchFactory $factory, private Batches $batches)
    {
    }

    /** The batches, newest first, those made before the batch `$before` when given. */
    public function get($limit = 50, $before = null)
    {
        return array_map($this->toBatch(...), $this->batches->list((int) $limit, $before === null || $before === '' ? null : (string) $before));
    }

    public function find(string $batchId)
    {
        $record = $batchId === '' ? null : $this->batches->find($batchId);
        return $record === null ? null : $this->toBatch($record);
    }

    public function store(PendingBatch $batch)
    {
        return $this->toBatch($this->batches->create((string) $batch->name, serialize($batch->options)));
    }

    public function incrementTotalJobs(string $batchId, int $amount)
    {
        $this->batches->addJobs($batchId, $amount);
    }

    public function decrementPendingJobs(string $batchId, string $jobId)
    {
        return self::counts($this->batches->jobDone($batchId, $jobId));
    }

    public function incrementFailedJobs(string $batchId, string $jobId)
    {
        return self::counts($this->batches->jobFailed($batchId, $jobId));
    }

    public function markAsFinished(string $batchId)
    {
        $this->batches->finish($batchId);
    }

    public function cancel(string $batchId)
    {
        $this->batches->cancel($batchId);
    }

    public function delete(string $batchId)
    {
        $this->batches->delete($batchId);
    }

    /** Deletes the batches that finished before `$before`: how many. */
    public function prune(DateTimeInterface $before)
    {
        return $this->batches->prune((float) $before->getTimestamp(), 'finished');
    }

    /** Deletes the unfinished batches made before `$before` (`queue:prune-batches --unfinished`). */
    public function pruneUnfinished(DateTimeInterface $before)
    {
        return $this->batches->prune((float) $before->getTimestamp(), 'unfinished');
    }

    /** Deletes the cancelled batches made before `$before` (`queue:prune-batches --cancelled`). */
    public function pruneCancelled(DateTimeInterface $before)
    {
        return $this->batches->prune((float) $before->getTimestamp(), 'cancelled');
    }

    /**
     * Runs `$callback`. Each count is changed in one step already; nothing
     * is undone when the callback throws (as with Laravel's DynamoDB
     * batches): a push that failed after `incrementTotalJobs()` leaves the
     * batch counting jobs that never came.
     */
    public function transaction(Closure $callback)
    {
        return $callback();
    }

    /** Nothing to roll back (Laravel 10 and later call it). */
    public function rollBack()
    {
    }

    /**
     * The counts after a job ended; a batch deleted meanwhile gives counts
     * that start none of its callbacks (one job pending, none failed).
     */
    private static function counts(?array $counts): UpdatedBatchJobCounts
    {
        return $counts === null
            ? new UpdatedBatchJobCounts(1, 0)
            : new UpdatedBatchJobCounts($counts['pending'], $counts['failed']);
    }

    private function toBatch(array $record)
    {
        $at = fn (?float $seconds) => $seconds === null ? null : CarbonImmutable::createFromTimestamp($seconds);
        return $this->factory->make(
            $this,
            $record['id'],
            $record['name'],
            $record['total'],
            $record['pending'],
            $record['failed'],
            $record['failedIds'],
            $record['options'] === '' ? [] : unserialize($record['options']),
            $at($record['createdAt']),
            $at($record['cancelledAt']),
            $at($record['finishedAt']),
        );
    }
}
