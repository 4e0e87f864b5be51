//! A queue's counts and the history of its counters.

use std::sync::LazyLock;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::Keys;
use crate::scripts::{Script, script};

static METRICS: LazyLock<Script> = script!("queue_metrics.lua");

/// A queue's counts at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metrics {
    pub ready: u64,
    pub delayed: u64,
    pub leased: u64,
    pub dead: u64,
    /// How long the oldest due task has been due, in ms.
    pub oldest_due_ms: Option<u64>,
    /// When its consumers were paused, in ms on the server's clock (None:
    /// they take tasks); see [`super::pause`].
    pub paused_at_ms: Option<u64>,
    /// Until when its consumers are throttled, in ms on the server's clock
    /// (None: they are not); see [`super::throttle`].
    pub throttled_until_ms: Option<u64>,
    /// How many groups have tasks queued (see [`super::groups`]).
    pub groups: u64,
    /// How many parents wait for their children (see `queue::flow`).
    pub waiting: u64,
    /// What happened to its tasks since it was first used.
    pub totals: Counts,
}

/// The names of the queue's counters, in the order of [`Counts`] (and of
/// `QUEUE_COUNTERS` in `queue_count.lua`).
pub const COUNTERS: [&str; 6] = ["enqueued", "acked", "nacked", "retried", "dead", "expired"];

/// How many tasks were enqueued, acked (or popped by the seed's consumer),
/// nacked back to the queue, retried from the dead letters, sent to the dead
/// letters, and left to run out of their lease: one per name of
/// [`COUNTERS`].
pub type Counts = [u64; COUNTERS.len()];

/// The length of one period of a queue's history, in seconds.
pub const PERIOD: u64 = 10;

/// The counts of one period of a queue's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// When it began, in seconds on the server's clock.
    pub start: u64,
    pub counts: Counts,
}

fn counts_at(m: &[i64], at: usize) -> Counts {
    std::array::from_fn(|i| u64::try_from(m.get(at + i).copied().unwrap_or(0)).unwrap_or(0))
}

fn metrics_call(config: &Config, keys: &Keys, history: bool) -> Result<Vec<i64>, Error> {
    conn::with(config, |c| {
        METRICS
            .key(&keys.queue)
            .key(&keys.leased)
            .key(&keys.dead)
            .key(&keys.stats)
            .key(&keys.groups)
            .key(&keys.flows)
            .types_checked(&["zset", "zset", "zset", "hash", "zset", "hash"])
            .arg(if history { "history" } else { "" })
            .invoke(c)
    })
}

fn metrics_of(m: &[i64]) -> Metrics {
    let at = |i: usize| u64::try_from(m.get(i).copied().unwrap_or(0)).unwrap_or(0);
    Metrics {
        ready: at(0),
        delayed: at(1),
        leased: at(2),
        dead: at(3),
        oldest_due_ms: m.get(4).and_then(|&age| u64::try_from(age).ok()),
        paused_at_ms: m.get(5).and_then(|&at| u64::try_from(at).ok()),
        throttled_until_ms: m.get(6).and_then(|&at| u64::try_from(at).ok()),
        groups: at(7),
        waiting: at(8),
        totals: counts_at(m, 9),
    }
}

pub fn metrics(config: &Config, keys: &Keys) -> Result<Metrics, Error> {
    Ok(metrics_of(&metrics_call(config, keys, false)?))
}

/// The metrics, and the counts of each of the last 60 periods of
/// [`PERIOD`] seconds, oldest first (the last one is still running).
pub fn history(config: &Config, keys: &Keys) -> Result<(Metrics, Vec<Period>), Error> {
    let m = metrics_call(config, keys, true)?;
    let from = 9 + COUNTERS.len();
    let current = u64::try_from(m.get(from).copied().unwrap_or(0)).unwrap_or(0);
    let periods = m
        .get(from + 1..)
        .unwrap_or_default()
        .chunks_exact(COUNTERS.len())
        .enumerate()
        .map(|(i, counts)| Period {
            start: (current + 1 + i as u64).saturating_sub(60) * PERIOD,
            counts: counts_at(counts, 0),
        })
        .collect();
    Ok((metrics_of(&m), periods))
}
