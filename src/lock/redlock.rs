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

/// A successful acquire or extend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// How long the lock is surely held, from `since`.
    pub validity: Duration,
    pub since: Instant,
}

/// Why an acquire did not succeed.
#[derive(Clone, Debug, PartialEq)]
pub enum Refused {
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
/// this thread's pooled connection to its node and gives it back, so the
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
fn attempt(nodes: &Nodes, name: &[u8], token: &str, ttl: Duration) -> Result<Held, Refused> {
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
    let spent = since.elapsed() + nodes.drift(ttl);
    if taken >= nodes.quorum() && spent < ttl {
        return Ok(Held {
            validity: ttl - spent,
            since,
        });
    }
    // Not ours: undo what was taken, on every node (a node whose answer was
    // lost may have taken it too).
    let _ = on_all(&bounded, |n| {
        release_on(n, &Keys::redlock(&n.prefix, name), token.as_bytes())
    });
    let failed = failures(&results);
    if failed.len() > nodes.nodes.len() - nodes.quorum() {
        Err(Refused::Unavailable(failed))
    } else {
        Err(Refused::Busy)
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
) -> Result<Held, Refused> {
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
pub fn extend(nodes: &Nodes, name: &[u8], token: &str, ttl: Duration) -> Result<Held, Refused> {
    let bounded = nodes.bounded(node_timeout(ttl));
    let since = Instant::now();
    let results = on_all(&bounded, |n| {
        extend_on(n, &Keys::redlock(&n.prefix, name).lock, token, ttl)
    });
    let kept = results.iter().filter(|r| matches!(r, Ok(true))).count();
    let spent = since.elapsed() + nodes.drift(ttl);
    if kept >= nodes.quorum() && spent < ttl {
        return Ok(Held {
            validity: ttl - spent,
            since,
        });
    }
    let failed = failures(&results);
    if failed.len() > nodes.nodes.len() - nodes.quorum() {
        Err(Refused::Unavailable(failed))
    } else {
        Err(Refused::Busy)
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
