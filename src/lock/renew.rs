//! Lease renewal from background threads: while a lock with `autoRenew` is
//! held, its lease is set again every third of its length, until it is
//! released, its maximum hold time is reached, or a renewal fails. Each
//! server's locks have a thread of their own, started by the first renewal
//! on that server a process needs (never in module startup: PHP-FPM forks
//! its workers after it); it renews over its own connections and never
//! touches PHP.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::Config;

/// A held lock to keep alive.
#[derive(Clone, Debug)]
pub struct Lease {
    pub config: Arc<Config>,
    pub keys: Arc<super::Keys>,
    pub token: String,
    /// The lease each renewal sets.
    pub lease: Duration,
    /// The end of the maximum hold time: no lease reaches past it.
    pub until: Instant,
    /// How long the maximum hold time was, for the message when it is reached.
    pub max_hold: Duration,
}

struct Renewal {
    lease: Lease,
    /// When to renew next.
    due: Instant,
    /// Until when the last confirmed lease surely runs.
    safe_until: Instant,
}

#[derive(Default)]
struct State {
    renewals: HashMap<u64, Renewal>,
    /// Renewals that stopped because the lock was lost, with the reason.
    lost: HashMap<u64, String>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map inconsistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The renewal thread of one server (`Config::server`): a server that
/// stops answering holds up only its own locks' renewals, never those of
/// locks on another server.
struct Watchdog {
    pid: u32,
    server: String,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Asks the thread to stop (it does once its current renewal is
    /// answered or timed out).
    fn stop(&self) {
        self.shared.state().stop = true;
        self.shared.wake.notify_one();
    }
}

/// A watchdog goes away with the thread that started it (module shutdown,
/// or the end of a PHP thread under ZTS): its thread stops and is waited
/// for, so that no renewal thread outlives the code it runs.
impl Drop for Watchdog {
    fn drop(&mut self) {
        if self.pid != crate::process::id() {
            // Inherited through fork(): no thread to stop, and its mutex
            // may have been held by that thread at the fork.
            return;
        }
        self.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

thread_local! {
    static WATCHDOGS: RefCell<Vec<Watchdog>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` on this process's watchdogs. Those inherited through fork()
/// have no thread in this process: they are forgotten, never locked (a
/// mutex may have been held by its thread at the fork).
fn watchdogs<T>(f: impl FnOnce(&[Watchdog]) -> T) -> T {
    WATCHDOGS.with(|w| {
        let mut w = w.borrow_mut();
        if w.iter().any(|dog| dog.pid != crate::process::id()) {
            std::mem::forget(std::mem::take(&mut *w));
        }
        f(&w)
    })
}

/// The watchdog whose renewals include `id`.
fn renewing(id: u64) -> Option<Arc<Shared>> {
    watchdogs(|dogs| {
        dogs.iter()
            .find(|dog| {
                let state = dog.shared.state();
                state.renewals.contains_key(&id) || state.lost.contains_key(&id)
            })
            .map(|dog| dog.shared.clone())
    })
}

/// Starts renewing `lease` now; returns the renewal's id.
pub fn start(lease: Lease) -> std::io::Result<u64> {
    let server = &lease.config.server;
    let shared = match watchdogs(|dogs| {
        dogs.iter()
            .find(|dog| dog.server == *server)
            .map(|dog| dog.shared.clone())
    }) {
        Some(shared) => shared,
        None => {
            let shared = Arc::new(Shared::default());
            let for_thread = shared.clone();
            // Signals stay with the PHP thread (see `signals`).
            let thread = crate::signals::held(|| {
                std::thread::Builder::new()
                    .name("redislock-renew".into())
                    .spawn(move || run(&for_thread))
            })?;
            WATCHDOGS.with(|w| {
                w.borrow_mut().push(Watchdog {
                    pid: crate::process::id(),
                    server: server.clone(),
                    shared: shared.clone(),
                    thread: Some(thread),
                });
            });
            shared
        }
    };
    let now = Instant::now();
    let id = NEXT_ID.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    let renewal = Renewal {
        due: now + lease.lease / 3,
        safe_until: now + lease.lease,
        lease,
    };
    shared.state().renewals.insert(id, renewal);
    shared.wake.notify_one();
    Ok(id)
}

/// Why the lock of renewal `id` was lost, if it was. Once the last
/// confirmed lease has run out the lock is lost, even while a renewal is
/// still unanswered (a slow or cut link): whatever that renewal's outcome,
/// the loss is reported within one lease of the last confirmation.
pub fn lost(id: u64) -> Option<String> {
    let shared = renewing(id)?;
    let mut state = shared.state();
    if let Some(r) = state.renewals.get(&id)
        && Instant::now() >= r.safe_until
    {
        let reason = if r.safe_until >= r.lease.until {
            max_hold_reached(&r.lease)
        } else {
            "its lease could not be renewed before it ran out: Redis did not confirm a renewal in time".into()
        };
        state.renewals.remove(&id);
        state.lost.insert(id, reason);
    }
    state.lost.get(&id).cloned()
}

/// Stops renewal `id`; returns why the lock was lost, if it was.
pub fn stop(id: u64) -> Option<String> {
    let shared = renewing(id)?;
    let mut state = shared.state();
    state.renewals.remove(&id);
    state.lost.remove(&id)
}

/// Stops the threads and waits for them (module shutdown: no thread may
/// outlive the code it runs).
pub fn shutdown() {
    let dogs = WATCHDOGS.with(|w| std::mem::take(&mut *w.borrow_mut()));
    if dogs.iter().any(|dog| dog.pid != crate::process::id()) {
        std::mem::forget(dogs);
        return;
    }
    // All asked first, then each waited for (as each goes away).
    for dog in &dogs {
        dog.stop();
    }
    drop(dogs);
}

/// How many renewals this process runs.
pub fn active() -> usize {
    watchdogs(|dogs| {
        dogs.iter()
            .map(|dog| dog.shared.state().renewals.len())
            .sum()
    })
}

fn run(shared: &Shared) {
    let mut state = shared.state();
    loop {
        if state.stop {
            return;
        }
        let next = state
            .renewals
            .iter()
            .min_by_key(|(_, r)| r.due)
            .map(|(id, r)| (*id, r.due));
        let now = Instant::now();
        state = match next {
            None => shared.wake.wait(state).unwrap_or_else(|e| e.into_inner()),
            Some((_, due)) if due > now => {
                shared
                    .wake
                    .wait_timeout(state, due - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            Some((id, _)) => {
                let lease = state.renewals[&id].lease.clone();
                drop(state);
                let outcome = renew(&lease, now);
                let mut state = shared.state();
                apply(&mut state, id, now, outcome);
                state
            }
        };
    }
}

enum Outcome {
    Renewed(Duration),
    Failed(String),
    Lost(String),
}

/// One renewal: a lease up to the maximum hold time, set only if the key
/// still holds the token.
fn renew(lease: &Lease, now: Instant) -> Outcome {
    let left = lease.until.saturating_duration_since(now);
    if left < Duration::from_millis(1) {
        return Outcome::Lost(max_hold_reached(lease));
    }
    let ttl = lease.lease.min(left);
    match super::extend_hold(&lease.config, &lease.keys, &lease.token, ttl) {
        Ok(true) => Outcome::Renewed(ttl),
        Ok(false) => Outcome::Lost(
            "its key expired, was deleted, or was taken by another owner before the lease could be renewed".into(),
        ),
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

fn max_hold_reached(lease: &Lease) -> String {
    format!(
        "the lock was held for its maximum hold time ({} s) and its lease ran out",
        lease.max_hold.as_secs_f64()
    )
}

fn apply(state: &mut State, id: u64, sent: Instant, outcome: Outcome) {
    // Stopped while the renewal was under way: nothing to record.
    let Some(r) = state.renewals.get_mut(&id) else {
        return;
    };
    let reason = match outcome {
        Outcome::Renewed(ttl) => {
            r.safe_until = sent + ttl;
            // The last renewal before the maximum hold time ends the lease
            // exactly there; the next turn then reports the lock lost.
            r.due = (sent + r.lease.lease / 3).min(r.lease.until);
            return;
        }
        Outcome::Failed(cause) => {
            let retry = sent + (r.lease.lease / 10).min(Duration::from_millis(100));
            if retry < r.safe_until {
                r.due = retry;
                return;
            }
            format!("its lease could not be renewed before it ran out: {cause}")
        }
        Outcome::Lost(reason) => reason,
    };
    state.renewals.remove(&id);
    state.lost.insert(id, reason);
}
