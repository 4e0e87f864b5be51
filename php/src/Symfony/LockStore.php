<?php

declare(strict_types=1);

namespace RedisLock\Symfony;

use RedisLock\Client;
use RedisLock\Lock;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;
use RedisLock\RedisLockException;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\SharedLockStoreInterface;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * A Symfony Lock store on redislock's read-write locks, on the key Symfony's
 * stock RedisStore uses (`<resource>`, its format: `exactKey`), so servers on
 * either store never both hold a lock. Blocking acquires wait in the lock's
 * line and are handed the lock by the release, instead of Symfony's 100 ms
 * polling; shared (read) locks, their promotion to the write lock and back
 * are native.
 *
 * The key holds its `RedisLock\Lock` object, so keys are not serializable
 * (as with FlockStore or SemaphoreStore): a lock belongs to the process that
 * took it. Locks are released at request end unless the lock options say
 * `'releaseAtRequestEnd' => false` (needed for Symfony locks made with
 * `autoRelease: false`, which must outlive their object).
 */
final class LockStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface
{
    use ExpiringStoreTrait;

    /**
     * @param float $initialTtl the lease of a new lock, in seconds (Symfony's
     *                          Lock then sets its own ttl)
     * @param array $lockOptions more options of `Client::writeLock()`
     *                           (autoRenew, maxHold, replicas, replicaTimeout,
     *                           releaseAtRequestEnd; exactKey, default true:
     *                           false keeps the locks in `rwlock:{<resource>}`)
     */
    public function __construct(
        private Client $client,
        private float $initialTtl = 300.0,
        private array $lockOptions = [],
    ) {
        if (!($initialTtl > 0)) {
            throw new InvalidTtlException(sprintf('"%s()" expects a strictly positive TTL, got %s.', __METHOD__, $initialTtl));
        }
    }

    public function save(Key $key): void
    {
        $this->take($key, true, 0);
    }

    public function waitAndSave(Key $key): void
    {
        $this->take($key, true, INF);
    }

    public function saveRead(Key $key): void
    {
        $this->take($key, false, 0);
    }

    public function waitAndSaveRead(Key $key): void
    {
        $this->take($key, false, INF);
    }

    public function putOffExpiration(Key $key, float $ttl): void
    {
        $lock = $this->lockOf($key);
        $key->reduceLifetime($ttl);
        try {
            if ($lock === null || !$lock->extend(max($ttl, 0.001))) {
                throw new LockConflictedException();
            }
        } catch (NotHeldException | LockLostException) {
            throw new LockConflictedException();
        } catch (RedisLockException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        $lock = $this->lockOf($key);
        $key->removeState(__CLASS__);
        if ($lock === null) {
            return;
        }
        try {
            $lock->release();
        } catch (NotHeldException | LockLostException) {
            // Not held (any more): nothing to delete.
        } catch (RedisLockException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
    }

    public function exists(Key $key): bool
    {
        try {
            return $this->lockOf($key)?->isHeld() ?? false;
        } catch (RedisLockException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
    }

    /** Takes the write lock ($write) or a read lock of $key, waiting up to $wait seconds. */
    private function take(Key $key, bool $write, float $wait): void
    {
        $key->reduceLifetime($this->initialTtl);
        try {
            $held = $this->lockOf($key);
            if ($held !== null && $held->isHeld()) {
                // Saved again: promoted, demoted or refreshed.
                $done = $write ? $held->promote() : $held->demote();
                if (!$done) {
                    throw new LockConflictedException();
                }
                $held->extend($this->initialTtl);
            } else {
                $options = ['ttl' => $this->initialTtl] + $this->lockOptions + ['exactKey' => true];
                $resource = (string) $key;
                $lock = $write
                    ? $this->client->writeLock($resource, $options)
                    : $this->client->readLock($resource, $options);
                if (!$lock->acquire($wait)) {
                    throw new LockConflictedException();
                }
                $key->setState(__CLASS__, $lock);
                $key->markUnserializable();
            }
        } catch (NotHeldException | LockLostException) {
            throw new LockConflictedException();
        } catch (RedisLockException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        }
        $this->checkNotExpired($key);
    }

    private function lockOf(Key $key): ?Lock
    {
        return $key->hasState(__CLASS__) ? $key->getState(__CLASS__) : null;
    }
}
