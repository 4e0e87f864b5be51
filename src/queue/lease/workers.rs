//! Who consumes a queue. A process that reserves from a queue notes itself
//! there at most every [`NOTE`]: its id (the one its tokens start with, see
//! `holder`) and when it was last seen reserving; its acks count the tasks
//! it did. Its host, pid, since when and what it runs are its `holder`
//! description. Workers not seen for [`KEEP`] are forgotten, and a queue
//! remembers at most [`MOST`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn::{self, Error};
use crate::identity::{self, Holder};
use crate::queue::Keys;
use crate::scripts::{Script, script};

static WORKERS: LazyLock<Script> = script!("queue_workers.lua");

/// How often a reserving process notes itself on a queue, at most.
pub const NOTE: Duration = Duration::from_secs(5);
/// How long a worker is remembered after it was last seen.
pub const KEEP: Duration = Duration::from_secs(24 * 3600);
/// The most workers a queue remembers: past it, the longest unseen go.
pub const MOST: u64 = 10_000;

/// A process consuming a queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Worker {
    /// Its id: the first 12 hex digits of its tokens.
    pub id: String,
    /// When it last reserved (or waited to), seconds on the server's clock.
    pub seen: f64,
    /// The tasks it acked.
    pub done: u64,
    /// Its description; None once it expired (or was never written).
    pub holder: Option<Holder>,
}

thread_local! {
    /// When this process last noted itself on each queue (by a hash of the
    /// server and the queue's key: no allocation per reserve), and the pid
    /// it was noted for: forgotten after a fork.
    static NOTED: RefCell<(u32, HashMap<u64, Instant>)> = RefCell::new((0, HashMap::new()));
}

/// Notes this process as a worker of the queue when it has not lately (and
/// describes it, see `holder`). Best effort: a worker that cannot note
/// itself still reserves, and the reserve reports a server that fails.
pub(super) fn seen(config: &Config, keys: &Keys) {
    let pid = crate::process::id();
    let place = {
        let mut h = std::hash::DefaultHasher::new();
        (&config.id, &keys.queue).hash(&mut h);
        h.finish()
    };
    let due = NOTED.with_borrow_mut(|(noted_pid, noted)| {
        if *noted_pid != pid {
            *noted_pid = pid;
            noted.clear();
        }
        if noted.get(&place).is_some_and(|at| at.elapsed() < NOTE) {
            return false;
        }
        noted.insert(place, Instant::now());
        true
    });
    if !due {
        return;
    }
    let id = identity::my_id();
    identity::introduce(config);
    let _ = conn::with(config, |c| {
        WORKERS
            .key(&keys.workers)
            .key(&keys.worked)
            .arg("seen")
            .arg(&id)
            .arg(KEEP.as_secs())
            .arg(MOST)
            .invoke::<i64>(c)
    });
}

/// The workers of the queue, the last seen first, up to `limit` (at most
/// [`super::BATCH`]).
pub fn workers(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<Worker>, Error> {
    let rows: Vec<(String, f64, u64)> = conn::with(config, |c| {
        WORKERS
            .key(&keys.workers)
            .key(&keys.worked)
            .types_checked(&["zset", "hash"])
            .arg("list")
            .arg(limit.clamp(1, super::BATCH))
            .invoke(c)
    })?;
    let ids: Vec<Option<&[u8]>> = rows.iter().map(|(id, _, _)| Some(id.as_bytes())).collect();
    let holders = identity::of_processes(config, &ids)?;
    Ok(rows
        .into_iter()
        .zip(holders)
        .map(|((id, seen, done), holder)| Worker {
            id,
            seen,
            done,
            holder,
        })
        .collect())
}
