<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Queue\ShouldBeUnique;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;

/**
 * The locks of `ShouldBeUnique` jobs (`laravel_unique_job:<class><id>`,
 * taken by Laravel's dispatch on the redislock cache store), followed from
 * the dispatch to the worker so that none leaks and none is released by a
 * job it does not belong to:
 *
 * - the dispatch's lock is remembered with its owner, which goes into the
 *   job's payload when the `redislock` queue queues it; a push that fails
 *   releases it (Laravel's own keeps it until `uniqueFor` ends, or for
 *   ever: laravel/framework#48483), and so does the rollback of the
 *   transaction an `afterCommit` dispatch waited for (#55420);
 * - while a worker runs (or fails) a job of the `redislock` queue, the
 *   release Laravel makes after it (a forced release, whoever holds the
 *   lock) releases only the lock of that job's dispatch: a lock that
 *   expired and was taken again by a later dispatch is left to it
 *   (laravel/framework#59567).
 *
 * @internal the adapters' bookkeeping, per process
 */
final class UniqueJobs
{
    public const PREFIX = 'laravel_unique_job:';

    /** @var array<string, Lock> locks this process took for a dispatch not queued yet, by unique key */
    private static array $taken = [];
    /** @var array<string, array{string, int}> dispatches waiting for a commit: their connection and its transaction level, by unique key */
    private static array $deferred = [];
    /** @var array<string, string> the owners of the running job's lock, by unique key */
    private static array $running = [];

    /** The unique key in a cache lock's name (after the store's prefix), or null. */
    public static function keyOf(string $lockName): ?string
    {
        $at = strpos($lockName, self::PREFIX);
        return $at === false ? null : substr($lockName, $at);
    }

    /** The unique key of a job, as Laravel's UniqueLock names its lock; null for another job. */
    public static function keyOfJob(mixed $job): ?string
    {
        if (!$job instanceof ShouldBeUnique) {
            return null;
        }
        $id = method_exists($job, 'uniqueId') ? $job->uniqueId() : ($job->uniqueId ?? '');
        return self::PREFIX . get_class($job) . $id;
    }

    /** A lock of the store was taken. */
    public static function taken(Lock $lock, string $name): void
    {
        if (($key = self::keyOf($name)) !== null) {
            self::$taken[$key] = $lock;
        }
    }

    /** The owner of the lock this process took for `$job`, which is being queued now. */
    public static function ownerOf(mixed $job): ?string
    {
        $key = self::keyOfJob($job);
        return $key === null || !isset(self::$taken[$key]) ? null : (string) self::$taken[$key]->owner();
    }

    /** `$job` is queued (its payload carries its owner): its lock is the job's now. */
    public static function queued(mixed $job): void
    {
        if (($key = self::keyOfJob($job)) !== null) {
            unset(self::$taken[$key], self::$deferred[$key]);
        }
    }

    /** `$job` could not be queued: the lock its dispatch took is released. */
    public static function notQueued(mixed $job): void
    {
        if (($key = self::keyOfJob($job)) !== null) {
            self::release($key);
        }
    }

    /**
     * `$job` is queued when the transaction at `$level` of the database
     * connection `$connection` commits (`afterCommit`).
     */
    public static function deferred(mixed $job, string $connection, int $level): void
    {
        $key = self::keyOfJob($job);
        if ($key !== null && isset(self::$taken[$key])) {
            self::$deferred[$key] = [$connection, $level];
        }
    }

    /**
     * The connection `$connection` rolled back to `$level`: the dispatches
     * that waited for a transaction above it are never queued (Laravel
     * drops them), and their locks are released (Laravel's own keeps them:
     * laravel/framework#55420).
     */
    public static function rolledBack(string $connection, int $level): void
    {
        foreach (self::$deferred as $key => [$on, $at]) {
            if ($on === $connection && $at > $level) {
                self::release($key);
            }
        }
    }

    private static function release(string $key): void
    {
        (self::$taken[$key] ?? null)?->release();
        unset(self::$taken[$key], self::$deferred[$key]);
    }

    /** What a request's end forgets: dispatches that never reached this queue. */
    public static function forgetTaken(): void
    {
        self::$taken = self::$deferred = [];
    }

    /**
     * Runs `$fn` (a worker running or failing a job) with the owner of the
     * job's unique lock, from its payload, as the one to release.
     */
    public static function whileRunning(array $payload, callable $fn): mixed
    {
        $before = self::$running;
        self::$running = is_array($payload['uniqueOwner'] ?? null) ? array_map('strval', $payload['uniqueOwner']) : [];
        try {
            return $fn();
        } finally {
            self::$running = $before;
        }
    }

    /**
     * The owner a forced release of the lock `$name` is for while a job
     * runs: that job's dispatch's, or null (not a lock of the running job).
     */
    public static function runningOwner(string $name): ?string
    {
        $key = self::keyOf($name);
        return $key === null ? null : (self::$running[$key] ?? null);
    }
}
