//! Redlock: one lock over N independent Redis masters. Every step asks all
//! nodes at once, from one thread per node, so it takes as long as the
//! slowest node within its timeout, not the sum; a lock is held when a
//! majority took it and time is left on it after the elapsed time and the
//! clock drift allowance. Locks are named: each node's keys are under
//! its own prefix.

use std::sync::Arc;
use std::time::{Duration, Instant};

// Redlock keys have no waiter line (waiting is retrying): a release finds
// the line empty and deletes the key.
use super::registry::{self, Held};
use super::{Keys, extend as extend_on, release as release_on};
use crate::config::Config;
use crate::conn::{self, Error, Lent};
use crate::signals;
use crate::time::millis;

/// The nodes and how to use them.
#[derive(Clone, Debug)]
pub struct Nodes {
    pub nodes: Vec<Arc<Config>>,
    /// Clock drift allowance: this fraction of the TTL ...
    pub drift_factor: f64,
    /// ... plus this.
    pub drift_fixed: Duration,
    /// The longest pause between two attempts (each pause is random, up to
    /// this, so that contenders do not collide again).
    pub retry_delay: Duration,
}

/// How long a successful acquire or extend holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validity {
    /// How long the lock is surely held, from `since`.
    pub validity: Duration,
    pub since: Instant,
}

/// Why an acquire did not succeed.
#[derive(Clone, Debug, PartialEq)]
pub enum NoQuorum {
    /// Enough nodes answered, but not enough gave us the lock in time.
    Busy,
    /// Too many nodes failed for a majority to be possible: each failure.
    Unavailable(Vec<Error>),
}

impl Nodes {
    pub fn quorum(&self) -> usize {
        self.nodes.len() / 2 + 1
    }

    /// Each node with its timeouts cut to `limit`: a slow node must not hold
    /// an acquire past the lease it is taking.
    fn bounded(&self, limit: Duration) -> Vec<Config> {
        self.nodes
            .iter()
            .map(|n| {
                let mut n = Config::clone(n);
                n.connect_timeout = n.connect_timeout.min(limit);
                n.read_timeout = n.read_timeout.min(limit);
                n
            })
            .collect()
    }

    fn drift(&self, ttl: Duration) -> Duration {
        ttl.mul_f64(self.drift_factor) + self.drift_fixed
    }
}

/// Runs `f` on every node at once, one thread each. Each thread borrows
/// this thread's connection to its node and gives it back, so the
/// connections last across calls.
fn on_all<T: Send>(
    nodes: &[Config],
    f: impl Fn(&Config) -> Result<T, Error> + Sync,
) -> Vec<Result<T, Error>> {
    let f = &f;
    let done: Vec<(Result<T, Error>, Lent)> = std::thread::scope(|s| {
        let running: Vec<_> = nodes
            .iter()
            .map(|n| {
                let lent = conn::lend(n);
                // Signals stay with the PHP thread (see `signals`).
                let thread = signals::held(|| {
                    s.spawn(move || {
                        conn::adopt(lent);
                        let result = f(n);
                        (result, conn::lend(n))
                    })
                });
                (n, thread)
            })
            .collect();
        running
            .into_iter()
            .map(|(n, t)| {
                t.join().unwrap_or_else(|_| {
                    let cause = "the request thread panicked".into();
                    let server = n.server.clone();
                    (Err(Error::Connection { server, cause }), conn::Lent::none())
                })
            })
            .collect()
    });
    done.into_iter()
        .map(|(result, lent)| {
            conn::adopt(lent);
            result
        })
        .collect()
}

/// The per-node timeout for a lease: a tenth of it, at least 5 ms.
fn node_timeout(ttl: Duration) -> Duration {
    (ttl / 10).max(Duration::from_millis(5))
}

fn failures<T>(results: &[Result<T, Error>]) -> Vec<Error> {
    results
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect()
}

/// A random pause of up to `max`.
fn jitter(max: Duration) -> Duration {
    let r = u64::from_le_bytes(
        uuid::Uuid::new_v4().as_bytes()[..8]
            .try_into()
            .unwrap_or([0; 8]),
    );
    max.mul_f64((r % 10_000) as f64 / 10_000.0)
}

/// One attempt: `SET NX PX` on every node; on success, how long it holds.
fn attempt(nodes: &Nodes, name: &[u8], token: &str, ttl: Duration) -> Result<Validity, NoQuorum> {
    let bounded = nodes.bounded(node_timeout(ttl));
    let since = Instant::now();
    let results = on_all(&bounded, |n| {
        conn::with(n, |c| {
            redis::cmd("SET")
                .arg(Keys::redlock(&n.prefix, name).lock)
                .arg(token)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query::<Option<String>>(c)
        })
        .map(|ok| ok.is_some())
    });
    let taken = results.iter().filter(|r| matches!(r, Ok(true))).count();
    // The keys were set from `since` on: what is left of `ttl` past the
    // time the nodes took and the drift allowance counts from now (not
    // from `since`, which would take the time spent off twice).
    let now = Instant::now();
    let spent = (now - since) + nodes.drift(ttl);
    if taken >= nodes.quorum() && spent < ttl {
        return Ok(Validity {
            validity: ttl - spent,
            since: now,
        });
    }
    // Not ours: undo what was taken, on the nodes that said they took it.
    // A node whose answer was lost (it timed out) may have taken it too:
    // that key runs out with its lease, rather than a second timeout on
    // the same silent node making the try cost two (docs/topologies.md).
    let taken_on: Vec<Config> = bounded
        .iter()
        .zip(&results)
        .filter(|(_, r)| matches!(r, Ok(true)))
        .map(|(n, _)| n.clone())
        .collect();
    let _ = on_all(&taken_on, |n| {
        release_on(n, &Keys::redlock(&n.prefix, name), token.as_bytes())
    });
    let failed = failures(&results);
    if failed.len() > nodes.nodes.len() - nodes.quorum() {
        Err(NoQuorum::Unavailable(failed))
    } else {
        Err(NoQuorum::Busy)
    }
}

/// Takes the lock with `token` for `ttl`, trying again after random pauses
/// until `wait` has passed.
pub fn acquire(
    nodes: &Nodes,
    name: &[u8],
    token: &str,
    ttl: Duration,
    wait: Duration,
) -> Result<Validity, NoQuorum> {
    let deadline = Instant::now() + wait;
    loop {
        let refused = match attempt(nodes, name, token, ttl) {
            Ok(held) => return Ok(held),
            Err(refused) => refused,
        };
        let pause = jitter(nodes.retry_delay);
        if Instant::now() + pause >= deadline {
            return Err(refused);
        }
        std::thread::sleep(pause);
    }
}

/// Releases the lock on every node; how many deleted our token.
pub fn release(nodes: &Nodes, name: &[u8], token: &str, ttl: Duration) -> usize {
    let bounded = nodes.bounded(node_timeout(ttl));
    on_all(&bounded, |n| {
        release_on(n, &Keys::redlock(&n.prefix, name), token.as_bytes())
    })
    .into_iter()
    .filter(|r| matches!(r, Ok(true)))
    .count()
}

/// Sets a new lease on every node still holding `token`; held again only
/// with a majority, within the new validity.
pub fn extend(
    nodes: &Nodes,
    name: &[u8],
    token: &str,
    ttl: Duration,
) -> Result<Validity, NoQuorum> {
    let bounded = nodes.bounded(node_timeout(ttl));
    let since = Instant::now();
    let results = on_all(&bounded, |n| {
        extend_on(n, &Keys::redlock(&n.prefix, name).lock, token, ttl)
    });
    let kept = results.iter().filter(|r| matches!(r, Ok(true))).count();
    let now = Instant::now();
    let spent = (now - since) + nodes.drift(ttl);
    if kept >= nodes.quorum() && spent < ttl {
        return Ok(Validity {
            validity: ttl - spent,
            since: now,
        });
    }
    let failed = failures(&results);
    if failed.len() > nodes.nodes.len() - nodes.quorum() {
        Err(NoQuorum::Unavailable(failed))
    } else {
        Err(NoQuorum::Busy)
    }
}

/// How many nodes still hold `token`.
pub fn holders(nodes: &Nodes, name: &[u8], token: &str, ttl: Duration) -> usize {
    let bounded = nodes.bounded(node_timeout(ttl));
    on_all(&bounded, |n| {
        super::holds(n, &Keys::redlock(&n.prefix, name).lock, token)
    })
    .into_iter()
    .filter(|r| matches!(r, Ok(true)))
    .count()
}

/// Why a Redlock cannot be made as asked.
#[derive(Clone, Debug, PartialEq)]
pub enum Invalid {
    /// The clock drift allowance is not below the ttl: the lock could
    /// never be acquired.
    Drift { drift: Duration, ttl: Duration },
    /// This node (server and database) is listed twice: the masters must
    /// be independent.
    Twice(String),
}

/// Why an operation on a [`Redlock`] did not do what was asked.
#[derive(Clone, Debug, PartialEq)]
pub enum Denied {
    /// What the nodes answered ([`NoQuorum::Busy`] on a release or extend:
    /// fewer than a majority still held it).
    Nodes(NoQuorum),
    /// This object does not hold it.
    NotHeld,
    /// This object holds it already.
    AlreadyHeld,
    /// A wait (this one) shorter than the longest pause between attempts:
    /// no retry could happen within it.
    WaitBelowRetryDelay(Duration),
}

/// One named lock over the nodes, as one object holds it: the token and
/// validity of its current hold. A hold is in the process's registry of
/// held locks ([`held`]), one record per node, so the request end lets go
/// of it as of every other lock (unless `release_at_end` is false) and
/// `Runtime::held()` lists its keys.
pub struct Redlock {
    nodes: Nodes,
    name: Vec<u8>,
    ttl: Duration,
    held: Option<(String, Validity)>,
    /// Its records' owner in the registry.
    owner: u64,
    /// False: a hold outlives the request, until released or its lease ends.
    pub release_at_end: bool,
}

impl Redlock {
    pub fn new(nodes: Nodes, name: Vec<u8>, ttl: Duration) -> Result<Self, Invalid> {
        let drift = nodes.drift(ttl);
        if drift >= ttl {
            return Err(Invalid::Drift { drift, ttl });
        }
        let mut seen = std::collections::HashSet::new();
        for node in &nodes.nodes {
            if !seen.insert((node.server.clone(), node.info.redis_settings().db())) {
                return Err(Invalid::Twice(node.server.clone()));
            }
        }
        Ok(Redlock {
            nodes,
            name,
            ttl,
            held: None,
            owner: registry::new_owner(),
            release_at_end: true,
        })
    }

    /// Records a hold of `token` in the registry: one record per node (the
    /// node's timeouts bounded as a release's are).
    fn register(&self, token: &str) {
        for (i, node) in self
            .nodes
            .bounded(node_timeout(self.ttl))
            .into_iter()
            .enumerate()
        {
            let keys = Arc::new(Keys::redlock(&node.prefix, &self.name));
            let mut record = Held::new(Arc::new(node), keys, token.to_owned());
            record.outlives_request = !self.release_at_end;
            record.part_of = Some(self.owner);
            registry::insert(self.owner, i.to_string().into_bytes(), record);
        }
    }

    /// The current hold, unless the request end let go of it (its records
    /// are gone from the registry, or belong to another process: a fork's
    /// child holds nothing of its parent's).
    fn hold(&self) -> Option<&(String, Validity)> {
        self.held.as_ref().filter(|_| self.hold_recorded())
    }

    /// Takes the current hold, forgetting its records.
    fn take(&mut self) -> Option<(String, Validity)> {
        let hold = self.held.take().filter(|_| self.hold_recorded());
        registry::take_owner(self.owner);
        hold
    }

    fn hold_recorded(&self) -> bool {
        registry::get(self.owner, b"0").is_some_and(|h| h.pid == crate::process::id())
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    /// Takes the lock on a majority of the nodes, trying again after random
    /// pauses for up to `wait`; false when not taken.
    pub fn acquire(&mut self, wait: Duration) -> Result<bool, Denied> {
        if !wait.is_zero() && self.nodes.retry_delay > wait {
            return Err(Denied::WaitBelowRetryDelay(wait));
        }
        if self.remaining().is_some() {
            return Err(Denied::AlreadyHeld);
        }
        // A hold whose validity ended: its records go (its keys run out).
        registry::take_owner(self.owner);
        let token = crate::token::new_token();
        match acquire(&self.nodes, &self.name, &token, self.ttl, wait) {
            Ok(held) => {
                self.register(&token);
                self.held = Some((token, held));
                Ok(true)
            }
            Err(NoQuorum::Busy) => Ok(false),
            Err(refused) => Err(Denied::Nodes(refused)),
        }
    }

    /// Releases the lock on every node; lost (`Busy`) when fewer than a
    /// majority still had it.
    pub fn release(&mut self) -> Result<(), Denied> {
        let (token, _) = self.take().ok_or(Denied::NotHeld)?;
        if release(&self.nodes, &self.name, &token, self.ttl) >= self.nodes.quorum() {
            Ok(())
        } else {
            Err(Denied::Nodes(NoQuorum::Busy))
        }
    }

    /// A new lease of `ttl` (default: the lock's) on every node still
    /// holding it; held again only with a majority.
    pub fn extend(&mut self, ttl: Option<Duration>) -> Result<(), Denied> {
        let ttl = ttl.unwrap_or(self.ttl);
        let token = self.hold().ok_or(Denied::NotHeld)?.0.clone();
        match extend(&self.nodes, &self.name, &token, ttl) {
            Ok(validity) => {
                self.held = Some((token, validity));
                Ok(())
            }
            Err(refused) => {
                self.take();
                Err(Denied::Nodes(refused))
            }
        }
    }

    /// Validity by this object, within its validity, and a majority of the
    /// nodes still has its token.
    pub fn is_held(&self) -> bool {
        match (self.hold(), self.remaining()) {
            (Some((token, _)), Some(_)) => {
                holders(&self.nodes, &self.name, token, self.ttl) >= self.nodes.quorum()
            }
            _ => false,
        }
    }

    /// Validity left on the current hold, by this process's clock.
    pub fn remaining(&self) -> Option<Duration> {
        let (_, held) = self.hold()?;
        (held.since + held.validity).checked_duration_since(Instant::now())
    }
}

impl Drop for Redlock {
    fn drop(&mut self) {
        // As a lock's: the hold goes with its object, unless told to
        // outlive it (then it runs out with its lease).
        if let Some((token, _)) = self.take().filter(|_| self.release_at_end) {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                release(&self.nodes, &self.name, &token, self.ttl)
            }));
        }
    }
}
