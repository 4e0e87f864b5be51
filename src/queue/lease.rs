//! Leased delivery: a worker reserves due tasks, each under a lease with its
//! own token, and acks (finishes) or nacks (gives back) them while the lease
//! is still its own. Leases that run out put their tasks back by themselves,
//! counting attempts, and a task out of attempts goes to the dead letters.

use std::sync::LazyLock;
use std::time::Duration;

use redis::{Script, Value};

use super::{Keys, score_arg, task_script, wake_ms};
use crate::config::Config;
use crate::conn::{self, Error};
use crate::scripts::{line_script, script};
use crate::wait::{self, Pass, Try, Woken};

static RESERVE: LazyLock<Script> = task_script!("queue_reserve.lua");
static LEAVE: LazyLock<Script> = line_script!("queue_line.lua", "queue_leave.lua");
static ACK: LazyLock<Script> = task_script!("queue_ack.lua");
static NACK: LazyLock<Script> = task_script!("queue_nack.lua");
static EXTEND: LazyLock<Script> = task_script!("queue_extend.lua");
static METRICS: LazyLock<Script> = script!("queue_count.lua", "queue_metrics.lua");
static DEAD: LazyLock<Script> = task_script!("queue_dead.lua");
static PEEK: LazyLock<Script> = task_script!("queue_peek.lua");
static REMOVE: LazyLock<Script> = task_script!("queue_remove.lua");
static CLEAR: LazyLock<Script> = task_script!("queue_clear.lua");

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

/// A queue's own terms for the tasks reserved from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terms {
    pub lease: Duration,
    /// 0: no limit.
    pub max_attempts: u64,
}

/// How many tasks to reserve and how long to wait for them.
#[derive(Clone, Copy, Debug)]
pub struct Reserve {
    pub count: u64,
    pub wait: Duration,
    /// The longest gap between re-checks of the first consumer in line when
    /// nobody wakes it (an old client's enqueue wakes nobody).
    pub recheck: Duration,
}

/// How often at most the first consumer in line looks again when nobody
/// wakes it (old clients' enqueues wake nobody).
pub const RECHECK: Duration = Duration::from_secs(1);

impl Reserve {
    /// Up to `count` tasks, waiting up to `wait`, rechecking at [`RECHECK`].
    pub fn up_to(count: u64, wait: Duration) -> Self {
        Reserve {
            count,
            wait,
            recheck: RECHECK,
        }
    }
}

fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.clone().into_bytes()),
        Value::Int(i) => Some(i.to_string().into_bytes()),
        _ => None,
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => bytes(other)
            .and_then(|b| std::str::from_utf8(&b).ok()?.parse().ok())
            .unwrap_or(0),
    }
}

fn float(v: &Value) -> f64 {
    bytes(v)
        .and_then(|b| std::str::from_utf8(&b).ok()?.parse().ok())
        .unwrap_or(0.0)
}

/// How a consumer waits on one queue, as the reserve script takes it.
fn mode(pass: Pass, index: usize, waits: bool) -> &'static str {
    match pass {
        _ if !waits => "",
        Pass::First => "fresh",
        Pass::Woken(woken) if woken == index => "fresh",
        _ => "keep",
    }
}

fn try_reserve(
    config: &Config,
    (keys, terms): (&Keys, Terms),
    how: &Reserve,
    token: &str,
    mode: &str,
) -> Result<Try<Vec<Leased>>, Error> {
    let prefix = format!("{}:", crate::token::new_token());
    let reply: Vec<Value> = conn::with(config, |c| {
        keys.call(&RESERVE)
            .arg(how.count.clamp(1, BATCH))
            .arg(score_arg(terms.lease.as_secs_f64()))
            .arg(&prefix)
            .arg(terms.max_attempts)
            .arg(BATCH)
            .arg(&keys.waiters)
            .arg(token)
            .arg(wake_ms())
            .arg(mode)
            .invoke(c)
    })?;
    let later = reply.first().map_or(-1, int);
    let tasks: Vec<Leased> = reply
        .get(1..)
        .unwrap_or_default()
        .chunks_exact(4)
        .map(|t| Leased {
            id: bytes(&t[0]).unwrap_or_default(),
            payload: bytes(&t[1]),
            attempts: int(&t[2]),
            token: String::from_utf8_lossy(&bytes(&t[3]).unwrap_or_default()).into_owned(),
        })
        .collect();
    Ok(if tasks.is_empty() {
        Try::Later(match later {
            // Not first in line (or nothing scheduled): keeping the place
            // is all there is to do.
            -1 => wait::RENEW,
            ms => wait::later_ms(ms).min(how.recheck),
        })
    } else {
        Try::Done(tasks)
    })
}

/// Leaves the line of a queue (see `queue_leave.lua`).
fn leave(config: &Config, keys: &Keys, token: &str) -> Result<(), Error> {
    conn::with(config, |c| {
        LEAVE
            .key(&keys.line)
            .arg(&keys.waiters)
            .arg(token)
            .arg(wake_ms())
            .invoke::<i64>(c)
    })?;
    Ok(())
}

/// A consumer waiting on one or more queues.
struct Consumer<'a> {
    config: &'a Config,
    queues: &'a [(&'a Keys, Terms)],
    how: &'a Reserve,
    token: String,
    /// Whether it has joined the queues' lines.
    joined: bool,
    /// Whether it blocks on the first queue's wake list only (a cluster),
    /// and so looks at the others every `how.recheck`.
    first_only: bool,
}

impl Consumer<'_> {
    /// Leaves the lines of every queue but `except`.
    fn leave_lines(&self, except: Option<usize>) -> Result<(), Error> {
        if !self.joined {
            return Ok(());
        }
        for (index, (keys, _)) in self.queues.iter().enumerate() {
            if Some(index) != except {
                leave(self.config, keys, &self.token)?;
            }
        }
        Ok(())
    }
}

impl wait::Waiter<(usize, Vec<Leased>)> for Consumer<'_> {
    fn attempt(&mut self, pass: Pass) -> Result<Try<(usize, Vec<Leased>)>, Error> {
        let waits = !self.how.wait.is_zero();
        let mut soonest = Duration::MAX;
        for (index, &queue) in self.queues.iter().enumerate() {
            let mode = mode(pass, index, waits);
            match try_reserve(self.config, queue, self.how, &self.token, mode)? {
                Try::Done(tasks) => {
                    // The script took the consumer out of this queue's line.
                    self.leave_lines(Some(index))?;
                    return Ok(Try::Done((index, tasks)));
                }
                Try::Later(later) => soonest = soonest.min(later),
            }
            self.joined |= waits;
        }
        if self.first_only {
            soonest = soonest.min(self.how.recheck);
        }
        Ok(Try::Later(soonest))
    }

    fn woken(&mut self, index: usize, value: Vec<u8>) -> Woken<(usize, Vec<Leased>)> {
        // '1': taken out of the line for a task due now; '0': a nudge to the
        // first in line, which keeps its place, to set its timer anew.
        Woken::Again(if value == b"1" {
            Pass::Woken(index)
        } else {
            Pass::Recheck
        })
    }

    fn leave(&mut self) -> Result<Option<(usize, Vec<Leased>)>, Error> {
        self.leave_lines(None)?;
        Ok(None)
    }
}

/// Reserves up to `how.count` (at most [`BATCH`]) due tasks from the first
/// of `queues` that has any, under that queue's terms, waiting up to `how.wait` in their lines for
/// one: woken by an enqueue (one consumer per task), or, first in line, by
/// the due time of a delayed task or the end of a lease.
/// Returns the queue's index and its tasks; none when the wait ran out.
pub fn reserve(
    config: &Config,
    queues: &[(&Keys, Terms)],
    how: &Reserve,
) -> Result<Option<(usize, Vec<Leased>)>, Error> {
    let token = crate::token::new_token();
    let mut wake: Vec<Vec<u8>> = queues
        .iter()
        .map(|(k, _)| wait::wake_key(&k.waiters, &token))
        .collect();
    // A cluster blocks on keys of one slot only: the first queue's. The
    // others are then looked at every `how.recheck`.
    let first_only =
        matches!(config.topology, crate::config::Topology::Cluster { .. }) && wake.len() > 1;
    wake.truncate(if first_only { 1 } else { wake.len() });
    let mut consumer = Consumer {
        config,
        queues,
        how,
        token,
        joined: false,
        first_only,
    };
    wait::until(config, &wake, how.wait, &mut consumer)
}

/// Finishes a task if `token` is still its lease.
pub fn ack(config: &Config, keys: &Keys, id: &[u8], token: &str) -> Result<bool, Error> {
    Ok(ack_many(config, keys, &[(id, token)])? == 1)
}

/// Finishes the tasks whose lease is still the given token, in one round
/// trip per [`BATCH`]; returns how many.
pub fn ack_many(config: &Config, keys: &Keys, tasks: &[(&[u8], &str)]) -> Result<u64, Error> {
    let mut done = 0;
    for chunk in tasks.chunks(BATCH as usize) {
        let n: u64 = conn::with(config, |c| {
            let mut call = keys.call(&ACK);
            call.arg(&keys.waiters).arg(wake_ms());
            for (id, token) in chunk {
                call.arg(*id).arg(*token);
            }
            call.invoke(c)
        })?;
        done += n;
    }
    Ok(done)
}

/// What a nack did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nack {
    Requeued,
    Dead,
    /// The lease is not the caller's any more.
    NotLeased,
}

/// Gives a task back, due after `delay` seconds, or to the dead letters
/// when it has used up `max_attempts` (0: no limit).
pub fn nack(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    delay: f64,
    max_attempts: u64,
) -> Result<Nack, Error> {
    give_back(config, keys, id, token, delay, &max_attempts.to_string())
}

/// Sends a leased task to the dead letters now, whatever its attempts (a
/// task no worker can handle); false when the lease is not the caller's.
pub fn bury(config: &Config, keys: &Keys, id: &[u8], token: &str) -> Result<bool, Error> {
    Ok(give_back(config, keys, id, token, 0.0, "bury")? == Nack::Dead)
}

/// `queue_nack.lua`, with its maximum attempts as the script takes them.
fn give_back(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    delay: f64,
    max_attempts: &str,
) -> Result<Nack, Error> {
    let done: i64 = conn::with(config, |c| {
        keys.call(&NACK)
            .arg(id)
            .arg(token)
            .arg(score_arg(delay))
            .arg(max_attempts)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .invoke(c)
    })?;
    Ok(match done {
        1 => Nack::Requeued,
        2 => Nack::Dead,
        _ => Nack::NotLeased,
    })
}

/// Sets the lease of a task to `lease` from now if `token` is still its lease.
pub fn extend(
    config: &Config,
    keys: &Keys,
    id: &[u8],
    token: &str,
    lease: Duration,
) -> Result<bool, Error> {
    let done: i64 = conn::with(config, |c| {
        keys.call(&EXTEND)
            .arg(id)
            .arg(token)
            .arg(score_arg(lease.as_secs_f64()))
            .invoke(c)
    })?;
    Ok(done == 1)
}

/// A queue's counts at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metrics {
    pub ready: u64,
    pub delayed: u64,
    pub leased: u64,
    pub dead: u64,
    /// How long the oldest due task has been due, in ms.
    pub oldest_due_ms: Option<u64>,
    /// What happened to its tasks since it was first used.
    pub totals: Counts,
}

/// The names of the queue's counters, in the order of [`Counts`] (and of
/// `QUEUE_COUNTERS` in `queue_count.lua`).
pub const COUNTERS: [&str; 6] = ["enqueued", "acked", "nacked", "retried", "dead", "expired"];

/// How many tasks were enqueued, acked (or popped by the seed's consumer),
/// nacked back to the queue, retried from the dead letters, sent to the dead
/// letters, and left to run out of their lease: one per name of
/// [`COUNTERS`].
pub type Counts = [u64; COUNTERS.len()];

/// The length of one period of a queue's history, in seconds.
pub const PERIOD: u64 = 10;

/// The counts of one period of a queue's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// When it began, in seconds on the server's clock.
    pub start: u64,
    pub counts: Counts,
}

fn counts_at(m: &[i64], at: usize) -> Counts {
    std::array::from_fn(|i| u64::try_from(m.get(at + i).copied().unwrap_or(0)).unwrap_or(0))
}

fn metrics_call(config: &Config, keys: &Keys, history: bool) -> Result<Vec<i64>, Error> {
    conn::with(config, |c| {
        METRICS
            .key(&keys.queue)
            .key(&keys.leased)
            .key(&keys.dead)
            .key(&keys.stats)
            .arg(if history { "history" } else { "" })
            .invoke(c)
    })
}

fn metrics_of(m: &[i64]) -> Metrics {
    let at = |i: usize| u64::try_from(m.get(i).copied().unwrap_or(0)).unwrap_or(0);
    Metrics {
        ready: at(0),
        delayed: at(1),
        leased: at(2),
        dead: at(3),
        oldest_due_ms: m.get(4).and_then(|&age| u64::try_from(age).ok()),
        totals: counts_at(m, 5),
    }
}

pub fn metrics(config: &Config, keys: &Keys) -> Result<Metrics, Error> {
    Ok(metrics_of(&metrics_call(config, keys, false)?))
}

/// The metrics, and the counts of each of the last 60 periods of
/// [`PERIOD`] seconds, oldest first (the last one is still running).
pub fn history(config: &Config, keys: &Keys) -> Result<(Metrics, Vec<Period>), Error> {
    let m = metrics_call(config, keys, true)?;
    let from = 5 + COUNTERS.len();
    let current = u64::try_from(m.get(from).copied().unwrap_or(0)).unwrap_or(0);
    let periods = m
        .get(from + 1..)
        .unwrap_or_default()
        .chunks_exact(COUNTERS.len())
        .enumerate()
        .map(|(i, counts)| Period {
            start: (current + 1 + i as u64).saturating_sub(60) * PERIOD,
            counts: counts_at(counts, 0),
        })
        .collect();
    Ok((metrics_of(&m), periods))
}

/// A dead letter.
#[derive(Clone, Debug, PartialEq)]
pub struct DeadTask {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    pub attempts: i64,
    /// When it died, in seconds on the server's clock.
    pub died_at: f64,
}

fn dead_call(
    config: &Config,
    keys: &Keys,
    op: &str,
    limit: u64,
    ids: &[Vec<u8>],
) -> Result<Value, Error> {
    conn::with(config, |c| {
        let mut call = keys.call(&DEAD);
        call.arg(op)
            .arg(limit.clamp(1, BATCH))
            .arg(&keys.waiters)
            .arg(wake_ms());
        for id in ids {
            call.arg(id.as_slice());
        }
        call.invoke(c)
    })
}

/// The oldest dead letters, up to `limit` (at most [`BATCH`]).
pub fn dead(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<DeadTask>, Error> {
    let Value::Array(flat) = dead_call(config, keys, "list", limit, &[])? else {
        return Ok(Vec::new());
    };
    Ok(flat
        .chunks_exact(4)
        .map(|t| DeadTask {
            id: bytes(&t[0]).unwrap_or_default(),
            payload: bytes(&t[1]),
            attempts: int(&t[2]),
            died_at: float(&t[3]),
        })
        .collect())
}

/// A task looked at without taking it.
#[derive(Clone, Debug, PartialEq)]
pub struct Peeked {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    pub attempts: i64,
    /// `queued`, `leased` or `dead`.
    pub state: String,
    /// When it is due (queued), its lease ends (leased) or it died (dead),
    /// in seconds on the server's clock.
    pub at: f64,
}

fn peek(config: &Config, keys: &Keys, op: &str, arg: &[u8]) -> Result<Vec<Peeked>, Error> {
    let flat: Value = conn::with(config, |c| keys.call(&PEEK).arg(op).arg(arg).invoke(c))?;
    let Value::Array(flat) = flat else {
        return Ok(Vec::new());
    };
    Ok(flat
        .chunks_exact(5)
        .map(|t| Peeked {
            id: bytes(&t[0]).unwrap_or_default(),
            payload: bytes(&t[1]),
            attempts: int(&t[2]),
            state: String::from_utf8_lossy(&bytes(&t[3]).unwrap_or_default()).into_owned(),
            at: float(&t[4]),
        })
        .collect())
}

/// The queued tasks (due now or later), earliest due first, up to `limit`
/// (at most [`BATCH`]).
pub fn queued(config: &Config, keys: &Keys, limit: u64) -> Result<Vec<Peeked>, Error> {
    peek(
        config,
        keys,
        "list",
        limit.clamp(1, BATCH).to_string().as_bytes(),
    )
}

/// The task with `id`: queued, leased or dead; None when there is none.
pub fn find(config: &Config, keys: &Keys, id: &[u8]) -> Result<Option<Peeked>, Error> {
    Ok(peek(config, keys, "find", id)?.into_iter().next())
}

/// Moves dead letters back to the queue (due now, attempts reset): the
/// given ids, or all of them when `ids` is empty. Returns how many.
pub fn retry_dead(config: &Config, keys: &Keys, ids: &[Vec<u8>]) -> Result<u64, Error> {
    settle_dead(config, keys, "retry", ids)
}

/// Removes dead letters with their payloads: the given ids, or all of them
/// when `ids` is empty. Returns how many.
pub fn purge_dead(config: &Config, keys: &Keys, ids: &[Vec<u8>]) -> Result<u64, Error> {
    settle_dead(config, keys, "purge", ids)
}

/// Removes the tasks waiting under `ids`: queued (due now or later), or
/// enqueued again while their id runs. Leased tasks stay with their
/// workers, who settle them. Returns how many were removed.
pub fn remove(config: &Config, keys: &Keys, ids: &[Vec<u8>]) -> Result<u64, Error> {
    let mut removed = 0;
    for chunk in ids.chunks(BATCH as usize) {
        let n: u64 = conn::with(config, |c| {
            let mut call = keys.call(&REMOVE);
            for id in chunk {
                call.arg(id);
            }
            call.invoke(c)
        })?;
        removed += n;
    }
    Ok(removed)
}

/// Removes every task waiting in the queue (see [`remove`]), [`BATCH`]
/// per round trip; a task enqueued meanwhile may stay. Returns how many.
pub fn clear(config: &Config, keys: &Keys) -> Result<u64, Error> {
    let (mut removed, mut cursor) = (0, String::from("0"));
    loop {
        let (n, next): (u64, String) = conn::with(config, |c| {
            keys.call(&CLEAR).arg(BATCH).arg(&cursor).invoke(c)
        })?;
        removed += n;
        if next.is_empty() {
            return Ok(removed);
        }
        cursor = next;
    }
}

fn settle_dead(config: &Config, keys: &Keys, op: &str, ids: &[Vec<u8>]) -> Result<u64, Error> {
    let mut total = 0;
    if ids.is_empty() {
        // All of them, a bounded batch per call.
        loop {
            let n = u64::try_from(int(&dead_call(config, keys, op, BATCH, &[])?)).unwrap_or(0);
            total += n;
            if n < BATCH {
                return Ok(total);
            }
        }
    }
    for chunk in ids.chunks(BATCH as usize) {
        total += u64::try_from(int(&dead_call(config, keys, op, BATCH, chunk)?)).unwrap_or(0);
    }
    Ok(total)
}
