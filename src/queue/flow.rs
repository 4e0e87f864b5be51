//! Workflows: a task (the parent) that waits for other tasks (its children,
//! on any queues of the same deployment) and runs once they have ended as
//! its policy says, with their results.
//!
//! - A flow is created in one script (`flow_add.lua`): the parents wait in
//!   their queue's `flows` hash (not reservable), the children without
//!   children of their own are queued, each child linked to its parent in
//!   its queue's `links` hash. On a Cluster, a flow whose queues are in
//!   several slots is made in one step per slot ([`add`]).
//! - A child's ack counts it in its parent's count in the same script
//!   (`flow_end.lua`) when the parent's queue is in its slot and the
//!   worker knows it (`Parents`). Any other end (the one that releases
//!   the parent, a dead or removed child, a parent in another slot) turns
//!   its link into a record in its queue's `ended` hash in the same script
//!   that ends it (`queue_task.lua`: `queue_flow_end`), with its result or
//!   why it died, and is relayed to the caller.
//! - The caller then hands those records to the parents' queues
//!   ([`deliver`]: `flow_settle.lua`, in the parent's slot, idempotent) and
//!   forgets them. A caller that goes in between leaves them there: the next
//!   reserve, ack or nack on the child's queue finds them and hands them
//!   on. So a parent is released exactly once, whatever slot each child is
//!   in, and no result is lost.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

use super::{Keys, Tags, lease, register, wake_ms};
use crate::config::Config;
use crate::conn::{self, Error};
use crate::scripts::{Invocation, Script, script};

static ADD: LazyLock<Script> = script!("flow_add.lua");
static SETTLE: LazyLock<Script> = script!("flow_settle.lua");
static READ: LazyLock<Script> = script!("flow_read.lua");
static STAGE: LazyLock<Script> = script!("flow_stage.lua");

/// The types of `flow_add.lua`'s keys for one task, in their order.
const ADD_TYPES: &[&str] = &[
    "zset", "hash", "hash", "zset", "list", "hash", "hash", "hash", "hash", "hash",
];

/// The types of `flow_settle.lua`'s keys: a queue's, then its waiting
/// parents and their children, and the children's queue's ended hash (as
/// of an ack's keys with its [`Parents`]).
pub(crate) static SETTLE_TYPES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut types = super::TYPES.to_vec();
    types.extend(["hash", "hash", "hash"]);
    types
});

/// What a parent does when one of its children goes to the dead letters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnChildFailure {
    /// The parent goes to the dead letters too, with a reason naming the
    /// child.
    #[default]
    Fail,
    /// The parent runs once its other children have ended.
    Ignore,
    /// The parent runs at once.
    Continue,
}

impl OnChildFailure {
    /// The policy named `name` ('fail', 'ignore', 'continue').
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "fail" => OnChildFailure::Fail,
            "ignore" => OnChildFailure::Ignore,
            "continue" => OnChildFailure::Continue,
            _ => return None,
        })
    }

    fn arg(self) -> &'static str {
        match self {
            OnChildFailure::Fail => "fail",
            OnChildFailure::Ignore => "ignore",
            OnChildFailure::Continue => "continue",
        }
    }
}

/// One task of a flow to create.
pub struct Node<'a> {
    /// Its queue's name, partition count and keys (its partition's).
    pub name: &'a [u8],
    pub part: usize,
    pub parts: usize,
    pub keys: &'a Keys,
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
    /// The index of its parent in the list (None: the root, first).
    pub parent: Option<usize>,
    /// For a task with children: what a child's failure does.
    pub on_failure: OnChildFailure,
    /// Seconds it waits once it may run (the root's `delay`; 0 for the
    /// others).
    pub delay: f64,
    /// Its tags and group (the root's; none for the others).
    pub tags: &'a [u8],
}

/// What creating a flow did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Added {
    Added,
    /// Task `i` (of the list) is queued, leased, waiting, being created or
    /// a child of a flow already: nothing was created.
    Busy(usize),
    /// A flow across slots whose creation stalled past [`STALLED`] was
    /// undone by another caller meanwhile: nothing was created.
    Undone,
}

/// How long a flow across slots may be on its way before a later caller
/// takes it for abandoned and finishes it (see [`tend`]).
pub const STALLED: std::time::Duration = std::time::Duration::from_secs(10);

/// Creates the flow `nodes` (the root first, each parent before its
/// children). In one script when every task's keys are in one slot (on
/// one server, always); across the slots of a Cluster in steps
/// (`flow_stage.lua`): each slot's tasks are staged (the parents waiting,
/// the links, the leaves held back), the flow's record in its root queue
/// goes from staging to committing, then each queue's leaves are queued.
/// A slot that refuses a task undoes the others; a creator that goes half
/// way leaves the record, and [`tend`] finishes the flow the way it was
/// going. Either way no child runs before every parent waits for it.
pub fn add(config: &Config, nodes: &[Node<'_>]) -> Result<Added, Error> {
    add_halting(config, nodes, usize::MAX)
}

/// [`add`] by a creator that stops for good after `steps` of its scripts
/// across slots, as a process killed there does (for the tests of what
/// [`finish_stalled`] does then): `Err` when it stopped.
#[doc(hidden)]
pub fn add_halting(config: &Config, nodes: &[Node<'_>], steps: usize) -> Result<Added, Error> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    // Each queue (or partition) once; each task names its own by index.
    let mut queues: Vec<&Node<'_>> = Vec::new();
    let of: Vec<usize> = nodes
        .iter()
        .map(
            |n| match queues.iter().position(|q| q.keys.queue == n.keys.queue) {
                Some(j) => j,
                None => {
                    queues.push(n);
                    queues.len() - 1
                }
            },
        )
        .collect();
    // The queues by slot, the root's first (the root's queue is queues[0]).
    let mut slots: Vec<Vec<usize>> = Vec::new();
    for (j, q) in queues.iter().enumerate() {
        let same = |g: &Vec<usize>| config.one_slot(&[&queues[g[0]].keys.queue, &q.keys.queue]);
        match slots.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(j),
            None => slots.push(vec![j]),
        }
    }
    let flow = Flow {
        token: &token,
        nodes,
        queues: &queues,
        of: &of,
        steps: std::cell::Cell::new(steps),
    };
    let mut unregistered = Vec::new();
    if slots.len() == 1 {
        match flow.stage(config, "whole", &slots[0], false)? {
            Err(i) => return Ok(Added::Busy(i)),
            Ok(new) => unregistered.extend(new),
        }
    } else {
        for (g, group) in slots.iter().enumerate() {
            match flow.stage(config, "stage", group, g == 0) {
                Ok(Ok(new)) => unregistered.extend(new),
                refused => {
                    // Undone in the slots staged so far, this one too (a
                    // reply lost may have staged it); the record goes last,
                    // so that a failure here leaves it to tend().
                    let undone = slots[..=g]
                        .iter()
                        .flatten()
                        .try_for_each(|&j| flow.step(config, "drop", j).map(drop));
                    if undone.is_ok() {
                        let _ = flow.journal(config, "done");
                    }
                    return Ok(Added::Busy(refused?.err().unwrap_or_default()));
                }
            }
        }
        if flow.journal(config, "start")? == 0 {
            for j in 0..queues.len() {
                flow.step(config, "drop", j)?;
            }
            flow.journal(config, "done")?;
            return Ok(Added::Undone);
        }
        for j in 0..queues.len() {
            if flow.step(config, "commit", j)? == 1 {
                unregistered.push(j);
            }
        }
        flow.journal(config, "done")?;
    }
    for n in nodes {
        if let Some(p) = n.parent.and_then(|p| nodes.get(p)) {
            learn(config, n.keys, p.name, p.part, p.parts);
        }
    }
    for j in unregistered {
        register(config, queues[j].keys)?;
    }
    Ok(Added::Added)
}

/// A flow being created: its token, tasks, and queues (each task's queue
/// is `queues[of[i]]`).
struct Flow<'a, 'n> {
    token: &'a str,
    nodes: &'a [Node<'n>],
    queues: &'a [&'a Node<'n>],
    of: &'a [usize],
    /// How many more scripts its creator runs (see [`add_halting`]).
    steps: std::cell::Cell<usize>,
}

/// The keys of a queue that `flow_add.lua` and `flow_stage.lua` take, in
/// their order.
fn flow_keys(call: &mut Invocation<'_>, k: &Keys) {
    for key in [
        &k.queue,
        &k.payloads,
        &k.attempts,
        &k.leased,
        &k.line,
        &k.stats,
        &k.flows,
        &k.flow_children,
        &k.links,
        &k.staged,
    ] {
        call.key(key);
    }
}

impl Flow<'_, '_> {
    /// `flow_add.lua` in `mode` for the queues `here` (of one slot), with
    /// the flow's record when `root`: the queues never registered, or the
    /// index of a task that is busy.
    fn stage(
        &self,
        config: &Config,
        mode: &str,
        here: &[usize],
        root: bool,
    ) -> Result<Result<Vec<usize>, usize>, Error> {
        self.go_on(config)?;
        let reply: lease::Relayed<Vec<redis::Value>> = conn::with(config, |c| {
            let mut call = ADD.prepare_invoke();
            call.types_checked(ADD_TYPES);
            for &j in here {
                flow_keys(&mut call, self.queues[j].keys);
            }
            if root {
                call.key(&self.queues[0].keys.making);
            }
            call.arg(wake_ms())
                .arg(self.token)
                .arg(mode)
                .arg(self.queues.len());
            for (j, q) in self.queues.iter().enumerate() {
                let place = here.iter().position(|&h| h == j).map_or(0, |p| p + 1);
                call.arg(&q.keys.waiters)
                    .arg(q.name)
                    .arg(q.part)
                    .arg(q.parts)
                    .arg(place);
            }
            call.arg(self.nodes.len());
            for (n, j) in self.nodes.iter().zip(self.of) {
                call.arg(j + 1)
                    .arg(&n.id)
                    .arg(n.payload.as_deref().unwrap_or_default())
                    .arg(if n.payload.is_some() { "1" } else { "0" })
                    .arg(n.parent.map_or(0, |p| p + 1))
                    .arg(n.on_failure.arg())
                    .arg(super::score_arg(n.delay))
                    .arg(n.tags);
            }
            call.invoke(c)
        })?;
        let lease::Relayed(reply, relays) = reply;
        lease::relay(config, &relays);
        let index = |v: &redis::Value| match v {
            redis::Value::Int(i) => usize::try_from(*i).ok().and_then(|i| i.checked_sub(1)),
            _ => None,
        };
        match reply.first() {
            Some(redis::Value::BulkString(w)) if w == b"busy" => {
                Ok(Err(reply.get(1).and_then(index).unwrap_or_default()))
            }
            Some(redis::Value::BulkString(w)) if w == b"added" => Ok(Ok(reply[1..]
                .iter()
                .filter_map(index)
                .filter_map(|i| self.of.get(i).copied())
                .collect())),
            _ => Err(conn::unknown_reply(config, "flow_add.lua", &reply)),
        }
    }

    /// `flow_stage.lua`'s `op` ('commit', 'drop') on the queue `j`.
    fn step(&self, config: &Config, op: &str, j: usize) -> Result<u64, Error> {
        self.go_on(config)?;
        step(config, self.queues[j].keys, op, self.token)
    }

    /// [`journal`]'s `op` on the flow's record.
    fn journal(&self, config: &Config, op: &str) -> Result<u64, Error> {
        self.go_on(config)?;
        journal(config, self.queues[0].keys, op, self.token)
    }

    /// Counts a script of the creator's; `Err` once it has stopped.
    fn go_on(&self, config: &Config) -> Result<(), Error> {
        match self.steps.get() {
            0 => Err(Error::Connection {
                server: config.server.clone(),
                cause: "the creator stopped here (add_halting)".into(),
            }),
            n => {
                self.steps.set(n - 1);
                Ok(())
            }
        }
    }
}

/// `flow_stage.lua`'s `op` ('commit', 'drop') for the flow `token` on the
/// queue `keys`.
fn step(config: &Config, keys: &Keys, op: &str, token: &str) -> Result<u64, Error> {
    conn::with(config, |c| {
        let mut call = STAGE.prepare_invoke();
        call.types_checked(ADD_TYPES);
        flow_keys(&mut call, keys);
        call.arg(op)
            .arg(token)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .invoke(c)
    })
}

/// `flow_stage.lua`'s `op` ('start', 'abandon', 'done') on the record of
/// the flow `token` in its root queue `root`.
fn journal(config: &Config, root: &Keys, op: &str, token: &str) -> Result<u64, Error> {
    conn::with(config, |c| {
        STAGE.key(&root.making).arg(op).arg(token).invoke(c)
    })
}

/// When each root queue's flows being made were last looked at by this
/// process.
static TENDED: LazyLock<Mutex<HashMap<Vec<u8>, std::time::Instant>>> =
    LazyLock::new(Default::default);

/// Finishes the flows across slots whose creation stalled past
/// [`STALLED`] in the root queue `keys`, the way each was going (see
/// [`finish_stalled`]): called by a reserve that saw flows being made
/// there, at most once per [`STALLED`] per queue and process. Best
/// effort: what fails stays for the next call.
pub(crate) fn tend(config: &Config, keys: &Keys) {
    if let Ok(mut tended) = TENDED.lock() {
        let now = std::time::Instant::now();
        if tended
            .get(&keys.making)
            .is_some_and(|at| now.duration_since(*at) < STALLED)
        {
            return;
        }
        if tended.len() >= 1024 {
            tended.clear();
        }
        tended.insert(keys.making.clone(), now);
    }
    let _ = finish_stalled(config, keys, STALLED);
}

/// Finishes the flows across slots of the root queue `keys` being made
/// since more than `after`: forward (each queue's leaves queued) when it
/// was committing, back (what each slot staged undone) when it was still
/// staging. Returns how many it finished.
pub fn finish_stalled(
    config: &Config,
    keys: &Keys,
    after: std::time::Duration,
) -> Result<usize, Error> {
    let old: Vec<Vec<Vec<u8>>> = conn::with(config, |c| {
        STAGE
            .key(&keys.making)
            .arg("old")
            .arg(after.as_millis() as u64)
            .invoke(c)
    })?;
    let mut finished = 0;
    for record in &old {
        let [token, state, rest @ ..] = record.as_slice() else {
            continue;
        };
        let token = String::from_utf8_lossy(token);
        let forward = state == b"committing"
            || (state == b"staging" && journal(config, keys, "abandon", &token)? == 0);
        for q in rest.chunks_exact(3) {
            let number = |v: &[u8]| std::str::from_utf8(v).ok()?.parse::<usize>().ok();
            let (Some(part), Some(parts)) = (number(&q[1]), number(&q[2])) else {
                continue;
            };
            let queue = if parts <= 1 {
                Keys::new(&config.prefix, &q[0])
            } else {
                Keys::partition(&config.prefix, &q[0], part, parts)
            };
            let op = if forward { "commit" } else { "drop" };
            if step(config, &queue, op, &token)? == 1 && forward {
                register(config, &queue)?;
            }
        }
        journal(config, keys, "done", &token)?;
        finished += 1;
    }
    Ok(finished)
}

/// The queue (or partition) of parents whose children a queue's acks
/// count in place (`queue_parents` in queue_task.lua): the one its
/// children's last ends named, or its flow's when this process created
/// it. A guess: an ack counts in place only the ends whose link names this
/// queue, and relays the others.
#[derive(Clone, Debug)]
pub(crate) struct Parents {
    pub name: Vec<u8>,
    pub part: usize,
    pub parts: usize,
    pub keys: Keys,
}

/// [`Parents`] by the key of the children's queue (its prefix in it).
static PARENTS: LazyLock<Mutex<HashMap<Vec<u8>, Parents>>> = LazyLock::new(Default::default);

/// The [`Parents`] whose children are in the queue `keys`, if known and in
/// its slot.
pub(crate) fn parents(config: &Config, keys: &Keys) -> Option<Parents> {
    let known = PARENTS.lock().ok()?.get(&keys.queue).cloned()?;
    config
        .one_slot(&[&keys.queue, &known.keys.flows])
        .then_some(known)
}

/// Remembers that children of the queue `keys` have the parents' queue
/// `name` (its partition `part` of `parts`).
fn learn(config: &Config, keys: &Keys, name: &[u8], part: usize, parts: usize) {
    let Ok(mut known) = PARENTS.lock() else {
        return;
    };
    if known
        .get(&keys.queue)
        .is_some_and(|p| p.name == name && p.part == part && p.parts == parts)
    {
        return;
    }
    // A bound for processes that see many queues: they learn again.
    if known.len() >= 1024 {
        known.clear();
    }
    let parent_keys = if parts <= 1 {
        Keys::new(&config.prefix, name)
    } else {
        Keys::partition(&config.prefix, name, part, parts)
    };
    known.insert(
        keys.queue.clone(),
        Parents {
            name: name.to_vec(),
            part,
            parts,
            keys: parent_keys,
        },
    );
}

/// Whether a script's relayed work (`queue_relayed`) says children ended
/// there (see [`deliver`]).
pub(crate) fn told(relays: &[Vec<u8>]) -> bool {
    relays.chunks_exact(2).any(|pair| pair[0] == b"ended")
}

/// A child's end, as its queue's `ended` hash holds it.
struct Ended {
    child: Vec<u8>,
    stored: Vec<u8>,
    parent_queue: Vec<u8>,
    part: usize,
    parts: usize,
    parent: Vec<u8>,
    token: Vec<u8>,
    /// How its parent names it (`<queue>/<id>`).
    name: Vec<u8>,
    outcome: Vec<u8>,
    value: Option<Vec<u8>>,
}

/// A child's end as `flow_read.lua` and the relays give it: [`Ended`]'s
/// fields in their order.
type Row = (
    Vec<u8>,
    Vec<u8>,
    Vec<u8>,
    usize,
    usize,
    Vec<u8>,
    Vec<u8>,
    Vec<u8>,
    Vec<u8>,
    Option<Vec<u8>>,
);

impl From<Row> for Ended {
    fn from(row: Row) -> Self {
        let (child, stored, parent_queue, part, parts, parent, token, name, outcome, value) = row;
        Ended {
            child,
            stored,
            parent_queue,
            part,
            parts,
            parent,
            token,
            name,
            outcome,
            value,
        }
    }
}

/// The ends a script relayed (`queue_flow_end`: `ended` and the child's
/// id, then the stored record and its 8 fields, the value marked).
fn relayed(relays: &[Vec<u8>]) -> Vec<Ended> {
    let mut ends = Vec::new();
    let mut pairs = relays.chunks_exact(2);
    while let Some(pair) = pairs.next() {
        if pair[0] != b"ended" {
            continue;
        }
        let f: Vec<&[u8]> = pairs.by_ref().take(9).map(|p| p[1].as_slice()).collect();
        let number = |v: &[u8]| std::str::from_utf8(v).ok()?.parse().ok();
        let (Some(part), Some(parts)) = (
            f.get(2).copied().and_then(number),
            f.get(3).copied().and_then(number),
        ) else {
            continue;
        };
        let Some(value) = f.get(8) else {
            continue;
        };
        let text = |i: usize| f[i].to_vec();
        ends.push(Ended::from((
            pair[1].clone(),
            text(0),
            text(1),
            part,
            parts,
            text(4),
            text(5),
            text(6),
            text(7),
            value.split_first().map(|(_, v)| v.to_vec()),
        )));
    }
    ends
}

/// The most pages of ended children one [`deliver`] goes through (about
/// 100 each): the rest wait for the next call on the queue.
const PAGES: usize = 10;

/// Hands the children that ended in the queue `keys` to their parents
/// (`flow_settle.lua`), then forgets them: those the script whose
/// `relays` are given ended, or, when it relayed none, every end the
/// queue holds (left by a caller that went before it was done). Best
/// effort: what fails here stays in the `ended` hash, and the next call on
/// the queue that finds it does it again (each step is idempotent).
pub(crate) fn deliver(config: &Config, keys: &Keys, relays: &[Vec<u8>]) {
    let ends = relayed(relays);
    let _ = if ends.is_empty() {
        deliver_all(config, keys)
    } else {
        hand(config, keys, &ends)
    };
}

fn deliver_all(config: &Config, keys: &Keys) -> Result<(), Error> {
    let mut cursor = b"0".to_vec();
    for _ in 0..PAGES {
        let (next, ended) = ended_page(config, keys, &cursor)?;
        hand(config, keys, &ended)?;
        if next == b"0" {
            break;
        }
        cursor = next;
    }
    Ok(())
}

/// Hands `ended` (of the queue `keys`) to their parents' queues, and
/// forgets them: in the parent's step when it runs in the same slot, after
/// it otherwise.
fn hand(config: &Config, keys: &Keys, ended: &[Ended]) -> Result<(), Error> {
    let mut by_parent: BTreeMap<(&[u8], usize, usize), Vec<&Ended>> = BTreeMap::new();
    for e in ended {
        by_parent
            .entry((&e.parent_queue, e.part, e.parts))
            .or_default()
            .push(e);
    }
    let mut apart = Vec::new();
    for ((name, part, parts), ends) in by_parent {
        learn(config, keys, name, part, parts);
        let parent_keys = if parts <= 1 {
            Keys::new(&config.prefix, name)
        } else {
            Keys::partition(&config.prefix, name, part, parts)
        };
        let here = config.one_slot(&[&keys.ended, &parent_keys.queue]);
        settle(config, &parent_keys, &ends, here.then_some(keys))?;
        if !here {
            apart.extend(ends);
        }
    }
    if apart.is_empty() {
        return Ok(());
    }
    conn::with(config, |c| {
        let mut call = READ.key(&keys.ended);
        call.arg("forget");
        for e in &apart {
            call.arg(&e.child).arg(&e.stored);
        }
        call.invoke::<u64>(c)
    })?;
    Ok(())
}

/// One page of the `ended` hash of `keys` from `cursor`: the next cursor,
/// and the children's ends.
fn ended_page(config: &Config, keys: &Keys, cursor: &[u8]) -> Result<(Vec<u8>, Vec<Ended>), Error> {
    let mut reply: Vec<redis::Value> = conn::with(config, |c| {
        READ.key(&keys.ended).arg("ended").arg(cursor).invoke(c)
    })?;
    if reply.is_empty() {
        return Err(conn::unknown_reply(config, "flow_read.lua", &reply));
    }
    let rows = reply.split_off(1);
    let next: Vec<u8> = redis::from_redis_value(reply.remove(0))
        .map_err(|e| conn::unknown_reply(config, "flow_read.lua", &e))?;
    let rows: Vec<Row> = redis::from_redis_value(redis::Value::Array(rows))
        .map_err(|e| conn::unknown_reply(config, "flow_read.lua", &e))?;
    let ended = rows.into_iter().map(Ended::from).collect();
    Ok((next, ended))
}

/// `flow_settle.lua` on the parents' queue `keys` for `ends`, which it
/// forgets from their queue `from` when given (one slot).
fn settle(config: &Config, keys: &Keys, ends: &[&Ended], from: Option<&Keys>) -> Result<(), Error> {
    for chunk in ends.chunks(super::lease::BATCH as usize) {
        let lease::Relayed(_, relays): lease::Relayed<u64> = conn::with(config, |c| {
            let mut call = keys.call_ending(&SETTLE);
            call.types_checked(&SETTLE_TYPES);
            call.key(&keys.flows).key(&keys.flow_children);
            if let Some(from) = from {
                call.key(&from.ended);
            }
            call.arg(&keys.waiters).arg(wake_ms());
            for e in chunk {
                call.arg(&e.parent)
                    .arg(&e.token)
                    .arg(&e.name)
                    .arg(&e.outcome)
                    .arg(e.value.as_deref().unwrap_or_default())
                    .arg(if e.value.is_some() { "1" } else { "0" })
                    .arg(&e.child)
                    .arg(&e.stored);
            }
            call.invoke(c)
        })?;
        lease::relay(config, &relays);
    }
    Ok(())
}

/// What a task moving to another queue carries of its flow: its link to its
/// parent (a child's) and the results of its children (a released
/// parent's), as its queue keeps them.
pub(crate) struct Carried {
    link: Option<Vec<u8>>,
    results: Option<Vec<u8>>,
}

/// What the tasks `ids` of the queue `keys` would carry (one round trip).
pub(crate) fn carried(
    config: &Config,
    keys: &Keys,
    ids: &[Vec<u8>],
) -> Result<Vec<Carried>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    type Fields = Vec<Option<Vec<u8>>>;
    let (links, results): (Fields, Fields) = conn::with(config, |c| {
        let mut call = Invocation::keys_of(&["hash", "hash"]);
        call.key(&keys.links).key(&keys.child_results);
        redis::pipe()
            .cmd("HMGET")
            .arg(&keys.links)
            .arg(ids)
            .cmd("HMGET")
            .arg(&keys.child_results)
            .arg(ids)
            .query(c)
            .map_err(|e| call.naming(c, e))
    })?;
    Ok(links
        .into_iter()
        .zip(results)
        .map(|(link, results)| Carried { link, results })
        .collect())
}

/// Writes what the task `id` carries beside the queue `to` (its link only
/// when `link`: a queue of its parent's server).
pub(crate) fn carry(
    to: (&Config, &Keys),
    id: &[u8],
    carried: &Carried,
    link: bool,
) -> Result<(), Error> {
    let (config, keys) = to;
    let link = carried.link.as_ref().filter(|_| link);
    if link.is_none() && carried.results.is_none() {
        return Ok(());
    }
    conn::with(config, |c| {
        let mut call = Invocation::keys_of(&["hash", "hash"]);
        call.key(&keys.links).key(&keys.child_results);
        let mut pipe = redis::pipe();
        if let Some(link) = link {
            pipe.cmd("HSET").arg(&keys.links).arg(id).arg(link).ignore();
        }
        if let Some(results) = &carried.results {
            pipe.cmd("HSET")
                .arg(&keys.child_results)
                .arg(id)
                .arg(results)
                .ignore();
        }
        pipe.query::<()>(c).map_err(|e| call.naming(c, e))
    })
}

/// Deletes what the task `id` carried beside the queue `at`, where it no
/// longer is (the source after a move; the destination of a task taken
/// back), unless it is another flow's since.
pub(crate) fn forget_carried(
    at: (&Config, &Keys),
    id: &[u8],
    carried: &Carried,
) -> Result<(), Error> {
    let (config, keys) = at;
    if carried.link.is_none() && carried.results.is_none() {
        return Ok(());
    }
    conn::with(config, |c| {
        let mut call = READ.prepare_invoke();
        call.key(&keys.links)
            .key(&keys.child_results)
            .arg("forget-carried")
            .arg(id)
            .arg(carried.link.as_deref().unwrap_or_default())
            .arg(carried.results.as_deref().unwrap_or_default());
        call.invoke::<u64>(c)
    })?;
    Ok(())
}

/// One child of a parent, as the parent sees it once released.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Child {
    /// `<queue>/<id>`.
    pub name: Vec<u8>,
    /// `acked`, `dead`, or `waiting` (not ended when the parent was
    /// released: policy `continue`).
    pub outcome: Vec<u8>,
    /// Its result (acked), or why it died.
    pub value: Option<Vec<u8>>,
}

/// The children of the released parent `id` of the queue `keys`, in their
/// order (none: it is no parent, or not released yet).
pub fn children(config: &Config, keys: &Keys, id: &[u8]) -> Result<Vec<Child>, Error> {
    let fields = record(config, &keys.child_results, id)?.unwrap_or_default();
    Ok(fields
        .chunks_exact(3)
        .map(|f| Child {
            name: f[0].clone().unwrap_or_default(),
            outcome: f[1].clone().unwrap_or_default(),
            value: f[2].clone(),
        })
        .collect())
}

/// A parent waiting for its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// How many of its children have not ended yet.
    pub left: u64,
    pub payload: Option<Vec<u8>>,
    /// Its stored tags and group (see [`Tags`]).
    pub tags: Vec<Vec<u8>>,
    pub group: Option<Vec<u8>>,
    /// Its children in their order, each `waiting` or how it ended, with
    /// its result or why it died.
    pub children: Vec<Child>,
}

/// The parent `id` of the queue `keys` while it waits for its children.
pub fn waiting(config: &Config, keys: &Keys, id: &[u8]) -> Result<Option<Waiting>, Error> {
    type Reply = Option<(Vec<Option<Vec<u8>>>, Vec<Option<Vec<u8>>>)>;
    let reply: Reply = conn::with(config, |c| {
        READ.key(&keys.flows)
            .key(&keys.flow_children)
            .arg("waiting")
            .arg(id)
            .invoke(c)
    })?;
    let Some((fields, ends)) = reply else {
        return Ok(None);
    };
    let text = |i: usize| fields.get(i).cloned().flatten();
    let left = text(2)
        .and_then(|l| std::str::from_utf8(&l).ok()?.parse().ok())
        .unwrap_or_default();
    let (tags, group) = Tags::parts(text(4).as_deref());
    let children = fields
        .iter()
        .skip(6)
        .zip(ends.chunks(2))
        .map(|(name, end)| Child {
            name: name.clone().unwrap_or_default(),
            outcome: end[0].clone().unwrap_or_else(|| b"waiting".to_vec()),
            value: end.get(1).cloned().flatten(),
        })
        .collect();
    Ok(Some(Waiting {
        left,
        payload: text(5),
        tags,
        group,
        children,
    }))
}

/// The fields of the record `field` of the hash `key` (see
/// `queue_record.lua`), or None when it has none.
fn record(
    config: &Config,
    key: &[u8],
    field: &[u8],
) -> Result<Option<Vec<Option<Vec<u8>>>>, Error> {
    conn::with(config, |c| READ.key(key).arg("record").arg(field).invoke(c))
}
