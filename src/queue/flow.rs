//! Workflows: a task (the parent) that waits for other tasks (its children,
//! on any queues of the same deployment) and runs once they have ended as
//! its policy says, with their results.
//!
//! - A flow is created in one script (`flow_add.lua`): the parents wait in
//!   their queue's `flows` hash (not reservable), the children without
//!   children of their own are queued, each child linked to its parent in
//!   its queue's `links` hash. On a Cluster its keys must share one slot.
//! - A child's end (acked, or a dead letter) turns its link into a record
//!   in its queue's `ended` hash in the same script that ends it
//!   (`queue_task.lua`: `queue_flow_end`), with its result or why it died.
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

/// The types of `flow_add.lua`'s keys for one task, in their order.
const ADD_TYPES: &[&str] = &[
    "zset", "hash", "hash", "zset", "list", "hash", "hash", "hash", "hash",
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
    /// Task `i` (of the list) is queued, leased, waiting or a child of a
    /// flow already: nothing was created.
    Busy(usize),
}

/// Creates the flow `nodes` (the root first, each parent before its
/// children) in one script. On a Cluster every task's keys must be in one
/// slot (queues sharing a hash tag): `Err` otherwise, as `NotOneSlot`.
pub fn add(config: &Config, nodes: &[Node<'_>]) -> Result<Result<Added, NotOneSlot>, Error> {
    let all: Vec<&[u8]> = nodes.iter().map(|n| n.keys.queue.as_slice()).collect();
    if !config.one_slot(&all) {
        return Ok(Err(NotOneSlot));
    }
    let token = uuid::Uuid::new_v4().simple().to_string();
    // Each queue (or partition) once, its keys and arguments; each task
    // names its own by index.
    let mut queues: Vec<&Node<'_>> = Vec::new();
    let of: Vec<usize> = nodes
        .iter()
        .map(
            |n| match queues.iter().position(|q| q.keys.queue == n.keys.queue) {
                Some(j) => j + 1,
                None => {
                    queues.push(n);
                    queues.len()
                }
            },
        )
        .collect();
    let reply: lease::Relayed<Vec<redis::Value>> = conn::with(config, |c| {
        let mut call = ADD.prepare_invoke();
        call.types_checked(ADD_TYPES);
        for q in &queues {
            let k = q.keys;
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
            ] {
                call.key(key);
            }
        }
        call.arg(wake_ms()).arg(&token).arg(queues.len());
        for q in &queues {
            call.arg(&q.keys.waiters)
                .arg(q.name)
                .arg(q.part)
                .arg(q.parts);
        }
        call.arg(nodes.len());
        for (n, j) in nodes.iter().zip(&of) {
            call.arg(*j)
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
    let word = |v: Option<&redis::Value>| match v {
        Some(redis::Value::BulkString(w)) => w.clone(),
        _ => Vec::new(),
    };
    let index = |v: &redis::Value| match v {
        redis::Value::Int(i) => usize::try_from(*i).ok().and_then(|i| i.checked_sub(1)),
        _ => None,
    };
    match word(reply.first()).as_slice() {
        b"busy" => Ok(Ok(Added::Busy(
            reply.get(1).and_then(index).unwrap_or_default(),
        ))),
        b"added" => {
            for n in nodes {
                if let Some(p) = n.parent.and_then(|p| nodes.get(p)) {
                    learn(config, n.keys, p.name, p.part, p.parts);
                }
            }
            for i in reply[1..].iter().filter_map(index) {
                if let Some(n) = nodes.get(i) {
                    register(config, n.keys)?;
                }
            }
            Ok(Ok(Added::Added))
        }
        _ => Err(conn::unknown_reply(config, "flow_add.lua", &reply)),
    }
}

/// A flow's queues are in several slots of a Cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotOneSlot;

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
