//! `RedisLock\MultiLock`: several named locks taken all or none, from
//! `RedisLock\Client::lockMany()`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};

use super::lock::{Lock, Options};
use super::value::{Arg, Float, NullableFloat, Value, value_error};
use super::{engine, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::lock::{self, Keys};

/// Several locks taken all or none (not constructible with `new`). Released
/// when the object goes away or the request ends.
#[php_class]
#[php(name = "RedisLock\\MultiLock")]
pub struct MultiLock {
    config: Arc<Config>,
    /// In key order: every caller takes them in the same order, so two
    /// callers asking for overlapping sets never wait on each other in a
    /// circle.
    locks: Vec<Lock>,
    /// Whether one script may take them all (one server, or one slot).
    one_script: bool,
}

impl MultiLock {
    pub fn new(config: Arc<Config>, mut names: Vec<Vec<u8>>, options: Options) -> Self {
        let key = |name: &[u8]| lock::Keys::named(&config.prefix, name).lock;
        names.sort_by_key(|n| key(n));
        names.dedup();
        let locks: Vec<Lock> = names
            .into_iter()
            .map(|name| Lock::new(config.clone(), name, options.clone()))
            .collect();
        let keys: Vec<&[u8]> = locks
            .iter()
            .map(|l| l.hold().keys().lock.as_slice())
            .collect();
        let one_script = config.one_slot(&keys);
        MultiLock {
            config,
            locks,
            one_script,
        }
    }

    /// One try at all of them in one round trip.
    fn take_at_once(&mut self) -> PhpResult<bool> {
        let tokens: Vec<String> = self.locks.iter().map(|_| lock::holder::token()).collect();
        let keys: Vec<&Keys> = self.locks.iter().map(|l| l.hold().keys()).collect();
        let lease = self.locks[0].hold().lease();
        let Some(fences) = engine(lock::acquire_all(&self.config, &keys, &tokens, lease))? else {
            return Ok(false);
        };
        let taken: Vec<(String, i64)> = tokens.into_iter().zip(fences).collect();
        for (i, (token, fence)) in taken.iter().enumerate() {
            if let Err(e) = self.locks[i].adopt(token.clone(), *fence) {
                // Replicas fell short or renewal failed: none is kept, also
                // not those taken by the script but not adopted yet.
                for (l, (token, _)) in self.locks[i + 1..].iter().zip(&taken[i + 1..]) {
                    let _ = lock::release(&self.config, l.hold().keys(), token.as_bytes());
                }
                self.let_go_all();
                return Err(e);
            }
        }
        Ok(true)
    }

    /// Each in key order, waiting in each line within one deadline; none
    /// kept when one is not taken in time.
    fn take_in_order(&mut self, wait: Duration) -> PhpResult<bool> {
        let deadline = Instant::now().checked_add(wait);
        for i in 0..self.locks.len() {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let taken = self.locks[i].take(left);
            if !matches!(taken, Ok(true)) {
                self.let_go_all();
                return taken;
            }
        }
        Ok(true)
    }

    /// Releases every lock held (best effort); the first error, if any.
    fn let_go_all(&mut self) -> Option<ext_php_rs::exception::PhpException> {
        let mut first = None;
        for l in self.locks.iter_mut().rev() {
            if l.hold().is_mine() {
                if let Err(e) = l.let_go() {
                    first.get_or_insert(e);
                }
            }
        }
        first
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

    /// Takes every lock, or none, waiting up to `$wait` seconds (0: one
    /// try). When they can be taken at once (one Redis server, or one
    /// Cluster slot) the first try is one round trip; then each is waited
    /// for in its line, in key order (so no two callers deadlock). Returns
    /// false if not all were acquired in time (none is then held).
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        let wait = wait_seconds(
            &wait,
            "RedisLock\\MultiLock::acquire(): Argument #1 ($wait)",
        )?;
        if self.locks.iter().any(|l| l.hold().is_mine()) {
            return Err(super::errors::exception(
                super::errors::Kind::Root,
                "redislock: this MultiLock already holds its locks; release them first",
            ));
        }
        if self.one_script && self.take_at_once()? {
            return Ok(true);
        }
        if wait.is_zero() && self.one_script {
            return Ok(false);
        }
        self.take_in_order(wait)
    }

    /// Releases every lock; true when done. Throws `NotHeldException` if
    /// this MultiLock holds none, `LockLostException` if one was lost (the
    /// others are released all the same).
    pub fn release(&mut self) -> PhpResult<bool> {
        if !self.locks.iter().any(|l| l.hold().is_mine()) {
            return self.locks[0].let_go();
        }
        match self.let_go_all() {
            None => Ok(true),
            Some(e) => Err(e),
        }
    }

    /// Sets the lease of every lock to `$ttl` seconds (default: the ttl)
    /// from now. Throws as `release()`.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let lease = match &ttl.0 {
            Value::Null => None,
            value => Some(positive_seconds(
                value,
                "RedisLock\\MultiLock::extend(): Argument #1 ($ttl)",
            )?),
        };
        for l in &mut self.locks {
            l.extend_by(lease)?;
        }
        Ok(true)
    }

    /// Whether this MultiLock holds every lock and Redis still has them.
    pub fn is_held(&self) -> PhpResult<bool> {
        for l in &self.locks {
            if !engine(l.hold().is_held())? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The fencing token of each lock held, by name (in key order); empty
    /// when not held.
    pub fn tokens(&self) -> PhpResult<Zval> {
        let mut out = ZendHashTable::new();
        for l in &self.locks {
            if let Some(token) = l.hold().fence() {
                out.insert(&*ZendStr::new(l.name(), false), token)?;
            }
        }
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }

    /// The names of the locks, in the order they are taken.
    pub fn names(&self) -> PhpResult<Zval> {
        let mut out = ZendHashTable::new();
        for l in &self.locks {
            out.push(super::value::binary(l.name()))?;
        }
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
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
