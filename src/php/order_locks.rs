//! `RedisLock\OrderLocks`: the seed's `Lock_Service` order locks on keys
//! of a template and an id counter of the app's own, on a client's
//! connection (what `redislock doctor --fix` hands a copy whose keys are
//! its own, so old and new processes share them).

// Parameter names are the seed's (PHP named arguments use them).
#![allow(non_snake_case)]

use std::sync::Arc;

use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;

use super::engine;
use super::lock_service::{add, release};
use super::value::{Defaulted, Literal, Value, binary};
use crate::config::Config;
use crate::lock::order::{self, Layout};

/// Order locks of one layout, from `RedisLock\Client::orderLocks()` (not
/// constructible with `new`).
#[php_class]
#[php(name = "RedisLock\\OrderLocks")]
pub struct OrderLocks {
    config: Arc<Config>,
    layout: Layout,
}

impl OrderLocks {
    pub fn new(config: Arc<Config>, layout: Layout) -> Self {
        OrderLocks { config, layout }
    }
}

#[php_impl]
impl OrderLocks {
    /// Not for PHP code: call $client->orderLocks() on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\OrderLocks",
            "call $client->orderLocks($template, $counter) on a RedisLock\\Client",
        ))
    }

    /// As `Lock_Service::addLock()`, on this layout's keys: locks an order
    /// for `$intExpireTime` seconds and returns the lock id (from the id
    /// counter, strictly increasing: a fencing token), or false if the order
    /// is already locked or an argument is empty or not positive.
    #[php(defaults(intExpireTime = Literal("86400")))]
    pub fn add_lock(&self, intOrderId: Value, intExpireTime: Defaulted) -> PhpResult<Zval> {
        let seconds = intExpireTime.or(86400.0);
        add(
            || Ok(self.config.clone()),
            &self.layout,
            &intOrderId,
            &seconds,
            "RedisLock\\OrderLocks::addLock()",
        )
    }

    /// As `Lock_Service::releaseLock()`: unlocks an order if it is still
    /// locked with `$intLockId`; true only if this call removed the lock.
    pub fn release_lock(&self, intOrderId: Value, intLockId: Value) -> PhpResult<bool> {
        release(
            || Ok(self.config.clone()),
            &self.layout,
            &intOrderId,
            &intLockId,
            "RedisLock\\OrderLocks::releaseLock()",
        )
    }

    /// As `Lock_Service::generateUniqueLockId()`: a new id from this layout's
    /// counter.
    pub fn generate_unique_lock_id(&self) -> PhpResult<i64> {
        engine(order::next_id_in(&self.config, &self.layout))
    }

    /// The key template (`order_lock_%s`).
    pub fn template(&self) -> Zval {
        binary(&self.layout.template())
    }

    /// The id counter's key (`lock_unique_id`).
    pub fn counter(&self) -> Zval {
        binary(self.layout.counter())
    }
}
