//! `RedisLock\Stock`: a stock counter for flash sales, taken on the server
//! in one script (see the `stock` engine).

use std::fmt::Display;
use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::errors::{Class, exception};
use super::value::binary;
use super::value::{
    Arg, Argument, Int, NullableArray, NullableFloat, NullableText, Text, Value, value_error,
};
use super::value::{Opt, opt, read_options};
use super::{engine, positive_seconds};
use crate::config::Config;
use crate::stock::{self, Given, MAX_UNITS, Take, Taken};

/// What `take()`'s options ask: the idempotency key, the order task's id
/// and payload, and the per-buyer limit of this take.
#[derive(Default)]
struct TakeOptions {
    key: Option<Vec<u8>>,
    task: Option<Vec<u8>>,
    payload: Option<Vec<u8>>,
    per_buyer: u64,
}

/// The options of `take()`.
const TAKE_OPTIONS: &[Opt<TakeOptions>] = &[
    opt!("key" => key = |v, p| super::value::non_empty(v, p).map(Some)),
    opt!("perBuyer" => per_buyer = |v, p| units(v, p, 0)),
    opt!("task" => task = |v, p| super::value::non_empty(v, p).map(Some)),
    opt!("payload" => payload = |v: &Value, p| v.bytes(p).map(Some)),
];

/// A stock, from `RedisLock\Client::stock()` (not constructible with `new`).
#[php_class]
#[php(name = "RedisLock\\Stock")]
pub struct Stock {
    stock: stock::Stock,
    per_buyer: u64,
}

/// A number of units from `$value`, at least `min`.
fn units(value: &Value, param: impl Display + Copy, min: u64) -> PhpResult<u64> {
    super::value::whole_in(value, param, min..=MAX_UNITS)
}

/// A buyer: null for none, else a non-empty string.
fn buyer(value: &Value, param: impl Display + Copy) -> PhpResult<Option<Vec<u8>>> {
    match value {
        Value::Null => Ok(None),
        value => super::value::non_empty(value, param).map(Some),
    }
}

fn int_or_false(n: Option<u64>) -> Zval {
    let mut zv = Zval::new();
    match n.and_then(|n| i64::try_from(n).ok()) {
        Some(n) => zv.set_long(n),
        None => zv.set_bool(false),
    }
    zv
}

impl Stock {
    /// A stock named `name`; `per_buyer` units per buyer at most (0: no
    /// limit); `orders`: the queue each take enqueues its order task on.
    pub fn new(
        config: Arc<Config>,
        name: Vec<u8>,
        per_buyer: u64,
        orders: Option<Vec<u8>>,
    ) -> Result<Self, stock::SlotsApart> {
        Ok(Stock {
            stock: stock::Stock::new(config, name, orders)?,
            per_buyer,
        })
    }

    /// A stock named `name` kept in `shards` shards (see
    /// `stock::Stock::sharded`).
    pub fn sharded(
        config: Arc<Config>,
        name: Vec<u8>,
        per_buyer: u64,
        shards: u64,
    ) -> Result<Self, stock::OneSlotPrefix> {
        let shards = usize::try_from(shards).unwrap_or(1);
        Ok(Stock {
            stock: stock::Stock::sharded(config, name, shards)?,
            per_buyer,
        })
    }

    /// This stock, its takes enqueueing their order tasks on `orders`
    /// ([`stock::Stock::with_orders`]).
    pub fn with_orders(self, orders: Vec<u8>) -> Result<Self, stock::SlotsApart> {
        Ok(Stock {
            stock: self.stock.with_orders(orders)?,
            per_buyer: self.per_buyer,
        })
    }

    /// Takes count once `replicas` replicas acknowledged them (see
    /// `stock::Stock::confirmed_by`).
    pub fn confirmed_by(mut self, replicas: u64, timeout: std::time::Duration) -> Self {
        self.stock = self.stock.confirmed_by(replicas, timeout);
        self
    }

    fn display_name(&self) -> String {
        super::value::escaped(self.stock.name())
    }
}

#[php_impl]
impl Stock {
    /// Not for PHP code: call $client->stock($name) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Stock",
            "call $client->stock($name) on a RedisLock\\Client",
        ))
    }

    /// Starts a sale of `$units` (>= 0), expiring after `$ttl` seconds (null:
    /// never); the buyers and idempotency keys of an earlier sale are
    /// forgotten.
    pub fn set(&self, units: Arg<Int>, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        const M: &str = "RedisLock\\Stock::set()";
        let units = self::units(&units, Argument(M, 1, "units"), 0)?;
        let ttl = match &ttl.0 {
            Value::Null => None,
            ttl => Some(positive_seconds(ttl, Argument(M, 2, "ttl"))?),
        };
        engine(self.stock.set(units, ttl))?;
        Ok(true)
    }

    /// Takes `$units` in one round trip, on the server: never below zero,
    /// never past the per-buyer limit (`perBuyer`, of the stock or of this
    /// take) for `$buyer`, and, with the stock's `orders` queue, enqueues
    /// the order task in the same step (the units are taken if and only if
    /// the task exists). Options: `key` (an idempotency key: a take retried
    /// with the same key takes nothing more and returns what the first one
    /// did), `perBuyer`, `task` (the order task's id; default: the `key`, or
    /// a new unique id) and `payload` (the order task's payload). Returns
    /// the units left after the take (0 for the last one: compare with
    /// `!== false`), or false when not enough are left or the buyer's limit
    /// would be passed.
    #[php(defaults(units = 1))]
    pub fn take(
        &self,
        units: Arg<Int>,
        buyer: Arg<NullableText>,
        options: Arg<NullableArray>,
    ) -> PhpResult<Zval> {
        const M: &str = "RedisLock\\Stock::take()";
        let units = self::units(&units, Argument(M, 1, "units"), 1)?;
        let buyer = self::buyer(&buyer, Argument(M, 2, "buyer"))?;
        let method = Argument(M, 3, "options");
        let mut asked = TakeOptions {
            per_buyer: self.per_buyer,
            ..TakeOptions::default()
        };
        read_options(&options, method, TAKE_OPTIONS, &mut asked)?;
        let TakeOptions {
            key,
            task,
            payload,
            per_buyer,
        } = asked;
        if per_buyer > 0 && buyer.is_none() {
            return Err(value_error(format!(
                "{M}: Argument #2 ($buyer) must be given when a per-buyer limit is set"
            )));
        }
        if self.stock.orders().is_none() && (task.is_some() || payload.is_some()) {
            return Err(value_error(format!(
                "{method}: 'task' and 'payload' need a stock with an 'orders' queue"
            )));
        }
        let take = Take {
            units,
            buyer: buyer.as_deref(),
            per_buyer,
            key: key.as_deref(),
            task: task.as_deref(),
            payload: payload.as_deref(),
        };
        let left = match engine(self.stock.take(&take))? {
            Taken::Done(left) | Taken::Before(left) => Some(left),
            Taken::SoldOut(_) | Taken::Limit(_) => None,
            Taken::Unconfirmed { acked, wanted } => {
                return Err(exception(
                    Class::NotAcquired,
                    format!(
                        "redislock: stock '{}': only {acked} of {wanted} replicas acknowledged the take of {units} units in time; it was undone: nothing is taken",
                        self.display_name()
                    ),
                ));
            }
            Taken::TaskExists(id) => {
                return Err(exception(
                    Class::Root,
                    format!(
                        "redislock: stock '{}': the order task {} is already in queue '{}'; nothing was taken",
                        self.display_name(),
                        super::value::quoted(&id),
                        self.stock
                            .orders()
                            .map(|q| super::value::escaped(q.name()))
                            .unwrap_or_default()
                    ),
                ));
            }
        };
        Ok(int_or_false(left))
    }

    /// Gives `$units` back (an order cancelled: with its `$buyer`, whose count
    /// goes down; without a buyer: a restock). Returns the units left after it,
    /// or false when the stock does not exist (never set, expired, deleted) or
    /// the buyer has fewer units than it gives back.
    #[php(defaults(units = 1))]
    pub fn give_back(&self, units: Arg<Int>, buyer: Arg<NullableText>) -> PhpResult<Zval> {
        const M: &str = "RedisLock\\Stock::giveBack()";
        let units = self::units(&units, Argument(M, 1, "units"), 1)?;
        let buyer = self::buyer(&buyer, Argument(M, 2, "buyer"))?;
        let given = engine(self.stock.give_back(units, buyer.as_deref()))?;
        Ok(int_or_false(match given {
            Given::Done(left) => Some(left),
            Given::NoStock | Given::TooMany(_) | Given::Full(_) => None,
        }))
    }

    /// The units left (0 when the stock does not exist).
    pub fn remaining(&self) -> PhpResult<i64> {
        Ok(engine(self.stock.remaining())?.unwrap_or(0))
    }

    /// Whether the stock exists (set, and not expired or deleted).
    pub fn exists(&self) -> PhpResult<bool> {
        Ok(engine(self.stock.remaining())?.is_some())
    }

    /// The units `$buyer` took in this sale.
    pub fn bought(&self, buyer: Arg<Text>) -> PhpResult<i64> {
        let param = "RedisLock\\Stock::bought(): Argument #1 ($buyer)";
        let buyer = super::value::non_empty(&buyer, param)?;
        let n = engine(self.stock.bought(&buyer))?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Every buyer of this sale => the units it took. A numeric buyer is an int
    /// key, as PHP makes it.
    pub fn buyers(&self) -> PhpResult<Zval> {
        let buyers = engine(self.stock.buyers())?;
        let mut out = ZendHashTable::with_capacity(u32::try_from(buyers.len()).unwrap_or(u32::MAX));
        for (buyer, n) in buyers {
            super::value::insert_keyed(&mut out, &buyer, n)?;
        }
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }

    /// Deletes the stock with its buyers and idempotency keys; true if
    /// there was any.
    pub fn delete(&self) -> PhpResult<bool> {
        engine(self.stock.delete())
    }

    /// The stock's name.
    pub fn name(&self) -> Zval {
        binary(self.stock.name())
    }

    /// What `var_dump()` shows: the stock's name (its count is on Redis).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        super::value::debug_info(vec![("name", self.name())])
    }
}
