//! The locks each owner (a `RedisLock` object) holds in this process, so they
//! can be released when the owner goes away or the request ends.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use crate::config::Config;
use crate::conn::Error;

/// One lock held by an owner.
#[derive(Clone, Debug)]
pub struct Held {
    pub config: Arc<Config>,
    pub key: Vec<u8>,
    pub token: String,
    /// The process that acquired it: a forked child inherits the record but
    /// must not release its parent's locks when it exits.
    pub pid: u32,
}

thread_local! {
    static HELD: RefCell<HashMap<u64, HashMap<Vec<u8>, Held>>> = RefCell::new(HashMap::new());
    static NEXT_OWNER: Cell<u64> = const { Cell::new(1) };
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

/// Forgets and returns every lock of every owner.
pub fn take_all() -> Vec<Held> {
    HELD.with(|h| std::mem::take(&mut *h.borrow_mut()))
        .into_values()
        .flat_map(HashMap::into_values)
        .collect()
}

/// Releases the given locks, skipping those another process acquired.
/// Best effort: a lock whose release fails runs out with its lease, and once
/// a server is unreachable its other locks are not tried (each try could
/// cost a connect timeout while the request is ending).
pub fn release(locks: Vec<Held>) -> usize {
    let pid = std::process::id();
    let mut unreachable: Vec<String> = Vec::new();
    let mut released = 0;
    for h in locks.into_iter().filter(|h| h.pid == pid) {
        if unreachable.contains(&h.config.server) {
            continue;
        }
        match super::release(&h.config, &h.key, h.token.as_bytes()) {
            Ok(true) => released += 1,
            Ok(false) | Err(Error::Server { .. }) => {}
            Err(Error::Connection { server, .. }) => unreachable.push(server),
        }
    }
    released
}
