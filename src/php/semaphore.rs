//! `RedisLock\Semaphore`: leased permits, waited for in a fair line (the
//! `lock::permits` engine), with the holds, errors and request-end release
//! of `RedisLock\Lock`.

use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::errors::{Class, exception};
use super::lock::{Lock, Options};
use super::value::{Arg, Argument, Float, Int, NullableFloat, Value};
use super::{engine, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::lock::hold::Hold;

/// The most permits a semaphore may have.
pub const MAX_PERMITS: u64 = 1 << 40;

/// A semaphore, from `RedisLock\Client::semaphore()` (not constructible
/// with `new`). Permits held when the object goes away or the request ends
/// are given back.
#[php_class]
#[php(name = "RedisLock\\Semaphore")]
pub struct Semaphore {
    config: Arc<Config>,
    name: Vec<u8>,
    permits: u64,
    options: Options,
    /// The current hold (of the permits last asked for).
    lock: Lock,
}

impl Semaphore {
    pub fn new(config: Arc<Config>, name: Vec<u8>, permits: u64, options: Options) -> Self {
        let lock = Self::hold_of(&config, &name, 1, permits, &options);
        Semaphore {
            config,
            name,
            permits,
            options,
            lock,
        }
    }

    /// Permits asked for: 1 up to the semaphore's count (`method` names
    /// the call in errors).
    fn take(&self, permits: &Arg<Int>, method: &str) -> PhpResult<u64> {
        super::value::whole_in(
            &permits.0,
            format_args!("{method}: Argument #1 ($permits)"),
            1..=self.permits,
        )
    }

    fn hold_of(
        config: &Arc<Config>,
        name: &[u8],
        take: u64,
        permits: u64,
        options: &Options,
    ) -> Lock {
        let hold = Hold::semaphore(config.clone(), name, take, permits, options.clone());
        Lock::of(hold, name.to_vec())
    }

    fn taken(&self) -> u64 {
        self.lock.hold().permits_held()
    }
}

#[php_impl]
impl Semaphore {
    /// Not for PHP code: call $client->semaphore($name, $permits) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Semaphore",
            "call $client->semaphore($name, $permits) on a RedisLock\\Client",
        ))
    }

    /// Takes `$permits` permits (1 to the semaphore's count), waiting up to
    /// `$wait` seconds (0: one try, INF: no limit) in the semaphore's line,
    /// first come first served: a waiter wanting many is never overtaken by
    /// later ones wanting few. False if they were not acquired in time, or a
    /// signal with a handler ended the wait. Taking all permits hands out a
    /// fencing token (`token()`).
    #[php(defaults(permits = 1, wait = 0))]
    pub fn acquire(&mut self, permits: Arg<Int>, wait: Arg<Float>) -> PhpResult<bool> {
        const M: &str = "RedisLock\\Semaphore::acquire()";
        let take = self.take(&permits, M)?;
        let wait = wait_seconds(&wait, Argument(M, 2, "wait"))?;
        if self.lock.hold().is_mine() {
            return Err(exception(
                Class::Root,
                format!(
                    "redislock: {} already holds {} permits through this object; release them first",
                    self.lock.display_name(),
                    self.taken()
                ),
            ));
        }
        self.lock = Self::hold_of(&self.config, &self.name, take, self.permits, &self.options);
        self.lock.acquire_within(wait)
    }

    /// A `RedisLock\Lock` that takes `$permits` of this semaphore's permits
    /// (the same line, lease and options), for code that takes any
    /// `RedisLock\LockInterface`: its `acquire()` waits for them, its
    /// `release()` gives them back. An object of its own, apart from this
    /// one's hold.
    #[php(defaults(permits = 1))]
    pub fn as_lock(&self, permits: Arg<Int>) -> PhpResult<Lock> {
        let take = self.take(&permits, "RedisLock\\Semaphore::asLock()")?;
        Ok(Self::hold_of(
            &self.config,
            &self.name,
            take,
            self.permits,
            &self.options,
        ))
    }

    /// Gives the permits back (to the waiters at the head of the line that they
    /// fit).
    pub fn release(&mut self) -> PhpResult<bool> {
        self.lock.release_hold()
    }

    /// Sets the lease of the permits held to `$ttl` seconds (default: the
    /// semaphore's ttl) from now.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let lease = match &ttl.0 {
            Value::Null => None,
            value => Some(positive_seconds(
                value,
                "RedisLock\\Semaphore::extend(): Argument #1 ($ttl)",
            )?),
        };
        self.lock.extend_by(lease)
    }

    /// Whether this object holds permits and their lease still runs.
    pub fn is_held(&self) -> PhpResult<bool> {
        engine(self.lock.hold().is_held())
    }

    /// How many permits this object holds (0: none).
    pub fn held(&self) -> i64 {
        self.taken() as i64
    }

    /// How many permits are free now (0 when holders hold more than the
    /// count, after it was lowered).
    pub fn available(&self) -> PhpResult<i64> {
        let state = engine(self.lock.hold().permits_usage())?;
        Ok(self.permits.saturating_sub(state.used) as i64)
    }

    /// How many wait in the semaphore's line.
    pub fn waiting(&self) -> PhpResult<i64> {
        let state = engine(self.lock.hold().permits_usage())?;
        Ok(state.waiting as i64)
    }

    /// The semaphore's count of permits, as this object was created with.
    pub fn permits(&self) -> i64 {
        self.permits as i64
    }

    /// The fencing token of a hold of all the permits; null otherwise.
    pub fn token(&self) -> Option<i64> {
        self.lock.hold().fence()
    }

    /// Seconds left on the lease of the permits held, or null.
    pub fn remaining(&self) -> PhpResult<Option<f64>> {
        self.lock.seconds_left()
    }

    /// What `var_dump()` shows: the name, the count of permits, how many
    /// this object holds and its token (without a round trip).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        super::value::debug_info(vec![
            ("name", super::value::binary(&self.name)),
            ("permits", self.permits().into_zval(false)?),
            ("held", self.held().into_zval(false)?),
            ("token", self.token().into_zval(false)?),
        ])
    }
}

/// How many permits `Client::semaphore()` was given.
pub fn permits_param(value: &Value, param: &str) -> PhpResult<u64> {
    super::value::whole_in(value, param, 1..=MAX_PERMITS)
}
