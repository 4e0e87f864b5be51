<?php

// Stubs of the redislock extension, for PHPStan, Psalm and IDEs: never load
// this file in a PHP that has the extension. `make test` checks it against
// the built extension's reflection (StubsTest): every class, method,
// parameter, default and native type, and the return types against what
// the methods return.

namespace RedisLock {
    /**
     * The base of every exception of the extension: Redis out of reach or
     * answering with an error, and the lock and queue outcomes below.
     */
    class RedisLockException extends \RuntimeException {}

    /** Redis could not be reached, or the connection broke mid-call. */
    class ConnectionException extends RedisLockException {}

    /** Redis answered with an error (a script error, OOM, READONLY, ...). */
    class ServerException extends RedisLockException {}

    /** The lock was lost before the call: lease ran out, key taken, renewal failed. */
    class LockLostException extends RedisLockException {}

    /** The object does not hold the lock (never took it, or released it). */
    class NotHeldException extends RedisLockException {}

    /** Not acquired: `synchronized()` timed out, or too few replicas acknowledged. */
    class NotAcquiredException extends RedisLockException {}

    /** The queue is at its `maxLength`: nothing of the refused chunk of 1000 was enqueued (the message says how many of the batch were before it). */
    class QueueFullException extends RedisLockException {}

    /**
     * The object API's entry point: one Redis server (DSN or options), handing
     * out locks, semaphores, queues and stocks. Connects on first use.
     */
    class Client {
        /**
         * `$connection`: null for the `redislock.*` INI defaults, a DSN string
         * (`redis://`, `rediss://`, `unix://`, `redis+cluster://`,
         * `redis+sentinel://`), a connection name of `redislock.connections`
         * (any other string), an options array, or a phpredis `\Redis` or
         * Predis client (its server, database, credentials and prefix).
         *
         * @param string|array{dsn?: string, host?: string, port?: int, socket?: string, database?: int, username?: string, password?: string, timeout?: int|float, read_timeout?: int|float, prefix?: string, tls_ca?: string, tls_cert?: string, tls_key?: string}|null|\Redis $connection
         */
        public function __construct(mixed $connection = null) {}

        /**
         * What `var_dump()` shows: the server as messages name it (never a
         * password), the database and the key prefix.
         *
         * @return array{server: string, database: int, prefix: string}
         */
        public function __debugInfo(): array {}

        /**
         * Decides `$cost` against several limits at once, all or none
         * (`$limits`: `Limiter` objects, or `[Limiter, $key]` pairs: per IP,
         * per user, global): consumed from every one when all allow, from
         * none when one refuses; `Decision::limiter()` and `key()` name the
         * first that refused. One round trip; on a Cluster the limiters'
         * names must share a hash tag.
         *
         * @param non-empty-list<Limiter|array{0: Limiter, 1: string|null}> $limits
         * @param positive-int $cost
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function attempt(array $limits, int $cost = 1): Decision {}

        /**
         * Releases the lock `$name` of `$kind` (as `lockState()`'s: null or
         * `'lock'`, `'exact'`, `'RedisLock'`, `'semaphore'`, `'rwlock'`,
         * `'Lock_Service'`) whoever
         * holds it (a semaphore or read-write lock: every holder), handing it
         * to the next waiters in line: an operator's forced release, also of
         * the drop-in `RedisLock`'s locks. True if it was held. The holder's
         * next release or extend finds it lost.
         *
         * @param 'lock'|'exact'|'RedisLock'|'seed'|'semaphore'|'rwlock'|'Lock_Service'|null $kind
         * @throws \ValueError an empty name, or an unknown kind
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function forceRelease(string $name, ?string $kind = null): bool {}

        /**
         * The batches of jobs named `$name` (keys `batches:{<name>}`...): a
         * batch's counts of jobs, pending and failed, each changed in one
         * step, as Laravel's `Bus::batch()` keeps them
         * (`RedisLock\Laravel\BatchRepository`).
         */
        public function batches(string $name): Batches {}

        /**
         * A candidate for leading `$name` (keys `leader:{<name>}`...): one
         * leader at a time across every process, renewed while its process
         * lives, with a term (a fencing token) that grows with every new
         * leader. Options: `ttl` (the lease, default 10 s: a leader that dies
         * is followed within it) and `releaseAtRequestEnd` (default true;
         * false: it leads past the request, for as long as the process
         * lives).
         *
         * @param array{ttl?: int|float, releaseAtRequestEnd?: bool}|null $options
         */
        public function leader(string $name, ?array $options = null): Leader {}

        /**
         * The rate limiter named `$name` (keys `limit:{<name>}:...`, one per
         * limited key, each gone once idle for its period). Options: `limit`
         * (cost units per period, required), `per` (the period in seconds,
         * required), `policy`: `'token_bucket'` (the default: GCRA, refilled
         * continuously, holding up to `burst`, default `limit`),
         * `'sliding_window'` (at most `limit` in any window of `per` seconds)
         * or `'fixed_window'` (at most `limit` in a window that starts at its
         * first admission, as Laravel's `RateLimiter` counts). Every decision
         * is made by one script on the server's clock.
         *
         * @param array{limit?: positive-int, per?: int|float, policy?: 'token_bucket'|'sliding_window'|'fixed_window', burst?: positive-int}|null $options
         */
        public function limiter(string $name, ?array $options = null): Limiter {}

        /**
         * A lock named `$name` (key `lock:{<name>}`). Options: `ttl` (lease in
         * seconds, default 30; INF: never expires), `reentrant` (the process
         * may acquire it again, and only the last release frees it),
         * `autoRenew` (a background thread keeps the lease alive while held),
         * `maxHold` (seconds a renewed lock may be held at most, default 300),
         * `replicas` (an acquire counts only once this many replicas
         * acknowledged it, via WAIT; default 0), `replicaTimeout` (seconds to
         * wait for them, default 1; when they fall short, acquire() releases
         * the lock and throws `NotAcquiredException`), `releaseAtRequestEnd`
         * (default true; false: the lock outlives this object and the request
         * until its lease runs out or a release), `owner` (the lock belongs
         * to that owner token rather than to this object: any object created
         * with the same owner, in any process, sees it held, extends and
         * releases it) and `exactKey` (the lock is the key `<prefix><name>`
         * itself holding the owner token: the key and value of Laravel's
         * stock cache locks, so both exclude each other).
         *
         * @param array{ttl?: int|float, reentrant?: bool, autoRenew?: bool, maxHold?: int|float, replicas?: int, replicaTimeout?: int|float, releaseAtRequestEnd?: bool, owner?: string, exactKey?: bool}|null $options
         */
        public function lock(string $name, ?array $options = null): Lock {}

        /**
         * The locks named in `$names` as one `MultiLock`: taken all or none,
         * in one round trip when they can be (one Redis server, or names that
         * share a Cluster slot through a hash tag), released all at once.
         * Options as `lock()`, but `reentrant` and `owner`.
         *
         * @param non-empty-list<string> $names
         * @param array{ttl?: int|float, autoRenew?: bool, maxHold?: int|float, replicas?: int, replicaTimeout?: int|float, releaseAtRequestEnd?: bool}|null $options
         */
        public function lockMany(array $names, ?array $options = null): MultiLock {}

        /**
         * How the lock `$name` stands, for an operator: `held`, `remaining`
         * (seconds left of its lease; null when free or without expiry),
         * `token` (the holder's fencing token; null when free, and for drop-in
         * locks), `holder` (host, pid and process title of the process that
         * holds it; null when free or unknown), `waiting` (waiters in line),
         * `holders` (how many hold it), `permits` (a semaphore's permits in
         * use; for the other kinds, one per holder) and `total` (a semaphore's
         * permits in all, as the last holder to take permits counted them; null
         * while none are held, and for the other kinds). `$kind`: null or `'lock'` for
         * `lock()`'s locks, `'exact'` for those with `exactKey`, `'RedisLock'` for
         * the drop-in `RedisLock`'s (`'seed'`, its old name, is read as it
         * until the next release), `'semaphore'`, `'rwlock'` (`readLock()`
         * and `writeLock()` without `exactKey`; of several holders, `holder`
         * and `remaining` are the one whose lease ends last), `'Lock_Service'`
         * (the drop-in `Lock_Service`'s order locks, named by order id: key
         * `order_lock_<id>`).
         *
         * @param 'lock'|'exact'|'RedisLock'|'seed'|'semaphore'|'rwlock'|'Lock_Service'|null $kind
         * @return array{held: bool, remaining: float|null, token: int|null, holder: array{host: string, pid: int, process: string}|null, waiting: int<0, max>, holders: int<0, max>, permits: int<0, max>, total: int<1, max>|null}
         * @throws \ValueError an empty name, or an unknown kind
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function lockState(string $name, ?string $kind = null): mixed {}

        /**
         * Up to `$limit` (1 to 10000) locks whose names match the glob
         * `$pattern` (null: all; Redis' MATCH syntax), of every kind, found
         * with SCAN: `lockState()`'s arrays with `name` and `kind` first,
         * sorted by kind, then name. Exact-key locks are found by their
         * fencing counters: those held now and taken through this API within
         * an hour of their last lease's end. One server: not on a Cluster.
         *
         * @return list<array{name: string, kind: 'lock'|'exact'|'RedisLock'|'semaphore'|'rwlock'|'Lock_Service', held: bool, remaining: float|null, token: int|null, holder: array{host: string, pid: int, process: string}|null, waiting: int<0, max>, holders: int<0, max>, permits: int<0, max>, total: int<1, max>|null}>
         * @throws \ValueError an empty pattern, a limit out of range, or a Cluster
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function locks(?string $pattern = null, int $limit = 100): mixed {}

        /**
         * A fresh owner token of this process, as a lock makes for itself:
         * an `owner` option with it speaks for one holder in any request, and
         * an inspection finds this process behind it (`lockState()`'s
         * `holder`).
         *
         * @return non-empty-string
         */
        public function newOwner(): string {}

        /**
         * The server's clock (Redis `TIME`): Unix seconds, to the microsecond.
         * The clock limiters, `once()` slots and leases go by, whatever this
         * machine's clock says. One round trip (on a Cluster: some node's clock).
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function time(): float {}

        /**
         * The seed's `Lock_Service` order locks on keys of your own: `$template`
         * with one `%s` where the order id goes (null: `order_lock_%s`) and the
         * id counter `$counter` (null: `lock_unique_id`), both under this
         * client's prefix. Its methods are `Lock_Service`'s, on this client's
         * connection, so an app whose copy of `Lock_Service` used keys of its
         * own (`APP_ENV . '_lock_%s'`) keeps them: old and new processes
         * exclude each other during a rolling deploy.
         *
         * @throws \ValueError a template without exactly one `%s` (or with another `%`), an empty counter
         */
        public function orderLocks(?string $template = null, ?string $counter = null): OrderLocks {}

        /**
         * Claims the slot `$slot` of the work `$name` (a date, an order id, a
         * deploy id; null: the current period of `everySeconds` on the
         * server's clock, so client clocks cannot split one): `won()` is
         * true for exactly one caller per name and slot across every process
         * and server. Options: `everySeconds` (the slot's length, instead of
         * `$slot`), `retryAfter` (seconds after which a run that did not call
         * `done()` may be claimed again; null, the default: never), `keep`
         * (seconds a slot's record is kept, default 86400: the same slot can
         * be claimed again after that) and `claim` (false: only read the
         * slot, `won()` false). One round trip (two for `everySeconds`); key
         * `once:{<name>}:s:<slot>`.
         *
         * @param array{everySeconds?: int|float, retryAfter?: int|float|null, keep?: int|float, claim?: bool}|null $options
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function once(string $name, ?string $slot = null, ?array $options = null): Slot {}

        /**
         * The leased queue named `$name` (sorted set `Queue:<name>`, shared
         * with the drop-in `RedisQueue`). Options: `lease` (seconds a reserved
         * task stays with its worker, default 30), `maxAttempts` (reserves
         * before a task goes to the dead letters, default 5, 0: no limit),
         * `maxLength` (queued plus leased tasks at most, 0: no limit), `rate`
         * (`['limit' => ..., 'per' => seconds, 'burst' => ...]`, as
         * `Queue::setRate()` takes them: the queue's from this object's first
         * enqueue or reserve on). The `lease` and `maxAttempts` given are
         * stored with the queue at this object's first enqueue: a worker not
         * given its own takes them. `partitions` (1 to 128, default 1): the
         * queue kept in that many partitions, each in a hash slot of its own,
         * so that a Cluster spreads one queue over its primaries; a task goes
         * to its group's partition, or without a group to its id's, and
         * `reserve()` takes from each in turn (docs/past-one-node.md). Every
         * client of the queue must give the same count.
         *
         * @param array{lease?: int|float, maxAttempts?: int, maxLength?: int, rate?: array<'limit'|'per'|'burst', int|float>, partitions?: int<1, 128>}|null $options
         */
        public function queue(string $name, ?array $options = null): Queue {}

        /**
         * The queues kept in partitions (`['partitions' => N]`), name =>
         * partition count, sorted by name: what an operator's tool passes to
         * `queue()` to see such a queue whole.
         *
         * @return array<string, int<2, 128>>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function queuePartitions(): mixed {}

        /**
         * The names of the queues on this server, sorted: every queue a task
         * was ever enqueued to (its first enqueue registers it).
         *
         * @return list<string>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function queues(): mixed {}

        /**
         * The key prefixes under which queues exist on this server, sorted
         * (`''`: none), this client's own among them when it has queues: every
         * app's, whatever prefix each uses (Laravel's `laravel_database_`). A
         * `Client` with `['prefix' => $prefix]` lists and opens that prefix's
         * queues. Kept by the first enqueue of each queue; queues made before
         * that was kept are found once with SCAN (not on a Cluster). A user whose
         * ACL keeps it to its prefix's keys is told its own prefix alone.
         *
         * @return list<string>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function queuePrefixes(): mixed {}

        /**
         * The read lock of the read-write lock named `$name` (key
         * `rwlock:{<name>}`): many readers hold it at once, never beside a
         * writer. Readers and writers wait in one line, first come first
         * served, so a waiting writer stops later readers (no writer
         * starvation). Options as `lock()`, but `owner`; a read lock has no
         * fencing token (`token()` is null). `exactKey`: the read-write lock
         * is the key `<prefix><name>` itself, a sorted set of its holders in
         * the format of Symfony's stock RedisStore, so both exclude each
         * other.
         *
         * @param array{ttl?: int|float, reentrant?: bool, autoRenew?: bool, maxHold?: int|float, replicas?: int, replicaTimeout?: int|float, releaseAtRequestEnd?: bool, exactKey?: bool}|null $options
         */
        public function readLock(string $name, ?array $options = null): Lock {}

        /**
         * Reserves from the first of `$queues` (this client's queues) that
         * has due tasks, waiting up to `$wait` seconds in all of their lines
         * at once. Returns the tasks (`Task::queue()` tells which queue),
         * none when none came or a signal with a handler ended the wait.
         * Each queue's own lease and `maxAttempts` apply to its tasks;
         * `$lease` sets the lease for all.
         *
         * @param non-empty-list<Queue> $queues
         * @return list<Task>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function reserve(array $queues, int $count = 1, ?float $lease = null, float $wait = 0): mixed {}

        /**
         * The semaphore named `$name` (key `semaphore:{<name>}`) with
         * `$permits` permits. Options: `ttl` (the lease of permits taken,
         * default 30 s: a holder that dies gives them back then), `autoRenew`,
         * `maxHold`, `replicas`, `replicaTimeout`, `releaseAtRequestEnd`, as
         * for `lock()`. Each object counts with its own `$permits`: lowering
         * it while others hold more takes nothing from them; new acquires
         * wait until they fit.
         *
         * @param positive-int $permits
         * @param array{ttl?: int|float, autoRenew?: bool, maxHold?: int|float, replicas?: int, replicaTimeout?: int|float, releaseAtRequestEnd?: bool}|null $options
         */
        public function semaphore(string $name, int $permits = 1, ?array $options = null): Semaphore {}

        /**
         * The stock counter named `$name` (key `stock:{<name>}`, or
         * `stock:<name>` when the name has a hash tag of its own). Options:
         * `perBuyer` (units one buyer may take at most, 0: no limit), `orders`
         * (the name of a queue of this client: each take enqueues its order
         * task there in the same step), `shards` (1 to 128, default 1: the
         * units kept in that many counters, each in a hash slot of its own, so
         * that a Cluster spreads one hot stock over its primaries; every client
         * of the stock must give the same count), `replicas` (a take counts
         * only once this many replicas acknowledged it, via WAIT; one that
         * fewer did is undone and throws `NotAcquiredException`; default 0)
         * and `replicaTimeout` (seconds to wait for them, default 1). On a
         * Cluster the stock and its orders queue must share a hash slot: give
         * both names the same hash tag (`{sale42}` and `{sale42}:orders`);
         * other names are refused. A stock in shards enqueues its order tasks
         * on the orders queue kept in as many partitions (open it with
         * `['partitions' => $shards]`), each in its shard's partition.
         *
         * @param array{perBuyer?: int, orders?: string, shards?: int, replicas?: int, replicaTimeout?: float}|null $options
         */
        public function stock(string $name, ?array $options = null): Stock {}

        /**
         * The write lock of the read-write lock named `$name`: one writer, and
         * no reader beside it; fencing tokens as for `lock()`. See `readLock()`.
         *
         * @param array{ttl?: int|float, reentrant?: bool, autoRenew?: bool, maxHold?: int|float, replicas?: int, replicaTimeout?: int|float, releaseAtRequestEnd?: bool, exactKey?: bool}|null $options
         */
        public function writeLock(string $name, ?array $options = null): Lock {}
    }

    /**
     * The batches of jobs of one name, from `Client::batches()`: each
     * batch's counts of jobs, pending and failed, changed in one step.
     */
    class Batches {
        /** Not constructible with `new`: see `Client::batches()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name.
         *
         * @return array{name: string}
         */
        public function __debugInfo(): array {}

        /**
         * Makes a batch named `$name` (any bytes, '' too), keeping `$options`
         * (any bytes; null: '') with it as given, under a new id (a
         * time-ordered UUID: a later batch's id sorts after). Returns its
         * record: `id`, `name`, `options`, `total`, `pending`, `failed`
         * (counts), `failedIds` (the jobs that failed and were not done since,
         * in the order they first failed), `createdAt`, `cancelledAt` and
         * `finishedAt` (Unix seconds of the server's clock; null: not yet).
         *
         * @return array{id: string, name: string, options: string, total: int, pending: int, failed: int, failedIds: list<string>, createdAt: float, cancelledAt: float|null, finishedAt: float|null}
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function create(string $name, ?string $options = null): mixed {}

        /**
         * The record of the batch `$id` (see `create()`), null when there is none.
         *
         * @return array{id: string, name: string, options: string, total: int, pending: int, failed: int, failedIds: list<string>, createdAt: float, cancelledAt: float|null, finishedAt: float|null}|null
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function find(string $id): mixed {}

        /**
         * Up to `$limit` (at most 10000) records, the newest first; with
         * `$before`, only the batches made before the batch of that id (the
         * next page after it). Two round trips.
         *
         * @return list<array{id: string, name: string, options: string, total: int, pending: int, failed: int, failedIds: list<string>, createdAt: float, cancelledAt: float|null, finishedAt: float|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function list(int $limit = 50, ?string $before = null): mixed {}

        /**
         * Adds `$jobs` jobs (0 to 2147483647) to the batch `$id`: to its total
         * and its pending jobs; a finished batch is unfinished again. False
         * when there is no such batch.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function addJobs(string $id, int $jobs): bool {}

        /**
         * Counts the job `$job` of the batch `$id` done, in one step: one job
         * less pending (every call counts, as Laravel's), and the job no
         * longer among the failed ones. Returns the counts after, `['pending'
         * => int, 'failed' => int]`, or null when there is no such batch.
         *
         * @return array{pending: int, failed: int}|null
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function jobDone(string $id, string $job): mixed {}

        /**
         * Counts the job `$job` of the batch `$id` failed, in one step: one
         * failure more (every call counts), the job listed once among the
         * failed ones. Returns the counts after (see `jobDone()`), or null.
         *
         * @return array{pending: int, failed: int}|null
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function jobFailed(string $id, string $job): mixed {}

        /**
         * Marks the batch `$id` finished now; false when there is no such batch.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function finish(string $id): bool {}

        /**
         * Marks the batch `$id` cancelled, and finished, now; false when there
         * is no such batch.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function cancel(string $id): bool {}

        /**
         * Deletes the batch `$id`; false when there was none.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function delete(string $id): bool {}

        /**
         * Deletes the batches that finished before `$before` (Unix seconds),
         * or with `$which` 'unfinished' those not finished and made before it,
         * or 'cancelled' those cancelled and made before it (null:
         * 'finished'); up to 1000 a round trip. Returns how many it deleted.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function prune(float $before, ?string $which = null): int {}
    }

    /**
     * What a limiter decided, from `Limiter::attempt()`, `peek()`, `wait()`
     * and `Client::attempt()`.
     */
    class Decision {
        /** Not constructible with `new`: decisions come from a `Limiter`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: each of the answers below, by name.
         *
         * @return array{allowed: bool, remaining: int, retryAfter: float, resetAfter: float, at: float, limiter: string|null, key: string|null}
         */
        public function __debugInfo(): array {}

        /**
         * Whether it was allowed (and, but for `peek()`, consumed).
         */
        public function allowed(): bool {}

        /**
         * The server's clock at the decision (Unix time, seconds): with
         * `resetAfter()`, an HTTP `RateLimit-Reset`.
         */
        public function at(): float {}

        /**
         * The key of the limit that refused; null when allowed.
         *
         * @return string|null
         */
        public function key(): mixed {}

        /**
         * The name of the limiter that refused (the first, of several); null
         * when allowed.
         *
         * @return non-empty-string|null
         */
        public function limiter(): mixed {}

        /**
         * The cost units left now (after this one, when allowed): the least
         * over the limits decided.
         *
         * @return int<0, max>
         */
        public function remaining(): int {}

        /**
         * Seconds until every limit decided is back to its full capacity.
         */
        public function resetAfter(): float {}

        /**
         * Seconds until the same attempt could be allowed (0.0 when allowed).
         */
        public function retryAfter(): float {}
    }

    /**
     * A candidate for leading a name, from `Client::leader()`.
     */
    class Leader {
        /** Not constructible with `new`: see `Client::leader()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name and this object's term (null
         * when it does not lead, as far as it knows without a round trip).
         *
         * @return array{name: string, term: int|null}
         */
        public function __debugInfo(): array {}

        /**
         * Waits up to `$wait` seconds (null, the default, or INF: no limit;
         * 0: one try) to lead, in the line of candidates (first come first
         * served, no polling). True when this object leads (at once if it
         * did already): its lease is then renewed by a native thread while
         * the process lives (and, unless `releaseAtRequestEnd` is false,
         * until the request ends). False when the wait ran out or a signal
         * with a handler ended it.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function campaign(?float $wait = null): bool {}

        /**
         * Who leads now, for anyone: `term`, `since` (when that term began,
         * server time), `remaining` (seconds left of its lease, renewed while
         * it lives) and `holder` (host, pid and process of the leader; null
         * when not described); null when nobody leads.
         *
         * @return array{term: int|null, since: float|null, remaining: float|null, holder: array{host: string, pid: int, process: string}|null}|null
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function current(): mixed {}

        /**
         * Whether this object leads now: false once its lease was lost (a
         * pause longer than the ttl, Redis unreachable) or it resigned.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function isLeader(): bool {}

        /**
         * The leader's name.
         *
         * @return non-empty-string
         */
        public function name(): mixed {}

        /**
         * Stops leading, handing the lead to the next candidate in line;
         * false when this object did not lead (any more).
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function resign(): bool {}

        /**
         * This leadership's term, the lock's fencing token: larger than every
         * earlier leader's (give it to what the leader writes, to refuse an
         * old leader's writes); null when this object has not won the lead or
         * has resigned (a lead that was lost keeps its term: `isLeader()`
         * tells).
         */
        public function term(): ?int {}
    }

    /**
     * A rate limiter, from `Client::limiter()`.
     */
    class Limiter {
        /** Not constructible with `new`: see `Client::limiter()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name, policy, limit, period and burst.
         *
         * @return array{name: string, policy: string, limit: int, per: float, burst: int|null}
         */
        public function __debugInfo(): array {}

        /**
         * Consumes `$cost` from `$key`'s limit (null or '': the limiter's one
         * shared limit) if it allows, deciding in one round trip on the
         * server's clock. Returns the decision: `allowed()`, `remaining()`,
         * `retryAfter()`, `resetAfter()`.
         *
         * @param positive-int $cost
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function attempt(?string $key = null, int $cost = 1): Decision {}

        /**
         * The limiter's name.
         *
         * @return non-empty-string
         */
        public function name(): mixed {}

        /**
         * What `attempt()` would decide now, consuming nothing.
         *
         * @param positive-int $cost
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function peek(?string $key = null, int $cost = 1): Decision {}

        /**
         * Forgets `$key`'s use (null or '': the shared limit's): it starts
         * full again. True if there was any.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function reset(?string $key = null): bool {}

        /**
         * Attempts until allowed, sleeping between attempts exactly as long
         * as the limit says (no polling), for up to `$timeout` seconds (INF:
         * no limit). Returns the refusal at once when the limit cannot allow
         * within `$timeout`, and when a signal with a handler arrives.
         *
         * @param positive-int $cost
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function wait(?string $key, float $timeout, int $cost = 1): Decision {}
    }

    /**
     * What every kind of lock answers, so that application code can take
     * "a lock" without caring which: `Lock` (read and write locks too),
     * `MultiLock` and `Redlock` implement it (symfony/lock's
     * `LockInterface` plays this part for its users).
     */
    interface LockInterface {
        /**
         * Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
         * limit); false when not acquired in time.
         */
        public function acquire(float $wait = 0): bool;

        /**
         * A new lease of `$ttl` seconds (default: the lock's ttl); exceptions
         * as `release()`.
         *
         * @throws NotHeldException this object does not hold it
         * @throws LockLostException it was lost before
         */
        public function extend(?float $ttl = null): bool;

        /**
         * Whether this object holds the lock and Redis still has it.
         */
        public function isHeld(): bool;

        /**
         * Releases the lock; true.
         *
         * @throws NotHeldException this object does not hold it
         * @throws LockLostException it was lost before
         */
        public function release(): bool;

        /**
         * Seconds left of the hold, or null when not held.
         */
        public function remaining(): ?float;

        /**
         * The fencing token of the current hold, or null (not held, or a
         * kind without one).
         */
        public function token(): ?int;
    }

    /**
     * One named lock, from `Client::lock()`, `readLock()` or `writeLock()`.
     * Released when the object goes away or the request ends.
     */
    class Lock implements LockInterface {
        /** `new` throws an Error saying what to call: `Client::lock()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name and the fencing token of the current
         * hold (from this object, without a round trip; never the owner token).
         *
         * @return array{name: string, token: int|null}
         */
        public function __debugInfo(): array {}

        /**
         * Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
         * limit) in the lock's line, first come first served: the release hands
         * the lock to the next waiter, no polling. False if it was not
         * acquired in time, or a signal with a handler ended the wait.
         *
         * @throws NotAcquiredException fewer replicas than `replicas` acknowledged it
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * A write lock held by this object becomes a read lock, letting in the
         * readers waiting at the head of the line; the lease starts anew. True
         * when done, at once for a read lock.
         *
         * @throws NotHeldException
         * @throws LockLostException
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function demote(): bool {}

        /**
         * Sets the lease to `$ttl` seconds (default: the lock's ttl) from now.
         *
         * @return true
         * @throws NotHeldException this object does not hold the lock
         * @throws LockLostException the lock was lost before the call
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Releases the lock whoever holds it (an operator's or a framework's
         * forced release), handing it to the next waiter in line; true if it
         * was held. Plain locks only: read-write locks and semaphores throw.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function forceRelease(): bool {}

        /**
         * Whether this Lock holds the lock and Redis still has its token.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function isHeld(): bool {}

        /**
         * The owner token: the `owner` option's, else the token of the hold
         * this object took (null while it holds none). Another object (in any
         * process) created with it as `owner` speaks for the same holder.
         *
         * @return non-empty-string|null
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
         * @throws NotHeldException
         * @throws LockLostException
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function promote(): bool {}

        /**
         * Releases the lock. A reentrant lock is freed by the last release of
         * the process's holds.
         *
         * @return true
         * @throws NotHeldException this object does not hold the lock
         * @throws LockLostException it was lost before the release (lease ran out, key taken, renewal failed)
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function release(): bool {}

        /**
         * Seconds left on the lease (INF for a lock without expiry), or null
         * when the lock is not held (any more).
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function remaining(): ?float {}

        /**
         * Runs `$fn` holding the lock and returns its result; the lock is
         * released afterwards, also when `$fn` throws (its exception then
         * propagates). Waits up to `$wait` seconds for the lock.
         *
         * @template T
         * @param callable(): T $fn
         * @return T
         * @throws NotAcquiredException the lock was not acquired within `$wait`
         * @throws LockLostException the lock was lost while `$fn` ran (thrown after it)
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function synchronized(callable $fn, float $wait = 10): mixed {}

        /**
         * The fencing token of the current hold: larger than that of every
         * earlier acquire of this lock name; null when not held, and for a
         * read lock (only writers get one).
         *
         * @return positive-int|null
         */
        public function token(): ?int {}
    }

    /**
     * Several locks taken all or none, from `Client::lockMany()`. Released
     * when the object goes away or the request ends.
     */
    class MultiLock implements LockInterface {
        /** Not constructible with `new`: see `Client::lockMany()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the names and the tokens of the locks held
         * (from this object, without a round trip).
         *
         * @return array{names: non-empty-list<string>, tokens: array<int|string, positive-int>}
         */
        public function __debugInfo(): array {}

        /**
         * Takes every lock, or none, waiting up to `$wait` seconds (0: one
         * try). When they can be taken at once (one Redis server, or one
         * Cluster slot) the first try is one round trip; then each is waited
         * for in its line, in key order (so no two callers deadlock). False if
         * not all were acquired in time (none is then held).
         *
         * @throws NotAcquiredException fewer replicas than `replicas` acknowledged them
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * Sets the lease of every lock to `$ttl` seconds (default: the ttl)
         * from now.
         *
         * @return true
         * @throws NotHeldException this object holds none of the locks
         * @throws LockLostException one was lost before the call
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Whether this MultiLock holds every lock and Redis still has them.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function isHeld(): bool {}

        /**
         * The names of the locks, in the order they are taken.
         *
         * @return non-empty-list<string>
         */
        public function names(): mixed {}

        /**
         * Releases every lock.
         *
         * @return true
         * @throws NotHeldException this object holds none of the locks
         * @throws LockLostException one was lost (the others are released all the same)
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function release(): bool {}

        /**
         * Seconds left of the shortest lease (INF when none expires), or null
         * when not every lock is held.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function remaining(): ?float {}

        /**
         * Null: a MultiLock has a fencing token per lock (`tokens()`), not
         * one of its own (`RedisLock\LockInterface`).
         */
        public function token(): ?int {}

        /**
         * The fencing token of each lock held, by name (in key order); empty
         * when not held. A numeric name is an int key, as PHP makes it.
         *
         * @return array<int|string, positive-int>
         */
        public function tokens(): mixed {}
    }

    /**
     * A leased queue, from `Client::queue()`.
     */
    class Queue {
        /** Not constructible with `new`: see `Client::queue()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the queue's name.
         *
         * @return array{name: string}
         */
        public function __debugInfo(): array {}

        /**
         * Finishes a task; false if its lease ran out and another worker has
         * it now (or it was acked already). `$result` is kept for the task's
         * parent when it is the child of a workflow (see `enqueue()`), given
         * to it by `Task::childResults()`.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function ack(Task $task, ?string $result = null): bool {}

        /**
         * Finishes many tasks in one round trip (per 1000); returns how many
         * were still this worker's (see `ack()`). `$results` holds the results
         * of some of them (see `ack()`), keyed as `$tasks` is.
         *
         * @param list<Task> $tasks
         * @param array<int|string, string|null>|null $results
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function ackMany(array $tasks, ?array $results = null): int {}

        /**
         * Sends a task to the dead letters now, whatever its attempts: for a
         * task no worker can handle (a payload that cannot be decoded), kept
         * there to be looked at, retried or purged, with `$reason` (as for
         * `nack()`). False if the lease is no longer this task's.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function bury(Task $task, ?string $reason = null): bool {}

        /**
         * Removes every task waiting in the queue (see `remove()`), 1000 per
         * round trip: tasks leased to workers finish as usual, dead letters
         * stay. Returns how many were removed.
         *
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function clear(): int {}

        /**
         * The oldest dead letters, up to `$limit` (1 to 1000), with the server
         * time they died at and why (their last nack's or bury's reason, or
         * 'lease ran out'; null when none was given).
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, payload: string|null, attempts: int, diedAt: float, reason: string|null, tags: list<string>, group: string|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function dead(int $limit = 100): mixed {}

        /**
         * Enqueues one task, due after `$delay` seconds (server clock), with an
         * optional payload. `$policy` decides for an id already queued: 'keep'
         * (default, as `RedisQueue`), 'replace', 'earliest' or 'latest' (that due
         * time wins). An id whose task is leased runs once more after that
         * lease ends, never beside it. `$tags` (up to 10, each 1 to 100 bytes
         * without spaces or control bytes) let operators find the task and its
         * recent attempts (`tagged()`, `recent()`); a task added or replaced
         * takes them, as it takes its payload. `$group` (a tenant, a customer:
         * 1 to 100 bytes without spaces or control bytes) puts it in a group:
         * `reserve()` takes due tasks in turn across the queue's groups, so a
         * group with many cannot hold up one with few. With `$children` the
         * task is a parent (a workflow): it is not reservable until its
         * children have ended as `$onChildFailure` says: 'fail' (default: a
         * child going to the dead letters sends the parent there, with a
         * reason naming the child), 'ignore' (it runs once the other children
         * have ended) or 'continue' (it runs at once). Each child is
         * `['queue' => Queue|string, 'id' => string, 'payload' => ?string]`,
         * and may have `children` (and an `onChildFailure`) of its own: a
         * chain is a parent of one child, nested. A string names a queue of
         * one partition of this client. The parent and every child are
         * created whole, or none is: 'ignored' when the parent's id is
         * queued, leased or waiting already, an exception when a child's is.
         * A child's `ack()` result is kept for the parent
         * (`Task::childResults()`). On a Redis Cluster a flow whose queues are
         * in several hash slots is created in one step per slot.
         *
         * @param non-empty-string $id
         * @param 'keep'|'replace'|'earliest'|'latest'|null $policy
         * @param list<string>|null $tags
         * @param list<array{queue: Queue|string, id: string, payload?: string|null, children?: list<array<string, mixed>>, onChildFailure?: 'fail'|'ignore'|'continue'}>|null $children
         * @param 'fail'|'ignore'|'continue'|null $onChildFailure
         * @return 'added'|'updated'|'ignored'
         * @throws QueueFullException the queue is at its `maxLength`
         * @throws RedisLockException Redis out of reach or answering with an error, or a child's id is taken
         */
        public function enqueue(string $id, ?string $payload = null, float $delay = 0, ?string $policy = null, ?array $tags = null, ?string $group = null, ?array $children = null, ?string $onChildFailure = null): string {}

        /**
         * Enqueues many tasks in one round trip per 1000 (each chunk atomic):
         * `$tasks` maps id => payload (null: none); each takes the `$tags` and
         * `$group` (see `enqueue()`). Returns each id's outcome, keyed as
         * `$tasks` is.
         *
         * @param array<int|string, string|null> $tasks
         * @param 'keep'|'replace'|'earliest'|'latest'|null $policy
         * @param list<string>|null $tags
         * @return array<int|string, 'added'|'updated'|'ignored'>
         * @throws QueueFullException the tasks would pass the queue's `maxLength`: none of that chunk was enqueued
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function enqueueMany(array $tasks, float $delay = 0, ?string $policy = null, ?array $tags = null, ?string $group = null): mixed {}

        /**
         * Sets the task's lease to `$lease` seconds from now (default: the
         * queue's `lease`); false if the lease is no longer this task's.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function extend(Task $task, ?float $lease = null): bool {}

        /**
         * The task with id `$id`, wherever it is, without taking it, or null
         * when there is no such task. `at`, in server time: when it is due
         * (state 'queued'), when its lease ends ('leased'), when it died
         * ('dead'). `reason`: why its last attempt failed (a dead letter: why
         * it died), or null. A parent waiting for its children (see
         * `enqueue()`) is in state 'waiting', `at` null, with `children`: how
         * many of them have not ended, and `childStates`: each child
         * (`<queue>/<id>`) in order, 'waiting' or how it ended ('acked',
         * 'dead', 'removed').
         *
         * @param non-empty-string $id
         * @return array{id: string, payload: string|null, attempts: int, state: 'queued'|'leased'|'dead'|'waiting', at: float|null, reason: string|null, tags: list<string>, group: string|null, children?: int<0, max>, childStates?: array<string, 'waiting'|'acked'|'dead'|'removed'>}|null
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function find(string $id): mixed {}

        /**
         * The queue's groups (see `enqueue()`), the one `reserve()` serves next
         * first, up to `$limit` (1 to 1000): `group` (null: the tasks enqueued
         * without one, in a queue that has groups), `queued` (its tasks due
         * now or later, as its hints count them: a task removed since, or taken
         * by the drop-in `RedisQueue::pop()`, counts until a `reserve()` finds
         * it gone), `leased` (its tasks leased now, counted while the queue has
         * a `setGroupConcurrency()`; null otherwise, and for the tasks without
         * a group) and `throttled` (the seconds its own `throttle()` has left;
         * 0: none).
         *
         * @param int<1, 1000> $limit
         * @return list<array{group: string|null, queued: int<0, max>, leased: int<0, max>|null, throttled: float}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function groups(int $limit = 100): mixed {}

        /**
         * The `totals` of `metrics()` per 10 seconds of server time over the
         * last 10 minutes: 60 periods, oldest first, each with `at` (when it
         * began, Unix time); the last one is still running.
         *
         * @return list<array{at: int, enqueued: int<0, max>, acked: int<0, max>, nacked: int<0, max>, retried: int<0, max>, dead: int<0, max>, expired: int<0, max>}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function history(): mixed {}

        /**
         * What the queue's recent attempts take in Redis: `kept` (records held
         * now), `bytes` (the memory of their list, Redis' `MEMORY USAGE`;
         * null where the server refuses that command), `keep`, `seconds` and
         * `maxBytes` (the terms they are kept by: `keepRecent()`'s; `maxBytes`
         * null: no bound).
         *
         * @return array{kept: int<0, max>, bytes: int<0, max>|null, keep: int<0, 100000>, seconds: float, maxBytes: int<1, max>|null}
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function recentFootprint(): mixed {}

        /**
         * Sets how many recent attempts the queue keeps (`$count`, 0 to
         * 100000; 0 keeps none and records none), for how long (`$seconds`,
         * up to a year) and, when `$maxBytes` is given (1 to 2^40), only as
         * many of the newest as fit in that many bytes of records (a
         * partitioned queue's partitions share it out): what is past them goes
         * now. These terms replace the earlier ones. Stored with the queue, for
         * every worker.
         *
         * @param int<0, 100000> $count
         * @param int<1, 1099511627776>|null $maxBytes
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function keepRecent(int $count, float $seconds = 3600, ?int $maxBytes = null): bool {}

        /**
         * The tasks leased to workers now, the earliest lease end first, up to
         * `$limit` (1 to 1000): why its last attempt failed (`reason`), when
         * it was reserved (`leasedAt`, null for a lease of an earlier
         * release) and its lease ends (`until`), server time, and its worker
         * (null when the process is not described).
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, payload: string|null, attempts: int, reason: string|null, leasedAt: float|null, until: float, worker: array{host: string, pid: int, process: string}|null, tags: list<string>, group: string|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function leased(int $limit = 100): mixed {}

        /**
         * Counts at one instant: `ready` (due now), `delayed`, `leased`,
         * `dead`, `oldestDueAge` (seconds the oldest due task has waited,
         * null when none is due), `paused` (when `pause()` paused its
         * consumers, server time; null when they take tasks), `throttled`
         * (until when `throttle()` keeps them from taking tasks, server time;
         * null when it does not), `groups` (how many groups have tasks queued;
         * see `groups()`), and `totals`: what happened to its tasks
         * since the queue was first used (`enqueued`; `acked`, the drop-in `RedisQueue`'s
         * pop and dequeue included; `nacked` back to the queue; `retried`
         * from the dead letters; `dead` out of attempts; `expired` leases
         * that ran out).
         *
         * @return array{ready: int<0, max>, delayed: int<0, max>, leased: int<0, max>, dead: int<0, max>, oldestDueAge: float|null, paused: float|null, throttled: float|null, groups: int<0, max>, waiting: int<0, max>, totals: array{enqueued: int<0, max>, acked: int<0, max>, nacked: int<0, max>, retried: int<0, max>, dead: int<0, max>, expired: int<0, max>}}
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function metrics(): mixed {}

        /**
         * Moves the tasks waiting here (due now or later, as many as it held
         * when the move began) to `$to`: another name, prefix, database or
         * server. Each keeps its id, payload, attempts and last failure, and
         * its due time relative to the server's clock (so their order). This
         * queue is paused meanwhile (unless it was already; then it stays
         * paused), so each task runs on one side only. Leased tasks, the
         * reruns of leased ids and dead letters stay. A task `$to` already
         * holds under its id stays as it is there, and the one here is
         * removed. Returns how many tasks left this queue. A move to the queue
         * itself (the same keys on the same server, whatever address reaches
         * it) is a `ValueError` before anything changes; `$to`'s `maxLength`
         * stops it with `QueueFullException` (nothing of that batch moved).
         * Between queues kept in different partition counts each task goes to
         * its partition there, by its group or id: how a queue's count changes
         * (docs/past-one-node.md).
         *
         * @return int<0, max>
         * @throws QueueFullException `$to` is at its `maxLength`
         * @throws RedisLockException Redis out of reach or answering with an error; a move cut short leaves this queue paused (its message says so)
         */
        public function moveTo(Queue $to): int {}

        /**
         * Gives a task back, due again after `$delay` seconds, or to the dead
         * letters when it has used up `maxAttempts`; `$reason` says why this
         * attempt failed (its first 1000 bytes are kept, shown by `find()`,
         * `peek()` and the dead letter). False if the lease is no longer this
         * task's.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function nack(Task $task, float $delay = 0, ?string $reason = null): bool {}

        /**
         * The queue's name.
         *
         * @return non-empty-string
         */
        public function name(): mixed {}

        /**
         * `metrics()` of each partition, in partition order (one entry for a
         * queue of one slot): `metrics()` is their sum.
         *
         * @return list<array{ready: int<0, max>, delayed: int<0, max>, leased: int<0, max>, dead: int<0, max>, oldestDueAge: float|null, paused: float|null, throttled: float|null, groups: int<0, max>, waiting: int<0, max>, totals: array{enqueued: int<0, max>, acked: int<0, max>, nacked: int<0, max>, retried: int<0, max>, dead: int<0, max>, expired: int<0, max>}}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function partitionMetrics(): mixed {}

        /**
         * How many partitions the queue is kept in (the `partitions` option; 1:
         * one hash slot).
         *
         * @return int<1, 128>
         */
        public function partitions(): int {}

        /**
         * Stops the queue's consumers taking tasks: `reserve()` (a waiting one
         * keeps waiting) and the drop-in `RedisQueue::pop()` get none until
         * `resume()`. Leased tasks finish as usual; enqueues go on. False when
         * it was paused already.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function pause(): bool {}

        /**
         * The queued tasks (due now or later), earliest due first, up to
         * `$limit` (1 to 1000), without taking them; `at` is when each is due,
         * in server time, and `reason` why its last attempt failed (or null).
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, payload: string|null, attempts: int, state: 'queued', at: float, reason: string|null, tags: list<string>, group: string|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function peek(int $limit = 100): mixed {}

        /**
         * Deletes dead letters and their payloads: the given ids, or all of
         * them (null). Returns how many.
         *
         * @param list<string>|null $ids
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function purgeDead(?array $ids = null): int {}

        /**
         * The queue's recent attempts, newest first, up to `$limit` (1 to
         * 1000), of the task `$id` and with the tag `$tag` only when given (see
         * `enqueue()`): each attempt that ended with an ack, a nack, a bury or
         * a lease that ran out, with its `id`, `outcome` ('acked', 'nacked',
         * 'expired': due again, or 'dead'), `at` (when it ended, server time),
         * `attempts` (this one included), `runtime` (from its reserve to its
         * end, seconds), `wait` (how long it had been due when it was reserved,
         * seconds), `worker` (the id of the worker's process, as `workers()`
         * names it), `reason` (why it failed, or null) and `tags`. The queue
         * keeps its last 100 for an hour unless `keepRecent()` said otherwise.
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, outcome: 'acked'|'nacked'|'expired'|'dead', at: float, attempts: int|null, runtime: float|null, wait: float|null, worker: string|null, reason: string|null, tags: list<string>, group: string|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function recent(int $limit = 100, ?string $id = null, ?string $tag = null): mixed {}

        /**
         * Gives a task back, due again after `$delay` seconds, without
         * spending the attempt its reserve counted and keeping its last
         * failure: for a task that did not fail but must wait (the API it
         * calls answered 429; see `throttle()`). False if the lease is no
         * longer this task's.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function release(Task $task, float $delay = 0): bool {}

        /**
         * Removes the tasks waiting under these ids: queued (due now or
         * later), or enqueued again while their id runs. A task leased to a
         * worker stays with it (its ack or nack settles it); dead letters are
         * `purgeDead()`'s. Returns how many were removed.
         *
         * @param list<string> $ids
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function remove(array $ids): int {}

        /**
         * Reserves up to `$count` (1 to 1000) due tasks, each leased for
         * `$lease` seconds (default: the queue's `lease`), waiting up to `$wait`
         * seconds for one in the queue's line of consumers (woken by an enqueue,
         * one consumer per task, or a due time; INF: no limit). None when none
         * came or a signal with a handler ended the wait; none while the queue
         * is paused (`pause()`: a waiting call keeps waiting for the resume).
         * `$ack`: tasks this worker finished, acked first as by `ackMany()`
         * (a task whose lease went to another worker is not), in the same
         * round trip: a worker loop's one round trip per task.
         *
         * @param int<1, 1000> $count
         * @param list<Task>|null $ack
         * @return list<Task>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function reserve(int $count = 1, ?float $lease = null, float $wait = 0, ?array $ack = null): mixed {}

        /**
         * Lets the queue's consumers take tasks again, waking the waiting
         * ones. False when it was not paused.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function resume(): bool {}

        /**
         * Puts dead letters back in the queue, due now with their attempts
         * reset: the given ids, or all of them (null), the oldest first.
         * Returns how many. One that would take the queue past its
         * `maxLength` stops the retry with `QueueFullException`: those before
         * it are retried, it and the rest stay dead letters.
         *
         * @param list<string>|null $ids
         * @return int<0, max>
         * @throws QueueFullException the queue is at its `maxLength`: the rest stay dead letters
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function retryDead(?array $ids = null): int {}

        /**
         * Holds each group of the queue (see `enqueue()`; not the tasks
         * enqueued without one) to `$concurrency` leased tasks at once, across
         * all workers: `reserve()` passes over a group at its limit, and a
         * waiting `reserve()` takes the group's next task when one of its
         * leases ends (ack, nack, bury, release or run out). Null: no limit.
         * Stored with the queue; the tasks leased when a limit is first set
         * count.
         *
         * @param int<1, 1000000000>|null $concurrency
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function setGroupConcurrency(?int $concurrency = null): bool {}

        /**
         * `setRate()` for each group of the queue (not the tasks enqueued
         * without one), each with a bucket of its own: `reserve()` hands out
         * at most `$limit` tasks of a group per `$per` seconds, `$burst` at
         * once. Null: no rate per group. Stored with the queue.
         *
         * @param int<1, 1000000000>|null $limit
         * @param int<1, 1000000000>|null $burst
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function setGroupRate(?int $limit = null, float $per = 1, ?int $burst = null): bool {}

        /**
         * Sets the queue's rate, which every worker keeps: `reserve()` hands
         * out at most `$limit` tasks per `$per` seconds across all workers,
         * and at most `$burst` (default `$limit`) at once, on the server's
         * clock (a token bucket). A task that waits for the rate stays
         * queued, its attempts untouched, and a waiting `reserve()` takes it
         * when the rate allows (without polling). Null: no rate. Stored with
         * the queue.
         *
         * @param int<1, 1000000000>|null $limit
         * @param int<1, 1000000000>|null $burst
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function setRate(?int $limit = null, float $per = 1, ?int $burst = null): bool {}

        /**
         * The tasks with the tag `$tag` (see `enqueue()`), up to `$limit` (1 to
         * 1000), as `find()` shows them, the earliest `at` of them all first:
         * queued, leased and dead (ask for one more to know whether there are
         * more). It reads the tags of every task of the queue, 1000 per round
         * trip: a search for operators, not for a worker's loop.
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, payload: string|null, attempts: int, state: 'queued'|'leased'|'dead', at: float, reason: string|null, tags: list<string>, group: string|null}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function tagged(string $tag, int $limit = 100): mixed {}

        /**
         * Keeps every consumer of the queue from taking tasks for `$seconds`
         * (a rate limit the tasks' API answered with: `reserve()` and the
         * drop-in `RedisQueue::pop()` get none, and a waiting `reserve()`
         * takes tasks again when the throttle ends, without polling), or
         * longer when a longer throttle is in force; 0 ends it now. With
         * `$group`, only that group's tasks wait (one tenant's API said 429),
         * and `reserve()` goes on with the other groups'. The tasks and their
         * attempts are not touched. Returns the seconds it lasts from now.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function throttle(float $seconds, ?string $group = null): float {}

        /**
         * The processes consuming the queue, the last seen first, up to
         * `$limit` (1 to 1000): `id` (the process's id in its tokens), its
         * `host`, `pid` and `process` (null once its description expired),
         * `since` (when it started using redislock, its own clock), `seen`
         * (when it last reserved, server time) and `done` (tasks it acked).
         * A worker not seen for a day is forgotten.
         *
         * @param int<1, 1000> $limit
         * @return list<array{id: string, host: string|null, pid: int|null, process: string|null, since: float|null, seen: float, done: int<0, max>}>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function workers(int $limit = 100): mixed {}
    }

    /**
     * A lock over independent Redis masters (Redlock): held when a majority
     * of `nodes` took it, for the time left after the elapsed time and the
     * clock drift allowance. Released when the object goes away.
     */
    class Redlock implements LockInterface {
        /**
         * `$options`: `nodes` (DSN strings or options arrays, one per
         * independent master; default: the `redislock.redlock_nodes` INI entry,
         * DSNs separated by spaces), `ttl` (seconds, default 30), `driftFactor`
         * (default 0.01) and `drift` (seconds, default 0.002): the clock drift
         * allowance, `ttl * driftFactor + drift`; `retryDelay` (the longest
         * random pause between attempts, seconds, default 0.2);
         * `releaseAtRequestEnd` (bool, default true; false: a hold outlives
         * this object and the request until its validity ends or a release).
         *
         * @param array{nodes?: non-empty-list<string|array<string, mixed>>, ttl?: int|float, driftFactor?: int|float, drift?: int|float, retryDelay?: int|float, releaseAtRequestEnd?: bool}|null $options
         */
        public function __construct(string $name, ?array $options = null) {}

        /**
         * What `var_dump()` shows: the name and the nodes' servers (never a
         * password), without a round trip.
         *
         * @return array{name: string, nodes: non-empty-list<string>}
         */
        public function __debugInfo(): array {}

        /**
         * Takes the lock on a majority of the nodes, trying again after random
         * pauses for up to `$wait` seconds. False when not acquired.
         *
         * @throws ConnectionException too many nodes are out of reach for a majority (it names each)
         */
        public function acquire(float $wait = 0): bool {}

        /**
         * A new lease of `$ttl` seconds (default: the lock's ttl) on every node
         * still holding it; held again only with a majority.
         *
         * @return true
         * @throws NotHeldException this object does not hold the lock
         * @throws LockLostException fewer than a majority still had it
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * Held by this object, within its validity, and a majority of the
         * nodes still has its token.
         */
        public function isHeld(): bool {}

        /**
         * Releases the lock on every node.
         *
         * @return true
         * @throws NotHeldException this object does not hold the lock
         * @throws LockLostException fewer than a majority still had it
         */
        public function release(): bool {}

        /**
         * Seconds of validity left (by this process's clock), or null.
         */
        public function remaining(): ?float {}

        /**
         * Null: a Redlock has no fencing token (each node would count its
         * own; `RedisLock\LockInterface`).
         */
        public function token(): ?int {}
    }

    /**
     * The request boundary of runtimes whose process serves many requests
     * (RoadRunner, FrankenPHP's worker mode, Laravel Octane, Swoole, queue
     * workers): PHP's own request end never comes there, so the loop calls
     * `endRequest()` after each request.
     */
    class Runtime {
        /** Not constructible with `new`: its methods are static. */
        private function __construct() {}

        /**
         * Ends the request for the locks, as the end of a PHP-FPM or CLI
         * request does: stops every lease renewal, releases every lock
         * still held (unless `redislock.release_at_request_end` is off, or
         * the lock was made with `releaseAtRequestEnd` false: those are
         * left to their leases) and forgets reentrant holds and the
         * request's trace parent (`Telemetry::setParent()`). Lock objects
         * that live on (in a static, a service) hold nothing afterwards.
         *
         * @return int<0, max> how many locks were released
         */
        public static function endRequest(): int {}

        /**
         * The Redis keys of the locks this process holds now (a lock taken
         * twice, reentrantly, once): what the next `endRequest()` lets go of.
         *
         * @return list<non-empty-string>
         */
        public static function held(): mixed {}
    }

    /**
     * OpenTelemetry spans and metrics of the extension's work, exported
     * over OTLP/HTTP: on when the environment names a collector
     * (`OTEL_EXPORTER_OTLP_ENDPOINT`), see docs/operating.md.
     */
    class Telemetry {
        /** Not constructible with `new`: its methods are static. */
        private function __construct() {}

        /**
         * Whether spans and metrics are exported: the environment names an
         * OTLP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the `_TRACES_`
         * or `_METRICS_` one) and `OTEL_SDK_DISABLED` is not `true`.
         */
        public static function enabled(): bool {}

        /**
         * Makes the span of W3C `traceparent` (and `tracestate`) the parent
         * of the spans this request starts from now on: the request's own
         * span, as an incoming `traceparent` header or an OpenTelemetry PHP
         * SDK gives it. Null or "" unsets it. False, and unset, when
         * `$traceparent` is not a valid one. The request's end unsets it.
         */
        public static function setParent(?string $traceparent = null, ?string $tracestate = null): bool {}

        /**
         * The parent `setParent()` set for this request, as a `traceparent`
         * (null: none).
         */
        public static function parent(): ?string {}

        /**
         * Exports the spans and metrics not yet exported and waits for them
         * (at most the exporter timeout, `OTEL_EXPORTER_OTLP_TIMEOUT`): true
         * when all went, or telemetry is off. The end of the process
         * flushes too; a long-running worker may flush between tasks.
         */
        public static function flush(): bool {}
    }

    /**
     * A semaphore, from `Client::semaphore()`. Permits held when the object
     * goes away or the request ends are given back.
     */
    class Semaphore {
        /** Not constructible with `new`: see `Client::semaphore()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name, the count of permits, how many this
         * object holds and its token (without a round trip).
         *
         * @return array{name: string, permits: int, held: int, token: int|null}
         */
        public function __debugInfo(): array {}

        /**
         * Takes `$permits` permits (1 to the semaphore's count), waiting up to
         * `$wait` seconds (0: one try, INF: no limit) in the semaphore's line,
         * first come first served: a waiter wanting many is never overtaken by
         * later ones wanting few. False if they were not acquired in time, or
         * a signal with a handler ended the wait. Taking all permits hands out
         * a fencing token (`token()`).
         *
         * @param positive-int $permits
         * @throws NotAcquiredException fewer replicas than `replicas` acknowledged it
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function acquire(int $permits = 1, float $wait = 0): bool {}

        /**
         * A `RedisLock\Lock` that takes `$permits` of this semaphore's permits
         * (the same line, lease and options), for code that takes any
         * `RedisLock\LockInterface`: its `acquire()` waits for them, its
         * `release()` gives them back. An object of its own, apart from this
         * one's hold.
         *
         * @param positive-int $permits
         */
        public function asLock(int $permits = 1): Lock {}

        /**
         * How many permits are free now (0 when holders hold more than the
         * count, after it was lowered).
         *
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function available(): int {}

        /**
         * Sets the lease of the permits held to `$ttl` seconds (default: the
         * semaphore's ttl) from now.
         *
         * @return true
         * @throws NotHeldException this object holds no permits
         * @throws LockLostException their lease ran out before the call
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function extend(?float $ttl = null): bool {}

        /**
         * How many permits this object holds (0: none).
         *
         * @return int<0, max>
         */
        public function held(): int {}

        /**
         * Whether this object holds permits and their lease still runs.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function isHeld(): bool {}

        /**
         * The semaphore's count of permits, as this object was created with.
         *
         * @return positive-int
         */
        public function permits(): int {}

        /**
         * Gives the permits back (to the waiters at the head of the line that
         * they fit).
         *
         * @return true
         * @throws NotHeldException this object holds no permits
         * @throws LockLostException their lease ran out before
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function release(): bool {}

        /**
         * Seconds left on the lease of the permits held, or null.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function remaining(): ?float {}

        /**
         * The fencing token of a hold of all the permits; null otherwise.
         *
         * @return positive-int|null
         */
        public function token(): ?int {}

        /**
         * How many wait in the semaphore's line.
         *
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function waiting(): int {}
    }

    /**
     * A slot of work that runs once, from `Client::once()`.
     */
    class Slot {
        /** Not constructible with `new`: see `Client::once()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the name, the slot and whether this call
         * claimed it.
         *
         * @return array{name: string, slot: string, won: bool}
         */
        public function __debugInfo(): array {}

        /**
         * Says the run finished: true when this call claimed the slot and it
         * is still its (not taken over after `retryAfter`, not forgotten
         * after `keep`); false otherwise, and when it was said already.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function done(): bool {}

        /**
         * The slot: the one given, or for `everySeconds` the start of the
         * server's period (Unix seconds, as a string).
         *
         * @return non-empty-string
         */
        public function slot(): mixed {}

        /**
         * Gives the slot back (a run that failed and should be tried again):
         * true when this call claimed it, has not called `done()` and it is still
         * its; the next caller then claims it as if nobody had.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function release(): bool {}

        /**
         * The slot's record, read now: `slot`, `at` (when it was claimed,
         * server time; null when there is no record), `done` (when its runner
         * called `done()`; null: not, or not yet: a run that died half way),
         * `runs` (how many callers claimed it: more than one when a run that
         * did not finish was taken over) and `holder` (host, pid and process
         * of the last runner; null when unknown).
         *
         * @return array{slot: string, at: float|null, done: float|null, runs: int<0, max>, holder: array{host: string, pid: int, process: string}|null}
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function state(): mixed {}

        /**
         * Whether this call claimed the slot: true for exactly one caller per
         * name and slot (or, with `retryAfter`, per run that did not finish).
         */
        public function won(): bool {}
    }

    /**
     * A stock counter for a sale, from `Client::stock()`.
     */
    class Stock {
        /** Not constructible with `new`: see `Client::stock()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the stock's name (its count is on Redis).
         *
         * @return array{name: string}
         */
        public function __debugInfo(): array {}

        /**
         * The units `$buyer` took in this sale.
         *
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function bought(string $buyer): int {}

        /**
         * Every buyer of this sale => the units it took. A numeric buyer is
         * an int key, as PHP makes it.
         *
         * @return array<int|string, int>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function buyers(): mixed {}

        /**
         * Deletes the stock with its buyers and idempotency keys; true if
         * there was any.
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function delete(): bool {}

        /**
         * Whether the stock exists (set, and not expired or deleted).
         *
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function exists(): bool {}

        /**
         * Gives `$units` back (an order cancelled: with its `$buyer`, whose
         * count goes down; without a buyer: a restock). Returns the units left
         * after it, or false when the stock does not exist (never set, expired,
         * deleted) or the buyer has fewer units than it gives back.
         *
         * @param positive-int $units
         * @return int<0, max>|false
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function giveBack(int $units = 1, ?string $buyer = null): mixed {}

        /**
         * The stock's name.
         *
         * @return non-empty-string
         */
        public function name(): mixed {}

        /**
         * The units left (0 when the stock does not exist).
         *
         * @return int<0, max>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function remaining(): int {}

        /**
         * Starts a sale of `$units` (>= 0), expiring after `$ttl` seconds (null:
         * never); the buyers and idempotency keys of an earlier sale are
         * forgotten.
         *
         * @param int<0, max> $units
         * @return true
         * @throws RedisLockException Redis out of reach or answering with an error
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
         * @param positive-int $units
         * @param array{key?: non-empty-string, perBuyer?: int, task?: non-empty-string, payload?: string}|null $options
         * @return int<0, max>|false
         * @throws QueueFullException the `orders` queue is at its `maxLength`: nothing was taken
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function take(int $units = 1, ?string $buyer = null, ?array $options = null): mixed {}
    }

    /**
     * Order locks of one layout, from `RedisLock\Client::orderLocks()` (not
     * constructible with `new`).
     */
    class OrderLocks {
        /** Not for PHP code: call $client->orderLocks() on a RedisLock\Client. */
        private function __construct() {}

        /**
         * As `Lock_Service::addLock()`, on this layout's keys: locks an order
         * for `$intExpireTime` seconds and returns the lock id (from the id
         * counter, strictly increasing: a fencing token), or false if the order
         * is already locked or an argument is empty or not positive.
         *
         * @param int|string $intOrderId
         * @param int|float|string $intExpireTime
         * @return positive-int|false
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function addLock(mixed $intOrderId, mixed $intExpireTime = 86400): mixed {}

        /**
         * The id counter's key (`lock_unique_id`).
         *
         * @return non-empty-string
         */
        public function counter(): mixed {}

        /**
         * As `Lock_Service::generateUniqueLockId()`: a new id from this layout's
         * counter.
         *
         * @return positive-int
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function generateUniqueLockId(): int {}

        /**
         * As `Lock_Service::releaseLock()`: unlocks an order if it is still
         * locked with `$intLockId`; true only if this call removed the lock.
         *
         * @param int|string $intOrderId
         * @param int|string $intLockId
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function releaseLock(mixed $intOrderId, mixed $intLockId): bool {}

        /**
         * The key template (`order_lock_%s`).
         *
         * @return non-empty-string
         */
        public function template(): mixed {}
    }

    /**
     * A reserved task, from `Queue::reserve()` or `Client::reserve()`: ack or
     * nack it with its queue while its lease runs.
     */
    class Task {
        /** Not constructible with `new`: tasks come from `reserve()`. */
        private function __construct() {}

        /**
         * What `var_dump()` shows: the queue, id, payload and attempts.
         *
         * @return array{queue: string, id: string, payload: string|null, attempts: int}
         */
        public function __debugInfo(): array {}

        /**
         * How many times the task has been reserved, this time included.
         *
         * @return positive-int
         */
        public function attempts(): int {}

        /**
         * The results of the task's children, when it is the parent of a
         * workflow (see `Queue::enqueue()`): `'<queue>/<id>' => result` (null:
         * acked without one) for each child that was acked, in the order they
         * were given; the children that went to the dead letters (policy
         * 'ignore' or 'continue') or had not ended (policy 'continue') are not
         * in it. An empty array for a task without children. Asks Redis.
         *
         * @return array<string, string|null>
         * @throws RedisLockException Redis out of reach or answering with an error
         */
        public function childResults(): array {}

        /**
         * The task's id.
         *
         * @return non-empty-string
         */
        public function id(): mixed {}

        /**
         * The task's payload, null if it has none.
         *
         * @return string|null
         */
        public function payload(): mixed {}

        /**
         * The name of the queue it came from.
         *
         * @return non-empty-string
         */
        public function queue(): mixed {}
    }
}

namespace {
    /**
     * The drop-in order locks: `order_lock_<id>` holds an id from
     * `INCR lock_unique_id`. The methods are static.
     */
    class Lock_Service {
        public const REDIS_CONFIG_HOST = '127.0.0.1';

        public const REDIS_CONFIG_PORT = 6379;

        public const REDIS_LOCK_DEFAULT_EXPIRE_TIME = 86400;

        public const REDIS_LOCK_KEY_TEMPLATE = 'order_lock_%s';

        public const REDIS_LOCK_UNIQUE_ID_KEY = 'lock_unique_id';

        /**
         * The original class has no constructor of its own, so `new Lock_Service()`
         * works there too.
         */
        public function __construct() {}

        /**
         * Locks an order for `$intExpireTime` seconds. Returns the lock id (an
         * int that strictly increases: a fencing token), or false if the order
         * is already locked or an argument is empty.
         *
         * @param int|string $intOrderId
         * @param int|float|string $intExpireTime
         * @return positive-int|false
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public static function addLock(mixed $intOrderId, mixed $intExpireTime = 86400) {}

        /**
         * A new unique id from `INCR lock_unique_id`.
         *
         * @return positive-int
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public static function generateUniqueLockId() {}

        /**
         * The seed's public helper: a phpredis `\Redis` connected to
         * `$strIp:$intPort`, or, with both omitted, to the server (database,
         * credentials, key prefix) the order locks use. An `Error` where
         * phpredis is not loaded.
         *
         * @param string $strIp
         * @param int $intPort
         * @return \Redis
         * @throws \Error phpredis is not loaded
         */
        public static function getRedisConn(mixed $strIp = '127.0.0.1', mixed $intPort = 6379) {}

        /**
         * Unlocks an order if it is still locked with `$intLockId`; true only if
         * this call removed the lock.
         *
         * @param int|string $intOrderId
         * @param int|string $intLockId
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public static function releaseLock(mixed $intOrderId, mixed $intLockId) {}
    }

    /**
     * The drop-in named locks (`Lock:<name>`), held by this instance.
     */
    class RedisLock {
        /**
         * `$param`: null for the `redislock.*` INI defaults, a DSN string (it
         * has `://`), a connection name of `redislock.connections` (any other
         * string), an options array as for `RedisLock\Client`, or a phpredis
         * `\Redis` or Predis client (its server, database, credentials and
         * prefix).
         *
         * @param string|array{dsn?: string, host?: string, port?: int, socket?: string, database?: int, username?: string, password?: string, timeout?: int|float, read_timeout?: int|float, prefix?: string, tls_ca?: string, tls_cert?: string, tls_key?: string}|null|\Redis $param
         */
        public function __construct(mixed $param = null) {}

        /**
         * Sets the lease of a lock this instance holds to `max($expire, 1)`
         * seconds; false if it does not hold it (any more).
         *
         * @param string $name
         * @param int|float $expire
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function expire(mixed $name, mixed $expire) {}

        /**
         * As the seed: while this instance holds the lock, its expiry time in
         * whole unix seconds (the server's clock) as a string; "" when the
         * instance took it but the key is gone or no longer its own; false when
         * the instance never took it.
         *
         * @param string $name
         * @return string|false
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function isLocking(mixed $name) {}

        /**
         * Takes the lock `Lock:<name>` for `$expire` seconds, trying for up to
         * `$timeout` seconds (0: once) in the lock's line, first come first
         * served: the release hands the lock to the next waiter. A signal with a
         * handler ends the wait (false). `$waitIntervalUs` is only the longest
         * gap between re-checks of the first in line.
         *
         * @param string $name
         * @param int|float $timeout
         * @param int|float $expire
         * @param int $waitIntervalUs
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function lock(mixed $name, mixed $timeout = 0, mixed $expire = 15, mixed $waitIntervalUs = 100000) {}

        /**
         * Releases the lock if this instance still holds it; true only if this
         * call deleted it. The instance forgets the lock in any case.
         *
         * @param string $name
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function unlock(mixed $name) {}

        /**
         * Releases every lock this instance holds; true if all were released.
         *
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function unlockAll() {}
    }

    /**
     * The drop-in delay queue: sorted sets `Queue:<name>` of task ids scored
     * by when they are due (the Redis server's clock).
     */
    class RedisQueue {
        /**
         * `$param`: null for the `redislock.*` INI defaults, a DSN string (it
         * has `://`), a connection name of `redislock.connections` (any other
         * string), an options array as for `RedisLock\Client`, or a phpredis
         * `\Redis` or Predis client (its server, database, credentials and
         * prefix).
         *
         * @param string|array{dsn?: string, host?: string, port?: int, socket?: string, database?: int, username?: string, password?: string, timeout?: int|float, read_timeout?: int|float, prefix?: string, tls_ca?: string, tls_cert?: string, tls_key?: string}|null|\Redis $param
         */
        public function __construct(mixed $param = null) {}

        /**
         * Removes task `$id` only if its score is still `$score` (as `pop` or
         * `top` returned it): the seed's `(float)` delete count, 1.0; false if
         * it was queued again since, or is gone.
         *
         * @param string $name
         * @param int|string $id
         * @param int|float $score
         * @param int $timeout accepted for compatibility
         * @return float|false
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function dequeue(mixed $name, mixed $id, mixed $score, mixed $timeout = 10) {}

        /**
         * Queues task `$id` (or each id of a list) due `$afterInterval`
         * seconds from now by the Redis server's clock. An id already queued
         * keeps its score.
         *
         * @param string $name
         * @param int|string|list<int|string> $id
         * @param int $timeout accepted for compatibility
         * @param int|float $afterInterval
         * @return bool
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function enqueue(mixed $name, mixed $id, mixed $timeout = 10, mixed $afterInterval = 0) {}

        /**
         * Removes and returns up to `$count` due tasks, earliest first: for
         * `$count == 1` one task or false, else a list of them (an empty list
         * for an empty name or a `$count` below 1). An id that is a canonical
         * decimal integer comes back an int, as the original's array keys made it.
         *
         * @param string $name
         * @param int $count
         * @param int $timeout accepted for compatibility
         * @return array{id: int|string, score: float}|list<array{id: int|string, score: float}>|false
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function pop(mixed $name, mixed $count = 1, mixed $timeout = 10) {}

        /**
         * Returns up to `$count` due tasks without removing them (shapes as `pop`).
         *
         * @param string $name
         * @param int $count
         * @return array{id: int|string, score: float}|list<array{id: int|string, score: float}>|false
         * @throws \RedisLock\RedisLockException Redis out of reach or answering with an error
         */
        public function top(mixed $name, mixed $count = 1) {}
    }
}
