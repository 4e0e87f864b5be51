//! Moving a queue's waiting tasks to another queue (another name, prefix,
//! database or server): each task runs on one side only, keeps its
//! payload, attempts and last failure, and its due time relative to the
//! server's clock, so the order it had.
//!
//! The source is paused while its tasks move (its consumers take none;
//! producers go on enqueueing), so a task is enqueued there before it is
//! removed here and no worker here takes it in between: a move cut short
//! loses nothing.

use std::sync::LazyLock;

use super::waiting::{check_remove, remove_with};
use super::{BATCH, Peeked, metrics, pause, queued, resume};
use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, Tags, flow, register, score_arg, wake_ms};
use crate::scripts::{Script, script};

static IMPORT: LazyLock<Script> = script!("queue_import.lua");

/// A queue where it lives: its server (the config) and its keys.
pub type Place<'a> = (&'a Config, &'a Keys);

/// How a move ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Moved {
    /// How many tasks left the source (a task the destination already had
    /// under its id stays as it is there, and the one here is removed), and
    /// whether the source was paused before (it stays paused).
    Done { moved: u64, paused: bool },
    /// The destination is the source itself (the same server, database
    /// and keys): nothing was changed.
    Itself,
    /// The destination holds `length` tasks and takes no more (its
    /// maximum length); `moved` had moved before.
    Full { moved: u64, length: u64 },
}

/// Whether `to` reaches the keys of `from`: a key written for a moment
/// beside the source's keys is looked for beside the destination's, so
/// another DSN naming the same server, or the same database by another
/// address, is seen for what it is.
fn same(from: Place<'_>, to: Place<'_>) -> Result<bool, Error> {
    seen_from(from, to, true)
}

/// Whether `to` reaches the server and database of `from` (its keys, or
/// others'): a child moved there can still end for its parent, whose
/// queue is on that server.
fn same_server(from: Place<'_>, to: Place<'_>) -> Result<bool, Error> {
    seen_from(from, to, false)
}

/// Whether a key written for a moment beside the source's keys is seen
/// from `to`: beside its own keys (`beside`), or as the source's key.
fn seen_from(from: Place<'_>, to: Place<'_>, beside: bool) -> Result<bool, Error> {
    let role = format!("move:{}", uuid::Uuid::new_v4().simple());
    let mine = [from.1.waiters.as_slice(), role.as_bytes()].concat();
    let theirs = if beside {
        [to.1.waiters.as_slice(), role.as_bytes()].concat()
    } else {
        mine.clone()
    };
    conn::with(from.0, |c| {
        redis::cmd("SET")
            .arg(&mine)
            .arg("1")
            .arg("PX")
            .arg(10_000)
            .query::<()>(c)
    })?;
    let seen = conn::with(to.0, |c| redis::cmd("EXISTS").arg(&theirs).query::<i64>(c));
    conn::with(from.0, |c| redis::cmd("DEL").arg(&mine).query::<i64>(c))?;
    Ok(seen? == 1)
}

/// The server's clock, in seconds.
fn server_now(config: &Config) -> Result<f64, Error> {
    let (s, us): (u64, u64) = conn::with(config, |c| redis::cmd("TIME").query(c))?;
    Ok(s as f64 + us as f64 / 1e6)
}

/// Enqueues `tasks` (looked at on the source at its server time `now`) on
/// `to`: which were added, or the destination's length when they would
/// take it past `max_length`.
fn import(
    to: Place<'_>,
    tasks: &[Peeked],
    now: f64,
    max_length: u64,
) -> Result<Result<Vec<bool>, u64>, Error> {
    let (config, keys) = to;
    let reply: Vec<i64> = conn::with(config, |c| {
        let mut call = keys.call(&IMPORT);
        call.arg(max_length).arg(&keys.waiters).arg(wake_ms());
        for t in tasks {
            let has = match (t.payload.is_some(), t.reason.is_some()) {
                (false, false) => "",
                (true, false) => "p",
                (false, true) => "r",
                (true, true) => "pr",
            };
            call.arg(&t.id)
                .arg(score_arg(t.at - now))
                .arg(t.attempts)
                .arg(has)
                .arg(t.payload.as_deref().unwrap_or_default())
                .arg(t.reason.as_deref().unwrap_or_default())
                .arg(Tags::stored(
                    &t.tags,
                    t.group.as_deref(),
                    t.trace.as_deref(),
                ));
        }
        call.invoke(c)
    })?;
    let unknown = || conn::unknown_reply(config, "queue_import.lua", &reply);
    match reply.split_first() {
        Some((0, [length])) => Ok(Err(u64::try_from(*length).map_err(|_| unknown())?)),
        Some((done @ (1 | 2), statuses)) if statuses.len() == tasks.len() => {
            if *done == 2 {
                register(config, keys)?;
            }
            statuses
                .iter()
                .map(|s| match s {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(unknown()),
                })
                .collect::<Result<_, _>>()
                .map(Ok)
        }
        _ => Err(unknown()),
    }
}

/// Moves the tasks waiting in `from` (due now or later, as many as it held
/// when the move began) to `to`, [`BATCH`] at a time, pausing `from`
/// meanwhile (unless it was paused already). Leased tasks, the reruns of
/// leased ids and dead letters stay.
pub fn move_to(from: Place<'_>, to: Place<'_>, max_length: u64) -> Result<Moved, Error> {
    if same(from, to)? {
        return Ok(Moved::Itself);
    }
    move_routed(from, &[to], |_| 0, max_length)
}

/// [`move_to`], each task to the place of `to` that `route` names (the
/// partition of a queue of another partition count, by the task's group
/// or id), each held to `max_length`.
pub fn move_routed(
    from: Place<'_>,
    to: &[Place<'_>],
    route: impl Fn(&Peeked) -> usize,
    max_length: u64,
) -> Result<Moved, Error> {
    // A key of the wrong type on either side fails the move here, before
    // the pause: every script the move runs is tried with nothing to do.
    let counts = metrics(from.0, from.1)?;
    queued(from.0, from.1, 1)?;
    check_remove(from.0, from.1)?;
    for place in to {
        let _ = import(*place, &[], 0.0, 0)?;
    }
    let paused_here = pause(from.0, from.1)?;
    match move_all(
        from,
        (to, &route),
        counts.ready + counts.delayed,
        max_length,
    ) {
        Ok(Moved::Done { moved, .. }) => {
            if paused_here {
                resume(from.0, from.1)?;
            }
            Ok(Moved::Done {
                moved,
                paused: !paused_here,
            })
        }
        // Full: nothing of the last batch was added there.
        Ok(other) => {
            if paused_here {
                resume(from.0, from.1)?;
            }
            Ok(other)
        }
        // The last batch may be on both sides: the source stays paused, so
        // none of it runs twice.
        Err(e) => Err(e.with_note(
            "the move stopped half way and the source queue stays paused \
             (tasks of the last batch may be queued on both sides): \
             run the move again, then resume the queue",
        )),
    }
}

/// Which of the destinations a task goes to.
type Route<'a> = &'a dyn Fn(&Peeked) -> usize;

/// Moves up to `left` tasks.
fn move_all(
    from: Place<'_>,
    (to, route): (&[Place<'_>], Route<'_>),
    mut left: u64,
    max_length: u64,
) -> Result<Moved, Error> {
    let mut moved = 0;
    // A child moved to a queue of the same server takes its link to its
    // parent along (it ends there for its parent); moved to another server,
    // where its parent is not, it ends for its parent as removed.
    let mut carry = Vec::with_capacity(to.len());
    for place in to {
        carry.push(same_server(from, *place)?);
    }
    while left > 0 {
        let now = server_now(from.0)?;
        let tasks = queued(from.0, from.1, left.min(BATCH))?;
        if tasks.is_empty() {
            break;
        }
        for (i, place) in to.iter().enumerate() {
            let tasks: Vec<Peeked> = tasks
                .iter()
                .filter(|t| route(t).min(to.len() - 1) == i)
                .cloned()
                .collect();
            if tasks.is_empty() {
                continue;
            }
            let ids: Vec<Vec<u8>> = tasks.iter().map(|t| t.id.clone()).collect();
            let flows = flow::carried(from.0, from.1, &ids)?;
            let added = match import(*place, &tasks, now, max_length)? {
                Ok(added) => added,
                Err(length) => return Ok(Moved::Full { moved, length }),
            };
            // One by one, to know which: a task removed here meanwhile (by
            // an operator: no consumer takes any while the source is
            // paused) is taken back from there if this move added it. What
            // a task carries of its flow is written there first: cut short
            // in between, the task is on both sides, and whichever ends
            // first ends for its parent (the parent's step counts a child
            // once).
            for ((task, added), flow) in tasks.iter().zip(added).zip(&flows) {
                let ids = [task.id.clone()];
                if added {
                    flow::carry(*place, &task.id, flow, carry[i])?;
                }
                if remove_with(from.0, from.1, &ids, !carry[i])? == 1 {
                    moved += 1;
                    flow::forget_carried(from, &task.id, flow)?;
                } else if added {
                    remove_with(place.0, place.1, &ids, false)?;
                    flow::forget_carried(*place, &task.id, flow)?;
                }
            }
        }
        left = left.saturating_sub(tasks.len() as u64);
    }
    Ok(Moved::Done {
        moved,
        paused: false,
    })
}
