//! Settling a leased task while its lease is the caller's: ack (done), nack
//! (back to the queue, or to the dead letters), bury, extend.

use std::sync::LazyLock;
use std::time::Duration;

use super::BATCH;
use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, score_arg, wake_ms};
use crate::scripts::{Script, script};

static ACK: LazyLock<Script> = script!("queue_ack.lua");
static NACK: LazyLock<Script> = script!("queue_nack.lua");
static EXTEND: LazyLock<Script> = script!("queue_extend.lua");

/// Finishes a task if `token` is still its lease.
pub fn ack(config: &Config, keys: &Keys, id: &[u8], token: &str) -> Result<bool, Error> {
    Ok(ack_many(config, keys, &[(id, token)])? == 1)
}

/// Finishes the tasks whose lease is still the given token, in one round
/// trip per [`BATCH`]; returns how many.
pub fn ack_many(config: &Config, keys: &Keys, tasks: &[(&[u8], &str)]) -> Result<u64, Error> {
    ack_with(config, keys, tasks, &[])
}

/// [`ack_many`], with each task's result (`results[i]`: `tasks[i]`'s;
/// none past its end), kept for its parent when it is a child (see
/// `flow`). The parents of children that ended are told before it
/// returns (`flow::deliver`).
pub fn ack_with(
    config: &Config,
    keys: &Keys,
    tasks: &[(&[u8], &str)],
    results: &[Option<&[u8]>],
) -> Result<u64, Error> {
    let mut done = 0;
    let mut ended = Vec::new();
    let parents = crate::queue::flow::parents(config, keys);
    for (n, chunk) in tasks.chunks(BATCH as usize).enumerate() {
        let first = n * BATCH as usize;
        let kept: Vec<(&[u8], &[u8])> = chunk
            .iter()
            .enumerate()
            .filter_map(|(i, (id, _))| Some((*id, (*results.get(first + i)?)?)))
            .collect();
        let super::Relayed(n, relays): super::Relayed<u64> = conn::with(config, |c| {
            let mut call = keys.call_ending(&ACK);
            call.arg(&keys.waiters)
                .arg(wake_ms())
                .arg(crate::identity::my_id());
            match &parents {
                Some(p) => {
                    call.types_checked(&crate::queue::flow::SETTLE_TYPES);
                    call.key(&p.keys.flows).key(&p.keys.flow_children);
                    call.arg(&p.name).arg(p.part).arg(p.parts)
                }
                None => call.arg("").arg(0).arg(0),
            };
            call.arg(kept.len());
            for (id, result) in &kept {
                call.arg(*id).arg(*result);
            }
            for (id, token) in chunk {
                call.arg(*id).arg(*token);
            }
            call.invoke(c)
        })?;
        ended.extend(relays);
        done += n;
    }
    if crate::queue::flow::told(&ended) {
        crate::queue::flow::deliver(config, keys, &ended);
    }
    Ok(done)
}

/// What a nack did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nack {
    Requeued,
    Dead,
    /// The lease is not the caller's any more.
    NotLeased,
}

/// The most bytes of a failure's reason kept (a longer one is cut at a
/// character boundary when it is UTF-8).
pub const REASON_MAX: usize = 1000;

/// `reason` as kept: at most [`REASON_MAX`] bytes, never a UTF-8 character
/// cut in two; an empty reason is none.
pub fn kept_reason(reason: &[u8]) -> &[u8] {
    if reason.len() <= REASON_MAX {
        return reason;
    }
    let mut end = REASON_MAX;
    if std::str::from_utf8(reason).is_ok() {
        while end > 0 && (reason[end] & 0xC0) == 0x80 {
            end -= 1;
        }
    }
    &reason[..end]
}

/// Gives a task back, due after `delay` seconds, or to the dead letters
/// when it has used up `terms.max_attempts` (0: no limit; the queue's
/// stored term when that is the consumer's default). `reason` says why
/// this attempt failed (empty: not said); see [`kept_reason`].
pub fn nack(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    delay: f64,
    terms: super::Terms,
    reason: &[u8],
) -> Result<Nack, Error> {
    let max = super::term_arg(terms.max_attempts.to_string(), terms.defaults.max_attempts);
    give_back(config, keys, id, token, delay, &max, reason)
}

/// Sends a leased task to the dead letters now, whatever its attempts (a
/// task no worker can handle), with why (empty: not said); false when the
/// lease is not the caller's.
pub fn bury(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    reason: &[u8],
) -> Result<bool, Error> {
    Ok(give_back(config, keys, id, token, 0.0, "bury", reason)? == Nack::Dead)
}

/// Gives a task back, due after `delay` seconds, without spending the
/// attempt its reserve counted (a worker told to come back later: a 429,
/// a throttle) and keeping its last failure; false when the lease is not
/// the caller's.
pub fn release(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    delay: f64,
) -> Result<bool, Error> {
    Ok(give_back(config, keys, id, token, delay, "release", b"")? != Nack::NotLeased)
}

/// `queue_nack.lua`, with its maximum attempts as the script takes them.
fn give_back(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    delay: f64,
    max_attempts: &str,
    reason: &[u8],
) -> Result<Nack, Error> {
    let super::Relayed(outcome, relays): super::Relayed<String> = conn::with(config, |c| {
        keys.call_ending(&NACK)
            .arg(id)
            .arg(token)
            .arg(score_arg(delay))
            .arg(max_attempts)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .arg(kept_reason(reason))
            .invoke(c)
    })?;
    super::relay(config, &relays);
    if crate::queue::flow::told(&relays) {
        crate::queue::flow::deliver(config, keys, &relays);
    }
    Ok(match outcome.as_str() {
        "requeued" => Nack::Requeued,
        "dead" => Nack::Dead,
        "not leased" => Nack::NotLeased,
        _ => return Err(conn::unknown_reply(config, "queue_nack.lua", &outcome)),
    })
}

/// Sets the lease of a task to `lease` from now if `token` is still its lease.
pub fn extend(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    lease: Duration,
) -> Result<bool, Error> {
    let done: i64 = conn::with(config, |c| {
        keys.call(&EXTEND)
            .arg(id)
            .arg(token)
            .arg(score_arg(lease.as_secs_f64()))
            .invoke(c)
    })?;
    Ok(done == 1)
}
