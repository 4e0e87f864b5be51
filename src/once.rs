//! Work that runs once per slot across every process and server: the first
//! caller of a (name, slot) claims it, the others are told who did and
//! whether the run finished. A slot is given (a date, an order id, a deploy
//! id) or taken from the server's clock (the current period of a length),
//! so client clocks that differ cannot split one. A run that did not finish
//! may be claimed again after a time the caller sets (or never). Records
//! are kept for a time the caller sets: `once:{<name>}` (slot -> the run)
//! and `once:{<name>}:slots` (slot -> when it was claimed), see
//! docs/keys.md.

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
    pub slot: Vec<u8>,
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

type Reply = (i64, Vec<u8>, i64, i64, i64, Vec<u8>);

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

    fn call(
        &self,
        op: &str,
        slot: Slot<'_>,
        token: &str,
        terms: Terms,
    ) -> Result<Option<Run>, Error> {
        let (given, every) = match slot {
            Slot::Given(s) => (s, 0),
            Slot::Every(d) => (&b""[..], crate::time::millis(d).max(1)),
        };
        let reply: Reply = conn::with(&self.config, |c| {
            ONCE.key(&self.place.main)
                .key(self.place.beside(":slots"))
                .arg(op)
                .arg(given)
                .arg(every)
                .arg(token)
                .arg(terms.retry.map_or(0, |r| crate::time::millis(r).max(1)))
                .arg(crate::time::millis(terms.keep).max(1))
                .invoke(c)
        })?;
        let (won, slot, at, done, runs, token) = reply;
        let ms = |n: i64| u64::try_from(n).ok();
        Ok(match (won, ms(at)) {
            (-1, _) => None,
            (0 | 1, Some(at_ms)) => Some(Run {
                won: won == 1,
                slot,
                at_ms,
                done_ms: ms(done),
                runs: ms(runs).unwrap_or(0),
                token,
            }),
            _ => {
                let reply = (won, slot, at, done, runs, token);
                return Err(conn::unknown_reply(&self.config, "once.lua", &reply));
            }
        })
    }

    /// Claims `slot` for the caller of `token` unless another caller has
    /// (and, with `terms.retry`, finished it or claimed it lately). The
    /// slot's record, whoever claimed it.
    pub fn claim(&self, slot: Slot<'_>, token: &str, terms: Terms) -> Result<Run, Error> {
        self.call("claim", slot, token, terms)?.ok_or_else(|| {
            conn::unknown_reply(&self.config, "once.lua", &"no record after a claim")
        })
    }

    /// Marks `slot` done if the caller of `token` runs it (and no other
    /// took it over); the record, `won` when it did.
    pub fn done(&self, slot: &[u8], token: &str) -> Result<Option<Run>, Error> {
        let terms = Terms {
            retry: None,
            keep: Duration::from_secs(1),
        };
        self.call("done", Slot::Given(slot), token, terms)
    }

    /// The record of `slot`, if it has one.
    pub fn read(&self, slot: &[u8]) -> Result<Option<Run>, Error> {
        let terms = Terms {
            retry: None,
            keep: Duration::from_secs(1),
        };
        self.call("read", Slot::Given(slot), "", terms)
    }
}
