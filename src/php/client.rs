//! `RedisLock\Client`: the entry point of the object API, one per Redis
//! server (or DSN), handing out `RedisLock\Lock` objects.

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;

use ext_php_rs::types::{ZendHashTable, Zval};

use super::batches::Batches;
use super::injected::Connection;
use super::inspect;
use super::leader::{self, Leader};
use super::limiter::{self, Decision, Limiter};
use super::lock::{self, Lock};
use super::multi_lock::{MultiLock, names_param};
use super::once::{self, Slot};
use super::order_locks::OrderLocks;
use super::queue::{self, Queue, task_list};
use super::semaphore::{Semaphore, permits_param};
use super::stock::Stock;
use super::value::{
    Arg, Float, Int, List, NullableArray, NullableFloat, NullableText, Opt, Text, Value, flag,
    natural, non_empty, opt, read_options, type_error, value_error,
};
use super::{config_from_connection, engine, positive_seconds};
use crate::config::Config;
use crate::conn;
use crate::lock::hold::Hold;
use crate::lock::order;

/// The object API's entry point: one Redis server (DSN or options), handing
/// out locks.
#[php_class]
#[php(name = "RedisLock\\Client")]
pub struct Client {
    config: Arc<Config>,
}

const DEFAULT_TTL: f64 = 30.0;
const DEFAULT_MAX_HOLD: f64 = 300.0;
/// The longest owner a lock takes, in bytes.
const MAX_OWNER: usize = 1024;
const DEFAULT_REPLICA_TIMEOUT: f64 = 1.0;

/// The options of `queue()`.
const QUEUE_OPTIONS: &[Opt<queue::Options>] = &[
    opt!("lease" => lease = |v, p| positive_seconds(v, p).map(Some)),
    opt!("maxAttempts" => max_attempts = |v, p| natural(v, p).map(Some)),
    opt!("maxLength" => max_length = natural),
    opt!("rate" => rate = super::queue::rate_option),
    opt!("partitions" => partitions = |v, p| super::value::whole_in(v, p, 1..=crate::queue::MAX_PARTITIONS as u64)),
];

fn queue_options(options: &Value) -> PhpResult<queue::Options> {
    let mut out = queue::Options {
        lease: None,
        max_attempts: None,
        max_length: 0,
        rate: None,
        // Not given: redislock.partitions decides (Client::queue()).
        partitions: 0,
    };
    read_options(
        options,
        "RedisLock\\Client::queue(): Argument #2 ($options)",
        QUEUE_OPTIONS,
        &mut out,
    )?;
    Ok(out)
}

/// A lock's `owner` option: null for none.
fn owner_option(value: &Value, param: &str) -> PhpResult<Option<Vec<u8>>> {
    if matches!(value, Value::Null) {
        return Ok(None);
    }
    let owner = non_empty(value, param)?;
    if owner.len() > MAX_OWNER {
        return Err(value_error(format!(
            "{param} must be at most {MAX_OWNER} bytes long, {} given",
            owner.len()
        )));
    }
    Ok(Some(owner))
}

/// One option of the locks' tables.
type LockOpt = Opt<lock::Options>;

const TTL: LockOpt = opt!("ttl" => lease = positive_seconds);
/// `lock()`'s `ttl`, which may be INF (no expiry).
const TTL_OR_FOREVER: LockOpt = Opt {
    name: "ttl",
    read: |o, v, p| {
        o.lease = match v.number(p)? {
            f64::INFINITY => crate::time::FOREVER,
            _ => positive_seconds(v, p)?,
        };
        Ok(())
    },
};
const REENTRANT: LockOpt = opt!("reentrant" => reentrant = flag);
const AUTO_RENEW: LockOpt = opt!("autoRenew" => auto_renew = flag);
const MAX_HOLD: LockOpt = opt!("maxHold" => max_hold = positive_seconds);
const REPLICAS: LockOpt = opt!("replicas" => replicas = natural);
const REPLICA_TIMEOUT: LockOpt = opt!("replicaTimeout" => replica_timeout = positive_seconds);
const RELEASE_AT_END: LockOpt = opt!("releaseAtRequestEnd" => release_at_end = flag);
const OWNER: LockOpt = opt!("owner" => owner = owner_option);
const EXACT_KEY: LockOpt = opt!("exactKey" => exact_key = flag);

/// The options of `lock()`.
const LOCK_OPTIONS: &[LockOpt] = &[
    TTL_OR_FOREVER,
    REENTRANT,
    AUTO_RENEW,
    MAX_HOLD,
    REPLICAS,
    REPLICA_TIMEOUT,
    RELEASE_AT_END,
    OWNER,
    EXACT_KEY,
];
/// The options of `readLock()` and `writeLock()`: not `owner`.
const RW_LOCK_OPTIONS: &[LockOpt] = &[
    TTL,
    REENTRANT,
    AUTO_RENEW,
    MAX_HOLD,
    REPLICAS,
    REPLICA_TIMEOUT,
    RELEASE_AT_END,
    EXACT_KEY,
];
/// The options of `semaphore()` and `lockMany()`: neither `owner`,
/// `reentrant` nor `exactKey`.
const PERMITS_OPTIONS: &[LockOpt] = &[
    TTL,
    AUTO_RENEW,
    MAX_HOLD,
    REPLICAS,
    REPLICA_TIMEOUT,
    RELEASE_AT_END,
];

/// The options of a lock (`method` names the parameter) by `table`.
fn lock_options(options: &Value, method: &str, table: &[LockOpt]) -> PhpResult<lock::Options> {
    let mut out = lock::Options {
        lease: Duration::from_secs_f64(DEFAULT_TTL),
        reentrant: false,
        auto_renew: false,
        max_hold: Duration::from_secs_f64(DEFAULT_MAX_HOLD),
        replicas: 0,
        replica_timeout: Duration::from_secs_f64(DEFAULT_REPLICA_TIMEOUT),
        release_at_end: true,
        owner: None,
        exact_key: false,
    };
    read_options(options, method, table, &mut out)?;
    if out.lease == crate::time::FOREVER && out.auto_renew {
        return Err(value_error(format!(
            "{method}: a lock without expiry (ttl INF) has no lease to renew (autoRenew)"
        )));
    }
    if out.owner.is_some() && out.reentrant {
        return Err(value_error(format!(
            "{method}: a lock with an owner belongs to that owner, not to the process: it cannot be reentrant"
        )));
    }
    Ok(out)
}

/// What `stock()` was asked for.
struct StockOptions {
    /// Units per buyer at most (0: no limit).
    per_buyer: u64,
    /// The queue each take enqueues its order task on.
    orders: Option<Vec<u8>>,
    shards: u64,
    /// Replicas that acknowledge a take, and how long to wait for them.
    replicas: u64,
    replica_timeout: Duration,
}

/// The options of `stock()`.
const STOCK_OPTIONS: &[Opt<StockOptions>] = &[
    opt!("perBuyer" => per_buyer = natural),
    opt!("orders" => orders = |v, p| non_empty(v, p).map(Some)),
    opt!("shards" => shards = |v, p| super::value::whole_in(v, p, 1..=crate::stock::MAX_SHARDS)),
    opt!("replicas" => replicas = natural),
    opt!("replicaTimeout" => replica_timeout = positive_seconds),
];

impl Client {
    /// Refuses an `exactKey` name that is a key redislock keeps for
    /// another name: it would be read in the wrong format (a read lock
    /// granted while the write lock whose key it names holds).
    fn exact_name(&self, name: &[u8], options: &lock::Options, param: &str) -> PhpResult<()> {
        if options.exact_key && crate::lock::hold::exact_refused(&self.config, name) {
            return Err(value_error(format!(
                "{param} with exactKey names the key {}, which redislock keeps for another name (its own kinds' keys, the drop-in queues and locks, the operator records: see docs/keys.md)",
                super::value::quoted(name)
            )));
        }
        Ok(())
    }

    fn rw_lock(
        &self,
        name: Arg<Text>,
        options: Arg<NullableArray>,
        method: &str,
        write: bool,
    ) -> PhpResult<Lock> {
        let m = format!("RedisLock\\Client::{method}()");
        let name = non_empty(&name, &format!("{m}: Argument #1 ($name)"))?;
        let options = lock_options(
            &options,
            &format!("{m}: Argument #2 ($options)"),
            RW_LOCK_OPTIONS,
        )?;
        self.exact_name(&name, &options, &format!("{m}: Argument #1 ($name)"))?;
        let hold = Hold::read_write(self.config.clone(), &name, write, options);
        Ok(Lock::of(hold, name))
    }
}

#[php_impl]
impl Client {
    /// `$connection`: null for the `redislock.*` INI defaults, a DSN string
    /// (it has `://`), a connection name of `redislock.connections` (any
    /// other string), an options array, or a phpredis `\Redis` or Predis
    /// client (its server, database, credentials and prefix).
    pub fn __construct(connection: Connection) -> PhpResult<Self> {
        Ok(Self {
            config: config_from_connection(connection, "$connection")?,
        })
    }

    /// What `var_dump()` shows: the server as messages name it (never a
    /// password), the database and the key prefix.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let (server, database, prefix) = self.config.described();
        super::value::debug_info(vec![
            ("server", server.into_zval(false)?),
            ("database", database.into_zval(false)?),
            ("prefix", super::value::binary(prefix)),
        ])
    }

    /// A lock named `$name` (key `lock:{<name>}`). Options: `ttl` (lease in
    /// seconds, default 30; INF: never expires), `reentrant` (the process may
    /// acquire it again, and only the last release frees it), `autoRenew` (a
    /// background thread keeps the lease alive while held), `maxHold` (seconds
    /// a renewed lock may be held at most, default 300), `replicas` (an acquire
    /// counts only once this many replicas acknowledged it, via WAIT; default
    /// 0), `replicaTimeout` (seconds to wait for them, default 1; when they
    /// fall short, acquire() releases the lock and throws
    /// `NotAcquiredException`), `releaseAtRequestEnd` (default true; false: the
    /// lock outlives this object and the request until its lease runs out or a
    /// release), `owner` (the lock belongs to that owner token rather than to
    /// this object: any object created with the same owner, in any process,
    /// sees it held, extends and releases it) and `exactKey` (the lock is the
    /// key `<prefix><name>` itself holding the owner token: the key and value
    /// of Laravel's stock cache locks, so both exclude each other).
    pub fn lock(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Lock> {
        let name = non_empty(&name, "RedisLock\\Client::lock(): Argument #1 ($name)")?;
        let options = lock_options(
            &options,
            "RedisLock\\Client::lock(): Argument #2 ($options)",
            LOCK_OPTIONS,
        )?;
        self.exact_name(
            &name,
            &options,
            "RedisLock\\Client::lock(): Argument #1 ($name)",
        )?;
        Ok(Lock::new(self.config.clone(), name, options))
    }

    /// A fresh owner token of this process, as a lock makes for itself: an
    /// `owner` option with it speaks for one holder in any request, and an
    /// inspection finds this process behind it (`lockState()`'s `holder`).
    pub fn new_owner(&self) -> String {
        crate::identity::token()
    }

    /// Releases the lock `$name` of `$kind` (as `lockState()`'s: null or
    /// `'lock'`, `'exact'`, `'RedisLock'`, `'semaphore'`, `'rwlock'`,
    /// `'Lock_Service'`) whoever holds it (a semaphore or read-write lock:
    /// every holder), handing it to the next waiters in line: an operator's
    /// forced release, also of the drop-in `RedisLock`'s locks. True if it was
    /// held. The holder's next release or extend finds it lost.
    pub fn force_release(&self, name: Arg<Text>, kind: Arg<NullableText>) -> PhpResult<bool> {
        inspect::force_release(
            &self.config,
            &name,
            &kind,
            "RedisLock\\Client::forceRelease()",
        )
    }

    /// The names of the queues on this server, sorted: every queue a task
    /// was ever enqueued to (its first enqueue registers it).
    pub fn queues(&self) -> PhpResult<Zval> {
        inspect::queues(&self.config)
    }

    /// The queues kept in partitions (`['partitions' => N]`), name =>
    /// partition count, sorted by name: what an operator's tool passes to
    /// `queue()` to see such a queue whole.
    pub fn queue_partitions(&self) -> PhpResult<Zval> {
        inspect::queue_partitions(&self.config)
    }

    /// The key prefixes under which queues exist on this server, sorted
    /// (`''`: none), this client's own among them when it has queues: every
    /// app's, whatever prefix each uses (Laravel's `laravel_database_`). A
    /// `Client` with `['prefix' => $prefix]` lists and opens that prefix's
    /// queues. Kept by the first enqueue of each queue; queues made before
    /// that was kept are found once with SCAN (not on a Cluster). A user whose
    /// ACL keeps it to its prefix's keys is told its own prefix alone.
    pub fn queue_prefixes(&self) -> PhpResult<Zval> {
        inspect::queue_prefixes(&self.config)
    }

    /// How the lock `$name` stands, for an operator: `held`, `remaining`
    /// (seconds left of its lease; null when free or without expiry), `token`
    /// (the holder's fencing token; null when free, and for drop-in locks),
    /// `holder` (host, pid and process title of the process that holds it; null
    /// when free or unknown), `waiting` (waiters in line), `holders` (how
    /// many hold it), `permits` (a semaphore's permits in use; for the
    /// other kinds, one per holder) and `total` (a semaphore's permits in
    /// all, as the last holder to take permits counted them; null while none
    /// are held, and for the other kinds). `$kind`: null or `'lock'` for `lock()`'s
    /// locks, `'exact'`
    /// for those with `exactKey`, `'RedisLock'` for the drop-in `RedisLock`'s
    /// (`'seed'`, its old name, is read as it until the next release),
    /// `'semaphore'`, `'rwlock'` (`readLock()` and `writeLock()` without
    /// `exactKey`; of several holders, `holder` and `remaining` are the one
    /// whose lease ends last), `'Lock_Service'` (the drop-in `Lock_Service`'s
    /// order locks, named by order id: key `order_lock_<id>`).
    pub fn lock_state(&self, name: Arg<Text>, kind: Arg<NullableText>) -> PhpResult<Zval> {
        inspect::lock_state(&self.config, &name, &kind, "RedisLock\\Client::lockState()")
    }

    /// Up to `$limit` (1 to 10000) locks whose names match the glob `$pattern`
    /// (null: all; Redis' MATCH syntax), of every kind, found with SCAN:
    /// `lockState()`'s arrays with `name` and `kind` first, sorted by kind,
    /// then name. Exact-key locks are found by their fencing counters: those
    /// held now and taken through this API within an hour of their last lease's
    /// end. One server: not on a Cluster.
    #[php(defaults(limit = 100))]
    pub fn locks(&self, pattern: Arg<NullableText>, limit: Arg<Int>) -> PhpResult<Zval> {
        inspect::locks(&self.config, &pattern, &limit, "RedisLock\\Client::locks()")
    }

    /// The locks named in `$names` as one `MultiLock`: taken all or none, in
    /// one round trip when they can be (one Redis server, or names that share a
    /// Cluster slot through a hash tag), released all at once. Options as
    /// `lock()`, but `reentrant` and `owner`.
    pub fn lock_many(&self, names: Arg<List>, options: Arg<NullableArray>) -> PhpResult<MultiLock> {
        const M: &str = "RedisLock\\Client::lockMany()";
        let names = names_param(&names, &format!("{M}: Argument #1 ($names)"))?;
        let options = lock_options(
            &options,
            &format!("{M}: Argument #2 ($options)"),
            PERMITS_OPTIONS,
        )?;
        Ok(MultiLock::new(self.config.clone(), names, options))
    }

    /// The read lock of the read-write lock named `$name` (key
    /// `rwlock:{<name>}`): many readers hold it at once, never beside a writer.
    /// Readers and writers wait in one line, first come first served, so a
    /// waiting writer stops later readers (no writer starvation). Options as
    /// `lock()`, but `owner`; a read lock has no fencing token (`token()` is
    /// null). `exactKey`: the read-write lock is the key `<prefix><name>`
    /// itself, a sorted set of its holders in the format of Symfony's stock
    /// RedisStore, so both exclude each other.
    pub fn read_lock(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Lock> {
        self.rw_lock(name, options, "readLock", false)
    }

    /// The write lock of the read-write lock named `$name`: one writer, and
    /// no reader beside it; fencing tokens as for `lock()`. See `readLock()`.
    pub fn write_lock(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Lock> {
        self.rw_lock(name, options, "writeLock", true)
    }

    /// The semaphore named `$name` (key `semaphore:{<name>}`) with `$permits`
    /// permits. Options: `ttl` (the lease of permits taken, default 30 s: a
    /// holder that dies gives them back then), `autoRenew`, `maxHold`,
    /// `replicas`, `replicaTimeout`, `releaseAtRequestEnd`, as for `lock()`.
    /// Each object counts with its own `$permits`: lowering it while others
    /// hold more takes nothing from them; new acquires wait until they fit.
    #[php(defaults(permits = 1))]
    pub fn semaphore(
        &self,
        name: Arg<Text>,
        permits: Arg<Int>,
        options: Arg<NullableArray>,
    ) -> PhpResult<Semaphore> {
        const M: &str = "RedisLock\\Client::semaphore()";
        let name = non_empty(&name, &format!("{M}: Argument #1 ($name)"))?;
        let permits = permits_param(&permits, &format!("{M}: Argument #2 ($permits)"))?;
        let options = lock_options(
            &options,
            &format!("{M}: Argument #3 ($options)"),
            PERMITS_OPTIONS,
        )?;
        Ok(Semaphore::new(self.config.clone(), name, permits, options))
    }

    /// The leased queue named `$name` (sorted set `Queue:<name>`, shared with
    /// the drop-in `RedisQueue`). Options: `lease` (seconds a reserved task
    /// stays with its worker, default 30), `maxAttempts` (reserves before a
    /// task goes to the dead letters, default 5, 0: no limit), `maxLength`
    /// (queued plus leased tasks at most, 0: no limit), `rate` (`['limit' =>
    /// ..., 'per' => seconds, 'burst' => ...]`, as `Queue::setRate()` takes
    /// them: the queue's from this object's first enqueue or reserve on). The
    /// `lease` and `maxAttempts` given are stored with the queue at this
    /// object's first enqueue: a worker not given its own takes them.
    /// `partitions` (1 to 128, default 1): the queue kept in that many
    /// partitions, each in a hash slot of its own, so that a Cluster
    /// spreads one queue over its primaries; a task goes to its group's
    /// partition, or without a group to its id's, and `reserve()` takes
    /// from each in turn (docs/past-one-node.md). Every client of the queue
    /// must give the same count.
    pub fn queue(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Queue> {
        let name = non_empty(&name, "RedisLock\\Client::queue(): Argument #1 ($name)")?;
        let mut options = queue_options(&options)?;
        if options.partitions == 0 {
            options.partitions = super::ini::partitions_of(&name);
        }
        if options.partitions > 1 && !self.config.spreads() {
            return Err(value_error(
                "RedisLock\\Client::queue(): Argument #2 ($options) option 'partitions': on a Cluster whose prefix holds a hash tag every key is in that tag's slot, so partitions cannot spread; use a prefix without braces"
                    .to_owned(),
            ));
        }
        Ok(Queue::new(self.config.clone(), name, options))
    }

    /// The stock counter named `$name` (key `stock:{<name>}`, or
    /// `stock:<name>` when the name has a hash tag of its own). Options:
    /// `perBuyer` (units one buyer may take at most, 0: no limit), `orders`
    /// (the name of a queue of this client: each take enqueues its order
    /// task there in the same step), `shards` (1 to 128, default 1: the
    /// units kept in that many counters, each in a hash slot of its own, so
    /// that a Cluster spreads one hot stock over its primaries; every client
    /// of the stock must give the same count), `replicas` (a take counts
    /// only once this many replicas acknowledged it, via WAIT; one that
    /// fewer did is undone and throws `NotAcquiredException`; default 0)
    /// and `replicaTimeout` (seconds to wait for them, default 1). On a
    /// Cluster the stock and its orders queue must share a hash slot: give
    /// both names the same hash tag (`{sale42}` and `{sale42}:orders`);
    /// other names are refused. A stock in shards enqueues its order tasks
    /// on the orders queue kept in as many partitions (open it with
    /// `['partitions' => $shards]`), each in its shard's partition.
    pub fn stock(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Stock> {
        const METHOD: &str = "RedisLock\\Client::stock(): Argument #2 ($options)";
        let name = non_empty(&name, "RedisLock\\Client::stock(): Argument #1 ($name)")?;
        let mut asked = StockOptions {
            per_buyer: 0,
            orders: None,
            shards: 1,
            replicas: 0,
            replica_timeout: Duration::from_secs_f64(DEFAULT_REPLICA_TIMEOUT),
        };
        read_options(&options, METHOD, STOCK_OPTIONS, &mut asked)?;
        let StockOptions {
            per_buyer,
            orders,
            shards,
            replicas,
            replica_timeout,
        } = asked;
        if orders.is_some() && replicas > 0 {
            return Err(value_error(format!(
                "{METHOD}: options 'orders' and 'replicas' do not go together yet: a take that replicas did not acknowledge cannot take its order task back"
            )));
        }
        let apart = || {
            value_error(format!(
                "{METHOD} option 'orders': on a Cluster the stock and its orders queue must share a hash slot; give both names the same hash tag, e.g. '{{sale42}}' and '{{sale42}}:orders'"
            ))
        };
        let stock = if shards > 1 {
            let stock = Stock::sharded(self.config.clone(), name, per_buyer, shards).map_err(|_| {
                value_error(format!(
                    "{METHOD} option 'shards': on a Cluster whose prefix holds a hash tag every key is in that tag's slot, so shards cannot spread; use a prefix without braces"
                ))
            })?;
            match orders {
                Some(orders) => stock.with_orders(orders).map_err(|_| apart())?,
                None => stock,
            }
        } else {
            Stock::new(self.config.clone(), name, per_buyer, orders).map_err(|_| apart())?
        };
        Ok(stock.confirmed_by(replicas, replica_timeout))
    }

    /// The rate limiter named `$name` (keys `limit:{<name>}:...`, one per
    /// limited key, each gone once idle for its period). Options: `limit`
    /// (cost units per period, required), `per` (the period in seconds,
    /// required), `policy`: `'token_bucket'` (the default: GCRA, refilled
    /// continuously, holding up to `burst`, default `limit`), `'sliding_window'`
    /// (at most `limit` in any window of `per` seconds) or `'fixed_window'`
    /// (at most `limit` in a window that starts at its first admission, as
    /// Laravel's `RateLimiter` counts). Every decision is made by one script
    /// on the server's clock.
    pub fn limiter(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Limiter> {
        const M: &str = "RedisLock\\Client::limiter()";
        let name = non_empty(&name, &format!("{M}: Argument #1 ($name)"))?;
        let rate = limiter::rate(&options, &format!("{M}: Argument #2 ($options)"))?;
        Ok(Limiter::new(self.config.clone(), name, rate))
    }

    /// Decides `$cost` against several limits at once, all or none
    /// (`$limits`: `Limiter` objects, or `[Limiter, $key]` pairs: per IP, per
    /// user, global): consumed from every one when all allow, from none when
    /// one refuses; `Decision::limiter()` and `key()` name the first that
    /// refused. One round trip; on a Cluster the limiters' names must share a
    /// hash tag.
    #[php(defaults(cost = 1))]
    pub fn attempt(&self, limits: &ZendHashTable, cost: Arg<Int>) -> PhpResult<Decision> {
        limiter::attempt_all(&self.config, limits, &cost)
    }

    /// A candidate for leading `$name` (keys `leader:{<name>}`...): one leader
    /// at a time across every process, renewed while its process lives, with a
    /// term (a fencing token) that grows with every new leader. Options: `ttl`
    /// (the lease, default 10 s: a leader that dies is followed within it) and
    /// `releaseAtRequestEnd` (default true; false: it leads past the request,
    /// for as long as the process lives).
    pub fn leader(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Leader> {
        const M: &str = "RedisLock\\Client::leader()";
        let name = non_empty(&name, &format!("{M}: Argument #1 ($name)"))?;
        let options = leader::options(&options, &format!("{M}: Argument #2 ($options)"))?;
        Ok(Leader::new(self.config.clone(), name, options))
    }

    /// The batches of jobs named `$name` (keys `batches:{<name>}`...): a
    /// batch's counts of jobs, pending and failed, each changed in one step,
    /// as Laravel's `Bus::batch()` keeps them (`RedisLock\Laravel\BatchRepository`).
    pub fn batches(&self, name: Arg<Text>) -> PhpResult<Batches> {
        let name = non_empty(&name, "RedisLock\\Client::batches(): Argument #1 ($name)")?;
        Ok(Batches::new(self.config.clone(), name))
    }

    /// The seed's `Lock_Service` order locks on keys of your own: `$template`
    /// with one `%s` where the order id goes (null: `order_lock_%s`) and the
    /// id counter `$counter` (null: `lock_unique_id`), both under this
    /// client's prefix. Its methods are `Lock_Service`'s, on this client's
    /// connection, so an app whose copy of `Lock_Service` used keys of its
    /// own (`APP_ENV . '_lock_%s'`) keeps them: old and new processes
    /// exclude each other during a rolling deploy.
    pub fn order_locks(
        &self,
        template: Arg<NullableText>,
        counter: Arg<NullableText>,
    ) -> PhpResult<OrderLocks> {
        const M: &str = "RedisLock\\Client::orderLocks()";
        let seed = order::Layout::seed();
        let text = |v: &Value, i: u32, name: &str, or: Vec<u8>| match v {
            Value::Null => Ok(or),
            v => v.bytes(&format!("{M}: Argument #{i} (${name})")),
        };
        let template = text(&template, 1, "template", seed.template())?;
        let counter = text(&counter, 2, "counter", seed.counter().to_vec())?;
        let layout = order::Layout::new(&template, &counter).map_err(|(i, why)| {
            let name = if i == 1 { "template" } else { "counter" };
            value_error(format!("{M}: Argument #{i} (${name}) {why}"))
        })?;
        Ok(OrderLocks::new(self.config.clone(), layout))
    }

    /// The server's clock (Redis `TIME`): Unix seconds, to the microsecond.
    /// The clock limiters, `once()` slots and leases go by, whatever this
    /// machine's clock says. One round trip (on a Cluster: some node's clock).
    pub fn time(&self) -> PhpResult<f64> {
        let (secs, micros) = engine(conn::server_time(&self.config))?;
        Ok(secs as f64 + micros as f64 / 1e6)
    }

    /// Claims the slot `$slot` of the work `$name` (a date, an order id, a
    /// deploy id; null: the current period of `everySeconds` on the server's
    /// clock, so client clocks cannot split one): `won()` is true for exactly
    /// one caller per name and slot across every process and server. Options:
    /// `everySeconds` (the slot's length, instead of `$slot`), `retryAfter`
    /// (seconds after which a run that did not call `done()` may be claimed
    /// again; null, the default: never), `keep` (seconds a slot's record is
    /// kept, default 86400: the same slot can be claimed again after that) and
    /// `claim` (false: only read the slot, `won()` false). One round trip (two
    /// for `everySeconds`); key `once:{<name>}:s:<slot>`.
    pub fn once(
        &self,
        name: Arg<Text>,
        slot: Arg<NullableText>,
        options: Arg<NullableArray>,
    ) -> PhpResult<Slot> {
        const M: &str = "RedisLock\\Client::once()";
        let name = non_empty(&name, &format!("{M}: Argument #1 ($name)"))?;
        let slot = match &slot.0 {
            Value::Null => None,
            value => Some(non_empty(value, &format!("{M}: Argument #2 ($slot)"))?),
        };
        let options = once::options(&options, &format!("{M}: Argument #3 ($options)"))?;
        Slot::claim(self.config.clone(), name, slot, &options, M)
    }

    /// Reserves from the first of `$queues` (this client's queues) that has due
    /// tasks, waiting up to `$wait` seconds in all of their lines at once.
    /// Returns the tasks (`Task::queue()` tells which queue), none when none
    /// came or a signal with a handler ended the wait. Each queue's own lease
    /// and `maxAttempts` apply to its tasks; `$lease` sets the lease for all.
    #[php(defaults(count = 1, wait = 0))]
    pub fn reserve(
        &self,
        queues: &ZendHashTable,
        count: Arg<Int>,
        lease: Arg<NullableFloat>,
        wait: Arg<Float>,
    ) -> PhpResult<Zval> {
        const M: &str = "RedisLock\\Client::reserve()";
        let mut list: Vec<&Queue> = Vec::with_capacity(queues.len());
        for (_, zv) in super::value::entries(queues) {
            let queue = zv.extract::<&Queue>().ok_or_else(|| {
                type_error(format!(
                    "{M}: Argument #1 ($queues) must be a list of RedisLock\\Queue, {} found",
                    zv.get_type()
                ))
            })?;
            if queue.queue().config().id != self.config.id {
                return Err(value_error(format!(
                    "{M}: Argument #1 ($queues) holds a queue of another client"
                )));
            }
            list.push(queue);
        }
        let Some(first) = list.first() else {
            return Err(value_error(format!(
                "{M}: Argument #1 ($queues) must not be empty"
            )));
        };
        let (how, lease) = Queue::reserve_how(&count, &lease, &wait, M, 2)?;
        for queue in &list {
            queue.store_rate()?;
        }
        let queues: Vec<_> = list.iter().map(|q| (q.queue(), q.terms(lease))).collect();
        match engine(crate::queue::reserve(&queues, &how))? {
            Some((index, part, tasks)) => task_list(list[index], part, tasks),
            None => task_list(first, 0, Vec::new()),
        }
    }
}
