//! Reserving: a consumer takes due tasks under a lease, waiting in the
//! queues' lines for them.

use std::sync::LazyLock;
use std::time::Duration;

use redis::{FromRedisValue, ParsingError, Value};

use super::{BATCH, Leased, Terms};
use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, score_arg, wake_ms};
use crate::resp;
use crate::scripts::{Script, script};
use crate::wait::{self, Pass, Try, Woken};

static RESERVE: LazyLock<Script> = script!("queue_reserve.lua");
static LEAVE: LazyLock<Script> = script!("queue_leave.lua");

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

/// The reserve script's reply: the ms until the first in line should look
/// again (-1: not first, or nothing scheduled), how many finished tasks it
/// acked first, whether children that ended wait for their parents' step
/// (1: `flow::deliver`) and flows across slots are being made from the
/// queue (2: `flow::tend`), then each task reserved as id, payload (nil:
/// none), attempts, lease token.
struct Reserved {
    later: i64,
    acked: u64,
    waits: i64,
    tasks: Vec<Leased>,
}

impl Reserved {
    /// The reply read straight from its bytes (see `resp::Cursor`): what
    /// `from_redis_value` makes of the same reply, or None for it to read.
    fn read(reply: &[u8]) -> Option<Reserved> {
        let mut reply = resp::Cursor::new(reply);
        let count = reply.array()?.checked_sub(3)?;
        if count % 4 != 0 {
            return None;
        }
        let later = reply.int()?;
        let acked = u64::try_from(reply.int()?).ok()?;
        let waits = reply.int()?;
        let mut tasks = Vec::with_capacity(reply.room(count / 4, 16));
        for _ in 0..count / 4 {
            tasks.push(Leased {
                id: reply.bulk()?.to_vec(),
                payload: reply.bulk_or_nil()?.map(<[u8]>::to_vec),
                attempts: reply.int()?,
                token: String::from_utf8(reply.bulk()?.to_vec()).ok()?,
            });
        }
        reply.end().then_some(Reserved {
            later,
            acked,
            waits,
            tasks,
        })
    }
}

impl FromRedisValue for Reserved {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let Value::Array(mut items) = v else {
            return Err(format!("a reserve reply must be an array, not {v:?}").into());
        };
        if items.len() < 3 {
            return Err(format!("a short reserve reply: {items:?}").into());
        }
        let tasks = items.split_off(3);
        let waits = i64::from_redis_value(items.pop().unwrap_or(Value::Nil))?;
        let acked = u64::from_redis_value(items.pop().unwrap_or(Value::Nil))?;
        let later = i64::from_redis_value(items.pop().unwrap_or(Value::Nil))?;
        type Row = (Vec<u8>, Option<Vec<u8>>, i64, String);
        let tasks: Vec<Row> = FromRedisValue::from_redis_value(Value::Array(tasks))?;
        Ok(Reserved {
            later,
            acked,
            waits,
            tasks: tasks
                .into_iter()
                .map(|(id, payload, attempts, token)| Leased {
                    id,
                    payload,
                    attempts,
                    token,
                })
                .collect(),
        })
    }
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

/// One try on one queue, acking the finished tasks `done` first (their
/// count goes to `acked`).
fn try_reserve(
    config: &Config,
    (keys, terms): (&Keys, Terms),
    how: &Reserve,
    (token, mode): (&str, &str),
    (done, acked): (&[(&[u8], &str)], &mut u64),
) -> Result<Try<Vec<Leased>>, Error> {
    // The process's own token: a leased task's worker can be told.
    let prefix = format!("{}:", crate::identity::token());
    let reply: Reserved = conn::with(config, |c| {
        let mut call = keys.call_ending(&RESERVE);
        // Only a Cluster has flows made in steps (flow::add).
        if matches!(config.topology, crate::config::Topology::Cluster { .. }) {
            call.key(&keys.making);
        }
        call.arg(how.count.clamp(1, BATCH))
            .arg(super::term_arg(
                score_arg(terms.lease.as_secs_f64()),
                terms.defaults.lease,
            ))
            .arg(&prefix)
            .arg(super::term_arg(
                terms.max_attempts.to_string(),
                terms.defaults.max_attempts,
            ))
            .arg(BATCH)
            .arg(&keys.waiters)
            .arg(token)
            .arg(wake_ms())
            .arg(mode)
            .arg(crate::identity::my_id());
        for (id, lease) in done {
            call.arg(*id).arg(*lease);
        }
        call.invoke_read(c, Reserved::read)
    })?;
    *acked += reply.acked;
    if reply.waits & 1 != 0 {
        crate::queue::flow::deliver(config, keys, &[]);
    }
    if reply.waits & 2 != 0 {
        crate::queue::flow::tend(config, keys);
    }
    Ok(if reply.tasks.is_empty() {
        Try::Later(match reply.later {
            // Not first in line (or nothing scheduled): keeping the place
            // is all there is to do.
            -1 => wait::RENEW,
            ms => wait::later_ms(ms).min(how.recheck),
        })
    } else {
        Try::Done(reply.tasks)
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
    /// What it is in each queue's line: its token, and where it blocks on
    /// the first queue's wake list only (a Cluster), in the others' its
    /// token and that queue's key prefix ([`relayed_member`]).
    members: Vec<String>,
    /// Whether it has joined the queues' lines.
    joined: bool,
    /// Whether it blocks on the first queue's wake list only (a cluster),
    /// and so looks at the others every `how.recheck`.
    first_only: bool,
    /// Finished tasks of the first queue, acked by the first try.
    done: &'a [(&'a [u8], &'a str)],
    /// How many of them were acked.
    acked: u64,
}

impl Consumer<'_> {
    /// Leaves the lines of every queue but `except`.
    fn leave_lines(&self, except: Option<usize>) -> Result<(), Error> {
        if !self.joined {
            return Ok(());
        }
        for (index, (keys, _)) in self.queues.iter().enumerate() {
            if Some(index) == except {
                continue;
            }
            match leave(self.config, keys, &self.members[index]) {
                // A server out of reach (passed over by `attempt`): the
                // place there runs out by itself.
                Err(Error::Connection { .. }) if self.queues.len() > 1 => {}
                left => left?,
            }
        }
        Ok(())
    }
}

impl wait::Waiter<(usize, Vec<Leased>)> for Consumer<'_> {
    fn attempt(&mut self, pass: Pass) -> Result<Try<(usize, Vec<Leased>)>, Error> {
        let waits = !self.how.wait.is_zero();
        let mut soonest = Duration::MAX;
        // A queue whose server is out of reach (a Cluster primary that died,
        // before its replica is promoted) is passed over while another
        // answers: one dead primary stalls only its own partitions.
        let mut unreachable = None;
        for (index, &queue) in self.queues.iter().enumerate() {
            let mode = mode(pass, index, waits);
            let done = if index == 0 {
                std::mem::take(&mut self.done)
            } else {
                &[]
            };
            let (token, acked) = (self.members[index].as_str(), &mut self.acked);
            let got = match try_reserve(self.config, queue, self.how, (token, mode), (done, acked))
            {
                Err(e @ Error::Connection { .. }) if self.queues.len() > 1 && done.is_empty() => {
                    unreachable.get_or_insert(e);
                    continue;
                }
                got => got?,
            };
            // Noted as its worker once it reserved (or waits): after the
            // script, so a reserve that fails changes nothing.
            super::workers::seen(self.config, queue.0);
            match got {
                Try::Done(tasks) => {
                    // The script took the consumer out of this queue's line.
                    self.leave_lines(Some(index))?;
                    return Ok(Try::Done((index, tasks)));
                }
                Try::Later(later) => soonest = soonest.min(later),
            }
            self.joined |= waits;
        }
        let passed_over = unreachable.is_some();
        if let Some(e) = unreachable
            && soonest == Duration::MAX
        {
            // None answered.
            return Err(e);
        }
        if self.first_only || passed_over {
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

/// The member of a consumer who blocks on the wake list under the key
/// prefix `home` (another slot's): `<token>@<home, percent-encoded>`; an
/// enqueue that takes it out of a line leaves its wake-up to the producer
/// to push there (`queue_relayed`, [`relay`]).
fn relayed_member(token: &str, home: &[u8]) -> String {
    let home = percent_encoding::percent_encode(home, percent_encoding::NON_ALPHANUMERIC);
    format!("{token}@{home}")
}

/// The token and home key prefix a [`relayed_member`] names; None for a
/// member of another shape.
fn home_of(member: &[u8]) -> Option<(&str, Vec<u8>)> {
    let at = member.iter().position(|&b| b == b'@')?;
    let token = std::str::from_utf8(&member[..at]).ok()?;
    Some((
        token,
        percent_encoding::percent_decode(&member[at + 1..]).collect(),
    ))
}

/// A reply of a script that may leave wake-ups to its caller
/// (`queue_relayed`): the reply itself, and the wake-ups to [`relay`].
pub(crate) struct Relayed<T>(pub T, pub Vec<Vec<u8>>);

impl<T: FromRedisValue> FromRedisValue for Relayed<T> {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let Value::Array(mut items) = v else {
            return Ok(Relayed(T::from_redis_value(v)?, Vec::new()));
        };
        if !matches!(items.first(), Some(Value::BulkString(w)) if w == b"relay") {
            return Ok(Relayed(
                T::from_redis_value(Value::Array(items))?,
                Vec::new(),
            ));
        }
        let word = |v: &Value, w: &[u8]| matches!(v, Value::BulkString(b) if b == w);
        let at = items
            .iter()
            .position(|v| word(v, b"reply") || word(v, b"value"))
            .ok_or("a relayed reply without its reply")?;
        let rest = items.split_off(at);
        let relays = Vec::<Vec<u8>>::from_redis_value(Value::Array(items.split_off(1)))?;
        let mut rest = rest.into_iter();
        let inner = match rest.next() {
            Some(v) if word(&v, b"value") => rest.next().unwrap_or(Value::Nil),
            _ => Value::Array(rest.collect()),
        };
        Ok(Relayed(T::from_redis_value(inner)?, relays))
    }
}

/// Pushes the wake-ups a script left to its caller (member, value, ...:
/// see [`relayed_member`]), each to its consumer's wake list, as
/// `line_wake_up` does. Best effort: the enqueue is done whatever happens
/// here, and a consumer not woken finds the task at its next recheck.
pub(crate) fn relay(config: &Config, relays: &[Vec<u8>]) {
    for pair in relays.chunks_exact(2) {
        let Some((token, home)) = home_of(&pair[0]) else {
            continue;
        };
        let wake = wait::wake_key(&home, token);
        let _ = conn::with(config, |c| {
            redis::pipe()
                .cmd("RPUSH")
                .arg(&wake)
                .arg(&pair[1])
                .ignore()
                .cmd("PEXPIRE")
                .arg(&wake)
                .arg(wake_ms())
                .ignore()
                .query::<()>(c)
        });
    }
}

/// What a reserve got: the index of the queue and its tasks, or nothing.
pub type Got = Option<(usize, Vec<Leased>)>;

/// Reserves up to `how.count` (at most [`BATCH`]) due tasks from the first
/// of `queues` that has any, under that queue's terms, waiting up to `how.wait` in their lines for
/// one: woken by an enqueue (one consumer per task), or, first in line, by
/// the due time of a delayed task or the end of a lease.
/// Returns the queue's index and its tasks; none when the wait ran out.
pub fn reserve(config: &Config, queues: &[(&Keys, Terms)], how: &Reserve) -> Result<Got, Error> {
    Ok(ack_and_reserve(config, queues, how, &[])?.1)
}

/// As [`reserve`], after finishing the first queue's tasks `done` whose
/// lease is still the given token (as [`super::ack_many`]), in the same
/// round trip as the first try (the last [`BATCH`] of them; any before in
/// their own). Returns how many were finished, and what [`reserve`] does.
pub fn ack_and_reserve(
    config: &Config,
    queues: &[(&Keys, Terms)],
    how: &Reserve,
    done: &[(&[u8], &str)],
) -> Result<(u64, Got), Error> {
    // Finished tasks belong to a queue: none without one.
    let Some((first, _)) = queues.first() else {
        return Ok((0, None));
    };
    let (before, done) = done.split_at(done.len().saturating_sub(BATCH as usize));
    let acked = if before.is_empty() {
        0
    } else {
        super::ack_many(config, first, before)?
    };
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
    let members = queues
        .iter()
        .enumerate()
        .map(|(i, _)| match i {
            0 => token.clone(),
            _ if first_only => relayed_member(&token, &first.waiters),
            _ => token.clone(),
        })
        .collect();
    let mut consumer = Consumer {
        config,
        queues,
        how,
        members,
        joined: false,
        first_only,
        done,
        acked,
    };
    let got = wait::until(config, &wake, how.wait, &mut consumer)?;
    Ok((consumer.acked, got))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bulk(bytes: &[u8]) -> Vec<u8> {
        [format!("${}\r\n", bytes.len()).as_bytes(), bytes, b"\r\n"].concat()
    }

    /// A reserve's reply ({later, acked, id, payload, attempts, token,
    /// ...}), with now and then a value of another kind where one belongs.
    fn reply() -> impl Strategy<Value = Vec<u8>> {
        let int = || any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes());
        let text = || proptest::collection::vec(any::<u8>(), 0..10).prop_map(|b| bulk(&b));
        let value = prop_oneof![
            4 => text(),
            4 => int(),
            1 => Just(b"$-1\r\n".to_vec()),
            1 => Just(b"-ERR no\r\n".to_vec()),
            1 => Just(b"*0\r\n".to_vec()),
        ];
        let task = prop_oneof![
            8 => (
                text(),
                prop_oneof![text(), Just(b"$-1\r\n".to_vec())],
                int(),
                "[a-z0-9:@]{0,20}".prop_map(|t| bulk(t.as_bytes())),
            )
                .prop_map(|(a, b, c, d)| [a, b, c, d].concat()),
            1 => proptest::collection::vec(value.clone(), 4).prop_map(|v| v.concat()),
        ];
        prop_oneof![
            8 => (
                prop_oneof![8 => int(), 1 => value.clone()],
                prop_oneof![8 => (0..i64::MAX).prop_map(|n| format!(":{n}\r\n").into_bytes()), 1 => value.clone()],
                proptest::collection::vec(task, 0..5),
                proptest::collection::vec(value, 0..2),
            )
                .prop_map(|(later, acked, tasks, extra)| {
                    let items = 2 + tasks.len() * 4 + extra.len();
                    [format!("*{items}\r\n").into_bytes(), later, acked, tasks.concat(), extra.concat()].concat()
                }),
            1 => Just(b"-NOSCRIPT No matching script\r\n".to_vec()),
        ]
    }

    proptest! {
        /// A relayed member names back its token and home prefix, whatever
        /// the prefix's bytes, and holds no ':' (the scripts cut a line's
        /// member at one: `line_token`).
        #[test]
        fn a_relayed_member_names_its_home_back(home in proptest::collection::vec(any::<u8>(), 0..64)) {
            let token = crate::token::new_token();
            let member = relayed_member(&token, &home);
            prop_assert!(!member.contains(':'));
            prop_assert_eq!(home_of(member.as_bytes()), Some((token.as_str(), home)));
        }

        /// A reply read straight from its bytes is what `from_redis_value`
        /// makes of it, and every reply it makes a `Reserved` of is taken.
        #[test]
        fn a_reserve_reads_as_from_redis_value_reads_it(reply in reply()) {
            let made = redis::parse_redis_value(&reply)
                .and_then(|v| v.extract_error())
                .and_then(|v| Ok(Reserved::from_redis_value(v)?));
            match (Reserved::read(&reply), made) {
                (Some(read), Ok(made)) => {
                    prop_assert_eq!(read.later, made.later);
                    prop_assert_eq!(read.acked, made.acked);
                    prop_assert_eq!(read.tasks, made.tasks);
                }
                (Some(_), Err(e)) => prop_assert!(false, "read what is refused: {e}"),
                // Only an integer or a bulk string where the other belongs
                // may be left to from_redis_value: it converts between them.
                (None, Ok(_)) => prop_assert!(
                    !reply.starts_with(b"*") || converts(&reply),
                    "refused a plain reply {:?}", String::from_utf8_lossy(&reply)
                ),
                (None, Err(_)) => {}
            }
        }
    }

    /// Whether the reply holds an integer where a bulk string belongs or
    /// the other way round, or a negative count acked: from_redis_value
    /// converts those (a negative integer wraps as a u64).
    fn converts(reply: &[u8]) -> bool {
        let Ok(Value::Array(items)) = redis::parse_redis_value(reply) else {
            return false;
        };
        let kinds_as_read = items.iter().enumerate().all(|(i, v)| match i {
            0 => matches!(v, Value::Int(_)),
            1 => matches!(v, Value::Int(n) if *n >= 0),
            i => match (i - 2) % 4 {
                0 | 3 => matches!(v, Value::BulkString(_)),
                1 => matches!(v, Value::BulkString(_) | Value::Nil),
                _ => matches!(v, Value::Int(_)),
            },
        });
        !kinds_as_read
    }
}
