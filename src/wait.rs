//! Waiting in line, for locks and queues alike. A waiter that cannot go on
//! joins a line kept in Redis beside the lock or queue (the scripts do that,
//! see `scripts/lib/line.lua`) and blocks (BLPOP) on a wake list of its own. The
//! script that releases the lock or enqueues tasks pushes onto the wake lists
//! of only as many waiters as it serves, first come first served: nobody
//! else wakes, so the cost of an event does not grow with the crowd.
//!
//! While it blocks, a waiter keeps its place by renewing it every [`RENEW`]
//! (a waiter that dies loses it within [`PLACE`]) and, when it is first in
//! line, looks again when the holder's lease ends or a task falls due, and
//! at the caller's `recheck` at the latest, for what wakes nobody: an old
//! client deleting a key, a task enqueued by an old producer.
//!
//! Like PHP's `sleep()`, a wait ends early when a signal with a handler
//! arrives (see `signals`): the waiter leaves the line and the caller
//! returns, so a worker's signal handler runs and its loop can stop.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn::{self, Error};
use crate::signals;

/// How long a waiter's place in line is kept without renewal.
pub const PLACE: Duration = Duration::from_secs(2);

/// How often a waiter renews its place.
pub const RENEW: Duration = Duration::from_millis(500);

/// One try: done (with what it got), or not yet and worth trying again
/// after at most this long.
pub enum Try<T> {
    Done(T),
    Later(Duration),
}

/// Why a waiter tries (again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The first try: not in any line yet.
    First,
    /// A recheck while in line (renews the place).
    Recheck,
    /// Woken through wake list `index`, and so taken out of that line.
    Woken(usize),
}

/// What a wake-up brought.
pub enum Woken<T> {
    /// What was waited for (a lock handed over).
    Done(T),
    /// A reason to try again.
    Again(Pass),
}

/// What a caller waits for, in the terms of its scripts.
pub trait Waiter<T> {
    /// One try; joins the line or keeps the place in it when it fails
    /// (unless the wait has no time: then it never joins).
    fn attempt(&mut self, pass: Pass) -> Result<Try<T>, Error>;
    /// Woken through wake list `index` with `value`.
    fn woken(&mut self, index: usize, value: Vec<u8>) -> Woken<T>;
    /// Gives up (the wait ran out, a signal): leaves the line, and returns
    /// what was handed over meanwhile, if anything.
    fn leave(&mut self) -> Result<Option<T>, Error>;
}

/// Tries once, then, unless `timeout` is zero, waits in line as described
/// above until done or until `timeout` (`Duration::MAX`: no limit).
pub fn until<T>(
    config: &Config,
    wake: &[Vec<u8>],
    timeout: Duration,
    waiter: &mut impl Waiter<T>,
) -> Result<Option<T>, Error> {
    let deadline = Instant::now().checked_add(timeout);
    // Only a signal that comes during this wait ends it.
    signals::take_caught();
    let mut pass = Pass::First;
    loop {
        // A try of a real wait holds signals back: one that comes while no
        // system call runs ends the wait too (signals::held).
        let tried = if timeout.is_zero() {
            waiter.attempt(pass)
        } else {
            signals::held(|| waiter.attempt(pass))
        };
        let later = match tried {
            Ok(Try::Done(value)) => return Ok(Some(value)),
            Ok(Try::Later(later)) => later,
            // Past the first try the waiter may be in line: it leaves, so
            // that a failed wait leaves nothing behind. (A first try that
            // fails has written nothing.)
            Err(e) if pass != Pass::First => return give_up(waiter, e),
            Err(e) => return Err(e),
        };
        if timeout.is_zero() {
            return Ok(None);
        }
        pass = Pass::Recheck;
        let left = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        if left.is_zero() || signals::take_caught() {
            return waiter.leave();
        }
        let nap = later.min(RENEW).min(left).max(Duration::from_millis(1));
        match block(config, wake, nap) {
            Ok(Blocked::Woken(index, value)) => match waiter.woken(index, value) {
                Woken::Done(done) => return Ok(Some(done)),
                Woken::Again(again) => pass = again,
            },
            Ok(Blocked::TimedOut) => {}
            // A caught signal cut the wait short, as it cuts PHP's sleep():
            // the connection was dropped (BLPOP's outcome is unknown), and
            // leaving finds out whether the lock was handed over meanwhile.
            Ok(Blocked::Interrupted) => return waiter.leave(),
            // The connection broke (Redis restarted, a failover): the
            // recheck reconnects, and finds the lock handed over, or keeps
            // the place (joining again if the line was lost), or fails.
            Err(Error::Connection { .. }) => {}
            Err(e) => return give_up(waiter, e),
        }
    }
}

/// Ends a wait that failed with `e`: the waiter leaves the line. What was
/// handed over meanwhile (a lock, tasks) is the wait's outcome after all,
/// never dropped; else the wait fails with `e`.
fn give_up<T>(waiter: &mut impl Waiter<T>, e: Error) -> Result<Option<T>, Error> {
    match waiter.leave() {
        Ok(Some(done)) => Ok(Some(done)),
        _ => Err(e),
    }
}

/// How a blocking wait on the wake lists ended.
enum Blocked {
    /// Wake list `index` had this value.
    Woken(usize, Vec<u8>),
    TimedOut,
    /// A caught signal cut it short.
    Interrupted,
}

/// Blocks on the wake lists for up to `nap`, open to signals.
fn block(config: &Config, keys: &[Vec<u8>], nap: Duration) -> Result<Blocked, Error> {
    let timeout = blpop_timeout(nap);
    let mut words: Vec<&[u8]> = Vec::with_capacity(keys.len() + 2);
    words.push(b"BLPOP");
    words.extend(keys.iter().map(Vec::as_slice));
    words.push(&timeout);
    let mut cut = false;
    let reply = conn::with_signals_open(config, |c| {
        let reply = c
            .blocking(&words, nap, config.read_timeout)
            .and_then(|popped| {
                Ok(redis::from_redis_value::<Option<(Vec<u8>, Vec<u8>)>>(
                    popped,
                )?)
            });
        cut = reply.as_ref().is_err_and(signals::interrupted);
        reply
    });
    match reply {
        Ok(Some((key, value))) => {
            let index = keys.iter().position(|k| *k == key).unwrap_or(0);
            Ok(Blocked::Woken(index, value))
        }
        Ok(None) => Ok(Blocked::TimedOut),
        Err(_) if cut => Ok(Blocked::Interrupted),
        Err(e) => Err(e),
    }
}

/// BLPOP's timeout in seconds for `nap`, to the millisecond ("0.500"),
/// rounded up: never "0.000", which BLPOP reads as no timeout at all.
fn blpop_timeout(nap: Duration) -> Vec<u8> {
    let ms = u64::try_from(nap.as_micros().div_ceil(1000))
        .unwrap_or(u64::MAX)
        .max(1);
    let mut digits = itoa::Buffer::new();
    let mut timeout = Vec::with_capacity(24);
    timeout.extend_from_slice(digits.format(ms / 1000).as_bytes());
    timeout.push(b'.');
    timeout.extend_from_slice(&digits.format(1000 + ms % 1000).as_bytes()[1..]);
    timeout
}

/// A remaining time in ms as the scripts report it; a negative one (nothing
/// scheduled, or no expiry) leaves the wait to wake-ups and rechecks.
pub fn later_ms(ms: i64) -> Duration {
    u64::try_from(ms).map_or(Duration::MAX, Duration::from_millis)
}

/// The wake list of the waiter with `token`, under its line's key prefix
/// (`line.lua` names it the same way).
pub fn wake_key(waiters: &[u8], token: &str) -> Vec<u8> {
    [waiters, b"w:", token.as_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blpop_timeout_is_in_seconds_to_the_millisecond_rounded_up() {
        let text = |nap| String::from_utf8(blpop_timeout(nap)).unwrap();
        assert_eq!(text(Duration::from_millis(500)), "0.500");
        assert_eq!(text(Duration::from_millis(2)), "0.002");
        assert_eq!(text(Duration::from_millis(1_040)), "1.040");
        assert_eq!(text(Duration::from_secs(120)), "120.000");
        assert_eq!(text(Duration::from_micros(1_500)), "0.002");
        // Never "0.000": BLPOP would block for good.
        assert_eq!(text(Duration::from_nanos(1)), "0.001");
        assert_eq!(text(Duration::ZERO), "0.001");
        for ms in 1..5_000u64 {
            assert_eq!(
                text(Duration::from_millis(ms)),
                format!("{:.3}", ms as f64 / 1000.0)
            );
        }
    }
}
