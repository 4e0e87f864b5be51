//! Permits: the engine of semaphores and read-write locks. A holder takes n
//! of a number of permits under its own token and lease (a holder that dies
//! gives them back when its lease ends); waiters queue in one line, first
//! come first served, and a release hands permits to as many at the head of
//! the line as fit. A read lock is one permit of a practically unlimited
//! number, a write lock all of them: a waiting writer stops later readers.
//!
//! A hold of permits is a `Hold` like a lock's (renewal, release at request
//! end): the functions of `lock` that take [`Keys`] come here for keys with
//! [`Permits`].

use std::sync::LazyLock;
use std::time::Duration;

use super::Keys;
use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{Invocation, Script, script};
use crate::time::millis;
use crate::wait;

/// The scripts of a hold of permits, for one format of its holders.
pub(super) struct Scripts {
    pub acquire: LazyLock<Script>,
    pub release: LazyLock<Script>,
    pub leave: LazyLock<Script>,
    extend: LazyLock<Script>,
    change: LazyLock<Script>,
    state: LazyLock<Script>,
}

/// The scripts of permits with the `format` files included after the
/// shared functions (see `permits_line.lua`).
macro_rules! scripts {
    ($($format:literal)?) => {
        Scripts {
            acquire: script!("permits_acquire.lua" $(, with $format)?),
            release: script!("permits_release.lua" $(, with $format)?),
            leave: script!("permits_leave.lua" $(, with $format)?),
            extend: script!("permits_extend.lua" $(, with $format)?),
            change: script!("permits_change.lua" $(, with $format)?),
            state: script!("permits_state.lua" $(, with $format)?),
        }
    };
}

static OWN: Scripts = scripts!();
static SYMFONY: Scripts = scripts!("permits_symfony.lua");
/// The types of a permit script's keys (see `Invocation::types_checked`):
/// the holders, their counts, the fencing counter and the line.
pub(super) const TYPES: &[&str] = &["zset", "hash", "string", "list"];

/// The permits of a read lock's whole: a number no count of readers reaches
/// (exact in Lua's doubles).
pub const UNLIMITED: u64 = 1 << 50;

/// How the holders of permits are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// redislock's: the holders' leases in a sorted set, the permits each
    /// holds in a hash beside it.
    Own,
    /// Symfony's RedisStore's, on the key its clients share (read-write
    /// locks only): the holders' leases in the sorted set, the writer's
    /// beside the member `__write__`.
    Symfony,
}

/// What a hold of permits takes, beside the keys a lock has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permits {
    pub format: Format,
    /// Holder token -> permits it holds (not used by [`Format::Symfony`]).
    pub counts: Vec<u8>,
    /// The permits this hold takes.
    pub take: u64,
    /// The permits there are in all, as this hold sees them.
    pub of: u64,
}

impl Keys {
    /// A hold of `take` of `of` permits of the semaphore or read-write
    /// lock (`kind`) `name`. Taking all of them hands out a fencing token.
    pub fn permits(prefix: &[u8], kind: Kind, name: &[u8], take: u64, of: u64) -> Self {
        let place = Place::new(prefix, kind, name);
        let mut keys = Keys::at(&place, true, false);
        keys.permits = Some(Permits {
            format: Format::Own,
            counts: place.beside(":permits"),
            take,
            of,
        });
        keys
    }

    /// A read lock (`take` 1) or the write lock (`take` [`UNLIMITED`]) of
    /// the read-write lock on the key `<prefix><name>` itself, in the
    /// format of Symfony's RedisStore: Symfony's stock clients of that key
    /// and these holds exclude each other as they exclude their own.
    pub fn symfony(prefix: &[u8], name: &[u8], take: u64) -> Self {
        let mut keys = Self::permits(prefix, Kind::ExactRwLock, name, take, UNLIMITED);
        if let Some(p) = &mut keys.permits {
            p.format = Format::Symfony;
        }
        keys
    }

    /// Whether these are the keys of a read or write lock.
    pub fn read_write(&self) -> bool {
        self.permits.as_ref().is_some_and(|p| p.of == UNLIMITED)
    }

    /// What a hold of these keys is, as messages name it.
    pub fn what(&self) -> &'static str {
        match &self.permits {
            None => "lock",
            Some(p) if p.of != UNLIMITED => "semaphore",
            Some(p) if p.take == p.of => "write lock",
            Some(_) => "read lock",
        }
    }
}

/// The scripts for the holders of `keys` (redislock's format when they
/// are not permits at all).
pub(super) fn scripts(keys: &Keys) -> &'static Scripts {
    match keys.permits.as_ref().map(|p| p.format) {
        Some(Format::Symfony) => &SYMFONY,
        _ => &OWN,
    }
}

fn counts(keys: &Keys) -> &[u8] {
    keys.permits.as_ref().map_or(&[], |p| p.counts.as_slice())
}

/// A call of `script` (one of [`scripts`]'), with the holders and their
/// counts as its first keys; a command's own `WRONGTYPE` error is told
/// naming the key ([`TYPES`]).
pub(super) fn call<'a>(script: &'a Script, keys: &Keys) -> Invocation<'a> {
    let mut call = script.key(&keys.lock);
    call.key(counts(keys)).types_checked(TYPES);
    call
}

/// Sets a new lease on the permits of `token` if its lease still runs.
pub(super) fn extend(
    config: &Config,
    keys: &Keys,
    token: &str,
    lease: Duration,
) -> Result<bool, Error> {
    let done: i64 = conn::with(config, |c| {
        call(&scripts(keys).extend, keys)
            .arg(token)
            .arg(millis(lease))
            .invoke(c)
    })?;
    Ok(done == 1)
}

/// How a change of a holder's permits went.
#[derive(Debug, PartialEq, Eq)]
pub enum Changed {
    /// Done, with the fencing token of a promotion to all the permits (0
    /// otherwise).
    Done(i64),
    /// The permits wanted are not free now.
    Busy,
    /// The token holds nothing (any more).
    Gone,
}

/// Makes `token` a holder of `take` permits instead of those it holds, with
/// a new lease, without waiting (see `permits_change.lua`).
pub(super) fn change(
    config: &Config,
    keys: &Keys,
    token: &str,
    lease: Duration,
    take: u64,
) -> Result<Changed, Error> {
    let Some(p) = &keys.permits else {
        return Ok(Changed::Gone);
    };
    let (outcome, fence): (String, i64) = conn::with(config, |c| {
        call(&scripts(keys).change, keys)
            .key(&keys.fence)
            .key(&keys.line)
            .arg(token)
            .arg(millis(lease))
            .arg(keys.keep())
            .arg(&keys.waiters)
            .arg(millis(wait::PLACE))
            .arg(take)
            .arg(p.of)
            .invoke(c)
    })?;
    Ok(match outcome.as_str() {
        "done" => Changed::Done(fence),
        "busy" => Changed::Busy,
        "gone" => Changed::Gone,
        _ => {
            return Err(conn::unknown_reply(
                config,
                "permits_change.lua",
                &(outcome, fence),
            ));
        }
    })
}

/// How the permits stand: the lease left of `token`'s (None: it holds
/// none), the permits in use, and how many wait.
pub struct Usage {
    pub left: Option<Duration>,
    pub used: u64,
    pub waiting: u64,
}

pub fn usage(config: &Config, keys: &Keys, token: Option<&str>) -> Result<Usage, Error> {
    let (left, used, waiting): (i64, i64, i64) = conn::with(config, |c| {
        call(&scripts(keys).state, keys)
            .types_checked(&["zset", "hash", "list"])
            .key(&keys.line)
            .arg(token.unwrap_or_default())
            .invoke(c)
    })?;
    Ok(Usage {
        left: (left >= 0).then(|| wait::later_ms(left)),
        used: u64::try_from(used).unwrap_or(0),
        waiting: u64::try_from(waiting).unwrap_or(0),
    })
}
