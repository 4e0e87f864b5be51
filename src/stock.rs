//! Stock counters for flash sales: a count of units on the server, taken by
//! one script that checks and decrements (never below zero), with per-buyer
//! limits, idempotency keys, and optionally the order task enqueued in the
//! same step. No lock: a buy costs one round trip.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::queue;
use crate::scripts::{line_script, script};

static TAKE: LazyLock<Script> = line_script!("queue_line.lua", "queue_count.lua", "stock_take.lua");
static SET: LazyLock<Script> = script!("stock_set.lua");
static GIVE: LazyLock<Script> = script!("stock_give.lua");

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

/// The order task a take enqueues in the same step.
pub struct Order<'a> {
    pub queue: &'a queue::Keys,
    pub id: &'a [u8],
    pub payload: Option<&'a [u8]>,
}

/// One take.
pub struct Take<'a> {
    pub units: u64,
    pub buyer: Option<&'a [u8]>,
    /// Units per buyer at most (0: no limit).
    pub per_buyer: u64,
    /// A retried take with the same key takes nothing again.
    pub key: Option<&'a [u8]>,
    pub order: Option<Order<'a>>,
}

/// What a take did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Taken; this many units are left.
    Done(u64),
    /// Taken before under the same idempotency key; that take left this many.
    Before(u64),
    /// Not enough left (this many; 0 when the stock does not exist).
    SoldOut(u64),
    /// The buyer would pass the limit; it has this many units.
    Limit(u64),
    /// The order task's id is already queued or leased: nothing was taken.
    TaskExists,
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Takes units of the stock, on the server in one step.
pub fn take(config: &Config, keys: &Keys, take: &Take<'_>) -> Result<Taken, Error> {
    let (status, n): (i64, i64) = conn::with(config, |c| {
        let mut call = TAKE.key(&keys.stock);
        call.key(&keys.buyers)
            .key(&keys.takes)
            .arg(take.units)
            .arg(take.buyer.unwrap_or_default())
            .arg(take.per_buyer)
            .arg(take.key.unwrap_or_default());
        if let Some(order) = &take.order {
            let q = order.queue;
            call.key(&q.queue)
                .key(&q.payloads)
                .key(&q.attempts)
                .key(&q.leased)
                .key(&q.line)
                .key(&q.stats)
                .arg(order.id)
                .arg(if order.payload.is_some() { "1" } else { "0" })
                .arg(order.payload.unwrap_or_default())
                .arg(&q.waiters)
                .arg(queue::wake_ms());
        }
        call.invoke(c)
    })?;
    if let (3, Some(order)) = (status, &take.order) {
        queue::register(config, order.queue)?;
    }
    Ok(match status {
        1 | 3 => Taken::Done(count(n)),
        2 => Taken::Before(count(n)),
        -1 => Taken::Limit(count(n)),
        -2 => Taken::TaskExists,
        _ => Taken::SoldOut(count(n)),
    })
}

/// Starts a sale of `units`, expiring after `ttl` (None: never); the
/// buyers and takes of an earlier sale are forgotten.
pub fn set(config: &Config, keys: &Keys, units: u64, ttl: Option<Duration>) -> Result<(), Error> {
    let ms = ttl.map_or(0, crate::time::millis);
    conn::with(config, |c| {
        SET.key(&keys.stock)
            .key(&keys.buyers)
            .key(&keys.takes)
            .arg(units)
            .arg(ms)
            .invoke::<i64>(c)
    })?;
    Ok(())
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

/// Gives units back (an order cancelled, or a restock), off the buyer's
/// count when a buyer gives them back.
pub fn give_back(
    config: &Config,
    keys: &Keys,
    units: u64,
    buyer: Option<&[u8]>,
) -> Result<Given, Error> {
    let (status, n): (i64, i64) = conn::with(config, |c| {
        GIVE.key(&keys.stock)
            .key(&keys.buyers)
            .arg(units)
            .arg(buyer.unwrap_or_default())
            .arg(MAX_UNITS)
            .invoke(c)
    })?;
    Ok(match status {
        1 => Given::Done(count(n)),
        -1 => Given::TooMany(count(n)),
        -2 => Given::Full(count(n)),
        _ => Given::NoStock,
    })
}

/// The units left, or None when the stock does not exist.
pub fn remaining(config: &Config, keys: &Keys) -> Result<Option<i64>, Error> {
    conn::with(config, |c| redis::cmd("GET").arg(&keys.stock).query(c))
}

/// The units `buyer` took.
pub fn bought(config: &Config, keys: &Keys, buyer: &[u8]) -> Result<u64, Error> {
    let n: Option<i64> = conn::with(config, |c| {
        redis::cmd("HGET").arg(&keys.buyers).arg(buyer).query(c)
    })?;
    Ok(n.map_or(0, count))
}

/// Every buyer with the units it took.
pub fn buyers(config: &Config, keys: &Keys) -> Result<Vec<(Vec<u8>, i64)>, Error> {
    conn::with(config, |c| redis::cmd("HGETALL").arg(&keys.buyers).query(c))
}

/// Deletes the stock with its buyers and takes; true if there was any.
pub fn delete(config: &Config, keys: &Keys) -> Result<bool, Error> {
    let deleted: i64 = conn::with(config, |c| redis::cmd("DEL").arg(&keys.all()).query(c))?;
    Ok(deleted > 0)
}
