//! The locks each owner holds in this process, so they can be released when
//! the owner goes away or the request ends. An owner is a seed `RedisLock`
//! object, a `RedisLock\Lock` object, or, for reentrant locks, the process
//! itself ([`PROCESS`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use super::Keys;
use crate::config::Config;
use crate::conn::Error;

/// One lock held by an owner.
#[derive(Clone, Debug)]
pub struct Held {
    pub config: Arc<Config>,
    /// Shared with the object that took it (a clone costs no copy).
    pub keys: Arc<Keys>,
    pub token: String,
    /// The process that acquired it: a forked child inherits the record but
    /// must not release its parent's locks when it exits.
    pub pid: u32,
    /// The fencing token the acquire handed out (0 for the seed's locks).
    pub fence: i64,
    /// How many times the owner holds it (reentrant locks).
    pub count: u32,
    /// The lease renewal keeping it alive, if any.
    pub renewal: Option<u64>,
    /// Never released at request end or when its object goes away.
    pub outlives_request: bool,
    /// The lock it is one node's part of (a Redlock: one record per node),
    /// counted once and listed once per key.
    pub part_of: Option<u64>,
}

impl Held {
    /// A lock just acquired, held once, without renewal or fencing token.
    pub fn new(config: Arc<Config>, keys: Arc<Keys>, token: String) -> Self {
        Held {
            config,
            keys,
            token,
            pid: crate::process::id(),
            fence: 0,
            count: 1,
            renewal: None,
            outlives_request: false,
            part_of: None,
        }
    }
}

/// The owner of reentrant locks: the process (a PHP request runs on one
/// thread, so this is Redisson's per-thread ownership).
pub const PROCESS: u64 = 0;

thread_local! {
    static HELD: RefCell<HashMap<u64, HashMap<Vec<u8>, Held>>> = RefCell::new(HashMap::new());
    static NEXT_OWNER: Cell<u64> = const { Cell::new(1) };
    static REQUEST: Cell<u64> = const { Cell::new(0) };
}

/// The request this process serves: a count of request ends.
pub fn request() -> u64 {
    REQUEST.with(Cell::get)
}

/// A new owner id.
pub fn new_owner() -> u64 {
    NEXT_OWNER.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    })
}

/// Records that `owner` holds the lock named `name`.
pub fn insert(owner: u64, name: Vec<u8>, held: Held) {
    HELD.with(|h| {
        h.borrow_mut().entry(owner).or_default().insert(name, held);
    });
}

/// The lock named `name` that `owner` holds, if any.
pub fn get(owner: u64, name: &[u8]) -> Option<Held> {
    HELD.with(|h| h.borrow().get(&owner).and_then(|m| m.get(name)).cloned())
}

/// Sets how many times `owner` holds the lock named `name`.
pub fn set_count(owner: u64, name: &[u8], count: u32) {
    HELD.with(|h| {
        if let Some(held) = h.borrow_mut().get_mut(&owner).and_then(|m| m.get_mut(name)) {
            held.count = count;
        }
    });
}

/// Forgets and returns the lock named `name` of `owner`.
pub fn remove(owner: u64, name: &[u8]) -> Option<Held> {
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        let map = h.get_mut(&owner)?;
        let held = map.remove(name);
        if map.is_empty() {
            h.remove(&owner);
        }
        held
    })
}

/// The names `owner` holds.
pub fn names(owner: u64) -> Vec<Vec<u8>> {
    HELD.with(|h| {
        h.borrow()
            .get(&owner)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    })
}

/// Forgets and returns every lock of `owner`.
pub fn take_owner(owner: u64) -> Vec<Held> {
    HELD.with(|h| h.borrow_mut().remove(&owner))
        .map(|m| m.into_values().collect())
        .unwrap_or_default()
}

/// Forgets and returns every lock of every owner, but those told to
/// outlive the request, which stay their owners' (a `releaseAtRequestEnd
/// => false` lock object kept across requests by a worker runtime still
/// holds, extends and releases its lock); their renewals stop, as every
/// lock's do at request end.
fn take_all() -> Vec<Held> {
    let pid = crate::process::id();
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        let mut ended = Vec::new();
        h.retain(|_, locks| {
            locks.retain(|_, held| {
                let stays = held.outlives_request && held.pid == pid;
                if stays {
                    if let Some(id) = held.renewal.take() {
                        super::renew::stop(id);
                    }
                } else {
                    ended.push(held.clone());
                }
                stays
            });
            !locks.is_empty()
        });
        ended
    })
}

/// The Redis keys of the locks this process holds, in no order (a lock
/// over several nodes: each key once).
pub fn keys() -> Vec<Vec<u8>> {
    let pid = crate::process::id();
    let mut parts = std::collections::HashSet::new();
    HELD.with(|h| {
        h.borrow()
            .values()
            .flat_map(HashMap::values)
            .filter(|held| held.pid == pid)
            .filter(|held| {
                held.part_of
                    .is_none_or(|of| parts.insert((of, held.keys.lock.clone())))
            })
            .map(|held| held.keys.lock.clone())
            .collect()
    })
}

/// Request end: lets go of every lock of every owner, as [`end`] does,
/// but those told to outlive the request; `release` is the
/// `release_at_request_end` setting. Returns how many were released.
pub fn end_request(release: bool) -> usize {
    REQUEST.with(|r| r.set(r.get() + 1));
    end(take_all(), release)
}

/// Lets go of the given locks: stops their lease renewals and, if
/// `release`, releases those this process acquired. Best effort: a lock
/// whose release fails runs out with its lease, and once a server is
/// unreachable its other locks are not tried (each try could cost a connect
/// timeout while the request is ending). Returns how many were released
/// (a lock over several nodes once, when any of its nodes released it).
pub fn end(locks: Vec<Held>, release: bool) -> usize {
    let pid = crate::process::id();
    let mut unreachable: Vec<String> = Vec::new();
    let mut released = 0;
    let mut counted = std::collections::HashSet::new();
    for h in locks.into_iter().filter(|h| h.pid == pid) {
        if let Some(id) = h.renewal {
            super::renew::stop(id);
        }
        if !release || h.outlives_request || unreachable.contains(&h.config.server) {
            continue;
        }
        match super::release(&h.config, &h.keys, h.token.as_bytes()) {
            Ok(true) if h.part_of.is_none_or(|of| counted.insert(of)) => released += 1,
            Ok(_) | Err(Error::Server { .. } | Error::Reply { .. }) => {}
            Err(Error::Connection { server, .. }) => unreachable.push(server),
        }
    }
    released
}
