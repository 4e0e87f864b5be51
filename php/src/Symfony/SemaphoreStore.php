<?php

declare(strict_types=1);

namespace RedisLock\Symfony;

use RedisLock\Client;
use RedisLock\LockLostException;
use RedisLock\NotHeldException;
use RedisLock\RedisLockException;
use RedisLock\Semaphore;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Exception\SemaphoreExpiredException;
use Symfony\Component\Semaphore\Exception\SemaphoreReleasingException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\PersistingStoreInterface;

/**
 * A Symfony Semaphore store on `RedisLock\Semaphore` (`semaphore:{<resource>}`):
 * a key's weight is the permits it takes of its limit, each under its own
 * lease; a holder that dies gives its permits back when the lease ends.
 * The key holds its `RedisLock\Semaphore` object (released at request end
 * unless the options say `'releaseAtRequestEnd' => false`).
 */
final class SemaphoreStore implements PersistingStoreInterface
{
    /** @param array $options more options of `Client::semaphore()` (autoRenew, maxHold, replicas, replicaTimeout, releaseAtRequestEnd) */
    public function __construct(private Client $client, private array $options = [])
    {
    }

    public function save(Key $key, float $ttlInSecond): void
    {
        try {
            $held = $this->semaphoreOf($key);
            if ($held !== null && $held->isHeld()) {
                $held->extend($ttlInSecond);
                return;
            }
            $semaphore = $this->client->semaphore((string) $key, $key->getLimit(), ['ttl' => $ttlInSecond] + $this->options);
            if (!$semaphore->acquire($key->getWeight(), 0)) {
                throw new SemaphoreAcquiringException($key, 'the limit is reached');
            }
            $key->setState(__CLASS__, $semaphore);
        } catch (RedisLockException $e) {
            // Lost while held, or Redis failed.
            throw new SemaphoreAcquiringException($key, $e->getMessage());
        }
    }

    public function putOffExpiration(Key $key, float $ttlInSecond): void
    {
        try {
            $semaphore = $this->semaphoreOf($key);
            if ($semaphore === null || !$semaphore->extend($ttlInSecond)) {
                // Symfony's own stores word it so, and its tests check the words.
                throw new SemaphoreExpiredException($key, 'the script returns a positive number');
            }
        } catch (NotHeldException | LockLostException) {
            throw new SemaphoreExpiredException($key, 'the script returns a positive number');
        } catch (RedisLockException $e) {
            throw new SemaphoreExpiredException($key, $e->getMessage());
        }
    }

    public function delete(Key $key): void
    {
        $semaphore = $this->semaphoreOf($key);
        $key->removeState(__CLASS__);
        if ($semaphore === null) {
            return;
        }
        try {
            $semaphore->release();
        } catch (NotHeldException | LockLostException) {
            // Nothing held (any more).
        } catch (RedisLockException $e) {
            throw new SemaphoreReleasingException($key, $e->getMessage());
        }
    }

    public function exists(Key $key): bool
    {
        return $this->semaphoreOf($key)?->isHeld() ?? false;
    }

    private function semaphoreOf(Key $key): ?Semaphore
    {
        return $key->hasState(__CLASS__) ? $key->getState(__CLASS__) : null;
    }
}
