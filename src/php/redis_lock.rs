//! `RedisLock` (seed 003): named locks held by an instance, each with its own
//! owner token, released when the instance goes away or the request ends.

// Parameter names are the seeds' (PHP named arguments use them).
#![allow(non_snake_case)]

use std::time::Duration;

use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;

use super::injected::Connection;
use super::value::{Defaulted, Literal, Optional, Value};
use super::{MAX_SECONDS, config_from_connection, engine, ini, lease};
use crate::lock::Wait;
use crate::lock::seed::{SeedLocks, Standing};

#[php_class]
#[php(name = "RedisLock")]
pub struct RedisLock {
    locks: SeedLocks,
}

#[php_impl]
impl RedisLock {
    /// `$param`: null for the `redislock.*` INI defaults, a DSN string (it
    /// has `://`), a connection name of `redislock.connections` (any other
    /// string), an options array as for `RedisLock\Client`, or a phpredis
    /// `\Redis` or Predis client (its server, database, credentials and
    /// prefix).
    pub fn __construct(param: Connection) -> PhpResult<Self> {
        Ok(Self {
            locks: SeedLocks::new(config_from_connection(param, "$param")?),
        })
    }

    /// Takes the lock `Lock:<name>` for `$expire` seconds, trying for up to
    /// `$timeout` seconds (0: once) in the lock's line, first come first
    /// served: the release hands the lock to the next waiter. A signal with a
    /// handler ends the wait (false). `$waitIntervalUs` is only the longest
    /// gap between re-checks of the first in line.
    #[php(defaults(timeout = Literal("0"), expire = Literal("15"), waitIntervalUs = 100000))]
    pub fn lock(
        &mut self,
        name: Value,
        timeout: Defaulted,
        expire: Defaulted,
        waitIntervalUs: Optional,
    ) -> PhpResult<bool> {
        if name.is_loosely_null() {
            return Ok(false);
        }
        let defaults = if timeout.given.is_none() || expire.given.is_none() {
            ini::seed_defaults()
        } else {
            ini::SeedDefaults::default()
        };
        let timeout = timeout.or(defaults.redis_lock_timeout);
        let seconds = expire
            .or(defaults.redis_lock_expire)
            .number("RedisLock::lock(): Argument #3 ($expire)")?;
        if seconds <= 0.0 {
            return Ok(false);
        }
        let lease = lease(seconds, "RedisLock::lock(): Argument #3 ($expire)")?;
        let timeout = timeout.finite("RedisLock::lock(): Argument #2 ($timeout)")?;
        let interval = waitIntervalUs.finite("RedisLock::lock(): Argument #4 ($waitIntervalUs)")?;
        let wait = Wait {
            timeout: Duration::from_secs_f64(timeout.clamp(0.0, MAX_SECONDS)),
            recheck: Duration::from_micros(interval.clamp(1000.0, 1.0e12) as u64),
        };
        let name = name.bytes("RedisLock::lock(): Argument #1 ($name)")?;
        engine(self.locks.acquire(&name, lease, wait))
    }

    /// Releases the lock if this instance still holds it; true only if this
    /// call deleted it. The instance forgets the lock in any case.
    pub fn unlock(&mut self, name: Value) -> PhpResult<bool> {
        let name = name.bytes("RedisLock::unlock(): Argument #1 ($name)")?;
        engine(self.locks.release(&name))
    }

    /// Releases every lock this instance holds; true if all were released.
    pub fn unlock_all(&mut self) -> PhpResult<bool> {
        engine(self.locks.release_all())
    }

    /// Sets the lease of a lock this instance holds to `max($expire, 1)`
    /// seconds; false if it does not hold it (any more).
    pub fn expire(&mut self, name: Value, expire: Value) -> PhpResult<bool> {
        let name = name.bytes("RedisLock::expire(): Argument #1 ($name)")?;
        // NAN and -INF are not seconds: max($expire, 1) would turn them
        // into a 1 s lease.
        let seconds = expire.finite("RedisLock::expire(): Argument #2 ($expire)")?;
        if !self.locks.took(&name) {
            return Ok(false);
        }
        let lease = lease(
            seconds.max(1.0),
            "RedisLock::expire(): Argument #2 ($expire)",
        )?;
        engine(self.locks.extend(&name, lease))
    }

    /// As the seed: while this instance holds the lock, its expiry time in
    /// whole unix seconds (the server's clock) as a string; "" when the
    /// instance took it but the key is gone or no longer its own; false when
    /// the instance never took it.
    pub fn is_locking(&mut self, name: Value) -> PhpResult<Zval> {
        let name = name.bytes("RedisLock::isLocking(): Argument #1 ($name)")?;
        let mut result = Zval::new();
        match engine(self.locks.standing(&name))? {
            Standing::NotTaken => result.set_bool(false),
            Standing::Lost => result.set_string("", false)?,
            Standing::Until(at) => result.set_string(&at.to_string(), false)?,
        }
        Ok(result)
    }
}

impl Drop for RedisLock {
    fn drop(&mut self) {
        let locks = &self.locks;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            locks.end(ini::settings().release_at_request_end);
        }));
    }
}
