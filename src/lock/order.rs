//! Order locks (the seed's `Lock_Service`): the value is a number from a
//! shared counter, so the id proves ownership, survives the request and
//! strictly increases (it doubles as a fencing token).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::config::{Config, Topology};
use crate::conn::{self, Error};
use crate::scripts::script;
use crate::time::millis;

static ACQUIRE: LazyLock<Script> = script!("order_lock_acquire.lua");

/// Takes `key` with a new id from `counter`; `None` if it is already locked.
pub fn acquire(
    config: &Config,
    key: &[u8],
    counter: &[u8],
    lease: Duration,
) -> Result<Option<i64>, Error> {
    if let Topology::Cluster { .. } = config.topology {
        // The counter and the order key are in different hash slots, so no
        // script can hold both: the seed's two steps, which spend an id even
        // when the order is already locked.
        let id = next_id(config, counter)?;
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

/// A new id from the counter.
pub fn next_id(config: &Config, counter: &[u8]) -> Result<i64, Error> {
    conn::with(config, |c| redis::cmd("INCR").arg(counter).query(c))
}
