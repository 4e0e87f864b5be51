//! Stock counters for flash sales: a count of units on the server, taken by
//! one script that checks and decrements (never below zero), with per-buyer
//! limits, idempotency keys, and optionally the order task enqueued in the
//! same step. No lock: a buy costs one round trip.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::{Cmd, FromRedisValue, ToRedisArgs};

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::queue;
use crate::scripts::{NumberOr, Script, script};

static TAKE: LazyLock<Script> = script!("stock_take.lua");
static TAKE_AND_ORDER: LazyLock<Script> = script!("stock_order.lua");
static SET: LazyLock<Script> = script!("stock_set.lua");
static GIVE: LazyLock<Script> = script!("stock_give.lua");
static READ: LazyLock<Script> = script!("stock_read.lua");
/// The types of a stock script's keys (see `Invocation::types_checked`):
/// the stock, its buyers and its takes, then for a take with its order the
/// orders queue's (its tasks, payloads, attempts, leases, line and stats).
const TYPES: &[&str] = &[
    "string", "hash", "hash", "zset", "hash", "hash", "zset", "list", "hash",
];

/// The keys of one stock, all in one hash slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The units left (a Redis integer).
    pub stock: Vec<u8>,
    /// Buyer -> units taken.
    pub buyers: Vec<u8>,
    /// Idempotency key -> units left after that take.
    pub takes: Vec<u8>,
}

impl Keys {
    /// The stock `name` under `prefix` (see `keys`).
    pub fn new(prefix: &[u8], name: &[u8]) -> Self {
        let place = Place::new(prefix, Kind::Stock, name);
        Keys {
            buyers: place.beside(":buyers"),
            takes: place.beside(":takes"),
            stock: place.main,
        }
    }

    fn all(&self) -> [&[u8]; 3] {
        [&self.stock, &self.buyers, &self.takes]
    }
}

/// A stock of a deployment: its server, its keys and the queue each take
/// enqueues its order task on, if any.
pub struct Stock {
    config: Arc<Config>,
    name: Vec<u8>,
    keys: Keys,
    orders: Option<queue::Queue>,
}

/// A stock and its orders queue that no one script can reach: on a
/// Cluster, in two hash slots.
#[derive(Debug)]
pub struct SlotsApart;

/// One take.
#[derive(Default)]
pub struct Take<'a> {
    pub units: u64,
    pub buyer: Option<&'a [u8]>,
    /// Units per buyer at most (0: no limit).
    pub per_buyer: u64,
    /// A retried take with the same key takes nothing again.
    pub key: Option<&'a [u8]>,
    /// The order task's id (stocks with an orders queue): by default the
    /// `key` (a retry finds its own order), else a new unique id.
    pub task: Option<&'a [u8]>,
    /// The order task's payload.
    pub payload: Option<&'a [u8]>,
}

/// What a take did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Taken; this many units are left.
    Done(u64),
    /// Taken before under the same idempotency key; that take left this many.
    Before(u64),
    /// Not enough left (this many; 0 when the stock does not exist).
    SoldOut(u64),
    /// The buyer would pass the limit; it has this many units.
    Limit(u64),
    /// The order task's id (this one) is already queued or leased: nothing
    /// was taken.
    TaskExists(Vec<u8>),
}

/// What giving units back did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given {
    /// Given back; this many units are left.
    Done(u64),
    /// The stock does not exist (never set, expired or deleted).
    NoStock,
    /// The buyer has fewer units than it gives back: this many.
    TooMany(u64),
    /// It would take the stock past [`MAX_UNITS`]; this many are left.
    Full(u64),
}

/// The most units a stock holds: 2^53 - 1 (PHP and Lua count in doubles,
/// exact up to there).
pub const MAX_UNITS: u64 = (1 << 53) - 1;

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Stock {
    /// The stock `name` of the deployment `config`; `orders`: the name of
    /// the queue each take enqueues its order task on.
    pub fn new(
        config: Arc<Config>,
        name: Vec<u8>,
        orders: Option<Vec<u8>>,
    ) -> Result<Self, SlotsApart> {
        let keys = Keys::new(&config.prefix, &name);
        let orders = orders.map(|q| queue::Queue::new(config.clone(), q));
        if let Some(queue) = &orders
            && !config.one_slot(&[&keys.stock, &queue.keys().queue])
        {
            return Err(SlotsApart);
        }
        Ok(Stock {
            config,
            name,
            keys,
            orders,
        })
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The queue each take enqueues its order task on, if any.
    pub fn orders(&self) -> Option<&queue::Queue> {
        self.orders.as_ref()
    }

    /// Takes units of the stock, on the server in one step.
    pub fn take(&self, take: &Take<'_>) -> Result<Taken, Error> {
        let keys = &self.keys;
        let order_id = self.orders.as_ref().map(|_| {
            take.task
                .or(take.key)
                .map_or_else(|| crate::token::new_token().into_bytes(), <[u8]>::to_vec)
        });
        // A number alone: taken, this many left.
        let reply: NumberOr<(String, i64)> = conn::with(&self.config, |c| {
            let script = if self.orders.is_some() {
                &TAKE_AND_ORDER
            } else {
                &TAKE
            };
            let mut call = script.key(&keys.stock);
            call.types_checked(TYPES)
                .key(&keys.buyers)
                .key(&keys.takes)
                .arg(take.units)
                .arg(take.buyer.unwrap_or_default())
                .arg(take.per_buyer)
                .arg(take.key.unwrap_or_default());
            if let (Some(queue), Some(id)) = (&self.orders, &order_id) {
                let q = queue.keys();
                call.key(&q.queue)
                    .key(&q.payloads)
                    .key(&q.attempts)
                    .key(&q.leased)
                    .key(&q.line)
                    .key(&q.stats)
                    .arg(id.as_slice())
                    .arg(if take.payload.is_some() { "1" } else { "0" })
                    .arg(take.payload.unwrap_or_default())
                    .arg(&q.waiters)
                    .arg(queue::wake_ms());
            }
            call.invoke(c)
        })?;
        let (outcome, n) = match reply {
            NumberOr::Number(left) => return Ok(Taken::Done(count(left))),
            NumberOr::Other(reply) => reply,
        };
        if let ("taken, register", Some(queue)) = (outcome.as_str(), &self.orders) {
            queue::register(&self.config, queue.keys())?;
        }
        Ok(match outcome.as_str() {
            "taken, register" => Taken::Done(count(n)),
            "before" => Taken::Before(count(n)),
            "limit" => Taken::Limit(count(n)),
            "task exists" => Taken::TaskExists(order_id.unwrap_or_default()),
            "sold out" => Taken::SoldOut(count(n)),
            _ => {
                return Err(conn::unknown_reply(
                    &self.config,
                    "stock_take.lua",
                    &(outcome, n),
                ));
            }
        })
    }

    /// Starts a sale of `units`, expiring after `ttl` (None: never); the
    /// buyers and takes of an earlier sale are forgotten.
    pub fn set(&self, units: u64, ttl: Option<Duration>) -> Result<(), Error> {
        let ms = ttl.map_or(0, crate::time::millis);
        let keys = &self.keys;
        conn::with(&self.config, |c| {
            SET.key(&keys.stock)
                .key(&keys.buyers)
                .key(&keys.takes)
                .arg(units)
                .arg(ms)
                .invoke::<i64>(c)
        })?;
        Ok(())
    }

    /// Gives units back (an order cancelled, or a restock), off the buyer's
    /// count when a buyer gives them back.
    pub fn give_back(&self, units: u64, buyer: Option<&[u8]>) -> Result<Given, Error> {
        let (outcome, n): (String, i64) = conn::with(&self.config, |c| {
            GIVE.key(&self.keys.stock)
                .types_checked(TYPES)
                .key(&self.keys.buyers)
                .arg(units)
                .arg(buyer.unwrap_or_default())
                .arg(MAX_UNITS)
                .invoke(c)
        })?;
        Ok(match outcome.as_str() {
            "done" => Given::Done(count(n)),
            "too many" => Given::TooMany(count(n)),
            "full" => Given::Full(count(n)),
            "no stock" => Given::NoStock,
            _ => {
                return Err(conn::unknown_reply(
                    &self.config,
                    "stock_give.lua",
                    &(outcome, n),
                ));
            }
        })
    }

    /// The units left, or None when the stock does not exist.
    pub fn remaining(&self) -> Result<Option<i64>, Error> {
        self.read(redis::cmd("GET").arg(&self.keys.stock), &["left"])
    }

    /// The units `buyer` took.
    pub fn bought(&self, buyer: &[u8]) -> Result<u64, Error> {
        let plain = redis::cmd("HGET").arg(&self.keys.buyers).arg(buyer).clone();
        let units: Option<i64> = self.read(&plain, &[&b"bought"[..], buyer])?;
        Ok(units.map_or(0, count))
    }

    /// Every buyer with the units it took.
    pub fn buyers(&self) -> Result<Vec<(Vec<u8>, i64)>, Error> {
        self.read(redis::cmd("HGETALL").arg(&self.keys.buyers), &["buyers"])
    }

    /// A read with the `plain` command; what it cannot take as it is (a key
    /// written by hand: another type, or not a whole number as Rust reads
    /// one) is read again by `stock_read.lua` (with `args`), which reads
    /// numbers as the stock's scripts do and fails naming the key when they
    /// would.
    fn read<T: FromRedisValue, A: ToRedisArgs>(&self, plain: &Cmd, args: &[A]) -> Result<T, Error> {
        conn::with(&self.config, |c| match plain.query(c) {
            Err(e) if e.code() == Some("WRONGTYPE") || conn::unreadable(&e) => READ
                .key(&self.keys.stock)
                .key(&self.keys.buyers)
                .arg(args)
                .invoke(c),
            read => read,
        })
    }

    /// Deletes the stock with its buyers and takes; true if there was any.
    pub fn delete(&self) -> Result<bool, Error> {
        let deleted: i64 = conn::with(&self.config, |c| {
            redis::cmd("DEL").arg(&self.keys.all()).query(c)
        })?;
        Ok(deleted > 0)
    }
}
