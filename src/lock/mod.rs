//! The lock engine: owner-token locks on one Redis key each, acquired with an
//! atomic SET NX PX, released and extended only by the token's owner, and
//! waited for on the key's pub/sub channel instead of by polling.

pub mod held;
pub mod order;
pub mod redlock;
pub mod renew;

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::wait::{self, Try};

static CONTEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_contend.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_release.lua")));
static EXTEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_extend.lua")));
static ACQUIRE_FENCED: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_acquire_fenced.lua")));
static REMAINING: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_remaining.lua")));

/// How long a fence counter outlives the lease of the lock it counts for.
pub const FENCE_KEEP: Duration = Duration::from_secs(3600);

/// The key of a `RedisLock\` lock (before the prefix): `lock:{<name>}`, a
/// hash tag of its own, so that its fence counter shares its Cluster slot.
pub fn named_key(name: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(name.len() + 7);
    key.extend_from_slice(b"lock:{");
    key.extend_from_slice(name);
    key.push(b'}');
    key
}

/// The fence counter beside a lock key from [`named_key`].
pub fn fence_key(key: &[u8]) -> Vec<u8> {
    [key, b":fence"].concat()
}

/// A fresh owner token: unique across processes and hosts.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Milliseconds for Redis, at least 1.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// How long to wait for a lock, and how often at most to look again when no
/// release message comes (a holder that dies lets its lease run out, and old
/// clients delete the key without publishing).
#[derive(Clone, Copy, Debug)]
pub struct Wait {
    pub timeout: Duration,
    pub recheck: Duration,
}

/// Takes the lock for `lease`, waiting up to `wait.timeout` for the holder to
/// let go. Returns whether the lock is now held with `token`.
pub fn acquire(
    config: &Config,
    key: &[u8],
    token: &str,
    lease: Duration,
    wait: Wait,
) -> Result<bool, Error> {
    let acquired = wait::until(config, &[key], wait.timeout, wait.recheck, || {
        let left: i64 = conn::with(config, |c| {
            CONTEND.key(key).arg(token).arg(millis(lease)).invoke(c)
        })?;
        Ok(if left == 0 {
            Try::Done(())
        } else {
            Try::Later(wait::later_ms(left))
        })
    })?;
    Ok(acquired.is_some())
}

/// Like [`acquire`], and hands out a fencing token: an integer that is
/// larger for every acquire of the lock than for any before it. The counter
/// lives in `fence_key` (same hash slot as `key`).
pub fn acquire_fenced(
    config: &Config,
    key: &[u8],
    fence_key: &[u8],
    token: &str,
    lease: Duration,
    wait: Wait,
) -> Result<Option<i64>, Error> {
    wait::until(config, &[key], wait.timeout, wait.recheck, || {
        let (left, fence): (i64, i64) = conn::with(config, |c| {
            ACQUIRE_FENCED
                .key(key)
                .key(fence_key)
                .arg(token)
                .arg(millis(lease))
                .arg(millis(FENCE_KEEP))
                .invoke(c)
        })?;
        Ok(if left == 0 {
            Try::Done(fence)
        } else {
            Try::Later(wait::later_ms(left))
        })
    })
}

/// Waits up to `timeout` for `replicas` replicas to acknowledge the acquire
/// of `key` with `token` just made on this thread (Redis' `WAIT` on the
/// pooled connection that wrote it). Returns how many did; when that is
/// fewer, or the wait failed, the lock has been released again.
pub fn confirm(
    config: &Config,
    key: &[u8],
    token: &str,
    replicas: u64,
    timeout: Duration,
) -> Result<u64, Error> {
    // WAIT 0 would wait forever; a timeout is always set.
    let ms = millis(timeout).max(1);
    let acked = conn::with(config, |c| {
        redis::cmd("WAIT").arg(replicas).arg(ms).query(c)
    });
    if !matches!(acked, Ok(n) if n >= replicas) {
        let _ = release(config, key, token.as_bytes());
    }
    acked
}

/// Deletes the lock if it still holds `token`; true if this call deleted it.
pub fn release(config: &Config, key: &[u8], token: &[u8]) -> Result<bool, Error> {
    let deleted: i64 = conn::with(config, |c| RELEASE.key(key).arg(token).invoke(c))?;
    Ok(deleted == 1)
}

/// Sets a new lease if the lock still holds `token`.
pub fn extend(config: &Config, key: &[u8], token: &str, lease: Duration) -> Result<bool, Error> {
    let done: i64 = conn::with(config, |c| {
        EXTEND.key(key).arg(token).arg(millis(lease)).invoke(c)
    })?;
    Ok(done == 1)
}

/// Whether the key still holds `token`.
pub fn holds(config: &Config, key: &[u8], token: &str) -> Result<bool, Error> {
    Ok(remaining(config, key, token)?.is_some())
}

/// How long the lease of a lock still holding `token` runs (`Duration::MAX`
/// when it has no expiry); `None` when the key no longer holds `token`.
pub fn remaining(config: &Config, key: &[u8], token: &str) -> Result<Option<Duration>, Error> {
    let left: i64 = conn::with(config, |c| REMAINING.key(key).arg(token).invoke(c))?;
    Ok(match left {
        -2 => None,
        ms => Some(wait::later_ms(ms)),
    })
}
