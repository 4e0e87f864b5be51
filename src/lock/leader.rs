//! Leaders: a lock of its own kind (`leader:{<name>}`, with fencing tokens
//! and the fair line) held by one process at a time, renewed while it
//! lives; its fencing token is the leader's term, which grows with every
//! new leader. Beside the lock, `leader:{<name>}:term` records which term
//! leads and since when (server time), for anyone who asks who leads.

use std::sync::LazyLock;
use std::time::Duration;

use super::Keys;
use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{Script, script};

static LEADER: LazyLock<Script> = script!("leader.lua");

/// The keys of the leader `name`'s lock.
pub fn keys(prefix: &[u8], name: &[u8]) -> Keys {
    Keys::at(&Place::new(prefix, Kind::Leader, name), true, false)
}

/// Who leads, as the server has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Current {
    /// The leader's owner token (see `holder`).
    pub owner: Vec<u8>,
    /// What is left of its lease (renewed while it lives).
    pub remaining: Option<Duration>,
    /// Its term, and since when it leads (ms of the server's clock), when
    /// recorded.
    pub term: Option<i64>,
    pub since_ms: Option<u64>,
}

fn call(config: &Config, name: &[u8], op: &str, term: i64) -> Result<Option<Current>, Error> {
    let place = Place::new(&config.prefix, Kind::Leader, name);
    let (owner, left, term, since): (Option<Vec<u8>>, i64, i64, i64) = conn::with(config, |c| {
        LEADER
            .key(&place.main)
            .key(place.beside(":term"))
            .arg(op)
            .arg(term)
            .invoke(c)
    })?;
    Ok(owner.map(|owner| Current {
        owner,
        remaining: u64::try_from(left).ok().map(Duration::from_millis),
        term: (term >= 0).then_some(term),
        since_ms: u64::try_from(since).ok(),
    }))
}

/// Records that `term` of the leader `name` began now (unless a later term
/// is recorded); who leads now.
pub fn won(config: &Config, name: &[u8], term: i64) -> Result<Option<Current>, Error> {
    call(config, name, "won", term)
}

/// Who leads the leader `name` now, if anyone.
pub fn current(config: &Config, name: &[u8]) -> Result<Option<Current>, Error> {
    call(config, name, "read", 0)
}
