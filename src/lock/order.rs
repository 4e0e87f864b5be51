//! Order locks (the seed's `Lock_Service`): the value is a number from a
//! shared counter, so the id proves ownership, survives the request and
//! strictly increases (it doubles as a fencing token).

use std::sync::LazyLock;
use std::time::Duration;

use super::Keys;
use crate::config::{Config, Topology};
use crate::conn::{self, Error};
use crate::scripts::{Script, script};
use crate::time::millis;

static ACQUIRE: LazyLock<Script> = script!("order_lock_acquire.lua");

/// The counter the ids come from (after the prefix), as the seed names it.
pub const COUNTER: &str = "lock_unique_id";

/// Locks order `order` (key `order_lock_<order>`) with a new id from the
/// counter; `None` if it is already locked.
pub fn acquire(config: &Config, order: &[u8], lease: Duration) -> Result<Option<i64>, Error> {
    let key = &Keys::order(&config.prefix, order).lock;
    let op = crate::telemetry::locks::acquire(key);
    let id = acquire_id(config, key, lease);
    if op.live() {
        // The id is the lock's token (its release names it).
        let token = id.as_ref().ok().copied().flatten().map(|id| id.to_string());
        let got = id.as_ref().map(Option::is_some).map_err(|_| ());
        crate::telemetry::locks::acquired(op, key, token.as_deref().unwrap_or(""), got);
    }
    id
}

fn acquire_id(config: &Config, key: &[u8], lease: Duration) -> Result<Option<i64>, Error> {
    let counter = &config.key(COUNTER.as_bytes());
    if let Topology::Cluster { .. } = config.topology {
        // The counter and the order key are in different hash slots, so no
        // script can hold both: the seed's two steps, which spend an id even
        // when the order is already locked.
        let id = next_id(config)?;
        let set: Option<String> = conn::with(config, |c| {
            redis::cmd("SET")
                .arg(key)
                .arg(id)
                .arg("NX")
                .arg("PX")
                .arg(millis(lease))
                .query(c)
        })?;
        return Ok(set.map(|_| id));
    }
    let id: i64 = conn::with(config, |c| {
        ACQUIRE.key(key).key(counter).arg(millis(lease)).invoke(c)
    })?;
    Ok((id != 0).then_some(id))
}

/// Unlocks order `order` if it is still locked with `id`; true if this call
/// removed the lock.
pub fn release(config: &Config, order: &[u8], id: &[u8]) -> Result<bool, Error> {
    super::release(config, &Keys::order(&config.prefix, order), id)
}

/// A new id from the counter (the script with the counter alone).
pub fn next_id(config: &Config) -> Result<i64, Error> {
    let counter = config.key(COUNTER.as_bytes());
    conn::with(config, |c| ACQUIRE.key(&counter).invoke(c))
}
