//! Waiting without polling, for locks and queues alike: subscribe to the
//! channels the scripts publish on, try, and try again on every message,
//! when the try says something will change (a lease ends, a task falls due),
//! at `recheck` at the latest, until the deadline.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn::{self, Error, Role};

/// One try: done (with what it got), or not yet and worth trying again
/// after at most this long.
pub enum Try<T> {
    Done(T),
    Later(Duration),
}

/// Tries once, then, unless `timeout` is zero, waits as described above.
pub fn until<T>(
    config: &Config,
    channels: &[&[u8]],
    timeout: Duration,
    recheck: Duration,
    mut attempt: impl FnMut() -> Result<Try<T>, Error>,
) -> Result<Option<T>, Error> {
    let deadline = Instant::now() + timeout;
    match attempt()? {
        Try::Done(value) => return Ok(Some(value)),
        Try::Later(_) if timeout.is_zero() => return Ok(None),
        Try::Later(_) => {}
    }
    subscribed(config, channels, deadline, recheck, attempt)
}

/// Subscribing before the first retry closes the window in which a message
/// could go unheard.
fn subscribed<T>(
    config: &Config,
    channels: &[&[u8]],
    deadline: Instant,
    recheck: Duration,
    mut retry: impl FnMut() -> Result<Try<T>, Error>,
) -> Result<Option<T>, Error> {
    let outcome = conn::with_role(config, Role::Subscriber, |c| {
        // Subscribers are always plain connections (see `conn::connect`).
        let conn::Conn::Single(c) = c else {
            return Err((redis::ErrorKind::Client, "no subscriber connection").into());
        };
        let mut sub = c.as_pubsub();
        for channel in channels {
            sub.subscribe(*channel)?;
        }
        let outcome = loop {
            let later = match retry() {
                Ok(Try::Done(value)) => break Ok(Some(value)),
                Ok(Try::Later(later)) => later,
                Err(e) => break Err(e),
            };
            let now = Instant::now();
            if now >= deadline {
                break Ok(None);
            }
            let nap = later
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
                Try::Done(value) => return Ok(Some(value)),
                Try::Later(later) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(None);
                    }
                    std::thread::sleep(later.min(recheck).min(deadline - now));
                }
            }
        },
    }
}

/// A remaining time in ms as the scripts report it; a negative one (nothing
/// scheduled, or no expiry) leaves the wait to messages and `recheck`.
pub fn later_ms(ms: i64) -> Duration {
    u64::try_from(ms).map_or(Duration::MAX, Duration::from_millis)
}
