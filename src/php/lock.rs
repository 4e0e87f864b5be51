//! `RedisLock\Lock`: one named lock of a `RedisLock\Client`, with fencing
//! tokens, optional reentrancy and lease renewal, and typed errors. The
//! hold itself is the engine's (`lock::hold`); this class words its outcomes.

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendCallable, ZendHashTable, Zval};

use super::errors::{Class, exception};
use super::value::{Arg, Callback, Float, NullableFloat, Value, type_error};
use super::{engine, ini, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::lock::Wait;
use crate::lock::hold::{Hold, Refused};
use crate::lock::permits::UNLIMITED;

pub use crate::lock::hold::Options;

/// One named lock, from `RedisLock\Client::lock()` (not constructible with
/// `new`). Released when the object goes away or the request ends.
#[php_class]
#[php(name = "RedisLock\\Lock")]
#[php(implements(super::contract::PhpInterfaceLockInterface))]
pub struct Lock {
    name: Vec<u8>,
    hold: Hold,
}

impl Lock {
    pub fn new(config: Arc<Config>, name: Vec<u8>, options: Options) -> Self {
        Self::of(Hold::new(config, &name, options), name)
    }

    /// A lock over another hold (permits: a read or write lock, a semaphore).
    pub fn of(hold: Hold, name: Vec<u8>) -> Self {
        Self { name, hold }
    }

    pub fn hold(&self) -> &Hold {
        &self.hold
    }

    /// What it is and its name, for messages: `lock 'orders'`.
    pub fn display_name(&self) -> String {
        display_name(&self.hold, &self.name)
    }

    /// The PHP exception for a refusal, for `action` (acquire, release...).
    pub fn refused(&self, refused: Refused, action: &str) -> PhpException {
        self::refused(&self.hold, &self.name, refused, action)
    }

    fn change_to(&mut self, take: u64, action: &str) -> PhpResult<bool> {
        self.hold
            .change_permits(take)
            .map_err(|r| self.refused(r, action))
    }

    pub fn acquire_within(&mut self, wait: Duration) -> PhpResult<bool> {
        self.hold
            .acquire(Wait::up_to(wait))
            .map_err(|r| self.refused(r, "acquire"))
    }

    /// Sets the lease to `lease` (default: the hold's) from now.
    pub fn extend_by(&mut self, lease: Option<Duration>) -> PhpResult<bool> {
        match self.hold.extend(lease) {
            Ok(()) => Ok(true),
            Err(r) => Err(self.refused(r, "extend")),
        }
    }

    /// Seconds left on the lease (INF: no expiry), None when not held.
    pub fn seconds_left(&self) -> PhpResult<Option<f64>> {
        Ok(engine(self.hold.remaining())?.map(super::seconds))
    }

    pub fn release_hold(&mut self) -> PhpResult<bool> {
        match self.hold.release() {
            Ok(()) => Ok(true),
            Err(r) => Err(self.refused(r, "release")),
        }
    }
}

/// What a hold is and its name, for messages: `lock 'orders'`.
pub fn display_name(hold: &Hold, name: &[u8]) -> String {
    format!("{} {}", hold.what(), super::value::quoted(name))
}

/// The PHP exception for a refusal of the hold named `name`, for `action`
/// (acquire, release...).
pub fn refused(hold: &Hold, name: &[u8], refused: Refused, action: &str) -> PhpException {
    refused_as(&display_name(hold, name), refused, action, REENTRANT_HINT)
}

/// How to take a lock again that this object holds, where that can be.
pub const REENTRANT_HINT: &str = "; create it with ['reentrant' => true] to acquire it again";

/// The one conversion of a refusal into a PHP exception, for every kind of
/// hold (`name` as messages name it: `lock 'orders'`, `Redlock 'job'`);
/// `reentrant_hint` follows "already held by this object" where the kind
/// can be reentrant.
pub fn refused_as(
    name: &str,
    refused: Refused,
    action: &str,
    reentrant_hint: &str,
) -> PhpException {
    match refused {
        Refused::Redis(e) => super::errors::to_php(e),
        Refused::NotHeld => exception(
            Class::NotHeld,
            format!("redislock: cannot {action} {name}: this object does not hold it"),
        ),
        Refused::Lost(reason) => exception(
            Class::LockLost,
            format!("redislock: {name} was lost: {reason}"),
        ),
        Refused::AlreadyHeld => exception(
            Class::Root,
            format!("redislock: {name} is already held by this object{reentrant_hint}"),
        ),
        Refused::Unconfirmed { acked, wanted } => exception(
            Class::NotAcquired,
            format!(
                "redislock: {name} was taken on the master but only {acked} of {wanted} replicas acknowledged it in time; it was released"
            ),
        ),
        Refused::NotReadWrite => exception(
            Class::Root,
            format!(
                "redislock: cannot {action} {name}: only the read and write locks of a read-write lock that is not reentrant change hands so"
            ),
        ),
        Refused::NotPlain => exception(
            Class::Root,
            format!("redislock: cannot {action} {name}: only plain locks are released by force"),
        ),
        Refused::Renewal(e) => exception(
            Class::Root,
            format!("redislock: cannot start the lease renewal thread: {e}"),
        ),
        Refused::Invalid(why) => super::value::value_error(why),
        Refused::Unreachable { failed, nodes } => {
            let list: Vec<String> = failed
                .iter()
                .map(|e| format!("{}: {}", e.server(), e.cause()))
                .collect();
            // Nodes that answered with errors (OOM, NOAUTH) are not out of
            // reach: a ServerException says so. After a release or an
            // extend, a lock too few nodes still held is lost.
            let answered = failed
                .iter()
                .all(|e| !matches!(e, crate::conn::Error::Connection { .. }));
            exception(
                if action != "acquire" {
                    Class::LockLost
                } else if answered {
                    Class::Server
                } else {
                    Class::Connection
                },
                format!(
                    "redislock: {name}: a majority of the {nodes} nodes is out of reach ({})",
                    list.join("; ")
                ),
            )
        }
    }
}

#[php_impl]
impl Lock {
    /// Not for PHP code: call $client->lock($name) on a RedisLock\Client (or readLock(), writeLock()).
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Lock",
            "call $client->lock($name) on a RedisLock\\Client (or readLock(), writeLock())",
        ))
    }

    /// Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
    /// limit) in the lock's line, first come first served: the release hands
    /// the lock to the next waiter, no polling. False if it was not acquired in
    /// time, or a signal with a handler ended the wait.
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        let wait = wait_seconds(&wait, "RedisLock\\Lock::acquire(): Argument #1 ($wait)")?;
        self.acquire_within(wait)
    }

    /// Releases the lock. A reentrant lock is freed by the last release of the
    /// process's holds.
    pub fn release(&mut self) -> PhpResult<bool> {
        self.release_hold()
    }

    /// Sets the lease to `$ttl` seconds (default: the lock's ttl) from now.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let lease = match &ttl.0 {
            Value::Null => None,
            value => Some(positive_seconds(
                value,
                "RedisLock\\Lock::extend(): Argument #1 ($ttl)",
            )?),
        };
        self.extend_by(lease)
    }

    /// A read lock held by this object becomes the write lock, if no other
    /// reader holds it now (it never waits: a writer waiting in line would
    /// wait for this very read lock). True when done (`token()` then
    /// returns its fencing token), false when other readers hold it (the
    /// read lock stays held). The lease starts anew. True at once for a
    /// write lock.
    pub fn promote(&mut self) -> PhpResult<bool> {
        self.change_to(UNLIMITED, "promote")
    }

    /// A write lock held by this object becomes a read lock, letting in the
    /// readers waiting at the head of the line; the lease starts anew. True
    /// when done, at once for a read lock.
    pub fn demote(&mut self) -> PhpResult<bool> {
        self.change_to(1, "demote")
    }

    /// Whether this Lock holds the lock and Redis still has its token.
    pub fn is_held(&self) -> PhpResult<bool> {
        engine(self.hold.is_held())
    }

    /// The fencing token of the current hold: larger than that of every
    /// earlier acquire of this lock name; null when not held, and for a
    /// read lock (only writers get one).
    pub fn token(&self) -> Option<i64> {
        self.hold.fence()
    }

    /// Seconds left on the lease (INF for a lock without expiry), or null
    /// when the lock is not held (any more).
    pub fn remaining(&self) -> PhpResult<Option<f64>> {
        self.seconds_left()
    }

    /// The owner token: the `owner` option's, else the token of the hold
    /// this object took (null while it holds none). Another object (in any
    /// process) created with it as `owner` speaks for the same holder.
    pub fn owner(&self) -> Zval {
        super::value::optional_binary(self.hold.owner().as_deref())
    }

    /// What `var_dump()` shows: the name and the fencing token of the current
    /// hold (from this object, without a round trip; never the owner token).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        super::value::debug_info(vec![
            ("name", super::value::binary(&self.name)),
            ("token", self.token().into_zval(false)?),
        ])
    }

    /// Releases the lock whoever holds it (an operator's or a framework's
    /// forced release), handing it to the next waiter in line; true if it
    /// was held. Plain locks only: read-write locks and semaphores throw.
    pub fn force_release(&mut self) -> PhpResult<bool> {
        self.hold
            .force_release()
            .map_err(|r| self.refused(r, "force the release of"))
    }

    /// Runs `$fn` holding the lock and returns its result; the lock is released
    /// afterwards, also when `$fn` throws (its exception then propagates).
    /// Waits up to `$wait` seconds for the lock.
    #[php(defaults(wait = 10))]
    pub fn synchronized(&mut self, r#fn: Callback, wait: Arg<Float>) -> PhpResult<Zval> {
        const PARAM: &str = "RedisLock\\Lock::synchronized(): Argument #1 ($fn)";
        if !r#fn.0.is_callable() {
            return Err(type_error(format!(
                "{PARAM} must be a valid callback, {} given",
                r#fn.0.get_type()
            )));
        }
        let callable =
            ZendCallable::new(r#fn.0).map_err(|e| type_error(format!("{PARAM}: {e}")))?;
        let wait = wait_seconds(
            &wait,
            "RedisLock\\Lock::synchronized(): Argument #2 ($wait)",
        )?;
        if !self.acquire_within(wait)? {
            return Err(exception(
                Class::NotAcquired,
                format!(
                    "redislock: {} was not acquired within {} s",
                    self.display_name(),
                    wait.as_secs_f64()
                ),
            ));
        }
        let result = callable.try_call(vec![]);
        let released = self.release_hold();
        match result {
            Ok(value) => released.map(|_| value),
            // An exception thrown by $fn is pending and wins over ours.
            Err(e) => Err(released.err().unwrap_or_else(|| {
                exception(Class::Root, format!("redislock: the callback failed: {e}"))
            })),
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.hold.end(ini::settings().release_at_request_end);
        }));
    }
}
