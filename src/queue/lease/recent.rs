//! A queue's recent attempts: each attempt that ended (acked, nacked,
//! buried, or its lease ran out) leaves a short record in the queue's
//! `:recent` list, newest first, which keeps the last [`RECENT_KEEP`] records
//! (or as many as the operator set) for [`RECENT_FOR`] (or as long as set),
//! and, when the operator set a bound of bytes, only as many of the newest
//! as fit in it.

use std::sync::LazyLock;
use std::time::Duration;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, Tags};
use crate::scripts::{Script, script};

static RECENT: LazyLock<Script> = script!("queue_recent.lua");

/// How many records a queue keeps unless set otherwise.
pub const RECENT_KEEP: u64 = 100;
/// The most records a queue can be set to keep.
pub const RECENT_KEEP_MAX: u64 = 100_000;
/// How long a queue keeps a record unless set otherwise.
pub const RECENT_FOR: Duration = Duration::from_secs(3600);
/// The longest a queue can be set to keep a record: a year.
pub const RECENT_FOR_MAX: Duration = Duration::from_secs(365 * 86_400);
/// The largest bound of bytes a queue's records can be given (as
/// `queue_recent_terms()` keeps it).
pub const RECENT_BYTES_MAX: u64 = 1 << 40;

/// One attempt that ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub id: Vec<u8>,
    /// `acked`, `nacked` (due again), `expired` (its lease ran out; due
    /// again) or `dead`.
    pub outcome: String,
    /// When it ended, in seconds on the server's clock.
    pub at: f64,
    /// The task's attempts, this one included (None: a lease of an older
    /// release, which did not say).
    pub attempts: Option<i64>,
    /// From its reserve to its end, in seconds.
    pub runtime: Option<f64>,
    /// How long it had been due when it was reserved, in seconds.
    pub wait: Option<f64>,
    /// The id of the worker's process (see `identity`).
    pub worker: Option<String>,
    /// Why it failed, when it did and it was said.
    pub reason: Option<Vec<u8>>,
    /// The tags its producer gave the task, and its group (see [`Tags`]).
    pub tags: Vec<Vec<u8>>,
    pub group: Option<Vec<u8>>,
}

/// One record's fields as queue_recent.lua reads them (`queue_recent_record`:
/// ms, outcome, lease token, id, stored tags, reason; absent ones nil);
/// None when they are not those of a record.
fn parse(fields: Vec<Option<Vec<u8>>>) -> Option<Attempt> {
    let [ended, outcome, token, id, tags, reason] = <[_; 6]>::try_from(fields).ok()?;
    let ended: u64 = std::str::from_utf8(&ended?).ok()?.parse().ok()?;
    let outcome = String::from_utf8(outcome?).ok()?;
    let token = token.map(String::from_utf8).transpose().ok()?;
    let (tags, group) = Tags::parts(tags.as_deref());
    // Of the lease token only what it tells, never the token itself.
    let lease = super::LeaseFacts::of(token.as_deref().unwrap_or("-"));
    let seconds = |ms: u64| ms as f64 / 1000.0;
    Some(Attempt {
        id: id?,
        outcome,
        at: seconds(ended),
        attempts: lease.attempts,
        runtime: lease
            .reserved_ms
            .map(|at| seconds(ended.saturating_sub(at))),
        wait: lease.wait_ms.map(seconds),
        worker: lease.worker.map(str::to_owned),
        reason: reason.filter(|r| !r.is_empty()),
        tags,
        group,
    })
}

/// The recent attempts, newest first, up to `limit`, of the task `id`
/// and with `tag` only when given: none older than the queue keeps them.
/// Also returns the server's time, in seconds.
pub fn recent(
    config: &Config,
    keys: &Keys,
    limit: u64,
    id: Option<&[u8]>,
    tag: Option<&[u8]>,
) -> Result<(f64, Vec<Attempt>), Error> {
    let reply: Vec<redis::Value> = conn::with(config, |c| {
        keys.call_ending(&RECENT)
            .arg("list")
            .arg(limit.clamp(1, RECENT_KEEP_MAX))
            .arg(id.unwrap_or_default())
            .arg(tag.unwrap_or_default())
            .invoke(c)
    })?;
    let mut items = reply.into_iter();
    let now: i64 = items
        .next()
        .and_then(|v| redis::from_redis_value(v).ok())
        .ok_or_else(|| conn::unknown_reply(config, "queue_recent.lua", &"no server time"))?;
    let attempts = items
        .filter_map(|v| redis::from_redis_value::<Vec<Option<Vec<u8>>>>(v).ok())
        .filter_map(parse)
        .collect();
    Ok((now as f64 / 1000.0, attempts))
}

/// What a queue's recent attempts take: how many records it holds, the
/// bytes Redis gives their list, and the terms it keeps them by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint {
    pub kept: u64,
    /// `MEMORY USAGE` of the list; None where the server refuses it (an
    /// ACL without it).
    pub bytes: Option<u64>,
    /// The most records kept, and for how long.
    pub keep: u64,
    pub how_long: Duration,
    /// The most bytes their records may take; None: no bound.
    pub max_bytes: Option<u64>,
}

/// How many recent attempts the queue holds, and the memory they take.
pub fn footprint(config: &Config, keys: &Keys) -> Result<Footprint, Error> {
    type Terms = (Option<String>, Option<String>, Option<String>);
    let (kept, (keep, ms, max_bytes)): (u64, Terms) = conn::with(config, |c| {
        let kept = redis::cmd("LLEN").arg(&keys.recent).query(c)?;
        let terms = redis::cmd("HMGET")
            .arg(&keys.stats)
            .arg("recentKeep")
            .arg("recentMs")
            .arg("recentBytes")
            .query(c)?;
        Ok((kept, terms))
    })?;
    let bytes = conn::with(config, |c| {
        redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&keys.recent)
            .arg("SAMPLES")
            .arg(0)
            .query::<Option<u64>>(c)
    })
    .ok()
    .map(|b| b.unwrap_or(0));
    // As queue_recent_terms() reads them (a hand's value kept in range).
    let keep = keep
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(RECENT_KEEP, |k| k.clamp(0.0, RECENT_KEEP_MAX as f64) as u64);
    let ms = ms
        .and_then(|m| m.parse::<f64>().ok())
        .filter(|m| m.is_finite())
        .map_or(crate::time::millis(RECENT_FOR), |m| {
            m.clamp(1.0, crate::time::millis(RECENT_FOR_MAX) as f64) as u64
        });
    let max_bytes = max_bytes
        .and_then(|b| b.parse::<f64>().ok())
        .filter(|b| b.is_finite() && *b >= 1.0)
        .map(|b| b.min(RECENT_BYTES_MAX as f64) as u64);
    Ok(Footprint {
        kept,
        bytes,
        keep,
        how_long: Duration::from_millis(ms),
        max_bytes,
    })
}

/// Sets how many recent attempts the queue keeps (0: none), for how long,
/// and the most bytes their records take (None: no bound); what is past
/// them goes now.
pub fn keep_recent(
    config: &Config,
    keys: &Keys,
    keep: u64,
    how_long: Duration,
    max_bytes: Option<u64>,
) -> Result<(), Error> {
    conn::with(config, |c| {
        keys.call_ending(&RECENT)
            .arg("keep")
            .arg(keep.min(RECENT_KEEP_MAX))
            .arg(crate::time::millis(how_long.min(RECENT_FOR_MAX)).max(1))
            .arg(max_bytes.map_or(0, |b| b.clamp(1, RECENT_BYTES_MAX)))
            .invoke::<i64>(c)
    })
    .map(drop)
}
