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

/// Where a family of order locks lives: the seed's keys (`order_lock_%s`,
/// the ids from `lock_unique_id`), or a copy's own template and counter,
/// so that a process running the copy and one running the extension share
/// its keys during a rolling deploy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    before: Vec<u8>,
    after: Vec<u8>,
    counter: Vec<u8>,
}

/// The seed's layout, built once: the drop-in `Lock_Service` uses it on
/// every call.
static SEED: LazyLock<Layout> = LazyLock::new(|| Layout {
    before: b"order_lock_".to_vec(),
    after: Vec::new(),
    counter: COUNTER.as_bytes().to_vec(),
});

impl Layout {
    /// The seed's: `order_lock_<id>`, ids from `lock_unique_id`.
    pub fn seed() -> &'static Self {
        &SEED
    }

    /// A template with one `%s` (where the order id goes; no other `%`) and
    /// the key of the id counter, or which is wrong (1: the template, 2: the
    /// counter) and how.
    pub fn new(template: &[u8], counter: &[u8]) -> Result<Self, (u32, &'static str)> {
        let at = template.windows(2).position(|w| w == b"%s");
        let Some(at) = at.filter(|_| template.iter().filter(|&&b| b == b'%').count() == 1) else {
            return Err((
                1,
                "must hold %s once, where the order id goes, and no other %",
            ));
        };
        if counter.is_empty() {
            return Err((2, "must not be empty"));
        }
        Ok(Layout {
            before: template[..at].to_vec(),
            after: template[at + 2..].to_vec(),
            counter: counter.to_vec(),
        })
    }

    fn is_seed_template(&self) -> bool {
        self.before == b"order_lock_" && self.after.is_empty()
    }

    /// The keys of order `order`.
    pub fn keys(&self, prefix: &[u8], order: &[u8]) -> Keys {
        if self.is_seed_template() {
            Keys::order(prefix, order)
        } else {
            Keys::order_at(prefix, &self.before, &self.after, order)
        }
    }

    /// The template as given (`order_lock_%s`).
    pub fn template(&self) -> Vec<u8> {
        [self.before.as_slice(), b"%s", &self.after].concat()
    }

    /// The id counter's key (after the prefix).
    pub fn counter(&self) -> &[u8] {
        &self.counter
    }
}

/// Locks order `order` (key `order_lock_<order>`) with a new id from the
/// counter; `None` if it is already locked.
pub fn acquire(config: &Config, order: &[u8], lease: Duration) -> Result<Option<i64>, Error> {
    acquire_in(config, Layout::seed(), order, lease)
}

/// Locks order `order` of `layout` with a new id from its counter; `None`
/// if it is already locked.
pub fn acquire_in(
    config: &Config,
    layout: &Layout,
    order: &[u8],
    lease: Duration,
) -> Result<Option<i64>, Error> {
    let key = &layout.keys(&config.prefix, order).lock;
    let op = crate::telemetry::locks::acquire(key);
    let id = acquire_id(config, key, &config.key(layout.counter()), lease);
    if op.live() {
        // The id is the lock's token (its release names it).
        let token = id.as_ref().ok().copied().flatten().map(|id| id.to_string());
        let got = id.as_ref().map(Option::is_some).map_err(|_| ());
        crate::telemetry::locks::acquired(op, key, token.as_deref().unwrap_or(""), got);
    }
    id
}

fn acquire_id(
    config: &Config,
    key: &[u8],
    counter: &[u8],
    lease: Duration,
) -> Result<Option<i64>, Error> {
    if let Topology::Cluster { .. } = config.topology {
        // The counter and the order key are in different hash slots, so no
        // script can hold both: the seed's two steps, which spend an id even
        // when the order is already locked.
        let id = next_id_at(config, counter)?;
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
    release_in(config, Layout::seed(), order, id)
}

/// Unlocks order `order` of `layout` if it is still locked with `id`.
pub fn release_in(
    config: &Config,
    layout: &Layout,
    order: &[u8],
    id: &[u8],
) -> Result<bool, Error> {
    super::release(config, &layout.keys(&config.prefix, order), id)
}

/// A new id from the counter (the script with the counter alone).
pub fn next_id(config: &Config) -> Result<i64, Error> {
    next_id_in(config, Layout::seed())
}

/// A new id from `layout`'s counter.
pub fn next_id_in(config: &Config, layout: &Layout) -> Result<i64, Error> {
    next_id_at(config, &config.key(layout.counter()))
}

fn next_id_at(config: &Config, counter: &[u8]) -> Result<i64, Error> {
    conn::with(config, |c| ACQUIRE.key(counter).invoke(c))
}
