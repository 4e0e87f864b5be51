//! A queue's recent attempts: each attempt that ended (acked, nacked,
//! buried, or its lease ran out) leaves a short record in the queue's
//! `:recent` list, newest first, which keeps the last [`RECENT_KEEP`] records
//! (or as many as the operator set) for [`RECENT_FOR`] (or as long as set).

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

/// A record as `queue_recent_record` writes it; None when it is not one.
fn parse(record: &[u8]) -> Option<Attempt> {
    let mut fields = [""; 4];
    let mut rest = record;
    for field in &mut fields {
        let space = rest.iter().position(|&b| b == b' ')?;
        *field = std::str::from_utf8(&rest[..space]).ok()?;
        rest = &rest[space + 1..];
    }
    let [ended, outcome, token, length] = fields;
    let ended: u64 = ended.parse().ok()?;
    // `*`: the id is all the rest (a record without a reason or tags);
    // `<id bytes>/<tags bytes>`: the tags follow the id.
    let (length, tagged) = match length.split_once('/') {
        _ if length == "*" => (rest.len(), 0),
        Some((id, tags)) => (id.parse().ok()?, tags.parse().ok()?),
        None => (length.parse().ok()?, 0),
    };
    let id = rest.get(..length)?;
    let (tags, group) = Tags::parts(Some(rest.get(length..length + tagged)?));
    let reason = &rest[length + tagged..];
    // Of the lease token only what it tells, never the token itself.
    let lease = super::LeaseFacts::of(token);
    let seconds = |ms: u64| ms as f64 / 1000.0;
    Some(Attempt {
        id: id.to_vec(),
        outcome: outcome.to_owned(),
        at: seconds(ended),
        attempts: lease.attempts,
        runtime: lease
            .reserved_ms
            .map(|at| seconds(ended.saturating_sub(at))),
        wait: lease.wait_ms.map(seconds),
        worker: lease.worker.map(str::to_owned),
        reason: (!reason.is_empty()).then(|| reason.to_vec()),
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
        .filter_map(|v| redis::from_redis_value::<Vec<u8>>(v).ok())
        .filter_map(|r| parse(&r))
        .collect();
    Ok((now as f64 / 1000.0, attempts))
}

/// Sets how many recent attempts the queue keeps (0: none) and for how
/// long; what is past them goes now.
pub fn keep_recent(
    config: &Config,
    keys: &Keys,
    keep: u64,
    how_long: Duration,
) -> Result<(), Error> {
    conn::with(config, |c| {
        keys.call_ending(&RECENT)
            .arg("keep")
            .arg(keep.min(RECENT_KEEP_MAX))
            .arg(crate::time::millis(how_long.min(RECENT_FOR_MAX)).max(1))
            .invoke::<i64>(c)
    })
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_with_any_bytes_in_id_and_reason() {
        let a = parse(b"1700000001623 nacked 0123456789abcdef0123456789abcdef:3.2@1700000000123+20 5 a b\0cno  way")
            .unwrap();
        assert_eq!(a.id, b"a b\0c");
        assert_eq!(a.reason.as_deref(), Some(&b"no  way"[..]));
        assert_eq!(a.outcome, "nacked");
        assert_eq!(a.attempts, Some(2));
        assert_eq!(a.at, 1_700_000_001.623);
        assert_eq!(a.runtime, Some(1.5));
        assert_eq!(a.wait, Some(0.02));
        assert_eq!(a.worker.as_deref(), Some("0123456789ab"));
        let star = parse(b"1 acked - * x y").unwrap();
        assert_eq!((star.id.as_slice(), star.reason), (&b"x y"[..], None));
        let t = parse(b"1 nacked - 3/8 a bred blueoops").unwrap();
        assert_eq!(t.id, b"a b");
        assert_eq!(t.tags, [b"red".to_vec(), b"blue".to_vec()]);
        assert_eq!(t.reason.as_deref(), Some(&b"oops"[..]));
        let untold = parse(b"1 acked - 1/3 xred").unwrap();
        assert_eq!((untold.tags.len(), untold.reason), (1, None));
        let b = parse(b"1 acked - 1 x").unwrap();
        assert_eq!(
            (b.attempts, b.runtime, b.wait, b.worker, b.reason),
            (None, None, None, None, None)
        );
        let old = parse(b"5000 acked 0123456789abcdef0123456789abcdef:1@4000 1 x").unwrap();
        assert_eq!(
            (old.attempts, old.runtime, old.wait),
            (None, Some(1.0), None),
            "a token of an older release"
        );
        for bad in [
            &b""[..],
            b"1 acked - - 9 short",
            b"x acked - - 1 x",
            b"1 acked",
            b"1 acked - 1/9 xred",
            b"1 acked - 1/ x",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
