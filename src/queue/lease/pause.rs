//! Pausing and throttling a queue's consumers: while it is paused, or
//! throttled for a time, `reserve()` and the seed's `pop()` take nothing
//! (leased tasks finish as usual, producers go on enqueueing); resuming
//! wakes the consumers waiting in its line, and the first in line looks
//! again when a throttle ends. And the limits of a grouped queue's
//! groups: a concurrency, a rate and a throttle per group
//! (`scripts/queue/queue_flow.lua`).

use std::sync::LazyLock;
use std::time::Duration;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, register, wake_ms};
use crate::scripts::{Script, script};

static PAUSE: LazyLock<Script> = script!("queue_pause.lua");
static FLOW: LazyLock<Script> = script!("queue_flow.lua");

/// `queue_pause.lua`'s `op`, with `seconds` for a throttle.
fn switch(config: &Config, keys: &Keys, op: &str, seconds: f64) -> Result<i64, Error> {
    conn::with(config, |c| {
        keys.call(&PAUSE)
            .arg(op)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .arg(seconds)
            .invoke(c)
    })
}

/// Pauses the queue's consumers; false when it was paused already. A queue
/// paused before its first enqueue is listed from then on.
pub fn pause(config: &Config, keys: &Keys) -> Result<bool, Error> {
    let changed = switch(config, keys, "pause", 0.0)? == 1;
    register(config, keys)?;
    Ok(changed)
}

/// Lets the queue's consumers take tasks again, waking those waiting; false
/// when it was not paused.
pub fn resume(config: &Config, keys: &Keys) -> Result<bool, Error> {
    Ok(switch(config, keys, "resume", 0.0)? == 1)
}

/// Keeps every consumer from taking tasks for `seconds` from now (a rate
/// limit the tasks' API answered with), or longer when a longer throttle
/// is in force; 0 ends a throttle now, waking the waiting consumers. The
/// tasks' attempts are not touched. Returns how long it lasts from now.
pub fn throttle(config: &Config, keys: &Keys, seconds: f64) -> Result<Duration, Error> {
    let ms = switch(config, keys, "throttle", seconds)?;
    Ok(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// `queue_flow.lua`'s `op`, with its value and group.
fn flow(config: &Config, keys: &Keys, op: &str, value: &str, group: &[u8]) -> Result<i64, Error> {
    conn::with(config, |c| {
        keys.call_ending(&FLOW)
            .arg(op)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .arg(value)
            .arg(group)
            .invoke(c)
    })
}

/// Holds each group of the queue (not the tasks without one) to
/// `concurrency` leased tasks at once (0: no limit). The tasks leased when
/// a limit is first set are counted then, in steps of a few hundred, each
/// its own script (`queue_flow.lua`): reserves and lease ends meanwhile
/// keep the counts exact, and a count cut short goes on at the next call.
pub fn set_group_concurrency(config: &Config, keys: &Keys, concurrency: u64) -> Result<(), Error> {
    let mut more = flow(config, keys, "concurrency", &concurrency.to_string(), b"")? == 2;
    while more {
        more = flow(config, keys, "count", "", b"")? == 2;
    }
    Ok(())
}

/// Holds each group of the queue (not the tasks without one) to `rate`
/// (None: no rate per group), each group with a bucket of its own.
pub fn set_group_rate(
    config: &Config,
    keys: &Keys,
    rate: Option<super::Rate>,
) -> Result<(), Error> {
    let stored = rate.map(|r| r.stored()).unwrap_or_default();
    flow(config, keys, "rate", &stored, b"").map(drop)
}

/// [`throttle`] for the tasks of `group` alone.
pub fn throttle_group(
    config: &Config,
    keys: &Keys,
    group: &[u8],
    seconds: f64,
) -> Result<Duration, Error> {
    let ms = flow(
        config,
        keys,
        "throttle",
        &crate::queue::score_arg(seconds),
        group,
    )?;
    Ok(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}
