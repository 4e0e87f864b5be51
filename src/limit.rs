//! Rate limiters: a token bucket (GCRA), a sliding window and a fixed
//! window, each decided by one script on the server's clock, so no client
//! clock takes part and concurrent callers never pass a limit together.
//! Several limits (per IP, per user, global) are decided in the same step,
//! all or none: nothing is consumed unless every one allows.
//!
//! A limiter's state for one key (an IP, a user) lives under the limiter's
//! name (docs/keys.md): `limit:{<name>}:t:<key>` (token bucket),
//! `:f:<key>` (fixed window), `:s:<key>` and `:n:<key>` (sliding window),
//! each expiring once the key has been idle for its period, so idle keys
//! cost nothing. The policies keep apart keys: a fleet that changes a
//! limiter's policy starts it afresh instead of misreading the old state.

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{Script, script};
use crate::signals;

static LIMIT: LazyLock<Script> = script!("limit.lua");

/// How a limiter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `limit` per period, refilled continuously, holding up to `burst`
    /// at once (GCRA).
    TokenBucket { burst: u64 },
    /// At most `limit` in any window of the period.
    SlidingWindow,
    /// At most `limit` in a window of the period that starts at its first
    /// admission (Laravel's `RateLimiter`).
    FixedWindow,
}

/// A limiter's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub policy: Policy,
    /// Admitted per period (cost units).
    pub limit: u64,
    pub per: Duration,
}

impl Rate {
    /// The most one decision may cost: more is never allowed.
    pub fn capacity(&self) -> u64 {
        match self.policy {
            Policy::TokenBucket { burst } => burst,
            _ => self.limit,
        }
    }
}

/// The largest limit, burst and cost: a sliding window keeps an entry per
/// admission (up to this many per key), and Lua counts in doubles.
pub const MAX_LIMIT: u64 = 1_000_000_000;
/// The shortest period: windows expire in milliseconds.
pub const MIN_PER: Duration = Duration::from_millis(1);
/// The longest period: a year and a day.
pub const MAX_PER: Duration = Duration::from_secs(366 * 86_400);

/// One limiter of a deployment.
pub struct Limiter {
    config: Arc<Config>,
    name: Vec<u8>,
    rate: Rate,
    place: Place,
}

/// What a decision came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// None: allowed (and consumed, unless a peek); else the index of the
    /// first limit that refused.
    pub refused_by: Option<usize>,
    /// Cost units left now: the least over the limits.
    pub remaining: u64,
    /// How long until the same decision could be allowed (zero when it
    /// is): the longest over the limits.
    pub retry_after: Duration,
    /// How long until every limit is back to its full capacity.
    pub reset_after: Duration,
    /// The server's clock at the decision, since the Unix epoch.
    pub at: Duration,
}

impl Decision {
    pub fn allowed(&self) -> bool {
        self.refused_by.is_none()
    }
}

impl Limiter {
    pub fn new(config: Arc<Config>, name: Vec<u8>, rate: Rate) -> Self {
        let place = Place::new(&config.prefix, Kind::Limiter, &name);
        Limiter {
            config,
            name,
            rate,
            place,
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The state keys of `key` under this limiter's policy.
    fn keys(&self, key: &[u8]) -> [Vec<u8>; 2] {
        let at = |role: &str| [self.place.beside(role).as_slice(), key].concat();
        match self.rate.policy {
            Policy::TokenBucket { .. } => [at(":t:"), at(":t:")],
            Policy::FixedWindow => [at(":f:"), at(":f:")],
            Policy::SlidingWindow => [at(":s:"), at(":n:")],
        }
    }

    /// Consumes `cost` for `key` if the limit allows it.
    pub fn attempt(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        decide(&[(self, key)], cost, true)
    }

    /// What `attempt` would decide now, consuming nothing.
    pub fn peek(&self, key: &[u8], cost: u64) -> Result<Decision, Error> {
        decide(&[(self, key)], cost, false)
    }

    /// Attempts until allowed, sleeping in between as long as the limit
    /// says (no polling), for up to `timeout`. Returns the refusal at once
    /// when the limit cannot allow within the time left, or when a signal
    /// with a handler arrives (as other waits end).
    pub fn wait(&self, key: &[u8], cost: u64, timeout: Duration) -> Result<Decision, Error> {
        let deadline = Instant::now().checked_add(timeout);
        signals::take_caught();
        loop {
            let decision = self.attempt(key, cost)?;
            if decision.allowed() || signals::take_caught() {
                return Ok(decision);
            }
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if decision.retry_after > left || !signals::sleep(decision.retry_after) {
                return Ok(decision);
            }
        }
    }

    /// Forgets `key`'s state (under every policy): it starts full. True if
    /// there was any.
    pub fn reset(&self, key: &[u8]) -> Result<bool, Error> {
        let keys: Vec<Vec<u8>> = [":t:", ":f:", ":s:", ":n:"]
            .iter()
            .map(|role| [self.place.beside(role).as_slice(), key].concat())
            .collect();
        let deleted: i64 = conn::with(&self.config, |c| redis::cmd("DEL").arg(&keys).query(c))?;
        Ok(deleted > 0)
    }
}

/// Why the limits asked of one decision cannot be decided together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// A limiter of another deployment than the caller's.
    OtherClient,
    /// The same limiter and key twice.
    Twice { name: Vec<u8>, key: Vec<u8> },
    /// No limit at all.
    Empty,
    /// On a Cluster, keys in several hash slots.
    Slots,
}

impl std::fmt::Display for Refused {
    /// The refusal, said after the name of what was asked.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::OtherClient => write!(f, " holds a limiter of another client"),
            Refused::Twice { name, key } => write!(
                f,
                " names limiter {} with key {} twice",
                crate::shown::quoted(name),
                crate::shown::quoted(key)
            ),
            Refused::Empty => write!(f, " must not be empty"),
            Refused::Slots => write!(
                f,
                ": on a Cluster the limits of one decision must share a hash slot; give the limiters' names one hash tag, e.g. '{{shop}}:ip' and '{{shop}}:user'"
            ),
        }
    }
}

/// The limits of one decision of the deployment `config`, as they are
/// asked: each refused as soon as it cannot join the others.
pub struct Asked<'a> {
    config: &'a Config,
    limits: Vec<(&'a Limiter, Vec<u8>)>,
}

impl<'a> Asked<'a> {
    pub fn new(config: &'a Config, capacity: usize) -> Self {
        Self {
            config,
            limits: Vec::with_capacity(capacity),
        }
    }

    /// Adds `key` of `limiter`.
    pub fn add(&mut self, limiter: &'a Limiter, key: Vec<u8>) -> Result<(), Refused> {
        if limiter.config.id != self.config.id {
            return Err(Refused::OtherClient);
        }
        if self.limits.iter().any(|(l, k)| {
            l.name == limiter.name && l.rate.policy == limiter.rate.policy && *k == key
        }) {
            return Err(Refused::Twice {
                name: limiter.name.clone(),
                key,
            });
        }
        self.limits.push((limiter, key));
        Ok(())
    }

    /// The limiters asked, in their order.
    pub fn limiters(&self) -> Vec<&'a Limiter> {
        self.limits.iter().map(|(l, _)| *l).collect()
    }

    /// Every limit asked, ready for [`decide`]: at least one, and on a
    /// Cluster all in one slot.
    pub fn limits(&self) -> Result<Vec<(&'a Limiter, &[u8])>, Refused> {
        let limits: Vec<(&Limiter, &[u8])> = self
            .limits
            .iter()
            .map(|(l, k)| (*l, k.as_slice()))
            .collect();
        if limits.is_empty() {
            return Err(Refused::Empty);
        }
        if !share_a_slot(&limits) {
            return Err(Refused::Slots);
        }
        Ok(limits)
    }
}

/// Whether one script can reach every limit of `limits`: on a Cluster,
/// their keys must share a hash slot (one limiter's always do).
pub fn share_a_slot(limits: &[(&Limiter, &[u8])]) -> bool {
    let Some((first, _)) = limits.first() else {
        return true;
    };
    let keys: Vec<Vec<u8>> = limits
        .iter()
        .map(|(l, key)| l.keys(key)[0].clone())
        .collect();
    let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    first.config.one_slot(&keys)
}

/// Decides `cost` against every `(limiter, key)` of `limits` at once, all
/// or none: consumes from each when every one allows and `take`; a peek
/// consumes nothing. The limiters must be of one deployment, and on a
/// Cluster share a hash slot ([`share_a_slot`]).
pub fn decide(limits: &[(&Limiter, &[u8])], cost: u64, take: bool) -> Result<Decision, Error> {
    let Some((first, _)) = limits.first() else {
        return Ok(Decision {
            refused_by: None,
            remaining: 0,
            retry_after: Duration::ZERO,
            reset_after: Duration::ZERO,
            at: Duration::ZERO,
        });
    };
    let op = match take {
        true => crate::telemetry::locks::limit(&first.name, cost),
        false => crate::telemetry::Op::default(),
    };
    let decision = decide_with(first, limits, cost, take);
    crate::telemetry::locks::ended(op, &decision, Decision::allowed);
    decision
}

fn decide_with(
    first: &Limiter,
    limits: &[(&Limiter, &[u8])],
    cost: u64,
    take: bool,
) -> Result<Decision, Error> {
    let keys: Vec<[Vec<u8>; 2]> = limits.iter().map(|(l, key)| l.keys(key)).collect();
    let reply: (i64, i64, i64, i64, i64) = conn::with(&first.config, |c| {
        let mut call = LIMIT.prepare_invoke();
        call.arg(cost).arg(if take { "1" } else { "0" });
        for ((limiter, _), [state, second]) in limits.iter().zip(&keys) {
            let rate = limiter.rate;
            let (policy, burst) = match rate.policy {
                Policy::TokenBucket { burst } => ("t", burst),
                Policy::FixedWindow => ("f", 0),
                Policy::SlidingWindow => ("s", 0),
            };
            call.key(state)
                .key(second)
                .arg(policy)
                .arg(rate.limit)
                .arg(u64::try_from(rate.per.as_micros()).unwrap_or(u64::MAX))
                .arg(burst);
        }
        call.invoke(c)
    })?;
    let (refused, remaining, retry, reset, at) = reply;
    let micros = |n: i64| Duration::from_micros(u64::try_from(n).unwrap_or(0));
    let refused_by = match usize::try_from(refused) {
        Ok(0) => None,
        Ok(i) if i <= limits.len() => Some(i - 1),
        _ => {
            return Err(conn::unknown_reply(&first.config, "limit.lua", &reply));
        }
    };
    Ok(Decision {
        refused_by,
        remaining: u64::try_from(remaining).unwrap_or(0),
        retry_after: micros(retry),
        reset_after: micros(reset),
        at: micros(at),
    })
}
