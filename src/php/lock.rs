//! `RedisLock\Lock`: one named lock of a `RedisLock\Client`, with fencing
//! tokens, optional reentrancy and lease renewal, and typed errors.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendCallable, Zval};

use super::errors::{Kind, exception};
use super::value::{Arg, Callback, Float, NullableFloat, Value, type_error};
use super::{engine, ini, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::lock::held::{self, Held};
use crate::lock::renew::{self, Lease};
use crate::lock::{self, Wait};

/// How often a waiter looks again when no release message comes (a key
/// deleted by hand publishes nothing). Releases and expiries wake it sooner.
const RECHECK: Duration = Duration::from_millis(250);

/// What `RedisLock\Client::lock()` was asked for.
#[derive(Clone, Debug)]
pub struct Options {
    pub lease: Duration,
    pub reentrant: bool,
    pub auto_renew: bool,
    pub max_hold: Duration,
    /// Replicas that must acknowledge an acquire within `replica_timeout`
    /// (0: do not wait for replicas).
    pub replicas: u64,
    pub replica_timeout: Duration,
}

/// One named lock, from `RedisLock\Client::lock()` (not constructible with
/// `new`). Released when the object goes away or the request ends.
#[php_class]
#[php(name = "RedisLock\\Lock")]
pub struct Lock {
    config: Arc<Config>,
    name: Vec<u8>,
    key: Vec<u8>,
    fence_key: Vec<u8>,
    options: Options,
    /// Who holds it in the process's registry: this object, or the process
    /// itself for reentrant locks.
    owner: u64,
    /// The name in that registry.
    entry: Vec<u8>,
    /// How many of the holds were taken through this object.
    mine: u32,
}

/// Why the renewal of a held lock gave up on it, if it did.
fn lost_reason(h: &Held) -> Option<String> {
    h.renewal.and_then(renew::lost)
}

impl Lock {
    pub fn new(config: Arc<Config>, name: Vec<u8>, options: Options) -> Self {
        let key = config.key(&lock::named_key(&name));
        let fence_key = lock::fence_key(&key);
        let (owner, entry) = if options.reentrant {
            let mut entry = config.id.clone().into_bytes();
            entry.push(0);
            entry.extend_from_slice(&key);
            (held::PROCESS, entry)
        } else {
            (held::new_owner(), key.clone())
        };
        Self {
            config,
            name,
            key,
            fence_key,
            options,
            owner,
            entry,
            mine: 0,
        }
    }

    fn display_name(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }

    /// The registry's record of this lock for its owner, in this process.
    fn record(&self) -> Option<Held> {
        held::get(self.owner, &self.entry).filter(|h| h.pid == std::process::id())
    }

    /// The record, if this object holds the lock.
    fn mine(&self) -> Option<Held> {
        if self.mine == 0 { None } else { self.record() }
    }

    /// The record of a lock this object must hold to `action` it.
    fn held_for(&mut self, action: &str) -> PhpResult<Held> {
        self.mine().ok_or_else(|| {
            // Released at request end, or never acquired.
            self.mine = 0;
            exception(
                Kind::NotHeld,
                format!(
                    "redislock: cannot {action} lock '{}': this Lock does not hold it",
                    self.display_name()
                ),
            )
        })
    }

    fn lost(&self, reason: &str) -> PhpException {
        exception(
            Kind::LockLost,
            format!(
                "redislock: lock '{}' was lost: {reason}",
                self.display_name()
            ),
        )
    }

    fn gone(&self) -> PhpException {
        self.lost("its lease ran out, or its key was deleted or taken by another owner")
    }

    fn take(&mut self, wait: Duration) -> PhpResult<bool> {
        if let Some(h) = self.record() {
            if !self.options.reentrant {
                return Err(exception(
                    Kind::Root,
                    format!(
                        "redislock: lock '{}' is already held by this Lock; create it with ['reentrant' => true] to acquire it again",
                        self.display_name()
                    ),
                ));
            }
            if let Some(reason) = lost_reason(&h) {
                return Err(self.lost(&reason));
            }
            if !engine(lock::holds(&h.config, &h.key, &h.token))? {
                return Err(self.gone());
            }
            held::set_count(self.owner, &self.entry, h.count + 1);
            self.mine += 1;
            return Ok(true);
        }
        let token = lock::new_token();
        let wait = Wait {
            timeout: wait,
            recheck: RECHECK,
        };
        let lease = self.options.lease;
        let acquired = lock::acquire_fenced(
            &self.config,
            &self.key,
            &self.fence_key,
            &token,
            lease,
            wait,
        );
        let Some(fence) = engine(acquired)? else {
            return Ok(false);
        };
        if self.options.replicas > 0 {
            self.confirm(&token)?;
        }
        let mut h = Held::new(self.config.clone(), self.key.clone(), token);
        h.fence = fence;
        if self.options.auto_renew {
            let renewal = renew::start(Lease {
                config: self.config.clone(),
                key: self.key.clone(),
                token: h.token.clone(),
                lease,
                until: Instant::now() + self.options.max_hold,
                max_hold: self.options.max_hold,
            });
            match renewal {
                Ok(id) => h.renewal = Some(id),
                Err(e) => {
                    let _ = lock::release(&h.config, &h.key, h.token.as_bytes());
                    return Err(exception(
                        Kind::Root,
                        format!("redislock: cannot start the lease renewal thread: {e}"),
                    ));
                }
            }
        }
        held::insert(self.owner, self.entry.clone(), h);
        self.mine += 1;
        Ok(true)
    }

    /// Waits for the replicas the options ask for to acknowledge the acquire
    /// just made with `token`; if they do not in time, lets the lock go and
    /// says so.
    fn confirm(&self, token: &str) -> PhpResult<()> {
        let (wanted, timeout) = (self.options.replicas, self.options.replica_timeout);
        let acked = engine(lock::confirm(
            &self.config,
            &self.key,
            token,
            wanted,
            timeout,
        ))?;
        if acked >= wanted {
            return Ok(());
        }
        Err(exception(
            Kind::NotAcquired,
            format!(
                "redislock: lock '{}' was taken on the master but only {acked} of {wanted} replicas acknowledged it within {} s; it was released",
                self.display_name(),
                timeout.as_secs_f64()
            ),
        ))
    }

    fn let_go(&mut self) -> PhpResult<bool> {
        let h = self.held_for("release")?;
        self.mine -= 1;
        if h.count > 1 {
            held::set_count(self.owner, &self.entry, h.count - 1);
            return match lost_reason(&h) {
                Some(reason) => Err(self.lost(&reason)),
                None => Ok(true),
            };
        }
        held::remove(self.owner, &self.entry);
        let lost = h.renewal.and_then(renew::stop);
        // Our token still under the key means nobody else held it meanwhile,
        // whatever the renewal thought.
        if engine(lock::release(&h.config, &h.key, h.token.as_bytes()))? {
            return Ok(true);
        }
        Err(match lost {
            Some(reason) => self.lost(&reason),
            None => self.gone(),
        })
    }
}

#[php_impl]
impl Lock {
    /// Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
    /// limit). A waiter wakes as soon as the lock is released or its lease
    /// runs out; no polling. Returns false if it was not acquired in time.
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        let wait = wait_seconds(&wait, "RedisLock\\Lock::acquire(): Argument #1 ($wait)")?;
        self.take(wait)
    }

    /// Releases the lock; true when done. A reentrant lock is freed by the
    /// last release of the process's holds. Throws `NotHeldException` if
    /// this Lock does not hold it, `LockLostException` if it was lost
    /// before the release (lease ran out, key taken, renewal failed).
    pub fn release(&mut self) -> PhpResult<bool> {
        self.let_go()
    }

    /// Sets the lease to `$ttl` seconds (default: the lock's ttl) from now.
    /// Throws `NotHeldException` or `LockLostException` as `release()`.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let h = self.held_for("extend")?;
        let lease = match &ttl.0 {
            Value::Null => self.options.lease,
            value => positive_seconds(value, "RedisLock\\Lock::extend(): Argument #1 ($ttl)")?,
        };
        if let Some(reason) = lost_reason(&h) {
            return Err(self.lost(&reason));
        }
        if engine(lock::extend(&h.config, &h.key, &h.token, lease))? {
            Ok(true)
        } else {
            Err(self.gone())
        }
    }

    /// Whether this Lock holds the lock and Redis still has its token.
    pub fn is_held(&self) -> PhpResult<bool> {
        match self.mine() {
            Some(h) if lost_reason(&h).is_none() => {
                engine(lock::holds(&h.config, &h.key, &h.token))
            }
            _ => Ok(false),
        }
    }

    /// The fencing token of the current hold: larger than that of every
    /// earlier acquire of this lock name; null when not held.
    pub fn token(&self) -> Option<i64> {
        self.mine().map(|h| h.fence)
    }

    /// Seconds left on the lease, or null when the lock is not held (any more).
    pub fn remaining(&self) -> PhpResult<Option<f64>> {
        let Some(h) = self.mine().filter(|h| lost_reason(h).is_none()) else {
            return Ok(None);
        };
        let left = engine(lock::remaining(&h.config, &h.key, &h.token))?;
        Ok(left.map(|d| {
            if d == Duration::MAX {
                f64::INFINITY
            } else {
                d.as_secs_f64()
            }
        }))
    }

    /// Runs `$fn` holding the lock and returns its result; the lock is
    /// released afterwards, also when `$fn` throws (its exception then
    /// propagates). Waits up to `$wait` seconds for the lock, then throws
    /// `NotAcquiredException`. If the lock was lost while `$fn` ran,
    /// throws `LockLostException` after it.
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
        if !self.take(wait)? {
            return Err(exception(
                Kind::NotAcquired,
                format!(
                    "redislock: lock '{}' was not acquired within {} s",
                    self.display_name(),
                    wait.as_secs_f64()
                ),
            ));
        }
        let result = callable.try_call(vec![]);
        let released = self.let_go();
        match result {
            Ok(value) => released.map(|_| value),
            // An exception thrown by $fn is pending and wins over ours.
            Err(e) => Err(released.err().unwrap_or_else(|| {
                exception(Kind::Root, format!("redislock: the callback failed: {e}"))
            })),
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if self.mine == 0 {
            return;
        }
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let Some(h) = self.record() else {
                return;
            };
            if h.count > self.mine {
                held::set_count(self.owner, &self.entry, h.count - self.mine);
                return;
            }
            held::remove(self.owner, &self.entry);
            held::end(vec![h], ini::settings().release_at_request_end);
        }));
    }
}
