//! Work that runs once per slot across every process and server: the first
//! caller of a (name, slot) claims it, the others are told who did and
//! whether the run finished. A slot is given (a date, an order id, a deploy
//! id) or taken from the server's clock (the current period of a length),
//! so client clocks that differ cannot split one. A run that did not finish
//! may be claimed again after a time the caller sets (or never). Each slot
//! is a key of its own, `once:{<name>}:s:<slot>` (docs/keys.md), kept for a
//! time the caller sets: claiming a slot nobody has is one `SET NX PX`, the
//! rest one script.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{Script, script};

static ONCE: LazyLock<Script> = script!("once.lua");

/// Which slot a call is about.
#[derive(Clone, Copy, Debug)]
pub enum Slot<'a> {
    /// This one.
    Given(&'a [u8]),
    /// The current period of this length on the server's clock (named by
    /// its start, Unix seconds).
    Every(Duration),
}

/// A caller's terms.
#[derive(Clone, Copy, Debug)]
pub struct Terms {
    /// After this long, a run that did not finish may be claimed again
    /// (None: never).
    pub retry: Option<Duration>,
    /// How long a slot's record is kept.
    pub keep: Duration,
}

/// A slot's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Whether this call claimed the slot (or, for `done`, marked it done).
    pub won: bool,
    /// When it was claimed, ms of the server's clock.
    pub at_ms: u64,
    /// When its runner said it was done.
    pub done_ms: Option<u64>,
    /// How many callers claimed it (more than one: a run that did not
    /// finish was taken over).
    pub runs: u64,
    /// The runner's token (see `holder`).
    pub token: Vec<u8>,
}

/// The work named `name` of a deployment.
pub struct Once {
    config: Arc<Config>,
    name: Vec<u8>,
    place: Place,
}

type Reply = (i64, i64, i64, i64, Vec<u8>);

/// The record a slot's key holds after a claim: the keep, the runs, not
/// done, the token (as `once.lua` reads it).
fn claimed(keep_ms: u64, token: &str) -> String {
    format!("{keep_ms} 1 - {token}")
}

impl Once {
    pub fn new(config: Arc<Config>, name: Vec<u8>) -> Self {
        let place = Place::new(&config.prefix, Kind::Once, &name);
        Once {
            config,
            name,
            place,
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The key of `slot`.
    fn key(&self, slot: &[u8]) -> Vec<u8> {
        [self.place.beside(":s:").as_slice(), slot].concat()
    }

    /// The slot `slot` names: itself, or the current period of the server's
    /// clock, named by its start (Unix seconds, with ms for periods that
    /// are not whole seconds).
    pub fn slot(&self, slot: Slot<'_>) -> Result<Vec<u8>, Error> {
        let every = match slot {
            Slot::Given(s) => return Ok(s.to_vec()),
            Slot::Every(d) => crate::time::millis(d).max(1),
        };
        let (secs, micros) = conn::server_time(&self.config)?;
        let start = (secs * 1000 + micros / 1000) / every * every;
        Ok(if every % 1000 == 0 {
            (start / 1000).to_string()
        } else {
            format!("{}.{:03}", start / 1000, start % 1000)
        }
        .into_bytes())
    }

    fn call(&self, op: &str, slot: &[u8], token: &str, terms: Terms) -> Result<Option<Run>, Error> {
        let reply: Reply = conn::with(&self.config, |c| {
            ONCE.key(self.key(slot))
                .arg(op)
                .arg(token)
                .arg(terms.retry.map_or(0, |r| crate::time::millis(r).max(1)))
                .arg(crate::time::millis(terms.keep).max(1))
                .invoke(c)
        })?;
        let (won, at, done, runs, token) = reply;
        let ms = |n: i64| u64::try_from(n).ok();
        Ok(match (won, ms(at)) {
            (-1, _) => None,
            (0 | 1, Some(at_ms)) => Some(Run {
                won: won == 1,
                at_ms,
                done_ms: ms(done),
                runs: ms(runs).unwrap_or(0),
                token,
            }),
            _ => {
                let reply = (won, at, done, runs, token);
                return Err(conn::unknown_reply(&self.config, "once.lua", &reply));
            }
        })
    }

    /// Claims `slot` for the caller of `token` unless another caller has
    /// (and, with `terms.retry`, finished it or claimed it lately). Whether
    /// it did, and the slot; a slot nobody had costs one `SET NX PX`, the
    /// rest one script.
    pub fn claim(
        &self,
        slot: Slot<'_>,
        token: &str,
        terms: Terms,
    ) -> Result<(bool, Vec<u8>), Error> {
        let slot = self.slot(slot)?;
        if terms.retry.is_some() {
            let run = self.call("claim", &slot, token, terms)?;
            return Ok((run.is_some_and(|r| r.won), slot));
        }
        let keep = crate::time::millis(terms.keep).max(1);
        let set: Option<String> = conn::with(&self.config, |c| {
            redis::cmd("SET")
                .arg(self.key(&slot))
                .arg(claimed(keep, token))
                .arg("NX")
                .arg("PX")
                .arg(keep)
                .query(c)
        })?;
        Ok((set.is_some(), slot))
    }

    /// Marks `slot` done if the caller of `token` runs it (and no other
    /// took it over); the record, `won` when it did.
    pub fn done(&self, slot: &[u8], token: &str) -> Result<Option<Run>, Error> {
        self.call("done", slot, token, READ)
    }

    /// Gives `slot` back if the caller of `token` runs it and has not said
    /// it is done: the next caller claims it as if nobody had. Whether it
    /// did.
    pub fn release(&self, slot: &[u8], token: &str) -> Result<bool, Error> {
        Ok(self
            .call("release", slot, token, READ)?
            .is_some_and(|r| r.won))
    }

    /// The record of `slot`, if it has one.
    pub fn read(&self, slot: &[u8]) -> Result<Option<Run>, Error> {
        self.call("read", slot, "", READ)
    }
}

/// The terms of a call that claims nothing.
const READ: Terms = Terms {
    retry: None,
    keep: Duration::from_secs(1),
};
