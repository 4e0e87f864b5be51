//! The lock engine: owner-token locks on one Redis key each, acquired with an
//! atomic SET NX PX, released and extended only by the token's owner, and
//! waited for on the key's pub/sub channel instead of by polling.

pub mod held;
pub mod order;

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::Script;

use crate::config::Config;
use crate::conn::{self, Error, Role};

static CONTEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_contend.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_release.lua")));
static EXTEND: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/lock_extend.lua")));

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

/// One attempt: `None` when acquired, else how long the holder's lease runs.
fn attempt(
    config: &Config,
    key: &[u8],
    token: &str,
    lease: Duration,
) -> Result<Option<Duration>, Error> {
    let left: u64 = conn::with(config, |c| {
        CONTEND.key(key).arg(token).arg(millis(lease)).invoke(c)
    })?;
    Ok((left > 0).then(|| Duration::from_millis(left)))
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
    let deadline = Instant::now() + wait.timeout;
    if attempt(config, key, token, lease)?.is_none() {
        return Ok(true);
    }
    if wait.timeout.is_zero() {
        return Ok(false);
    }
    wait_for(config, key, deadline, wait.recheck, || {
        attempt(config, key, token, lease)
    })
}

/// Subscribes to the key's channel, then retries on every release message,
/// when the holder's lease runs out, at `recheck` at the latest, until
/// `deadline`. Subscribing before the first retry closes the window in which
/// a release could go unheard.
fn wait_for(
    config: &Config,
    key: &[u8],
    deadline: Instant,
    recheck: Duration,
    mut retry: impl FnMut() -> Result<Option<Duration>, Error>,
) -> Result<bool, Error> {
    let outcome = conn::with_role(config, Role::Subscriber, |c| {
        let mut sub = c.as_pubsub();
        sub.subscribe(key)?;
        let outcome = loop {
            let left = match retry() {
                Ok(None) => break Ok(true),
                Ok(Some(left)) => left,
                Err(e) => break Err(e),
            };
            let now = Instant::now();
            if now >= deadline {
                break Ok(false);
            }
            let nap = left
                .min(recheck)
                .min(deadline - now)
                .max(Duration::from_millis(1));
            sub.set_read_timeout(Some(nap))?;
            match sub.get_message() {
                Ok(_) => {}
                Err(e) if e.is_timeout() => {}
                Err(e) => return Err(e),
            }
        };
        // Unsubscribing (when `sub` drops) must not run under a 1 ms timeout.
        sub.set_read_timeout(Some(config.read_timeout))?;
        Ok(outcome)
    });
    match outcome {
        Ok(result) => result,
        // The subscriber connection failed: waiting is only an optimisation,
        // so finish the wait by rechecking on the command connection.
        Err(_) => loop {
            match retry()? {
                None => return Ok(true),
                Some(left) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(false);
                    }
                    std::thread::sleep(left.min(recheck).min(deadline - now));
                }
            }
        },
    }
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
    let value: Option<Vec<u8>> = conn::with(config, |c| redis::cmd("GET").arg(key).query(c))?;
    Ok(value.as_deref() == Some(token.as_bytes()))
}
