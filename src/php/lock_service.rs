//! `Lock_Service` (seed 001): per-order locks whose id outlives the request.

// Parameter names are the seeds' (PHP named arguments use them).
#![allow(non_snake_case)]

use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;

use super::value::{Optional, Value};
use super::{config_or_throw, engine, lease};
use crate::lock::order;

/// Order locks: `order_lock_<id>` holds an id from `INCR lock_unique_id`.
#[php_class]
#[php(name = "Lock_Service")]
pub struct LockService;

fn order_id(order_id: &Value) -> PhpResult<Vec<u8>> {
    order_id.bytes("Lock_Service: Argument #1 ($intOrderId)")
}

#[php_impl]
impl LockService {
    const REDIS_LOCK_KEY_TEMPLATE: &'static str = "order_lock_%s";
    const REDIS_LOCK_DEFAULT_EXPIRE_TIME: i64 = 86400;
    const REDIS_LOCK_UNIQUE_ID_KEY: &'static str = order::COUNTER;
    const REDIS_CONFIG_HOST: &'static str = "127.0.0.1";
    const REDIS_CONFIG_PORT: i64 = 6379;

    /// The seed class has no constructor of its own, so `new Lock_Service()`
    /// works there (and its methods are static).
    pub fn __construct() -> Self {
        Self
    }

    /// Locks an order for `$intExpireTime` seconds. Returns the lock id (an
    /// int that strictly increases: a fencing token), or false if the order
    /// is already locked or the arguments are empty.
    #[php(defaults(intExpireTime = 86400))]
    pub fn add_lock(intOrderId: Value, intExpireTime: Optional) -> PhpResult<Zval> {
        let mut result = Zval::new();
        result.set_bool(false);
        if intOrderId.is_empty() {
            return Ok(result);
        }
        let seconds =
            intExpireTime.number("Lock_Service::addLock(): Argument #2 ($intExpireTime)")?;
        if seconds <= 0.0 {
            return Ok(result);
        }
        let lease = lease(
            seconds,
            "Lock_Service::addLock(): Argument #2 ($intExpireTime)",
        )?;
        let order = order_id(&intOrderId)?;
        let config = config_or_throw()?;
        if let Some(id) = engine(order::acquire(&config, &order, lease))? {
            result.set_long(id);
        }
        Ok(result)
    }

    /// Unlocks an order if it is still locked with `$intLockId`; true only if
    /// this call removed the lock.
    pub fn release_lock(intOrderId: Value, intLockId: Value) -> PhpResult<bool> {
        if intOrderId.is_empty() || intLockId.is_empty() {
            return Ok(false);
        }
        let order = order_id(&intOrderId)?;
        // The seed compares loosely (`$id == GET`): 7, 7.0 and "7" all match
        // the stored "7".
        let id = match intLockId.number("") {
            Ok(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => (n as i64).to_string().into_bytes(),
            _ => intLockId.bytes("Lock_Service::releaseLock(): Argument #2 ($intLockId)")?,
        };
        let config = config_or_throw()?;
        engine(order::release(&config, &order, &id))
    }

    /// A new unique id from `INCR lock_unique_id`.
    pub fn generate_unique_lock_id() -> PhpResult<i64> {
        let config = config_or_throw()?;
        engine(order::next_id(&config))
    }
}
