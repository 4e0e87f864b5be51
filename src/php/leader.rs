//! `RedisLock\Leader`: leader election on a lock of its own kind (the
//! `lock::leader` engine), renewed by the native thread while the process
//! lives, its fencing token the leader's term.

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::engine;
use super::lock::{Lock, Options};
use super::value::{Arg, NullableFloat, Opt, Value, binary, debug_info, flag, opt, read_options};
use crate::config::Config;
use crate::identity;
use crate::lock::hold::Hold;
use crate::lock::leader;

/// A leader's lease when the caller does not say.
const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// How long a leader may lead: for ever, as far as a process goes.
const NO_MAXIMUM: Duration = Duration::from_secs(100 * 365 * 86_400);

/// The options of `RedisLock\Client::leader()`.
const OPTIONS: &[Opt<Options>] = &[
    opt!("ttl" => lease = super::positive_seconds),
    opt!("releaseAtRequestEnd" => release_at_end = flag),
];

/// A leader's hold options from `options` (`method` names them in errors).
pub fn options(value: &Value, method: &str) -> PhpResult<Options> {
    let mut o = Options {
        lease: DEFAULT_TTL,
        reentrant: false,
        auto_renew: true,
        max_hold: NO_MAXIMUM,
        replicas: 0,
        replica_timeout: Duration::from_secs(1),
        release_at_end: true,
        owner: None,
        exact_key: false,
    };
    read_options(value, method, OPTIONS, &mut o)?;
    Ok(o)
}

/// A candidate for leading `name`, from `RedisLock\Client::leader()` (not
/// constructible with `new`).
#[php_class]
#[php(name = "RedisLock\\Leader")]
pub struct Leader {
    config: Arc<Config>,
    name: Vec<u8>,
    lock: Lock,
}

impl Leader {
    pub fn new(config: Arc<Config>, name: Vec<u8>, options: Options) -> Self {
        let hold = Hold::leader(config.clone(), &name, options);
        Leader {
            lock: Lock::of(hold, name.clone()),
            config,
            name,
        }
    }
}

#[php_impl]
impl Leader {
    /// Not for PHP code: call $client->leader($name) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Leader",
            "call $client->leader($name) on a RedisLock\\Client",
        ))
    }

    /// Waits up to `$wait` seconds (null, the default, or INF: no limit; 0:
    /// one try) to lead, in the line of candidates (first come first served,
    /// no polling). True when this object leads (at once if it did already):
    /// its lease is then renewed by a native thread while the process lives
    /// (and, unless `releaseAtRequestEnd` is false, until the request ends).
    /// False when the wait ran out or a signal with a handler ended it.
    pub fn campaign(&mut self, wait: Arg<NullableFloat>) -> PhpResult<bool> {
        let wait = match &wait.0 {
            Value::Null => Duration::from_secs_f64(super::MAX_SECONDS),
            value => {
                super::wait_seconds(value, "RedisLock\\Leader::campaign(): Argument #1 ($wait)")?
            }
        };
        if self.lock.hold().fence().is_some() {
            if self.lock.is_held()? {
                return Ok(true);
            }
            // Lost (a pause past the ttl): the old hold is over.
            let _ = self.lock.release_hold();
        }
        if !self.lock.acquire_within(wait)? {
            return Ok(false);
        }
        if let Some(term) = self.lock.token() {
            engine(leader::won(&self.config, &self.name, term))?;
        }
        Ok(true)
    }

    /// Whether this object leads now: false once its lease was lost (a
    /// pause longer than the ttl, Redis unreachable) or it resigned.
    pub fn is_leader(&self) -> PhpResult<bool> {
        self.lock.is_held()
    }

    /// Stops leading, handing the lead to the next candidate in line; false
    /// when this object did not lead (any more).
    pub fn resign(&mut self) -> PhpResult<bool> {
        if self.lock.hold().fence().is_none() {
            return Ok(false);
        }
        let leading = self.lock.is_held()?;
        let released = self.lock.release_hold();
        Ok(leading && released.unwrap_or(false))
    }

    /// This leadership's term, the lock's fencing token: larger than every
    /// earlier leader's (give it to what the leader writes, to refuse an old
    /// leader's writes); null when this object has not won the lead or has
    /// resigned (a lead that was lost keeps its term: `isLeader()` tells).
    pub fn term(&self) -> Option<i64> {
        self.lock.token()
    }

    /// Who leads now, for anyone: `term`, `since` (when that term began,
    /// server time), `remaining` (seconds left of its lease, renewed while it
    /// lives) and `holder` (host, pid and process of the leader; null when
    /// not described); null when nobody leads.
    pub fn current(&self) -> PhpResult<Zval> {
        let Some(now) = engine(leader::current(&self.config, &self.name))? else {
            return Ok(Zval::new());
        };
        let holder = engine(identity::of(&self.config, &[Some(&now.owner)]))?
            .pop()
            .flatten();
        let mut out = ZendHashTable::new();
        out.insert("term", now.term)?;
        out.insert("since", now.since_ms.map(|ms| ms as f64 / 1000.0))?;
        out.insert("remaining", now.remaining.map(|d| d.as_secs_f64()))?;
        out.insert("holder", super::inspect::holder(holder)?)?;
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }

    /// The leader's name.
    pub fn name(&self) -> Zval {
        binary(&self.name)
    }

    /// What `var_dump()` shows: the name and this object's term (null when
    /// it does not lead, as far as it knows without a round trip).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        debug_info(vec![
            ("name", self.name()),
            ("term", self.term().into_zval(false)?),
        ])
    }
}
