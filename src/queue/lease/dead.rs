//! The dead letters: tasks out of attempts (or buried), kept to be looked
//! at, retried or purged.

use std::sync::LazyLock;

use redis::FromRedisValue;

use super::BATCH;
use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, Tags, wake_ms};
use crate::scripts::{Script, script};

static DEAD: LazyLock<Script> = script!("queue_dead.lua");

/// A dead letter.
#[derive(Clone, Debug, PartialEq)]
pub struct DeadTask {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    pub attempts: i64,
    /// When it died, in seconds on the server's clock.
    pub died_at: f64,
    /// Why it died: its last nack's or bury's reason, or `lease ran out`.
    pub reason: Option<Vec<u8>>,
    /// The tags its producer gave it, and its group (see [`Tags`]).
    pub tags: Vec<Vec<u8>>,
    pub group: Option<Vec<u8>>,
}

/// `queue_dead.lua` doing `op` on up to `limit` dead letters (the given
/// `ids`, or the oldest); `T`: its reply (the tasks listed, or a count).
fn dead_call<T: FromRedisValue>(
    config: &Config,
    keys: &Keys,
    op: &str,
    limit: u64,
    max_length: u64,
    ids: &[Vec<u8>],
) -> Result<T, Error> {
    conn::with(config, |c| {
        let mut call = keys.call(&DEAD);
        call.arg(op)
            .arg(limit.clamp(1, BATCH))
            .arg(&keys.waiters)
            .arg(wake_ms())
            .arg(max_length);
        for id in ids {
            call.arg(id.as_slice());
        }
        call.invoke(c)
    })
}

/// The oldest dead letters, up to `limit` (at most [`BATCH`]).
pub fn dead(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<DeadTask>, Error> {
    // id, payload, attempts, died at, reason, tags
    type Row = (
        Vec<u8>,
        Option<Vec<u8>>,
        i64,
        f64,
        Option<Vec<u8>>,
        Option<Vec<u8>>,
    );
    let rows: Vec<Row> = dead_call(config, keys, "list", limit, 0, &[])?;
    Ok(rows
        .into_iter()
        .map(|(id, payload, attempts, died_at, reason, tags)| {
            let (tags, group) = Tags::parts(tags.as_deref());
            DeadTask {
                id,
                payload,
                attempts,
                died_at,
                reason,
                tags,
                group,
            }
        })
        .collect())
}

/// What [`retry_dead`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retried {
    /// How many dead letters went back to the queue.
    pub retried: u64,
    /// The queue's length when the next would have passed its maximum
    /// length (the retry stopped there: the rest stay dead).
    pub full: Option<u64>,
}

/// Moves dead letters back to the queue (due now, attempts reset): the
/// given ids, or all of them when `ids` is empty, the oldest first, as long
/// as the queue stays within `max_length` (0: no limit).
pub fn retry_dead(
    config: &Config,
    keys: &Keys,
    ids: &[Vec<u8>],
    max_length: u64,
) -> Result<Retried, Error> {
    let retry = |chunk: &[Vec<u8>]| -> Result<(u64, Option<u64>), Error> {
        let super::Relayed((n, length), relays): super::Relayed<(u64, i64)> =
            dead_call(config, keys, "retry", BATCH, max_length, chunk)?;
        super::relay(config, &relays);
        Ok((n, u64::try_from(length).ok()))
    };
    let mut done = Retried {
        retried: 0,
        full: None,
    };
    if ids.is_empty() {
        // All of them, a bounded batch per call.
        loop {
            let (n, full) = retry(&[])?;
            (done.retried, done.full) = (done.retried + n, full);
            if full.is_some() || n < BATCH {
                return Ok(done);
            }
        }
    }
    for chunk in ids.chunks(BATCH as usize) {
        let (n, full) = retry(chunk)?;
        (done.retried, done.full) = (done.retried + n, full);
        if full.is_some() {
            break;
        }
    }
    Ok(done)
}

/// Removes dead letters with their payloads: the given ids, or all of them
/// when `ids` is empty. Returns how many.
pub fn purge_dead(config: &Config, keys: &Keys, ids: &[Vec<u8>]) -> Result<u64, Error> {
    let mut total = 0;
    if ids.is_empty() {
        // All of them, a bounded batch per call.
        loop {
            let n: u64 = dead_call(config, keys, "purge", BATCH, 0, &[])?;
            total += n;
            if n < BATCH {
                return Ok(total);
            }
        }
    }
    for chunk in ids.chunks(BATCH as usize) {
        total += dead_call::<u64>(config, keys, "purge", BATCH, 0, chunk)?;
    }
    Ok(total)
}
