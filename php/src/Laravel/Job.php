<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Container\Container;
use Illuminate\Contracts\Queue\Job as JobContract;
use Illuminate\Queue\Jobs\Job as BaseJob;
use RedisLock\Task;

/**
 * A job leased to this worker. `delete()` acks it; `release($delay)` puts it
 * back, due after `$delay` seconds, with the class and message of the
 * exception the worker met (`failedWith()`, from the service provider's
 * JobExceptionOccurred listener) as the failure's reason; `attempts()`
 * counts its deliveries, this one included (a delivery to a worker that
 * died counts too).
 */
class Job extends BaseJob implements JobContract
{
    private ?string $failure = null;

    public function __construct(Container $container, private Queue $redislock, private Task $task,
        string $connectionName, string $queue)
    {
        $this->container = $container;
        $this->connectionName = $connectionName;
        $this->queue = $queue;
    }

    public function getJobId()
    {
        return $this->task->id();
    }

    public function getRawBody()
    {
        return (string) $this->task->payload();
    }

    public function attempts()
    {
        return $this->task->attempts();
    }

    public function delete()
    {
        parent::delete();
        $this->redislock->queue($this->queue)->ack($this->task);
    }

    public function release($delay = 0)
    {
        parent::release($delay);
        $this->redislock->queue($this->queue)->nack($this->task, min(max(0, (float) $delay), Queue::LONGEST_DELAY), $this->failure);
    }

    /**
     * Puts the job back, due after `$delay` seconds, without counting this
     * attempt (`attempts()` stays where it was before it was reserved): for
     * a job that did not fail but must wait, as a rate-limited one.
     */
    public function releaseUnspent($delay = 0): void
    {
        parent::release($delay);
        $this->redislock->queue($this->queue)->release($this->task, min(max(0, (float) $delay), Queue::LONGEST_DELAY));
    }

    /** Records why this attempt failed: the reason `release()` gives the queue. */
    public function failedWith(\Throwable $e): void
    {
        $this->failure = $e::class . ': ' . $e->getMessage();
    }

    /** A new lease of `$seconds` (default: `retry_after`) for a long job; false when it was lost. */
    public function extendLease(?float $seconds = null): bool
    {
        return $this->redislock->queue($this->queue)->extend($this->task, $seconds);
    }

    /** Runs the job; a unique job releases only its dispatch's lock after it (UniqueJobs). */
    public function fire()
    {
        UniqueJobs::whileRunning($this->payload(), fn () => parent::fire());
    }

    /** Fails the job for good; a unique job releases only its dispatch's lock (UniqueJobs). */
    protected function failed($e)
    {
        UniqueJobs::whileRunning($this->payload(), fn () => parent::failed($e));
    }

    /** The leased task underneath. */
    public function task(): Task
    {
        return $this->task;
    }
}
