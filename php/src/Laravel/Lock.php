<?php

declare(strict_types=1);

namespace RedisLock\Laravel;

use Illuminate\Contracts\Cache\LockTimeoutException;
use RedisLock\Client;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;

/**
 * Laravel's cache lock on a redislock lock: `block()` waits in the lock's
 * line and gets the lock handed over at its release (no 250 ms polling);
 * the owner token is the lock's, so `restoreLock($name, $owner)` in another
 * request or job speaks for the same holder; `$seconds <= 0` is a lock
 * without expiry, as in Laravel. The lock outlives this object and the
 * request: only a release, a forced release or its lease ends it.
 *
 * The lock is Laravel's own key (`<prefix><cache prefix><name>`) holding
 * the owner, as Laravel's Redis store keeps it (`exactKey`): servers still
 * on Laravel's store and servers on this one exclude each other. A lock
 * without an owner gets one that names this process, so `locks()` and the
 * CLI show who holds it.
 */
class Lock extends \Illuminate\Cache\Lock
{
    /** Null for the empty owner, which redislock cannot hold with (restoreLock($name, '')). */
    private ?\RedisLock\Lock $lock = null;
    /** Whether this object took the lock (and has not released it since). */
    private bool $taken = false;
    private Client $client;

    /**
     * @param string $connection the name of the Laravel Redis connection the
     *                           client speaks to (getConnectionName())
     */
    public function __construct(Client $client, private string $connection, $name, $seconds, $owner = null)
    {
        parent::__construct($name, $seconds, $owner ?? $client->newOwner());
        $this->client = $client;
        if ((string) $this->owner !== '') {
            $this->lock = $this->newLock();
        }
    }

    private function newLock(): \RedisLock\Lock
    {
        return $this->client->lock((string) $this->name, [
            'ttl' => $this->seconds > 0 ? $this->seconds : INF,
            'owner' => (string) $this->owner,
            'releaseAtRequestEnd' => false,
            'exactKey' => true,
        ]);
    }

    /**
     * Laravel's contract is a bool: a lock this object holds already is
     * not acquired again (false, as the stock store's SET NX says); one
     * whose lease ran out meanwhile is taken anew.
     */
    public function acquire()
    {
        return $this->take(0);
    }

    private function take(float $wait): bool
    {
        if ($this->lock === null) {
            return false;
        }
        if ($this->taken) {
            if ($this->lock->isHeld()) {
                return false;
            }
            $this->lock = $this->newLock();
        }
        $this->taken = $this->lock->acquire($wait);
        if ($this->taken) {
            UniqueJobs::taken($this, (string) $this->name);
        }
        return $this->taken;
    }

    /**
     * Waits up to `$seconds` for the lock in its line (a release hands it
     * over at once); throws `LockTimeoutException` when that runs out.
     */
    public function block($seconds, $callback = null)
    {
        if (!$this->take(max(0, (float) $seconds))) {
            throw new LockTimeoutException();
        }
        if (!is_callable($callback)) {
            return true;
        }
        try {
            return $callback();
        } finally {
            $this->release();
        }
    }

    /** True when this owner held the lock and it is now released. */
    public function release()
    {
        if ($this->lock === null) {
            return false;
        }
        $this->taken = false;
        try {
            return $this->lock->release();
        } catch (NotHeldException | LockLostException) {
            return false;
        }
    }

    /**
     * Releases the lock whoever holds it; except the lock of a unique job
     * that a worker of the `redislock` queue runs, which Laravel releases
     * this way after the job: only the lock of that job's dispatch is
     * released then, never one a later dispatch took (UniqueJobs).
     */
    public function forceRelease()
    {
        $this->taken = false;
        $owner = UniqueJobs::runningOwner((string) $this->name);
        if ($owner !== null) {
            (new self($this->client, $this->connection, $this->name, 0, $owner))->release();
            return;
        }
        ($this->lock ?? $this->client->lock((string) $this->name, ['exactKey' => true]))->forceRelease();
    }

    /** The owner when it holds the lock, else null (another owner, or none). */
    protected function getCurrentOwner()
    {
        return $this->lock?->isHeld() ? $this->owner : null;
    }

    /** The Laravel Redis connection the lock lives on. */
    public function getConnectionName()
    {
        return $this->connection;
    }

    /** The redislock lock underneath (fencing token, remaining lease...). */
    public function redisLock(): \RedisLock\Lock
    {
        return $this->lock ?? throw new \LogicException('a lock restored with the empty owner has no redislock lock');
    }
}
