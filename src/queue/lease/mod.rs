//! Leased delivery: a worker reserves due tasks, each under a lease with its
//! own token, and acks (finishes) or nacks (gives back) them while the lease
//! is still its own. Leases that run out put their tasks back by themselves,
//! counting attempts, and a task out of attempts goes to the dead letters.

mod dead;
mod moving;
mod pause;
mod recent;
mod reserve;
mod settle;
mod stats;
mod terms;
mod waiting;
mod workers;

use std::time::Duration;

pub use dead::{DeadTask, Retried, dead, purge_dead, retry_dead};
pub use moving::{Moved, move_routed, move_to};
pub use pause::{pause, resume, set_group_concurrency, set_group_rate, throttle, throttle_group};
pub use recent::{
    Attempt, Footprint, RECENT_BYTES_MAX, RECENT_FOR, RECENT_FOR_MAX, RECENT_KEEP, RECENT_KEEP_MAX,
    footprint, keep_recent, recent,
};
pub use reserve::{RECHECK, Reserve, ack_and_reserve, reserve};
pub(crate) use reserve::{Relayed, relay};
pub use settle::{
    Nack, REASON_MAX, ack, ack_many, ack_with, bury, extend, kept_reason, nack, release,
};
pub use stats::{COUNTERS, Counts, Metrics, PERIOD, Period, history, metrics};
pub use terms::{Rate, set_rate, set_terms};
pub use waiting::{
    Group, Peeked, Traced, clear, find, groups, leased, queued, remove, tagged, traces,
};
pub use workers::{KEEP, MOST, NOTE, Worker, workers};

/// The most tasks one script call moves: bounds its run time (Redis runs
/// nothing else meanwhile).
pub const BATCH: u64 = 1000;

/// A reserved task.
#[derive(Clone, Debug, PartialEq)]
pub struct Leased {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    /// How many times it has been reserved, this time included.
    pub attempts: i64,
    /// Proves the lease to ack, nack and extend.
    pub token: String,
}

/// A consumer's terms for the tasks it reserves from a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    pub lease: Duration,
    /// 0: no limit.
    pub max_attempts: u64,
    /// Which of them are the consumer's defaults, that the terms a
    /// producer stored with the queue replace ([`set_terms`]).
    pub defaults: Defaults,
}

impl Terms {
    /// Terms the consumer's code gave, both of them.
    pub const fn own(lease: Duration, max_attempts: u64) -> Self {
        Terms {
            lease,
            max_attempts,
            defaults: Defaults {
                lease: false,
                max_attempts: false,
            },
        }
    }
}

/// Which of a consumer's terms are its defaults (not given by its code).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Defaults {
    pub lease: bool,
    pub max_attempts: bool,
}

/// What a lease token tells (`queue_reserve.lua`): `<process token>:<rank>.
/// <attempts>@<reserve ms>+<ms the task had been due>`, or
/// `<process token>:<rank>@<reserve ms>` from an older release; whatever
/// part is not of that shape tells nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LeaseFacts<'a> {
    /// The id of the process that reserved (see `identity`).
    pub worker: Option<&'a str>,
    pub attempts: Option<i64>,
    pub reserved_ms: Option<u64>,
    pub wait_ms: Option<u64>,
}

impl<'a> LeaseFacts<'a> {
    pub fn of(token: &'a str) -> Self {
        let worker =
            crate::identity::id_of(token.as_bytes()).and_then(|id| std::str::from_utf8(id).ok());
        let tail = token.split_once(':').map_or(token, |(_, tail)| tail);
        let (rank, at) = tail.split_once('@').unwrap_or(("", ""));
        let (at, wait) = at.split_once('+').unwrap_or((at, ""));
        LeaseFacts {
            worker,
            attempts: rank.split_once('.').and_then(|(_, n)| n.parse().ok()),
            reserved_ms: at.parse().ok(),
            wait_ms: wait.parse().ok(),
        }
    }
}

/// A term as a script takes it: the consumer's own value, or its default
/// `~<value>`, which the queue's stored term replaces (`queue_term`).
pub(crate) fn term_arg(value: String, default: bool) -> String {
    if default { format!("~{value}") } else { value }
}
