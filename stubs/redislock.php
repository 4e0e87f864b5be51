<?php

// Stubs for redislock

namespace RedisLock {
    /**
     * The object API's entry point: one Redis server (DSN or options), handing
     * out locks.
     */
    class Client {
        /**
         * `$connection`: null for the `redislock.*` INI defaults, a DSN string,
         * or an options array (dsn, host, port, socket, database, username,
         * password, timeout, read_timeout, prefix).
         *
         * @param mixed $connection
         */
        public function __construct(mixed $connection = null) {}

        /**
         * A lock named `$name` (key `lock:{<name>}`). Options: `ttl` (lease in
         * seconds, default 30), `reentrant` (bool: the process may acquire it
         * again, and only the last release frees it), `autoRenew` (bool: a
         * background thread keeps the lease alive while held), `maxHold`
         * (seconds a renewed lock may be held at most, default 300).
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Lock
         */
        public function lock(string $name, ?array $options = null): \RedisLock\Lock {}
    }

    /**
     * One named lock, from `RedisLock\Client::lock()` (not constructible with
     * `new`). Released when the object goes away or the request ends.
     */
    class Lock {
        public function __construct() {}

        /**
         * Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
         * limit). A waiter wakes as soon as the lock is released or its lease
         * runs out; no polling. Returns false if it was not acquired in time.
         *
         * @param float $wait
         * @return bool
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * Sets the lease to `$ttl` seconds (default: the lock's ttl) from now.
         * Throws `NotHeldException` or `LockLostException` as `release()`.
         *
         * @param float|null $ttl
         * @return bool
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Whether this Lock holds the lock and Redis still has its token.
         *
         * @return bool
         */
        public function isHeld(): bool {}

        /**
         * Releases the lock; true when done. A reentrant lock is freed by the
         * last release of the process's holds. Throws `NotHeldException` if
         * this Lock does not hold it, `LockLostException` if it was lost
         * before the release (lease ran out, key taken, renewal failed).
         *
         * @return bool
         */
        public function release(): bool {}

        /**
         * Seconds left on the lease, or null when the lock is not held (any more).
         *
         * @return float|null
         */
        public function remaining(): ?float {}

        /**
         * Runs `$fn` holding the lock and returns its result; the lock is
         * released afterwards, also when `$fn` throws (its exception then
         * propagates). Waits up to `$wait` seconds for the lock, then throws
         * `NotAcquiredException`. If the lock was lost while `$fn` ran,
         * throws `LockLostException` after it.
         *
         * @param callable $fn
         * @param float $wait
         * @return mixed
         */
        public function synchronized(callable $fn, float $wait = 10): mixed {}

        /**
         * The fencing token of the current hold: larger than that of every
         * earlier acquire of this lock name; null when not held.
         *
         * @return int|null
         */
        public function token(): ?int {}
    }
}

namespace {
    /**
     * Order locks: `order_lock_<id>` holds an id from `INCR lock_unique_id`.
     */
    class Lock_Service {
        public const REDIS_CONFIG_HOST = '127.0.0.1';

        public const REDIS_CONFIG_PORT = 6379;

        public const REDIS_LOCK_DEFAULT_EXPIRE_TIME = 86400;

        public const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';

        public const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';

        /**
         * The seed class has no constructor of its own, so `new Lock_Service()`
         * works there (and its methods are static).
         */
        public function __construct() {}

        /**
         * Locks an order for `$intExpireTime` seconds. Returns the lock id (an
         * int that strictly increases: a fencing token), or false if the order
         * is already locked or the arguments are empty.
         *
         * @return int|false
         *
         * @param mixed $intOrderId
         * @param mixed $intExpireTime
         * @return mixed
         */
        public static function addLock(mixed $intOrderId, mixed $intExpireTime = 86400): mixed {}

        /**
         * A new unique id from `INCR lock_unique_id`.
         *
         * @return int
         */
        public static function generateUniqueLockId(): int {}

        /**
         * Unlocks an order if it is still locked with `$intLockId`; true only if
         * this call removed the lock.
         *
         * @param mixed $intOrderId
         * @param mixed $intLockId
         * @return bool
         */
        public static function releaseLock(mixed $intOrderId, mixed $intLockId): bool {}
    }

    class RedisLock {
        /**
         * `$param`: null for the `redislock.*` INI defaults, a DSN string, or an
         * options array (dsn, host, port, socket, database, username, password,
         * timeout, read_timeout, prefix).
         *
         * @param mixed $param
         */
        public function __construct(mixed $param = null) {}

        /**
         * Sets the lease of a lock this instance holds to `max($expire, 1)`
         * seconds; false if it does not hold it (any more).
         *
         * @param mixed $name
         * @param mixed $expire
         * @return bool
         */
        public function expire(mixed $name, mixed $expire): bool {}

        /**
         * True only if this instance took the lock and Redis still holds its token.
         *
         * @param mixed $name
         * @return bool
         */
        public function isLocking(mixed $name): bool {}

        /**
         * Takes the lock `Lock:<name>` for `$expire` seconds, trying for up to
         * `$timeout` seconds (0: once). A waiter wakes as soon as the lock is
         * released; `$waitIntervalUs` is only the longest gap between re-checks.
         *
         * @param mixed $name
         * @param mixed $timeout
         * @param mixed $expire
         * @param mixed $waitIntervalUs
         * @return bool
         */
        public function lock(mixed $name, mixed $timeout = 0, mixed $expire = 15, mixed $waitIntervalUs = 100000): bool {}

        /**
         * Releases the lock if this instance still holds it; true only if this
         * call deleted it. The instance forgets the lock in any case.
         *
         * @param mixed $name
         * @return bool
         */
        public function unlock(mixed $name): bool {}

        /**
         * Releases every lock this instance holds; true if all were released.
         *
         * @return bool
         */
        public function unlockAll(): bool {}
    }

    class RedisQueue {
        /**
         * `$param`: null for the INI defaults, a DSN string, or an options array.
         *
         * @param mixed $param
         */
        public function __construct(mixed $param = null) {}

        /**
         * Removes task `$id` only if its score is still `$score` (as `pop` or
         * `top` returned it); false if it was queued again since, or is gone.
         *
         * @param mixed $name
         * @param mixed $id
         * @param mixed $score
         * @param mixed $timeout
         * @return bool
         */
        public function dequeue(mixed $name, mixed $id, mixed $score, mixed $timeout = 10): bool {}

        /**
         * Queues task `$id` (or each id of an array) due `$afterInterval`
         * seconds from now by the Redis server's clock. An id already queued
         * keeps its score. `$timeout` is accepted for compatibility.
         *
         * @param mixed $name
         * @param mixed $id
         * @param mixed $timeout
         * @param mixed $afterInterval
         * @return bool
         */
        public function enqueue(mixed $name, mixed $id, mixed $timeout = 10, mixed $afterInterval = 0): bool {}

        /**
         * Removes and returns up to `$count` due tasks, earliest first: for
         * `$count == 1` one `['id' => string, 'score' => float]` or false, else
         * a list of them.
         *
         * @return array|false
         *
         * @param mixed $name
         * @param mixed $count
         * @param mixed $timeout
         * @return mixed
         */
        public function pop(mixed $name, mixed $count = 1, mixed $timeout = 10): mixed {}

        /**
         * Returns up to `$count` due tasks without removing them (shapes as `pop`).
         *
         * @return array|false
         *
         * @param mixed $name
         * @param mixed $count
         * @return mixed
         */
        public function top(mixed $name, mixed $count = 1): mixed {}
    }
}
