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
         * (seconds a renewed lock may be held at most, default 300),
         * `replicas` (int: an acquire counts only once this many replicas
         * acknowledged it, via WAIT; default 0), `replicaTimeout` (seconds to
         * wait for them, default 1; when they fall short, acquire() releases the
         * lock and throws `RedisLock\NotAcquiredException`) and
         * `releaseAtRequestEnd` (bool, default true; false: the lock outlives
         * this object and the request until its lease runs out or a release).
         * `ttl` INF: the lock never expires. `owner` (string): the lock belongs
         * to that owner token rather than to this object; any object created
         * with the same owner, in any process, sees it held, extends and
         * releases it (Laravel's owners).
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Lock
         */
        public function lock(string $name, ?array $options = null): \RedisLock\Lock {}

        /**
         * The locks named in `$names` as one `RedisLock\MultiLock`: taken all
         * or none, in one round trip when they can be (one Redis server, or
         * names that share a Cluster slot through a hash tag), released all at
         * once. Options as `lock()`, but `reentrant`.
         *
         * @param array $names
         * @param array|null $options
         * @return \RedisLock\MultiLock
         */
        public function lockMany(array $names, ?array $options = null): \RedisLock\MultiLock {}

        /**
         * The leased queue named `$name` (sorted set `Queue:<name>`, shared
         * with the seed `RedisQueue`). Options: `lease` (seconds a reserved
         * task stays with its worker, default 30), `maxAttempts` (reserves
         * before a task goes to the dead letters, default 5, 0: no limit),
         * `maxLength` (queued plus leased tasks at most, 0: no limit).
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Queue
         */
        public function queue(string $name, ?array $options = null): \RedisLock\Queue {}

        /**
         * The read lock of the read-write lock named `$name` (key
         * `rwlock:{<name>}`): many readers hold it at once, never beside a
         * writer. Readers and writers wait in one line, first come first
         * served, so a waiting writer stops later readers (no writer
         * starvation). Options and methods as `lock()`; a read lock has no
         * fencing token (`token()` is null).
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Lock
         */
        public function readLock(string $name, ?array $options = null): \RedisLock\Lock {}

        /**
         * Reserves from the first of `$queues` (a list of this client's
         * `RedisLock\Queue`) that has due tasks, waiting up to `$wait` seconds
         * in all of their lines at once. Returns a list of `RedisLock\Task`
         * (`Task::queue()` tells which queue), empty when none came or a signal
         * with a handler ended the wait. `$lease` defaults to the first queue's.
         *
         * @param array $queues
         * @param int $count
         * @param float|null $lease
         * @param float $wait
         * @return mixed
         */
        public function reserve(array $queues, int $count = 1, ?float $lease = null, float $wait = 0): mixed {}

        /**
         * The semaphore named `$name` (key `semaphore:{<name>}`) with
         * `$permits` permits. Options: `ttl` (the lease of permits taken,
         * default 30 s: a holder that dies gives them back then), `autoRenew`,
         * `maxHold`, `replicas`, `replicaTimeout`, as for `lock()`. Each object
         * counts with its own `$permits`: lowering it while others hold more
         * takes nothing from them; new acquires wait until they fit.
         *
         * @param string $name
         * @param int $permits
         * @param array|null $options
         * @return \RedisLock\Semaphore
         */
        public function semaphore(string $name, int $permits = 1, ?array $options = null): \RedisLock\Semaphore {}

        /**
         * The stock counter named `$name` (key `stock:{<name>}`, or
         * `stock:<name>` when the name has a hash tag of its own). Options:
         * `perBuyer` (units one buyer may take at most, 0: no limit) and
         * `orders` (the name of a queue of this client: each take enqueues its
         * order task there in the same step). On a Cluster the stock and its
         * orders queue must share a hash slot: give both names the same hash
         * tag (`{sale42}` and `{sale42}:orders`); other names are refused.
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Stock
         */
        public function stock(string $name, ?array $options = null): \RedisLock\Stock {}

        /**
         * The write lock of the read-write lock named `$name`: one writer, and
         * no reader beside it; fencing tokens as for `lock()`. See `readLock()`.
         *
         * @param string $name
         * @param array|null $options
         * @return \RedisLock\Lock
         */
        public function writeLock(string $name, ?array $options = null): \RedisLock\Lock {}
    }

    /**
     * One named lock, from `RedisLock\Client::lock()` (not constructible with
     * `new`). Released when the object goes away or the request ends.
     */
    class Lock {
        public function __construct() {}

        /**
         * Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
         * limit) in the lock's line, first come first served: the release hands
         * the lock to the next waiter, no polling. Returns false if it was not
         * acquired in time, or a signal with a handler ended the wait.
         *
         * @param float $wait
         * @return bool
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * A write lock held by this object becomes a read lock, letting in the
         * readers waiting at the head of the line; the lease starts anew. True
         * when done, at once for a read lock.
         *
         * @return bool
         */
        public function demote(): bool {}

        /**
         * Sets the lease to `$ttl` seconds (default: the lock's ttl) from now.
         * Throws `NotHeldException` or `LockLostException` as `release()`.
         *
         * @param float|null $ttl
         * @return bool
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Releases the lock whoever holds it (an operator's or a framework's
         * forced release), handing it to the next waiter in line; true if it
         * was held. Plain locks only: read-write locks and semaphores throw.
         *
         * @return bool
         */
        public function forceRelease(): bool {}

        /**
         * Whether this Lock holds the lock and Redis still has its token.
         *
         * @return bool
         */
        public function isHeld(): bool {}

        /**
         * The owner token: the `owner` option's, else the token of the hold
         * this object took (null while it holds none). Another object (in any
         * process) created with it as `owner` speaks for the same holder.
         *
         * @return mixed
         */
        public function owner(): mixed {}

        /**
         * A read lock held by this object becomes the write lock, if no other
         * reader holds it now (it never waits: a writer waiting in line would
         * wait for this very read lock). True when done (`token()` then
         * returns its fencing token), false when other readers hold it (the
         * read lock stays held). The lease starts anew. True at once for a
         * write lock.
         *
         * @return bool
         */
        public function promote(): bool {}

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
         * Seconds left on the lease (INF for a lock without expiry), or null
         * when the lock is not held (any more).
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
         * earlier acquire of this lock name; null when not held, and for a
         * read lock (only writers get one).
         *
         * @return int|null
         */
        public function token(): ?int {}
    }

    /**
     * Several locks taken all or none (not constructible with `new`). Released
     * when the object goes away or the request ends.
     */
    class MultiLock {
        public function __construct() {}

        /**
         * Takes every lock, or none, waiting up to `$wait` seconds (0: one
         * try). When they can be taken at once (one Redis server, or one
         * Cluster slot) the first try is one round trip; then each is waited
         * for in its line, in key order (so no two callers deadlock). Returns
         * false if not all were acquired in time (none is then held).
         *
         * @param float $wait
         * @return bool
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * Sets the lease of every lock to `$ttl` seconds (default: the ttl)
         * from now. Throws as `release()`.
         *
         * @param float|null $ttl
         * @return bool
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Whether this MultiLock holds every lock and Redis still has them.
         *
         * @return bool
         */
        public function isHeld(): bool {}

        /**
         * The names of the locks, in the order they are taken.
         *
         * @return mixed
         */
        public function names(): mixed {}

        /**
         * Releases every lock; true when done. Throws `NotHeldException` if
         * this MultiLock holds none, `LockLostException` if one was lost (the
         * others are released all the same).
         *
         * @return bool
         */
        public function release(): bool {}

        /**
         * The fencing token of each lock held, by name (in key order); empty
         * when not held.
         *
         * @return mixed
         */
        public function tokens(): mixed {}
    }

    /**
     * A queue, from `RedisLock\Client::queue()` (not constructible with `new`).
     */
    class Queue {
        public function __construct() {}

        /**
         * Finishes a task; false if its lease ran out and another worker has
         * it now (or it was acked already).
         *
         * @param \RedisLock\Task $task
         * @return bool
         */
        public function ack(\RedisLock\Task $task): bool {}

        /**
         * Finishes many tasks in one round trip (per 1000); returns how many
         * were still this worker's (see `ack()`).
         *
         * @param array $tasks
         * @return int
         */
        public function ackMany(array $tasks): int {}

        /**
         * The oldest dead letters, up to `$limit` (1 to 1000): a list of
         * ['id', 'payload' => ?string, 'attempts', 'diedAt' => server time].
         *
         * @param int $limit
         * @return mixed
         */
        public function dead(int $limit = 100): mixed {}

        /**
         * Enqueues one task, due after `$delay` seconds (server clock), with an
         * optional payload. `$policy` decides for an id already queued: 'keep'
         * (default, the seed's), 'replace', 'earliest' or 'latest' (that due
         * time wins). Returns 'added', 'updated' or 'ignored'. Throws
         * `QueueFullException` at the queue's `maxLength`.
         *
         * @param string $id
         * @param string|null $payload
         * @param float $delay
         * @param string|null $policy
         * @return string
         */
        public function enqueue(string $id, ?string $payload = null, float $delay = 0, ?string $policy = null): string {}

        /**
         * Enqueues many tasks in one round trip: `$tasks` maps id => payload
         * (null: none). Returns id => 'added' | 'updated' | 'ignored'. At the
         * queue's `maxLength` nothing is enqueued and `QueueFullException` is
         * thrown.
         *
         * @param array $tasks
         * @param float $delay
         * @param string|null $policy
         * @return mixed
         */
        public function enqueueMany(array $tasks, float $delay = 0, ?string $policy = null): mixed {}

        /**
         * Sets the task's lease to `$lease` seconds from now (default: the
         * queue's `lease`); false if the lease is no longer this task's.
         *
         * @param \RedisLock\Task $task
         * @param float|null $lease
         * @return bool
         */
        public function extend(\RedisLock\Task $task, ?float $lease = null): bool {}

        /**
         * The task with id `$id`, wherever it is, without taking it: ['id',
         * 'payload', 'attempts', 'state', 'at'] with state 'queued' (at: due),
         * 'leased' (at: the lease's end) or 'dead' (at: its death), server
         * time; null when there is no such task.
         *
         * @param string $id
         * @return mixed
         */
        public function find(string $id): mixed {}

        /**
         * Counts at one instant: ['ready' => due now, 'delayed', 'leased',
         * 'dead', 'oldestDueAge' => seconds the oldest due task has waited, or
         * null].
         *
         * @return mixed
         */
        public function metrics(): mixed {}

        /**
         * Gives a task back, due again after `$delay` seconds, or to the dead
         * letters when it has used up `maxAttempts`; false if the lease is no
         * longer this task's.
         *
         * @param \RedisLock\Task $task
         * @param float $delay
         * @return bool
         */
        public function nack(\RedisLock\Task $task, float $delay = 0): bool {}

        /**
         * The queue's name.
         *
         * @return mixed
         */
        public function name(): mixed {}

        /**
         * The queued tasks (due now or later), earliest due first, up to
         * `$limit` (1 to 1000), without taking them: a list of ['id', 'payload'
         * => ?string, 'attempts', 'state' => 'queued', 'at' => due, server time].
         *
         * @param int $limit
         * @return mixed
         */
        public function peek(int $limit = 100): mixed {}

        /**
         * Deletes dead letters and their payloads: the given ids, or all of
         * them (null). Returns how many.
         *
         * @param array|null $ids
         * @return int
         */
        public function purgeDead(?array $ids = null): int {}

        /**
         * Reserves up to `$count` (1 to 1000) due tasks, each leased for
         * `$lease` seconds (default: the queue's `lease`), waiting up to `$wait`
         * seconds for one in the queue's line of consumers (woken by an enqueue,
         * one consumer per task, or a due time; INF: no limit). Returns a list
         * of `RedisLock\Task`, empty when none came or a signal with a handler
         * ended the wait.
         *
         * @param int $count
         * @param float|null $lease
         * @param float $wait
         * @return mixed
         */
        public function reserve(int $count = 1, ?float $lease = null, float $wait = 0): mixed {}

        /**
         * Puts dead letters back in the queue, due now with their attempts
         * reset: the given ids, or all of them (null). Returns how many.
         *
         * @param array|null $ids
         * @return int
         */
        public function retryDead(?array $ids = null): int {}
    }

    /**
     * A lock over independent Redis masters (Redlock): held when a majority
     * of `nodes` took it, for the time left after the elapsed time and the
     * clock drift allowance. Released when the object goes away.
     */
    class Redlock {
        /**
         * `$options`: `nodes` (DSN strings or options arrays, one per
         * independent master; default: the `redislock.redlock_nodes` INI entry,
         * DSNs separated by spaces), `ttl` (seconds, default 30), `driftFactor`
         * (default 0.01) and `drift` (seconds, default 0.002): the clock drift
         * allowance, `ttl * driftFactor + drift`; `retryDelay` (the longest
         * random pause between attempts, seconds, default 0.2).
         *
         * @param string $name
         * @param array|null $options
         */
        public function __construct(string $name, ?array $options = null) {}

        /**
         * Takes the lock on a majority of the nodes, trying again after random
         * pauses for up to `$wait` seconds. False when not acquired;
         * `ConnectionException` (naming each failed node) when too many nodes
         * are out of reach for a majority.
         *
         * @param float $wait
         * @return bool
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * A new lease of `$ttl` seconds (default: the lock's ttl) on every node
         * still holding it; held again only with a majority.
         *
         * @param float|null $ttl
         * @return bool
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Held by this object, within its validity, and a majority of the
         * nodes still has its token.
         *
         * @return bool
         */
        public function isHeld(): bool {}

        /**
         * Releases the lock on every node; true. `NotHeldException` if not
         * held, `LockLostException` if fewer than a majority still had it.
         *
         * @return bool
         */
        public function release(): bool {}

        /**
         * Seconds of validity left (by this process's clock), or null.
         *
         * @return float|null
         */
        public function remaining(): ?float {}
    }

    /**
     * A semaphore, from `RedisLock\Client::semaphore()` (not constructible
     * with `new`). Permits held when the object goes away or the request ends
     * are given back.
     */
    class Semaphore {
        public function __construct() {}

        /**
         * Takes `$permits` permits (1 to the semaphore's count), waiting up to
         * `$wait` seconds (0: one try, INF: no limit) in the semaphore's line,
         * first come first served: a waiter wanting many is never overtaken by
         * later ones wanting few. Returns false if they were not acquired in
         * time, or a signal with a handler ended the wait. Taking all permits
         * hands out a fencing token (`token()`).
         *
         * @param int $permits
         * @param float $wait
         * @return bool
         */
        public function acquire(int $permits = 1, float $wait = 0): bool {}

        /**
         * How many permits are free now (0 when holders hold more than the
         * count, after it was lowered).
         *
         * @return int
         */
        public function available(): int {}

        /**
         * Sets the lease of the permits held to `$ttl` seconds (default: the
         * semaphore's ttl) from now. Throws as `release()`.
         *
         * @param float|null $ttl
         * @return bool
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * How many permits this object holds (0: none).
         *
         * @return int
         */
        public function held(): int {}

        /**
         * Whether this object holds permits and their lease still runs.
         *
         * @return bool
         */
        public function isHeld(): bool {}

        /**
         * The semaphore's count of permits, as this object was created with.
         *
         * @return int
         */
        public function permits(): int {}

        /**
         * Gives the permits back (to the waiters at the head of the line that
         * they fit). Throws `NotHeldException` if this object holds none,
         * `LockLostException` if their lease ran out before.
         *
         * @return bool
         */
        public function release(): bool {}

        /**
         * Seconds left on the lease of the permits held, or null.
         *
         * @return float|null
         */
        public function remaining(): ?float {}

        /**
         * The fencing token of a hold of all the permits; null otherwise.
         *
         * @return int|null
         */
        public function token(): ?int {}

        /**
         * How many wait in the semaphore's line.
         *
         * @return int
         */
        public function waiting(): int {}
    }

    /**
     * A stock, from `RedisLock\Client::stock()` (not constructible with `new`).
     */
    class Stock {
        public function __construct() {}

        /**
         * The units `$buyer` took in this sale.
         *
         * @param string $buyer
         * @return int
         */
        public function bought(string $buyer): int {}

        /**
         * Every buyer of this sale => the units it took.
         *
         * @return mixed
         */
        public function buyers(): mixed {}

        /**
         * Deletes the stock with its buyers and idempotency keys; true if
         * there was any.
         *
         * @return bool
         */
        public function delete(): bool {}

        /**
         * Whether the stock exists (set, and not expired or deleted).
         *
         * @return bool
         */
        public function exists(): bool {}

        /**
         * Gives `$units` back (an order cancelled: with its `$buyer`, whose
         * count goes down; without a buyer: a restock). Returns the units left
         * after it, or false when the stock does not exist (never set, expired,
         * deleted) or the buyer has fewer units than it gives back.
         *
         * @return int|false
         *
         * @param int $units
         * @param string|null $buyer
         * @return mixed
         */
        public function giveBack(int $units = 1, ?string $buyer = null): mixed {}

        /**
         * The stock's name.
         *
         * @return mixed
         */
        public function name(): mixed {}

        /**
         * The units left (0 when the stock does not exist).
         *
         * @return int
         */
        public function remaining(): int {}

        /**
         * Starts a sale of `$units` (>= 0), expiring after `$ttl` seconds (null:
         * never); the buyers and idempotency keys of an earlier sale are
         * forgotten.
         *
         * @param int $units
         * @param float|null $ttl
         * @return bool
         */
        public function set(int $units, ?float $ttl = null): bool {}

        /**
         * Takes `$units` in one round trip, on the server: never below zero,
         * never past the per-buyer limit (`perBuyer`, of the stock or of this
         * take) for `$buyer`, and, with the stock's `orders` queue, enqueues
         * the order task in the same step (the units are taken if and only if
         * the task exists). Options: `key` (an idempotency key: a take retried
         * with the same key takes nothing more and returns what the first one
         * did), `perBuyer`, `task` (the order task's id; default: the `key`, or
         * a new unique id) and `payload` (the order task's payload). Returns
         * the units left after the take (0 for the last one: compare with
         * `!== false`), or false when not enough are left or the buyer's limit
         * would be passed.
         *
         * @return int|false
         *
         * @param int $units
         * @param string|null $buyer
         * @param array|null $options
         * @return mixed
         */
        public function take(int $units = 1, ?string $buyer = null, ?array $options = null): mixed {}
    }

    /**
     * A reserved task, from `RedisLock\Queue::reserve()`: ack or nack it with
     * the queue while its lease runs.
     */
    class Task {
        public function __construct() {}

        /**
         * How many times the task has been reserved, this time included.
         *
         * @return int
         */
        public function attempts(): int {}

        /**
         * The task's id.
         *
         * @return mixed
         */
        public function id(): mixed {}

        /**
         * The task's payload, null if it has none.
         *
         * @return mixed
         */
        public function payload(): mixed {}

        /**
         * The name of the queue it came from.
         *
         * @return mixed
         */
        public function queue(): mixed {}
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
         * `$timeout` seconds (0: once) in the lock's line, first come first
         * served: the release hands the lock to the next waiter. A signal with a
         * handler ends the wait (false). `$waitIntervalUs` is only the longest
         * gap between re-checks of the first in line.
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
