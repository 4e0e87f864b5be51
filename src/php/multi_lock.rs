//! `RedisLock\MultiLock`: several named locks taken all or none, from
//! `RedisLock\Client::lockMany()`.

use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};

use super::errors::{Class, exception};
use super::lock::{Options, refused};
use super::value::{Arg, Float, NullableFloat, Value, value_error};
use super::{engine, ini, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::lock::hold::Refused;
use crate::lock::multi::{Failed, MultiHold};

/// Several locks taken all or none (not constructible with `new`). Released
/// when the object goes away or the request ends.
#[php_class]
#[php(name = "RedisLock\\MultiLock")]
#[php(implements(super::contract::PhpInterfaceLockInterface))]
pub struct MultiLock {
    multi: MultiHold,
}

impl MultiLock {
    pub fn new(config: Arc<Config>, names: Vec<Vec<u8>>, options: Options) -> Self {
        MultiLock {
            multi: MultiHold::new(config, names, options),
        }
    }

    /// The PHP exception for what one of the locks refused.
    fn refused(&self, failed: Failed, action: &str) -> PhpException {
        if let Refused::AlreadyHeld = failed.refused {
            return exception(
                Class::Root,
                "redislock: this MultiLock already holds its locks; release them first",
            );
        }
        match self.multi.holds().nth(failed.at) {
            Some((name, hold)) => refused(hold, name, failed.refused, action),
            None => exception(Class::Root, format!("redislock: cannot {action} the locks")),
        }
    }
}

#[php_impl]
impl MultiLock {
    /// Not for PHP code: call $client->lockMany($names) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\MultiLock",
            "call $client->lockMany($names) on a RedisLock\\Client",
        ))
    }

    /// Takes every lock, or none, waiting up to `$wait` seconds (0: one try).
    /// When they can be taken at once (one Redis server, or one Cluster slot)
    /// the first try is one round trip; then each is waited for in its line, in
    /// key order (so no two callers deadlock). False if not all were acquired
    /// in time (none is then held).
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        let wait = wait_seconds(
            &wait,
            "RedisLock\\MultiLock::acquire(): Argument #1 ($wait)",
        )?;
        self.multi
            .acquire(wait)
            .map_err(|f| self.refused(f, "acquire"))
    }

    /// Releases every lock.
    pub fn release(&mut self) -> PhpResult<bool> {
        match self.multi.release() {
            Ok(()) => Ok(true),
            Err(f) => Err(self.refused(f, "release")),
        }
    }

    /// Sets the lease of every lock to `$ttl` seconds (default: the ttl) from
    /// now.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let lease = match &ttl.0 {
            Value::Null => None,
            value => Some(positive_seconds(
                value,
                "RedisLock\\MultiLock::extend(): Argument #1 ($ttl)",
            )?),
        };
        match self.multi.extend(lease) {
            Ok(()) => Ok(true),
            Err(f) => Err(self.refused(f, "extend")),
        }
    }

    /// Whether this MultiLock holds every lock and Redis still has them.
    pub fn is_held(&self) -> PhpResult<bool> {
        engine(self.multi.is_held())
    }

    /// Seconds left of the shortest lease (INF when none expires), or null
    /// when not every lock is held.
    pub fn remaining(&self) -> PhpResult<Option<f64>> {
        Ok(engine(self.multi.remaining())?.map(super::seconds))
    }

    /// Null: a MultiLock has a fencing token per lock (`tokens()`), not
    /// one of its own (`RedisLock\LockInterface`).
    pub fn token(&self) -> Option<i64> {
        None
    }

    /// The fencing token of each lock held, by name (in key order); empty when
    /// not held. A numeric name is an int key, as PHP makes it.
    pub fn tokens(&self) -> PhpResult<Zval> {
        let mut out = ZendHashTable::new();
        for (name, hold) in self.multi.holds() {
            if let Some(token) = hold.fence() {
                out.insert(&*ZendStr::new(name, false), token)?;
            }
        }
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }

    /// The names of the locks, in the order they are taken.
    pub fn names(&self) -> PhpResult<Zval> {
        let mut out = ZendHashTable::new();
        for (name, _) in self.multi.holds() {
            out.push(super::value::binary(name))?;
        }
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }

    /// What `var_dump()` shows: the names and the tokens of the locks held
    /// (from this object, without a round trip).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        super::value::debug_info(vec![("names", self.names()?), ("tokens", self.tokens()?)])
    }
}

impl Drop for MultiLock {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.multi.end(ini::settings().release_at_request_end);
        }));
    }
}

/// The names of `lockMany()`: a non-empty list of non-empty names.
pub fn names_param(value: &Value, param: &str) -> PhpResult<Vec<Vec<u8>>> {
    let Value::Array(items) = value else {
        return Err(super::value::type_error(format!(
            "{param} must be of type array, {} given",
            value.type_name()
        )));
    };
    if items.is_empty() {
        return Err(value_error(format!("{param} must not be empty")));
    }
    items
        .iter()
        .map(|(_, name)| super::value::non_empty(name, &format!("{param} name")))
        .collect()
}
