<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Queue\ClearableQueue;
use Illuminate\Contracts\Queue\Queue as QueueContract;
use Illuminate\Queue\Queue as BaseQueue;
use Illuminate\Support\Str;
use RedisLock\Client;

/**
 * Laravel's queue on redislock's leased queue (`Queue:queues:<name>`): a
 * popped job is leased to its worker for `retry_after` seconds and only
 * deleting it (its ack) removes it, so a worker killed mid-job loses
 * nothing: the job is due again when the lease ends, with its attempt
 * counted. `pop()` waits up to `block_for` seconds without polling, woken
 * by the push. Retries and failures are Laravel's (tries, backoff, failed
 * jobs); the queue's own dead letters take a job only after `max_attempts`
 * deliveries, when set (default 0: never).
 */
class Queue extends BaseQueue implements QueueContract, ClearableQueue
{
    /** @var array<string, \RedisLock\Queue> */
    private array $queues = [];

    public function __construct(
        private Client $client,
        protected string $default = 'default',
        private float $retryAfter = 90,
        private float $blockFor = 0,
        private int $maxAttempts = 0,
        bool $dispatchAfterCommit = false,
        private ?int $partitions = null,
    ) {
        $this->dispatchAfterCommit = $dispatchAfterCommit;
    }

    /** The leased queue of a Laravel queue name (null: the default). */
    public function queue(?string $queue = null): \RedisLock\Queue
    {
        $name = $this->getQueue($queue);
        return $this->queues[$name] ??= $this->client->queue("queues:$name", [
            'lease' => $this->retryAfter,
            'maxAttempts' => $this->maxAttempts,
        ] + ($this->partitions === null ? [] : ['partitions' => $this->partitions]));
    }

    public function getQueue(?string $queue): string
    {
        return $queue ?: $this->default;
    }

    /** Ready and delayed jobs, and jobs leased to workers. */
    public function size($queue = null)
    {
        $m = $this->queue($queue)->metrics();
        return $m['ready'] + $m['delayed'] + $m['leased'];
    }

    /** Jobs due now. */
    public function pendingSize(?string $queue = null): int
    {
        return $this->queue($queue)->metrics()['ready'];
    }

    /** Jobs due later (`later()`, released with a delay). */
    public function delayedSize(?string $queue = null): int
    {
        return $this->queue($queue)->metrics()['delayed'];
    }

    /** Jobs leased to a worker now. */
    public function reservedSize(?string $queue = null): int
    {
        return $this->queue($queue)->metrics()['leased'];
    }

    /**
     * When the oldest job due now was created (Unix time): its payload's
     * `createdAt` (Laravel 11 and later write it), else when it became due;
     * null when no job is due.
     */
    public function creationTimeOfOldestPendingJob($queue = null): ?int
    {
        $leased = $this->queue($queue);
        if ($leased->metrics()['ready'] === 0) {
            return null;
        }
        $oldest = $leased->peek(1)[0] ?? null;
        if ($oldest === null) {
            return null;
        }
        $createdAt = json_decode((string) $oldest['payload'], true)['createdAt'] ?? null;
        return is_int($createdAt) ? $createdAt : (int) $oldest['at'];
    }

    /**
     * Deletes the jobs waiting in the queue, due now or later (`queue:clear`),
     * and returns how many. Unlike Laravel's Redis driver, which also forgets
     * the jobs its workers run now, those stay leased to their workers.
     */
    public function clear($queue)
    {
        return $this->queue($queue)->clear();
    }

    public function push($job, $data = '', $queue = null)
    {
        return $this->releasingOnFailure([$job], fn () => $this->enqueueUsing($job,
            $this->createPayload($job, $this->getQueue($queue), $data), $queue, null,
            fn ($payload, $queue) => $this->queuing([$job], fn () => $this->enqueue($payload, $queue, 0, self::tagsOf($job)))));
    }

    public function pushRaw($payload, $queue = null, array $options = [])
    {
        return $this->enqueue((string) $payload, $queue, $options['delay'] ?? 0);
    }

    public function later($delay, $job, $data = '', $queue = null)
    {
        return $this->releasingOnFailure([$job], fn () => $this->enqueueUsing($job,
            $this->createPayload($job, $this->getQueue($queue), $data), $queue, $delay,
            fn ($payload, $queue, $delay) => $this->queuing([$job], fn () => $this->enqueue($payload, $queue, $this->secondsUntil($delay), self::tagsOf($job)))));
    }

    /**
     * A job's tags, as Horizon gives them: its `tags()`, else the Eloquent
     * models it holds (`App\Models\User:42`, collections of them too). Those
     * a task cannot take (see Queue::enqueue()) are left out, and past the
     * first 10 too: a tag never fails a dispatch.
     *
     * @return list<string>|null
     */
    public static function tagsOf(mixed $job): ?array
    {
        if (!is_object($job)) {
            return null;
        }
        if (method_exists($job, 'tags')) {
            $tags = (array) $job->tags();
        } else {
            $tags = [];
            foreach ((new \ReflectionObject($job))->getProperties() as $property) {
                if (!$property->isInitialized($job)) {
                    continue;
                }
                $value = $property->getValue($job);
                $models = $value instanceof \Illuminate\Support\Collection ? $value->all() : [$value];
                foreach ($models as $model) {
                    if ($model instanceof \Illuminate\Database\Eloquent\Model && is_scalar($model->getKey())) {
                        $tags[] = get_class($model) . ':' . $model->getKey();
                    }
                }
            }
        }
        $tags = array_filter(array_map(fn ($t) => is_scalar($t) ? (string) $t : '', $tags),
            fn (string $t) => preg_match('/^[^\x00-\x20\x7f]{1,100}\z/', $t) === 1);
        return array_slice(array_values(array_unique($tags)), 0, 10) ?: null;
    }

    /**
     * As Laravel's; a unique job that waits for a commit is followed, so
     * that a rollback releases its lock (UniqueJobs).
     */
    protected function enqueueUsing($job, $payload, $queue, $delay, $callback)
    {
        if (UniqueJobs::keyOfJob($job) !== null && $this->shouldDispatchAfterCommit($job) && $this->container->bound('db')) {
            // The connection whose transaction it waits for: the innermost open one.
            $open = array_filter(array_map(fn ($c) => $c->transactionLevel(), $this->container['db']->getConnections()));
            if ($open !== []) {
                arsort($open);
                UniqueJobs::deferred($job, (string) array_key_first($open), (int) reset($open));
            }
        }
        return parent::enqueueUsing($job, $payload, $queue, $delay, $callback);
    }

    /**
     * Queues `$jobs` with `$enqueue`: a unique job's lock is then the job's
     * (its owner is in the payload), or released when queueing failed
     * (UniqueJobs).
     */
    private function queuing(array $jobs, callable $enqueue): mixed
    {
        $result = $this->releasingOnFailure($jobs, $enqueue);
        array_map(UniqueJobs::queued(...), $jobs);
        return $result;
    }

    /**
     * Runs `$push`; when anything in it throws (the payload's encoding as
     * much as the enqueue), the locks the dispatches of `$jobs` took are
     * released (UniqueJobs): a job that was not queued holds none.
     */
    private function releasingOnFailure(array $jobs, callable $push): mixed
    {
        try {
            return $push();
        } catch (\Throwable $e) {
            array_map(UniqueJobs::notQueued(...), $jobs);
            throw $e;
        }
    }

    /** All the jobs in one round trip (unless one waits for a commit). */
    public function bulk($jobs, $data = '', $queue = null)
    {
        // One enqueueMany() per set of tags the jobs have.
        $tasks = $queued = [];
        foreach ((array) $jobs as $job) {
            if ($this->shouldDispatchAfterCommit($job) && $this->container->bound('db.transactions')) {
                return parent::bulk($jobs, $data, $queue);
            }
        }
        foreach ((array) $jobs as $job) {
            $payload = $this->releasingOnFailure((array) $jobs, fn () => $this->createPayload($job, $this->getQueue($queue), $data));
            $id = self::idOf($payload);
            $tags = self::tagsOf($job);
            $tasks[json_encode($tags)][$id] = $payload;
            $queued[] = [$id, $job, $payload];
        }
        if ($tasks !== []) {
            $this->queuing(array_column($queued, 1), function () use ($tasks, $queue) {
                foreach ($tasks as $tags => $batch) {
                    $this->queue($queue)->enqueueMany($batch, 0, null, json_decode((string) $tags, true));
                }
            });
        }
        // Laravel's own bulk() pushes each job, and each push says so.
        foreach ($queued as [$id, $job, $payload]) {
            $this->raiseQueued($id, $job, $payload, $queue);
        }
    }

    /** The JobQueued event of one job, as this Laravel's queue raises it (its arguments changed in 10 and 11). */
    private function raiseQueued(string $id, $job, string $payload, ?string $queue): void
    {
        $given = ['queue' => $this->getQueue($queue), 'jobId' => $id, 'job' => $job, 'payload' => $payload, 'delay' => null];
        $method = new \ReflectionMethod(parent::class, 'raiseJobQueuedEvent');
        $this->raiseJobQueuedEvent(...array_map(fn (\ReflectionParameter $p) => $given[$p->getName()] ?? null, $method->getParameters()));
    }

    public function pop($queue = null)
    {
        $tasks = $this->queue($queue)->reserve(1, null, $this->blockFor);
        if ($tasks === []) {
            return null;
        }
        return new Job($this->container, $this, $tasks[0], $this->connectionName, $this->getQueue($queue));
    }

    protected function createPayloadArray($job, $queue, $data = '')
    {
        $owner = UniqueJobs::ownerOf($job);
        return array_merge(parent::createPayloadArray($job, $queue, $data), [
            'id' => Str::random(32),
            'attempts' => 0,
        ], $owner === null ? [] : ['uniqueOwner' => [UniqueJobs::keyOfJob($job) => $owner]]);
    }

    /**
     * Queues a payload: under its own id, or, when the queue holds a job of
     * that id already (a raw payload pushed twice), under a new one, as
     * Laravel's driver queues both. A delay past the queue's longest
     * (2^31 - 1 s, 68 years) is that longest.
     */
    private function enqueue(string $payload, ?string $queue, $delay, ?array $tags = null): string
    {
        $id = self::idOf($payload);
        $delay = min(max(0, (float) $delay), self::LONGEST_DELAY);
        while ($this->queue($queue)->enqueue($id, $payload, $delay, null, $tags) !== 'added') {
            $id = Str::random(32);
        }
        return $id;
    }

    /** The longest delay a queue takes, in seconds. */
    public const LONGEST_DELAY = 2147483647;

    /** A job's id: its payload's `id`, or `uuid` (raw payloads), or a new one. */
    private static function idOf(string $payload): string
    {
        $decoded = json_decode($payload, true);
        $id = is_array($decoded) ? ($decoded['id'] ?? $decoded['uuid'] ?? null) : null;
        return is_scalar($id) && (string) $id !== '' ? (string) $id : Str::random(32);
    }
}
