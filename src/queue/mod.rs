//! The queue engine: a sorted set of task ids scored by due time in seconds
//! on the Redis server's clock (the seed's `RedisQueue` layout), and beside
//! it, in keys of the same hash slot, payloads, attempts, leases and dead
//! letters (`lease`). Every operation is one Lua script, so no lock is
//! needed around it.

pub mod flow;
pub mod handle;
pub mod lease;
mod named;

pub use named::{Got, Held, MAX_PARTITIONS, Queue, reserve};

use std::sync::LazyLock;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{NumberOr, Script, script};

static PUT: LazyLock<Script> = script!("queue_put.lua");
static DEQUEUE: LazyLock<Script> = script!("queue_dequeue.lua");
static DUE: LazyLock<Script> = script!("queue_due.lua");
/// The types of the keys of the scripts that move tasks, in their order
/// (see `Keys::call`; `QUEUE_TYPES` in `scripts/lib/queue_task.lua`, which a
/// test checks against this).
const TYPES: &[&str] = &[
    "zset", "hash", "hash", "zset", "hash", "hash", "zset", "hash", "list", "hash", "hash", "hash",
    "hash", "zset", "hash", "list", "hash", "hash", "hash", "hash",
];

/// How long a wake-up waits for the consumer it was pushed to, in ms (a
/// consumer keeps its place that long).
pub fn wake_ms() -> u64 {
    crate::time::millis(crate::wait::PLACE)
}

/// A task as stored: its id and its due time (the score).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub id: Vec<u8>,
    pub score: f64,
}

/// A score as text that parses back to the same `f64` (Rust's shortest
/// round-trip form; Redis and Lua read it with strtod).
pub fn score_arg(score: f64) -> String {
    format!("{score}")
}

/// The keys of one queue (see `keys`): the seed's sorted set is the queue
/// itself; the others share its hash slot.
#[derive(Clone, Debug, PartialEq)]
pub struct Keys {
    pub queue: Vec<u8>,
    pub payloads: Vec<u8>,
    pub attempts: Vec<u8>,
    pub leased: Vec<u8>,
    pub leases: Vec<u8>,
    /// Tasks enqueued while their id was leased, waiting for the lease to
    /// end (see `scripts/lib/queue_task.lua`).
    pub reruns: Vec<u8>,
    pub dead: Vec<u8>,
    /// The dead letters' own attempts and payloads.
    pub graves: Vec<u8>,
    /// What happened to its tasks: counters, and their recent history.
    pub stats: Vec<u8>,
    /// Why a task's last attempt failed, and why a dead letter died.
    pub failures: Vec<u8>,
    pub dead_failures: Vec<u8>,
    /// The tags its producers gave its tasks, and their groups (see
    /// [`Tags`]).
    pub tags: Vec<u8>,
    /// The groups whose tasks `reserve()` takes in turn, by their last
    /// turn; each group's queued tasks are hinted in a list the scripts
    /// name from [`Keys::waiters`] (see `scripts/lib/queue_task.lua`).
    pub groups: Vec<u8>,
    /// The processes consuming it: when each was last seen, and the tasks
    /// each acked (see `lease::workers`).
    pub workers: Vec<u8>,
    pub worked: Vec<u8>,
    /// The queue's recent attempts, newest first (see `lease::recent`).
    pub recent: Vec<u8>,
    /// Each group's leased tasks, counted while the queue holds its
    /// groups to a concurrency (see `lease::set_group_concurrency`).
    pub group_leased: Vec<u8>,
    /// The line of consumers waiting for tasks, and the prefix of their
    /// keys (see `wait`).
    pub line: Vec<u8>,
    pub waiters: Vec<u8>,
    /// Workflows (see `flow`): each child's link to its parent, the
    /// children that ended and wait for their parent's step, a released
    /// parent's children's results, the parents waiting for their
    /// children, and each waiting parent's children.
    pub links: Vec<u8>,
    pub ended: Vec<u8>,
    pub child_results: Vec<u8>,
    pub flows: Vec<u8>,
    pub flow_children: Vec<u8>,
    /// A flow across Cluster slots on its way (see `flow::add`): the tasks
    /// of each flow staged in this queue, and (in its root's queue) the
    /// flows being made.
    pub staged: Vec<u8>,
    pub making: Vec<u8>,
}

/// The set of every queue's key (before the prefix), kept by the enqueue:
/// the first enqueue of a queue adds it.
pub const REGISTRY: &[u8] = b"redislock:queues";

/// The set of the key prefixes whose registries ([`REGISTRY`]) hold queues
/// on a server, under no prefix: an operator's tools find every app's
/// queues, whatever prefix each app uses (Laravel's `laravel_database_`).
pub const PREFIXES: &[u8] = b"redislock:prefixes";

impl Keys {
    /// The queue `name` under `prefix`.
    pub fn new(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(Place::new(prefix, Kind::Queue, name))
    }

    /// The keys of partition `i` of `n` of the queue `name` (see
    /// [`Place::shard`]).
    pub fn partition(prefix: &[u8], name: &[u8], i: usize, n: usize) -> Self {
        Self::at(Place::shard(prefix, Kind::Queue, name, i, n))
    }

    fn at(place: Place) -> Self {
        Keys {
            payloads: place.beside(":payloads"),
            attempts: place.beside(":attempts"),
            leased: place.beside(":leased"),
            leases: place.beside(":leases"),
            reruns: place.beside(":reruns"),
            dead: place.beside(":dead"),
            graves: place.beside(":dead-tasks"),
            stats: place.beside(":stats"),
            failures: place.beside(":failures"),
            dead_failures: place.beside(":dead-failures"),
            tags: place.beside(":tags"),
            groups: place.beside(":groups"),
            workers: place.beside(":workers"),
            worked: place.beside(":workers-done"),
            recent: place.beside(":recent"),
            group_leased: place.beside(":group-leased"),
            line: place.beside(":line"),
            waiters: place.beside(":"),
            links: place.beside(":links"),
            ended: place.beside(":ended"),
            child_results: place.beside(":child-results"),
            flows: place.beside(":flows"),
            flow_children: place.beside(":flow-children"),
            staged: place.beside(":flow-staged"),
            making: place.beside(":flow-making"),
            queue: place.main,
        }
    }

    /// A call of a script that moves tasks, with the keys they all take,
    /// in their order (see `scripts/lib/queue_task.lua`); a command's own
    /// `WRONGTYPE` error is told naming the key ([`TYPES`]).
    pub(crate) fn call<'a>(&self, script: &'a Script) -> crate::scripts::Invocation<'a> {
        let mut call = script.prepare_invoke();
        call.types_checked(TYPES);
        for key in [
            &self.queue,
            &self.payloads,
            &self.attempts,
            &self.leased,
            &self.leases,
            &self.reruns,
            &self.dead,
            &self.graves,
            &self.line,
            &self.stats,
            &self.failures,
            &self.dead_failures,
            &self.tags,
            &self.groups,
        ] {
            call.key(key);
        }
        call
    }

    /// A call of a script that ends attempts (ack, nack, reserve): the
    /// keys of [`Keys::call`], then the tasks each worker acked, the
    /// recent attempts, the leased tasks per group, and the links, ended
    /// children and child results of workflows.
    pub(crate) fn call_ending<'a>(&self, script: &'a Script) -> crate::scripts::Invocation<'a> {
        let mut call = self.call(script);
        call.key(&self.worked)
            .key(&self.recent)
            .key(&self.group_leased)
            .key(&self.links)
            .key(&self.ended)
            .key(&self.child_results);
        call
    }
}

/// What to do when an enqueued id is already queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Keep the queued task (the seed's behaviour).
    Keep,
    /// Replace it: the new due time and payload.
    Replace,
    /// Whichever is due first wins.
    Earliest,
    /// Whichever is due last wins.
    Latest,
}

impl Policy {
    fn arg(self) -> &'static str {
        match self {
            Policy::Keep => "keep",
            Policy::Replace => "replace",
            Policy::Earliest => "earliest",
            Policy::Latest => "latest",
        }
    }
}

/// What an enqueue did with one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ignored,
    Added,
    Updated,
}

/// A task to enqueue.
#[derive(Clone, Debug, PartialEq)]
pub struct NewTask {
    pub id: Vec<u8>,
    pub payload: Option<Vec<u8>>,
}

/// The tags a producer gives tasks, so that operators find them
/// (`lease::tagged`, the recent attempts): at most [`Tags::MOST`] tags of
/// 1 to [`Tags::LONGEST`] bytes, none holding a space or a control byte;
/// a tag given twice counts once. With them, the tasks' group, whose
/// tasks `reserve()` takes in turn with the other groups' (a name as a tag
/// is). Stored joined by spaces, the group after a `\x1d`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tags(Vec<u8>);

impl Tags {
    /// The most tags a task takes.
    pub const MOST: usize = 10;
    /// The longest tag, in bytes.
    pub const LONGEST: usize = 100;

    /// The tags `tags`, or what is wrong with them.
    pub fn new<T: AsRef<[u8]>>(tags: &[T]) -> Result<Self, String> {
        let mut joined: Vec<u8> = Vec::new();
        let mut seen: Vec<&[u8]> = Vec::new();
        for tag in tags {
            let tag = Self::check(tag.as_ref())?;
            if seen.contains(&tag) {
                continue;
            }
            if seen.len() == Self::MOST {
                return Err(format!("a task takes at most {} tags", Self::MOST));
            }
            if !joined.is_empty() {
                joined.push(b' ');
            }
            joined.extend_from_slice(tag);
            seen.push(tag);
        }
        Ok(Tags(joined))
    }

    /// `tag` when it is one a task can take, or what is wrong with it.
    pub fn check(tag: &[u8]) -> Result<&[u8], String> {
        if tag.is_empty() || tag.len() > Self::LONGEST {
            return Err(format!("a tag is 1 to {} bytes long", Self::LONGEST));
        }
        if tag.iter().any(|&b| b <= b' ' || b == 0x7f) {
            return Err("a tag holds no space or control byte".to_owned());
        }
        Ok(tag)
    }

    /// These tags, the tasks' group `group`; or what is wrong with it.
    pub fn with_group(mut self, group: &[u8]) -> Result<Self, String> {
        let group = Self::check(group).map_err(|why| why.replace("a tag", "a group"))?;
        self.0.push(GROUP_MARK);
        self.0.extend_from_slice(group);
        Ok(self)
    }

    /// How a task's `tags`, `group` and trace context are stored.
    pub fn stored(tags: &[Vec<u8>], group: Option<&[u8]>, trace: Option<&[u8]>) -> Vec<u8> {
        let mut stored = tags.join(&b' ');
        if let Some(group) = group {
            stored.push(GROUP_MARK);
            stored.extend_from_slice(group);
        }
        if let Some(trace) = trace {
            stored.push(TRACE_MARK);
            stored.extend_from_slice(trace);
        }
        stored
    }

    /// The tags and the group stored as `stored` (the tags joined by
    /// spaces, the group after them; None: none stored).
    pub fn parts(stored: Option<&[u8]>) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let stored = untraced(stored.unwrap_or_default());
        let (joined, group) = match stored.iter().position(|&b| b == GROUP_MARK) {
            Some(at) => (&stored[..at], Some(stored[at + 1..].to_vec())),
            None => (stored, None),
        };
        let tags = joined
            .split(|&b| b == b' ')
            .filter(|t| !t.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        (tags, group)
    }

    /// The tasks' group, if they have one.
    pub fn group(&self) -> Option<&[u8]> {
        let tags = untraced(&self.0);
        let at = tags.iter().position(|&b| b == GROUP_MARK)?;
        Some(&tags[at + 1..])
    }

    /// These tags carrying the trace context `traceparent` (W3C) of the
    /// span that enqueued the tasks: stored last, after a `\x1e`, so it
    /// goes wherever the tags go (reruns, dead letters, recent attempts).
    pub fn traced(&self, traceparent: &str) -> Self {
        let mut stored = untraced(&self.0).to_vec();
        stored.push(TRACE_MARK);
        stored.extend_from_slice(traceparent.as_bytes());
        Tags(stored)
    }

    /// The trace context stored with tags `stored`, if any (see
    /// [`Tags::traced`]).
    pub fn trace_of(stored: &[u8]) -> Option<&[u8]> {
        let at = stored.iter().position(|&b| b == TRACE_MARK)?;
        Some(&stored[at + 1..])
    }

    /// As the scripts take them: joined by spaces ('': none).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// What stands between a task's tags and its group (see [`Tags`]).
const GROUP_MARK: u8 = 0x1d;
/// What stands before the trace context stored with a task's tags (see
/// [`Tags::traced`]); no tag or group holds it.
const TRACE_MARK: u8 = 0x1e;

/// Stored tags without the trace context they may carry.
fn untraced(stored: &[u8]) -> &[u8] {
    match stored.iter().position(|&b| b == TRACE_MARK) {
        Some(at) => &stored[..at],
        None => stored,
    }
}

/// Enqueued, or refused because the queue is at its maximum length.
#[derive(Clone, Debug, PartialEq)]
pub enum Put {
    Done(Vec<Status>),
    /// The queue holds `length` tasks; the first `enqueued` tasks of the
    /// batch (whole chunks of [`lease::BATCH`]) were enqueued before.
    Full {
        length: u64,
        enqueued: usize,
    },
}

/// Runs the enqueue script; `args` adds the ids (and payloads).
#[allow(clippy::too_many_arguments)]
fn put_script(
    config: &Config,
    keys: &Keys,
    delay: f64,
    policy: Policy,
    max_length: u64,
    flags: &str,
    statuses: bool,
    tags: &Tags,
    args: impl Fn(&mut crate::scripts::Invocation<'_>),
) -> Result<Vec<i64>, Error> {
    conn::with(config, |c| {
        let mut call = keys.call(&PUT);
        call.arg(score_arg(delay))
            .arg(policy.arg())
            .arg(max_length)
            .arg(flags)
            .arg(if statuses { "1" } else { "0" })
            .arg(&keys.waiters)
            .arg(wake_ms())
            .arg(tags.as_bytes());
        args(&mut call);
        // {done, ...}, or for {1, added} the number added alone; before
        // them, wake-ups of consumers who wait in another slot.
        let lease::Relayed(reply, relays) = call.invoke(c)?;
        let reply = match reply {
            NumberOr::Number(added) => vec![1, added],
            NumberOr::Other(reply) => reply,
        };
        Ok((relays, reply))
    })
    .and_then(|(relays, reply)| {
        lease::relay(config, &relays);
        if reply.first() == Some(&2) {
            register(config, keys)?;
        }
        Ok(reply)
    })
}

/// Adds the queue to the registry (a set outside the queue's hash slot, so
/// not inside its scripts).
pub(crate) fn register(config: &Config, keys: &Keys) -> Result<(), Error> {
    conn::with(config, |c| {
        redis::cmd("SADD")
            .arg(config.key(REGISTRY))
            .arg(&keys.queue)
            .query::<i64>(c)
    })?;
    // Best effort: a user whose ACL keeps it to its prefix's keys
    // (`~app:*`) is refused this key, and its queues work all the same
    // (the operator's tools then find them with SCAN or by the prefix).
    let _ = conn::with(config, |c| {
        redis::cmd("SADD")
            .arg(PREFIXES)
            .arg(&config.prefix)
            .query::<i64>(c)
    });
    Ok(())
}

/// The key prefixes whose registries hold queues on this server (see
/// [`PREFIXES`]), sorted. Registries made before that set was kept are
/// found once, with SCAN, when the set does not exist yet (on one server:
/// a Cluster's keys are not scanned).
/// A user whose ACL keeps it to its prefix's keys may read neither the
/// set nor other prefixes' keys: it is told its own prefix, when it has
/// queues.
pub fn prefixes(config: &Config) -> Result<Vec<Vec<u8>>, Error> {
    let denied =
        |e: &Error| matches!(e, Error::Server { cause, .. } if cause.starts_with("NOPERM"));
    let mut prefixes: Vec<Vec<u8>> =
        match conn::with(config, |c| redis::cmd("SMEMBERS").arg(PREFIXES).query(c)) {
            Err(e) if denied(&e) => {
                return Ok(if names(config)?.is_empty() {
                    Vec::new()
                } else {
                    vec![config.prefix.clone()]
                });
            }
            other => other?,
        };
    if prefixes.is_empty() && !matches!(config.topology, crate::config::Topology::Cluster { .. }) {
        let mut cursor = 0u64;
        loop {
            let (next, keys) = conn::scan(config, cursor, b"*redislock:queues", "set")?;
            prefixes.extend(
                keys.iter()
                    .filter_map(|k| k.strip_suffix(REGISTRY).map(<[u8]>::to_vec)),
            );
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        if !prefixes.is_empty() {
            conn::with(config, |c| {
                redis::cmd("SADD")
                    .arg(PREFIXES)
                    .arg(&prefixes)
                    .query::<i64>(c)
            })?;
        }
    }
    prefixes.sort();
    prefixes.dedup();
    Ok(prefixes)
}

/// The names of the queues in the registry (see [`REGISTRY`]), sorted.
pub fn names(config: &Config) -> Result<Vec<Vec<u8>>, Error> {
    Ok(listed(config)?.into_iter().map(|(name, _)| name).collect())
}

/// The queues in the registry (see [`REGISTRY`]) and how many partitions
/// each is kept in, sorted by name: a partitioned queue's partitions each
/// register their own key, listed once under its name.
pub fn listed(config: &Config) -> Result<Vec<(Vec<u8>, usize)>, Error> {
    let keys: Vec<Vec<u8>> = conn::with(config, |c| {
        redis::cmd("SMEMBERS").arg(config.key(REGISTRY)).query(c)
    })?;
    let prefix = Keys::new(&config.prefix, b"").queue;
    let mut listed: Vec<(Vec<u8>, usize)> = keys
        .into_iter()
        .filter_map(|k| match k.strip_prefix(prefix.as_slice()) {
            Some(name) => Some((name.to_vec(), 1)),
            None => partition_of_key(&config.prefix, &k),
        })
        .collect();
    listed.sort();
    // A name once, with its partitions when it has any.
    listed.dedup_by(|later, first| {
        let same = later.0 == first.0;
        if same {
            first.1 = first.1.max(later.1);
        }
        same
    });
    Ok(listed)
}

/// The queue name and partition count whose partition's key `key` is
/// (see [`Keys::partition`], `keys::shard_of`).
fn partition_of_key(prefix: &[u8], key: &[u8]) -> Option<(Vec<u8>, usize)> {
    let (name, _, n) = crate::keys::shard_of(prefix, crate::keys::Kind::Queue, key)?;
    (2..=named::MAX_PARTITIONS)
        .contains(&n)
        .then_some((name, n))
}

/// Enqueues `tasks` due `delay` seconds from the server's now, under
/// `policy` for ids already queued; `max_length` (0: none) bounds queued
/// plus leased tasks, refusing a chunk when it would be passed. Each chunk
/// of [`lease::BATCH`] tasks is one script, all or nothing; a larger batch
/// takes several (so that no script holds Redis up for long).
pub fn put(
    config: &Config,
    keys: &Keys,
    tasks: &[NewTask],
    delay: f64,
    policy: Policy,
    max_length: u64,
) -> Result<Put, Error> {
    put_tagged(
        config,
        keys,
        tasks,
        delay,
        policy,
        max_length,
        &Tags::default(),
    )
}

/// [`put`], each task added or replaced taking `tags` (or losing the tags
/// it had, as it takes its payload).
pub fn put_tagged(
    config: &Config,
    keys: &Keys,
    tasks: &[NewTask],
    delay: f64,
    policy: Policy,
    max_length: u64,
    tags: &Tags,
) -> Result<Put, Error> {
    let mut statuses = Vec::with_capacity(tasks.len());
    for chunk in tasks.chunks(lease::BATCH as usize) {
        match put_chunk(config, keys, chunk, delay, policy, max_length, tags)? {
            Put::Done(done) => statuses.extend(done),
            Put::Full { length, .. } => {
                return Ok(Put::Full {
                    length,
                    enqueued: statuses.len(),
                });
            }
        }
    }
    Ok(Put::Done(statuses))
}

fn put_chunk(
    config: &Config,
    keys: &Keys,
    tasks: &[NewTask],
    delay: f64,
    policy: Policy,
    max_length: u64,
    tags: &Tags,
) -> Result<Put, Error> {
    let with_payloads = tasks.iter().any(|t| t.payload.is_some());
    let flags: String = if with_payloads {
        tasks
            .iter()
            .map(|t| if t.payload.is_some() { '1' } else { '0' })
            .collect()
    } else {
        String::new()
    };
    let reply = put_script(
        config,
        keys,
        delay,
        policy,
        max_length,
        &flags,
        true,
        tags,
        |call| {
            for task in tasks {
                call.arg(task.id.as_slice());
                if with_payloads {
                    call.arg(task.payload.as_deref().unwrap_or_default());
                }
            }
        },
    )?;
    let statuses = reply.get(1..).unwrap_or_default();
    if reply.first() == Some(&0) {
        let length = statuses.first().copied().unwrap_or(0);
        return Ok(Put::Full {
            length: u64::try_from(length).unwrap_or(0),
            enqueued: 0,
        });
    }
    statuses
        .iter()
        .map(|s| match s {
            0 => Ok(Status::Ignored),
            1 => Ok(Status::Added),
            2 => Ok(Status::Updated),
            other => Err(conn::unknown_reply(config, "queue_put.lua", other)),
        })
        .collect::<Result<_, _>>()
        .map(Put::Done)
}

/// Adds `ids` due `delay` seconds from the server's now; ids already queued
/// keep their score (the seed's `enqueue`). Returns how many were added.
/// One script per chunk of [`lease::BATCH`] ids.
pub fn enqueue(
    config: &Config,
    keys: &Keys,
    ids: &[impl AsRef<[u8]>],
    delay: f64,
) -> Result<u64, Error> {
    let mut added = 0;
    for chunk in ids.chunks(lease::BATCH as usize) {
        let none = Tags::default();
        let reply = put_script(
            config,
            keys,
            delay,
            Policy::Keep,
            0,
            "",
            false,
            &none,
            |call| {
                for id in chunk {
                    call.arg(id.as_ref());
                }
            },
        )?;
        added += reply.get(1).map_or(0, |&n| u64::try_from(n).unwrap_or(0));
    }
    Ok(added)
}

/// Removes `id` if its score is still exactly `score`.
pub fn dequeue(config: &Config, keys: &Keys, id: &[u8], score: f64) -> Result<bool, Error> {
    let removed: i64 = conn::with(config, |c| {
        DEQUEUE
            .key(&keys.queue)
            .key(&keys.stats)
            .arg(id)
            .arg(score_arg(score))
            .arg(&keys.waiters)
            .invoke(c)
    })?;
    Ok(removed == 1)
}

/// Removes and returns up to `count` due tasks, earliest first.
pub fn pop(config: &Config, keys: &Keys, count: u64) -> Result<Vec<Task>, Error> {
    due(config, keys, count, true)
}

/// Returns up to `count` due tasks, earliest first, leaving them queued.
pub fn top(config: &Config, keys: &Keys, count: u64) -> Result<Vec<Task>, Error> {
    due(config, keys, count, false)
}

/// Batches of at most [`lease::BATCH`] tasks keep each script short (Redis
/// runs nothing else meanwhile); a larger count takes several round trips.
fn due(config: &Config, keys: &Keys, count: u64, remove: bool) -> Result<Vec<Task>, Error> {
    let mut tasks = Vec::new();
    loop {
        let skip = if remove { 0 } else { tasks.len() };
        let want = (count - tasks.len() as u64).min(lease::BATCH);
        let batch = due_batch(config, keys, want, remove, skip)?;
        let done = (batch.len() as u64) < want;
        tasks.extend(batch);
        if done || tasks.len() as u64 >= count {
            return Ok(tasks);
        }
    }
}

fn due_batch(
    config: &Config,
    keys: &Keys,
    count: u64,
    remove: bool,
    skip: usize,
) -> Result<Vec<Task>, Error> {
    // The flat reply (id, score, id, score, ...) is read straight into
    // pairs; a score that is not a number is a server error naming the key.
    let pairs: Vec<(Vec<u8>, f64)> = conn::with(config, |c| {
        DUE.key(&keys.queue)
            .key(&keys.stats)
            .arg(count)
            .arg(if remove { "1" } else { "0" })
            .arg(skip)
            .arg(&keys.waiters)
            .invoke_read(c, crate::resp::pairs)
    })?;
    let tasks = pairs
        .into_iter()
        .map(|(id, score)| Task { id, score })
        .collect();
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A partition's key names its queue and count back, whatever the
        /// name's bytes; a queue of one slot's key, whatever its name (one
        /// made to look like a partition's), names none.
        #[test]
        fn a_partition_key_reads_back_and_no_other_key_does(
            prefix in proptest::collection::vec(any::<u8>(), 0..6),
            name in proptest::collection::vec(any::<u8>(), 1..40),
            n in 2usize..=named::MAX_PARTITIONS,
            i in 0usize..named::MAX_PARTITIONS,
        ) {
            let i = i % n;
            let key = Keys::partition(&prefix, &name, i, n).queue;
            prop_assert_eq!(partition_of_key(&prefix, &key), Some((name.clone(), n)));
            prop_assert_eq!(partition_of_key(&prefix, &Keys::new(&prefix, &name).queue), None);
            let lookalike = key.strip_prefix(prefix.as_slice()).unwrap_or_default().to_vec();
            prop_assert_eq!(partition_of_key(&prefix, &Keys::new(&prefix, &lookalike).queue), None);
        }
    }

    #[test]
    fn the_types_named_are_those_the_scripts_keep() {
        let lua = include_str!("../scripts/lib/queue_task.lua");
        let table = lua
            .lines()
            .find_map(|l| l.strip_prefix("local QUEUE_TYPES = {"))
            .and_then(|l| l.strip_suffix('}'))
            .expect("QUEUE_TYPES in queue_task.lua");
        let types: Vec<&str> = table.split(", ").map(|t| t.trim_matches('\'')).collect();
        assert_eq!(types, super::TYPES);
    }
}
