//! The tasks waiting in a queue (due now or later), looked at without
//! taking them, or removed.

use std::sync::LazyLock;

use super::BATCH;
use crate::config::Config;
use crate::conn::{self, Error};
use crate::identity::{self, Holder};
use crate::queue::{Keys, Tags};
use crate::scripts::{Script, script};

static PEEK: LazyLock<Script> = script!("queue_peek.lua");
static REMOVE: LazyLock<Script> = script!("queue_remove.lua");
static CLEAR: LazyLock<Script> = script!("queue_clear.lua");

/// A task looked at without taking it.
#[derive(Clone, Debug, PartialEq)]
pub struct Peeked {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    pub attempts: i64,
    /// `queued`, `leased` or `dead`.
    pub state: String,
    /// When it is due (queued), its lease ends (leased) or it died (dead),
    /// in seconds on the server's clock.
    pub at: f64,
    /// Why its last attempt failed (a dead letter: why it died), if said.
    pub reason: Option<Vec<u8>>,
    /// A leased task's worker: the id of the process (see `holder`), when
    /// its token tells.
    pub worker: Option<String>,
    /// When a leased task was reserved, in seconds on the server's clock
    /// (None for a lease of a release that did not say).
    pub since: Option<f64>,
    /// The tags its producer gave it, and its group (see [`Tags`]).
    pub tags: Vec<Vec<u8>>,
    pub group: Option<Vec<u8>>,
    /// The trace context stored with it (see [`Tags::traced`]), kept when
    /// it moves.
    pub trace: Option<Vec<u8>>,
}

/// The worker and reserve time a lease token tells.
fn lease_of(token: Option<&str>) -> (Option<String>, Option<f64>) {
    let facts = token.map(super::LeaseFacts::of).unwrap_or_default();
    (
        facts.worker.map(str::to_owned),
        facts.reserved_ms.map(|ms| ms as f64 / 1000.0),
    )
}

/// A task as `queue_peek.lua` replies it.
type Row = (
    Vec<u8>,
    Option<Vec<u8>>,
    i64,
    String,
    f64,
    Option<Vec<u8>>,
    Option<String>,
    Option<Vec<u8>>,
);

fn peeked(rows: Vec<Row>) -> Vec<Peeked> {
    rows.into_iter()
        .map(|(id, payload, attempts, state, at, reason, token, tags)| {
            let (worker, since) = lease_of(token.as_deref());
            let trace = tags.as_deref().and_then(Tags::trace_of).map(<[u8]>::to_vec);
            let (tags, group) = Tags::parts(tags.as_deref());
            Peeked {
                id,
                payload,
                attempts,
                state,
                at,
                reason,
                worker,
                since,
                tags,
                group,
                trace,
            }
        })
        .collect()
}

fn peek(config: &Config, keys: &Keys, op: &str, arg: &[u8]) -> Result<Vec<Peeked>, Error> {
    let rows: Vec<Row> = conn::with(config, |c| keys.call(&PEEK).arg(op).arg(arg).invoke(c))?;
    Ok(peeked(rows))
}

/// The queued tasks (due now or later), earliest due first, up to `limit`
/// (at most [`BATCH`]).
pub fn queued(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<Peeked>, Error> {
    peek(
        config,
        keys,
        "list",
        limit.clamp(1, BATCH).to_string().as_bytes(),
    )
}

/// The leased tasks (running now), the earliest lease end first, up to
/// `limit` (at most [`BATCH`]), each with its worker's description when
/// there is one (see `holder`).
pub fn leased(
    config: &Config,
    keys: &Keys,
    limit: u64,
) -> Result<Vec<(Peeked, Option<Holder>)>, Error> {
    let tasks = peek(
        config,
        keys,
        "leased",
        limit.clamp(1, BATCH).to_string().as_bytes(),
    )?;
    let ids: Vec<Option<&[u8]>> = tasks
        .iter()
        .map(|t| t.worker.as_deref().map(str::as_bytes))
        .collect();
    let holders = identity::of_processes(config, &ids)?;
    Ok(tasks.into_iter().zip(holders).collect())
}

/// The task with `id`: queued, leased or dead; None when there is none.
pub fn find(config: &Config, keys: &Keys, id: &[u8]) -> Result<Option<Peeked>, Error> {
    Ok(peek(config, keys, "find", id)?.into_iter().next())
}

/// What telemetry reads of a task reserved: the trace context stored with
/// it (see [`Tags::traced`]) and its group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traced {
    pub trace: Option<Vec<u8>>,
    pub group: Option<Vec<u8>>,
}

/// The trace contexts and groups of the tasks `ids`, in their order. For
/// telemetry: one round trip.
pub fn traces(config: &Config, keys: &Keys, ids: &[&[u8]]) -> Result<Vec<Traced>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let stored: Vec<Option<Vec<u8>>> = conn::with(config, |c| {
        redis::cmd("HMGET").arg(&keys.tags).arg(ids).query(c)
    })?;
    Ok(stored
        .iter()
        .map(|s| Traced {
            trace: s.as_deref().and_then(Tags::trace_of).map(<[u8]>::to_vec),
            group: Tags::parts(s.as_deref()).1,
        })
        .collect())
}

/// The tasks with `tag` (see [`Tags`]), up to `limit`, the earliest time
/// (`at`) first: queued, leased and dead (a task waiting to run again
/// after its running one is found once it is queued). The tags of every
/// task are scanned, [`BATCH`] per round trip, so that the earliest are
/// those shown whatever the order of the scan: an operator's search, not
/// a worker's.
pub fn tagged(config: &Config, keys: &Keys, tag: &[u8], limit: u64) -> Result<Vec<Peeked>, Error> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let earliest = |found: &mut Vec<Peeked>| {
        found.sort_by(|a, b| a.at.total_cmp(&b.at).then_with(|| a.id.cmp(&b.id)));
        found.truncate(limit);
    };
    let mut found = Vec::new();
    let mut at = String::from("live:0");
    while !at.is_empty() {
        let (next, rows): (String, Vec<Row>) = conn::with(config, |c| {
            keys.call(&PEEK)
                .arg("tagged")
                .arg(tag)
                .arg(&at)
                .arg(BATCH)
                .invoke(c)
        })?;
        found.extend(peeked(rows));
        if found.len() > limit.saturating_mul(2) {
            earliest(&mut found);
        }
        at = next;
    }
    earliest(&mut found);
    Ok(found)
}

/// A group of a queue's tasks (see [`Tags`]), as its hints count them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Its name (empty: the tasks enqueued without a group, in a queue
    /// that has groups).
    pub name: Vec<u8>,
    /// Its tasks queued, due now or later.
    pub queued: u64,
    /// Its tasks leased, counted while the queue has a group concurrency
    /// (see [`super::set_group_concurrency`]; None: not counted).
    pub leased: Option<u64>,
    /// How long its own throttle lasts from now (zero: none).
    pub throttled: std::time::Duration,
}

/// The queue's groups, the next `reserve()` serves first, up to `limit`
/// (at most [`BATCH`]). A group's count is its hints': a task removed
/// since, or taken by the drop-in's pop, is counted until a reserve finds
/// it gone, and one enqueued again while queued is counted twice.
pub fn groups(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<Group>, Error> {
    let rows: Vec<(Vec<u8>, u64, Option<u64>, u64)> = conn::with(config, |c| {
        keys.call_ending(&PEEK)
            .arg("groups")
            .arg(limit.clamp(1, BATCH))
            .arg(&keys.waiters)
            .invoke(c)
    })?;
    Ok(rows
        .into_iter()
        .map(|(name, queued, leased, ms)| Group {
            name,
            queued,
            leased,
            throttled: std::time::Duration::from_millis(ms),
        })
        .collect())
}

/// Removes the tasks waiting under `ids`: queued (due now or later), or
/// enqueued again while their id runs. Leased tasks stay with their
/// workers, who settle them. Returns how many were removed.
/// A child of a workflow removed ends for its parent, as a failure (see
/// `queue::flow`).
pub fn remove(config: &Config, keys: &Keys, ids: &[Vec<u8>]) -> Result<u64, Error> {
    remove_with(config, keys, ids, true)
}

/// [`remove`]; `end_children`: whether a child removed ends for its
/// parent (not when a move carries it on).
pub(super) fn remove_with(
    config: &Config,
    keys: &Keys,
    ids: &[Vec<u8>],
    end_children: bool,
) -> Result<u64, Error> {
    let mut removed = 0;
    let mut ended = Vec::new();
    for chunk in ids.chunks(BATCH as usize) {
        let super::Relayed(n, relays): super::Relayed<u64> = conn::with(config, |c| {
            let mut call = if end_children {
                keys.call_ending(&REMOVE)
            } else {
                keys.call(&REMOVE)
            };
            call.arg(&keys.waiters);
            for id in chunk {
                call.arg(id);
            }
            call.invoke(c)
        })?;
        ended.extend(relays);
        removed += n;
    }
    if crate::queue::flow::told(&ended) {
        crate::queue::flow::deliver(config, keys, &ended);
    }
    Ok(removed)
}

/// Checks the types of the keys [`remove`] writes, removing nothing: a
/// caller that must not stop half way calls it before its first write.
pub(super) fn check_remove(config: &Config, keys: &Keys) -> Result<(), Error> {
    conn::with(config, |c| {
        keys.call(&REMOVE)
            .arg(&keys.waiters)
            .invoke::<super::Relayed<u64>>(c)
    })
    .map(drop)
}

/// Removes every task waiting in the queue (see [`remove`]), [`BATCH`]
/// per round trip; a task enqueued meanwhile may stay. Returns how many.
pub fn clear(config: &Config, keys: &Keys) -> Result<u64, Error> {
    let (mut removed, mut cursor) = (0, String::from("0"));
    loop {
        let super::Relayed((n, next), relays): super::Relayed<(u64, String)> =
            conn::with(config, |c| {
                keys.call_ending(&CLEAR)
                    .arg(BATCH)
                    .arg(&cursor)
                    .arg(&keys.waiters)
                    .invoke(c)
            })?;
        if crate::queue::flow::told(&relays) {
            crate::queue::flow::deliver(config, keys, &relays);
        }
        removed += n;
        if next.is_empty() {
            return Ok(removed);
        }
        cursor = next;
    }
}
