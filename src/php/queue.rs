//! `RedisLock\Queue`: the leased queue of the object API, on the seed
//! queue's sorted set `Queue:<name>`.
// A PHP parameter's name is its Rust name: keepRecent()'s $maxBytes.
#![allow(non_snake_case)]

use std::fmt::{self, Display};
use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};

use super::errors::{Class, exception};
use super::task::Task;
use super::value::{
    Arg, Argument, Float, Int, Key, List, Named, NullableArray, NullableFloat, NullableInt,
    NullableText, Text, Value, array, binary, insert_keyed, natural, non_empty, optional_binary,
    optional_float, quoted, shown, type_error, value_error,
};
use super::{engine, inspect, lease, positive_seconds, wait_seconds};
use crate::config::Config;
use crate::queue::lease::{self as leased, BATCH, Leased, Nack, Reserve, Terms};
use crate::queue::{self, NewTask, Policy, Status, Tags};

pub use crate::queue::handle::Options;

/// A queue, from `RedisLock\Client::queue()` (not constructible with `new`).
#[php_class]
#[php(name = "RedisLock\\Queue")]
pub struct Queue {
    handle: queue::handle::Handle,
}

/// A full queue's refusal as PHP sees it.
fn full(full: queue::handle::Full) -> PhpException {
    exception(Class::QueueFull, full.to_string())
}

/// A number of seconds >= 0 (`what` names the parameter).
fn delay_seconds(value: &Value, param: impl Display + Copy) -> PhpResult<f64> {
    let n = value.finite(param)?;
    if n < 0.0 {
        return Err(value_error(format!(
            "{param} must be >= 0, {} given",
            shown(n)
        )));
    }
    lease(n, param).map(|_| n)
}

/// A lease: null for the queue's own.
fn lease_or(value: &Value, param: &str, default: Duration) -> PhpResult<Duration> {
    match value {
        Value::Null => Ok(default),
        value => positive_seconds(value, param),
    }
}

fn policy(value: &Value, param: impl Display + Copy) -> PhpResult<Policy> {
    match value {
        Value::Null => Ok(Policy::Keep),
        Value::Str(s) => match s.as_slice() {
            b"keep" => Ok(Policy::Keep),
            b"replace" => Ok(Policy::Replace),
            b"earliest" => Ok(Policy::Earliest),
            b"latest" => Ok(Policy::Latest),
            other => Err(value_error(format!(
                "{param} must be 'keep', 'replace', 'earliest' or 'latest', {} given",
                super::value::quoted(other)
            ))),
        },
        other => Err(type_error(format!(
            "{param} must be of type string, {} given",
            other.type_name()
        ))),
    }
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A queue's counters as an array: ['enqueued' => n, 'acked' => n, ...],
/// after 'at' => a history period's start, if given.
fn counts(counts: &leased::Counts, at: Option<u64>) -> PhpResult<ZBox<ZendHashTable>> {
    let mut out = ZendHashTable::with_capacity(leased::COUNTERS.len() as u32 + 1);
    if let Some(at) = at {
        out.insert("at", int(at))?;
    }
    for (name, n) in leased::COUNTERS.iter().zip(counts) {
        out.insert(*name, int(*n))?;
    }
    Ok(out)
}

fn metrics_array(m: &leased::Metrics) -> PhpResult<Zval> {
    let mut out = ZendHashTable::new();
    for (name, n) in [
        ("ready", m.ready),
        ("delayed", m.delayed),
        ("leased", m.leased),
        ("dead", m.dead),
    ] {
        out.insert(name, int(n))?;
    }
    let seconds = |ms: Option<u64>| optional_float(ms.map(|ms| ms as f64 / 1000.0));
    out.insert("oldestDueAge", seconds(m.oldest_due_ms))?;
    out.insert("paused", seconds(m.paused_at_ms))?;
    out.insert("throttled", seconds(m.throttled_until_ms))?;
    out.insert("groups", int(m.groups))?;
    out.insert("waiting", int(m.waiting))?;
    out.insert("totals", array(counts(&m.totals, None)?))?;
    Ok(array(out))
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Added => "added",
        Status::Updated => "updated",
        Status::Ignored => "ignored",
    }
}

fn count(value: &Value, param: &str) -> PhpResult<u64> {
    match value {
        Value::Null => Ok(1),
        other => super::value::whole_in(other, param, 1..=BATCH),
    }
}

/// Ids for the dead-letter calls: null for all of them, else a list.
fn id_list(value: &Value, param: &str) -> PhpResult<Vec<Vec<u8>>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) if items.is_empty() => Err(value_error(format!(
            "{param} must not be empty (null means all)"
        ))),
        _ => id_items(value, param, "?array"),
    }
}

/// A list of ids (each a non-empty string or an int); `declared` is the
/// parameter's type as an error names it.
fn id_items(value: &Value, param: &str, declared: &str) -> PhpResult<Vec<Vec<u8>>> {
    match value {
        Value::Array(items) => items.iter().map(|(_, id)| id.bytes(param)).collect(),
        other => Err(type_error(format!(
            "{param} must be of type {declared}, {} given",
            other.type_name()
        ))),
    }
}

/// A task's tags (see [`Tags`]): null (none) or a list of strings.
fn tags(value: &Value, param: Argument) -> PhpResult<Tags> {
    let items = match value {
        Value::Null => return Ok(Tags::default()),
        Value::Array(items) => items,
        other => {
            return Err(type_error(format!(
                "{param} must be of type ?array, {} given",
                other.type_name()
            )));
        }
    };
    let mut list = Vec::with_capacity(items.len());
    for (_, tag) in items {
        let tag = tag.bytes(Named(|f: &mut fmt::Formatter<'_>| write!(f, "{param} tag")))?;
        Tags::check(&tag)
            .map_err(|why| value_error(format!("{param}: {why}, {} given", quoted(&tag))))?;
        list.push(tag);
    }
    Tags::new(&list).map_err(|why| value_error(format!("{param}: {why}, {} given", list.len())))
}

/// `tags` with the tasks' group `group` (null: none; see [`Tags`]).
fn grouped(tags: Tags, group: &Value, param: Argument) -> PhpResult<Tags> {
    if matches!(group, Value::Null) {
        return Ok(tags);
    }
    let group = group.bytes(param)?;
    tags.with_group(&group)
        .map_err(|why| value_error(format!("{param}: {why}, {} given", quoted(&group))))
}

/// One tag to look for: a string a task's tags may hold.
fn tag(value: &Value, param: Argument) -> PhpResult<Vec<u8>> {
    let tag = value.bytes(param)?;
    Tags::check(&tag)
        .map_err(|why| value_error(format!("{param}: {why}, {} given", quoted(&tag))))?;
    Ok(tag)
}

/// A list of a task's tags, as PHP gets them.
fn tag_list(tags: &[Vec<u8>]) -> PhpResult<Zval> {
    let mut list = ZendHashTable::with_capacity(u32::try_from(tags.len()).unwrap_or(u32::MAX));
    for tag in tags {
        list.push(binary(tag))?;
    }
    Ok(array(list))
}

/// The `rate` option of `Client::queue()`: `['limit' => ..., 'per' =>
/// seconds (default 1), 'burst' => ... (default the limit)]`, as
/// `setRate()` takes them.
pub fn rate_option(value: &Value, param: &str) -> PhpResult<Option<leased::Rate>> {
    let Value::Array(entries) = value else {
        return Err(type_error(format!(
            "{param} must be an array ['limit' => int, 'per' => float, 'burst' => int], {} given",
            value.type_name()
        )));
    };
    let (mut limit, mut per, mut burst) = (None, Duration::from_secs(1), None);
    for (key, v) in entries {
        let name = String::from_utf8_lossy(&key.bytes()).into_owned();
        let at = format!("{param}['{}']", super::value::escaped(&key.bytes()));
        match name.as_str() {
            "limit" => limit = Some(rate_count(v, at.as_str())?),
            "per" => per = super::positive_seconds(v, at.as_str())?,
            "burst" => burst = Some(rate_count(v, at.as_str())?),
            _ => {
                return Err(value_error(format!(
                    "{param} has an unknown key {} (known: limit, per, burst)",
                    quoted(name.as_bytes())
                )));
            }
        }
    }
    let Some(limit) = limit else {
        return Err(value_error(format!("{param} needs a 'limit'")));
    };
    Ok(Some(leased::Rate {
        limit,
        per,
        burst: burst.unwrap_or(limit),
    }))
}

/// A count of a queue's rate: 1 to a billion.
/// A rate as `setRate()` takes it (see there; a null `$limit`: none).
fn rate_args(
    method: &'static str,
    limit: &Arg<NullableInt>,
    per: &Arg<Float>,
    burst: &Arg<NullableInt>,
) -> PhpResult<Option<leased::Rate>> {
    let limit = match &limit.0 {
        Value::Null => return Ok(None),
        value => rate_count(value, Argument(method, 1, "limit"))?,
    };
    let per = super::positive_seconds(per, Argument(method, 2, "per"))?;
    let burst = match &burst.0 {
        Value::Null => limit,
        value => rate_count(value, Argument(method, 3, "burst"))?,
    };
    Ok(Some(leased::Rate { limit, per, burst }))
}

fn rate_count(value: &Value, param: impl Display + Copy) -> PhpResult<u64> {
    super::value::whole_in(value, param, 1..=1_000_000_000)
}

impl Queue {
    pub fn new(config: Arc<Config>, name: Vec<u8>, options: Options) -> Self {
        Self {
            handle: queue::handle::Handle::new(config, name, options),
        }
    }

    /// The rate this object was given, stored with the queue at its first
    /// enqueue or reserve (`Handle::store_rate`).
    pub fn store_rate(&self) -> PhpResult<()> {
        engine(self.handle.store_rate())
    }

    fn put(
        &self,
        tasks: &[NewTask],
        delay: f64,
        policy: Policy,
        tags: &Tags,
    ) -> PhpResult<Vec<Status>> {
        engine(self.handle.put(tasks, delay, policy, tags))?.map_err(full)
    }

    /// The task's lease, after checking it is one of this queue's.
    fn own<'a>(&self, task: &'a Task, method: &str) -> PhpResult<queue::Held<'a>> {
        self.own_as(task, method, "Argument #1 ($task)")
    }

    /// [`Self::own`] for the argument `param`.
    fn own_as<'a>(&self, task: &'a Task, method: &str, param: &str) -> PhpResult<queue::Held<'a>> {
        if !task.is_of(self.handle.queue()) && task.queue_name() == self.handle.queue().name() {
            return Err(value_error(format!(
                "RedisLock\\Queue::{method}(): {param} was reserved from queue '{}' kept in {} partition(s), and this object keeps it in {}: give every client of a queue the same `partitions`",
                super::value::escaped(self.handle.queue().name()),
                task.partitions(),
                self.handle.queue().partitions()
            )));
        }
        if !task.is_of(self.handle.queue()) {
            return Err(value_error(format!(
                "RedisLock\\Queue::{method}(): {param} belongs to queue '{}', not '{}'",
                super::value::escaped(task.queue_name()),
                super::value::escaped(self.handle.queue().name())
            )));
        }
        Ok(task.held())
    }

    /// The leases of `tasks`, a list of this queue's tasks (`param` names
    /// the argument of `method` in errors).
    fn leases<'t>(
        &self,
        tasks: &'t ZendHashTable,
        method: &str,
        param: &str,
    ) -> PhpResult<Vec<queue::Held<'t>>> {
        let mut leases = Vec::with_capacity(tasks.len());
        for (_, zv) in super::value::entries(tasks) {
            let task = zv.extract::<&Task>().ok_or_else(|| {
                type_error(format!(
                    "RedisLock\\Queue::{method}(): {param} must be a list of RedisLock\\Task, {} found",
                    Value::copy_of(zv).type_name()
                ))
            })?;
            leases.push(self.own_as(task, method, param)?);
        }
        Ok(leases)
    }

    pub fn queue(&self) -> &queue::Queue {
        self.handle.queue()
    }

    /// Its queue, shared (a workflow's child queue).
    pub fn shared(&self) -> Arc<queue::Queue> {
        self.handle.queue().clone()
    }

    /// Creates the task `task` as the parent of the flow `children` (see
    /// `enqueue()`).
    fn enqueue_flow(
        &self,
        task: NewTask,
        delay: f64,
        tags: &Tags,
        children: &ZendHashTable,
        on_failure: queue::flow::OnChildFailure,
    ) -> PhpResult<&'static str> {
        let mut specs = vec![super::flow::Spec {
            queue: self.handle.queue().clone(),
            id: task.id,
            payload: task.payload,
            parent: None,
            on_failure,
        }];
        let config = self.handle.queue().config().clone();
        let named = |name: &[u8]| {
            if name == self.handle.queue().name() {
                return self.handle.queue().clone();
            }
            Arc::new(queue::Queue::new(config.clone(), name.to_vec()))
        };
        super::flow::read(
            children,
            0,
            "Argument #7 ($children)",
            1,
            &named,
            &mut specs,
        )?;
        engine(self.handle.store_terms())?;
        self.store_rate()?;
        let nodes: Vec<queue::flow::Node<'_>> = specs
            .iter()
            .map(|s| {
                let root = s.parent.is_none();
                let part = s
                    .queue
                    .partition_of(&s.id, if root { tags.group() } else { None });
                queue::flow::Node {
                    name: s.queue.name(),
                    part,
                    parts: s.queue.partitions(),
                    keys: s.queue.part(part),
                    id: s.id.clone(),
                    payload: s.payload.clone(),
                    parent: s.parent,
                    on_failure: s.on_failure,
                    delay: if root { delay } else { 0.0 },
                    tags: if root { tags.as_bytes() } else { b"" },
                }
            })
            .collect();
        match engine(queue::flow::add(self.handle.queue().config(), &nodes))? {
            queue::flow::Added::Added => Ok("added"),
            queue::flow::Added::Busy(0) => Ok("ignored"),
            queue::flow::Added::Undone => Err(exception(
                Class::Root,
                "redislock: the flow's creation across Cluster slots stalled and was undone meanwhile: nothing of the flow was created".to_string(),
            )),
            queue::flow::Added::Busy(i) => {
                let s = &specs[i.min(specs.len() - 1)];
                Err(exception(
                    Class::Root,
                    format!(
                        "redislock: task {} of queue '{}' is queued, leased, waiting or a child already: a child is a new task; nothing of the flow was created",
                        quoted(&s.id),
                        super::value::escaped(s.queue.name())
                    ),
                ))
            }
        }
    }

    /// What `reserve($count, $lease, $wait)` asks: how many and how long to
    /// wait, and the lease `$lease` sets for every queue (null: each
    /// queue's own, see [`Queue::terms`]).
    pub fn reserve_how(
        count: &Value,
        lease: &Value,
        wait: &Value,
        method: &str,
        // The position of `$count` in the method's parameters.
        first: usize,
    ) -> PhpResult<(Reserve, Option<Duration>)> {
        let param =
            |offset: usize, name: &str| format!("{method}: Argument #{} (${name})", first + offset);
        let lease = match lease {
            Value::Null => None,
            value => Some(positive_seconds(value, &param(1, "lease"))?),
        };
        let how = Reserve::up_to(
            self::count(count, &param(0, "count"))?,
            wait_seconds(wait, &param(2, "wait"))?,
        );
        Ok((how, lease))
    }

    /// This queue's terms for what is reserved from it: its own lease
    /// unless `lease` sets one, and its own `maxAttempts` (those it was not
    /// given: the queue's stored terms, else the defaults).
    pub fn terms(&self, lease: Option<Duration>) -> Terms {
        self.handle.terms(lease)
    }

    pub fn task(&self, leased: Leased, part: usize) -> Task {
        Task::new(self.handle.queue().clone(), leased, part)
    }
}

/// Tasks of the queue's partition `part` as a PHP list of `RedisLock\Task`.
pub fn task_list(queue: &Queue, part: usize, tasks: Vec<Leased>) -> PhpResult<Zval> {
    let mut list = ZendHashTable::with_capacity(u32::try_from(tasks.len()).unwrap_or(u32::MAX));
    for leased in tasks {
        list.push(queue.task(leased, part))?;
    }
    Ok(array(list))
}

#[php_impl]
impl Queue {
    /// Not for PHP code: call $client->queue($name) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Queue",
            "call $client->queue($name) on a RedisLock\\Client",
        ))
    }

    /// Enqueues one task, due after `$delay` seconds (server clock), with an
    /// optional payload. `$policy` decides for an id already queued: 'keep'
    /// (default, as `RedisQueue`), 'replace', 'earliest' or 'latest' (that due
    /// time wins). An id whose task is leased runs once more after that
    /// lease ends, never beside it. `$tags` (up to 10, each 1 to 100 bytes
    /// without spaces or control bytes) let operators find the task and its
    /// recent attempts (`tagged()`, `recent()`); a task added or replaced
    /// takes them, as it takes its payload. `$group` (a tenant, a customer:
    /// 1 to 100 bytes without spaces or control bytes) puts it in a group:
    /// `reserve()` takes due tasks in turn across the queue's groups, so a
    /// group with many cannot hold up one with few. With `$children` the
    /// task is a parent (a workflow): it is not reservable until its
    /// children have ended as `$onChildFailure` says: 'fail' (default: a
    /// child going to the dead letters sends the parent there, with a
    /// reason naming the child), 'ignore' (it runs once the other children
    /// have ended) or 'continue' (it runs at once). Each child is
    /// `['queue' => Queue|string, 'id' => string, 'payload' => ?string]`,
    /// and may have `children` (and an `onChildFailure`) of its own: a
    /// chain is a parent of one child, nested. A string names a queue of
    /// one partition of this client. The parent and every child are
    /// created whole, or none is: 'ignored' when the parent's id is
    /// queued, leased or waiting already, an exception when a child's is.
    /// A child's `ack()` result is kept for the parent
    /// (`Task::childResults()`). On a Redis Cluster a flow whose queues are
    /// in several hash slots is created in one step per slot.
    #[php(defaults(delay = 0))]
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        id: Arg<Text>,
        payload: Arg<NullableText>,
        delay: Arg<Float>,
        policy: Arg<NullableText>,
        tags: Arg<NullableArray>,
        group: Arg<NullableText>,
        children: Option<&ZendHashTable>,
        onChildFailure: Arg<NullableText>,
    ) -> PhpResult<&'static str> {
        const M: &str = "RedisLock\\Queue::enqueue()";
        let task = NewTask {
            id: non_empty(&id, Argument(M, 1, "id"))?,
            payload: match &payload.0 {
                Value::Null => None,
                p => Some(p.bytes(Argument(M, 2, "payload"))?),
            },
        };
        let delay = delay_seconds(&delay, Argument(M, 3, "delay"))?;
        let policy = self::policy(&policy, Argument(M, 4, "policy"))?;
        let tags = self::tags(&tags, Argument(M, 5, "tags"))?;
        let tags = grouped(tags, &group, Argument(M, 6, "group"))?;
        let on_failure = super::flow::policy(
            &onChildFailure,
            "RedisLock\\Queue::enqueue(): Argument #8 ($onChildFailure)",
        )?;
        if let Some(children) = children.filter(|c| !c.is_empty()) {
            if policy != Policy::Keep {
                return Err(value_error(format!(
                    "{}: a parent is a new task: policy must be null or 'keep'",
                    Argument(M, 4, "policy")
                )));
            }
            return self.enqueue_flow(task, delay, &tags, children, on_failure);
        }
        if !matches!(onChildFailure.0, Value::Null) {
            return Err(value_error(format!(
                "{} is for a task with children",
                Argument(M, 8, "onChildFailure")
            )));
        }
        let statuses = self.put(&[task], delay, policy, &tags)?;
        Ok(status_name(
            statuses.first().copied().unwrap_or(Status::Ignored),
        ))
    }

    /// Enqueues many tasks in one round trip per 1000 (each chunk atomic):
    /// `$tasks` maps id => payload (null: none); each takes the `$tags` and
    /// `$group` (see `enqueue()`). Returns each id's outcome, keyed as
    /// `$tasks` is.
    #[php(defaults(delay = 0))]
    pub fn enqueue_many(
        &self,
        tasks: Arg<List>,
        delay: Arg<Float>,
        policy: Arg<NullableText>,
        tags: Arg<NullableArray>,
        group: Arg<NullableText>,
    ) -> PhpResult<Zval> {
        const M: &str = "RedisLock\\Queue::enqueueMany()";
        let param = Argument(M, 1, "tasks");
        let Value::Array(entries) = &tasks.0 else {
            return Err(type_error(format!(
                "{param} must be of type array, {} given",
                tasks.type_name()
            )));
        };
        let mut batch = Vec::with_capacity(entries.len());
        for (id, payload) in entries {
            let id = non_empty(
                &Value::Str(id.bytes().into_owned()),
                Named(|f: &mut fmt::Formatter<'_>| write!(f, "{param} id")),
            )?;
            let payload = match payload {
                Value::Null => None,
                p => Some(p.bytes(Named(|f: &mut fmt::Formatter<'_>| {
                    write!(f, "{param} payload of {}", super::value::quoted(&id))
                }))?),
            };
            batch.push(NewTask { id, payload });
        }
        let delay = delay_seconds(&delay, Argument(M, 2, "delay"))?;
        let policy = self::policy(&policy, Argument(M, 3, "policy"))?;
        let tags = self::tags(&tags, Argument(M, 4, "tags"))?;
        let tags = grouped(tags, &group, Argument(M, 5, "group"))?;
        let statuses = if batch.is_empty() {
            Vec::new()
        } else {
            self.put(&batch, delay, policy, &tags)?
        };
        let mut out = ZendHashTable::with_capacity(u32::try_from(batch.len()).unwrap_or(u32::MAX));
        for ((key, _), status) in entries.iter().zip(statuses) {
            // The caller's own keys, as PHP holds them.
            match key {
                Key::Int(n) => out.insert(*n, status_name(status))?,
                Key::Str(s) => out.insert(&*ZendStr::new(s, false), status_name(status))?,
            }
        }
        Ok(array(out))
    }

    /// Reserves up to `$count` (1 to 1000) due tasks, each leased for `$lease`
    /// seconds (default: the queue's `lease`), waiting up to `$wait` seconds
    /// for one in the queue's line of consumers (woken by an enqueue, one
    /// consumer per task, or a due time; INF: no limit). None when none came or
    /// a signal with a handler ended the wait; none while the queue is paused
    /// (`pause()`: a waiting call keeps waiting for the resume). `$ack`: tasks
    /// this worker finished, acked first as by `ackMany()` (a task whose lease
    /// went to another worker is not), in the same round trip: a worker loop's
    /// one round trip per task.
    #[php(defaults(count = 1, wait = 0))]
    pub fn reserve(
        &self,
        count: Arg<Int>,
        lease: Arg<NullableFloat>,
        wait: Arg<Float>,
        ack: Option<&ZendHashTable>,
    ) -> PhpResult<Zval> {
        let (how, lease) =
            Self::reserve_how(&count, &lease, &wait, "RedisLock\\Queue::reserve()", 1)?;
        let done = match ack {
            Some(tasks) => self.leases(tasks, "reserve", "Argument #4 ($ack)")?,
            None => Vec::new(),
        };
        self.store_rate()?;
        let (_, part, tasks) = engine(self.handle.queue().ack_and_reserve(
            self.terms(lease),
            &how,
            &done,
        ))?;
        task_list(self, part, tasks)
    }

    /// Finishes a task; false if its lease ran out and another worker has
    /// it now (or it was acked already). `$result` is kept for the task's
    /// parent when it is the child of a workflow (see `enqueue()`), given
    /// to it by `Task::childResults()`.
    pub fn ack(&self, task: &Task, result: Arg<NullableText>) -> PhpResult<bool> {
        let (part, id, token) = self.own(task, "ack")?;
        if matches!(result.0, Value::Null) {
            return engine(self.handle.queue().ack(part, id, token));
        }
        let result = result.bytes("RedisLock\\Queue::ack(): Argument #2 ($result)")?;
        let n = engine(
            self.handle
                .queue()
                .ack_with(&[(part, id, token)], &[Some(&result)]),
        )?;
        Ok(n == 1)
    }

    /// Finishes many tasks in one round trip (per 1000); returns how many
    /// were still this worker's (see `ack()`). `$results` holds the results
    /// of some of them (see `ack()`), keyed as `$tasks` is.
    pub fn ack_many(
        &self,
        tasks: &ZendHashTable,
        results: Option<&ZendHashTable>,
    ) -> PhpResult<i64> {
        let leases = self.leases(tasks, "ackMany", "Argument #1 ($tasks)")?;
        let Some(results) = results else {
            let n = engine(self.handle.queue().ack_many(&leases))?;
            return Ok(i64::try_from(n).unwrap_or(i64::MAX));
        };
        let mut kept = Vec::with_capacity(leases.len());
        for (key, _) in super::value::entries(tasks) {
            let param = format!(
                "RedisLock\\Queue::ackMany(): Argument #2 ($results) entry {}",
                quoted(&key.bytes())
            );
            kept.push(match key_of(results, &key).map(Value::copy_of) {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.bytes(param.as_str())?),
            });
        }
        for (key, _) in super::value::entries(results) {
            if key_of(tasks, &key).is_none() {
                return Err(value_error(format!(
                    "RedisLock\\Queue::ackMany(): Argument #2 ($results) has the key {}, which $tasks has not: results are keyed as $tasks is",
                    quoted(&key.bytes())
                )));
            }
        }
        let kept: Vec<Option<&[u8]>> = kept.iter().map(|r| r.as_deref()).collect();
        let n = engine(self.handle.queue().ack_with(&leases, &kept))?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Gives a task back, due again after `$delay` seconds, or to the dead
    /// letters when it has used up `maxAttempts`; `$reason` says why this
    /// attempt failed (its first 1000 bytes are kept, shown by `find()`,
    /// `peek()` and the dead letter). False if the lease is no longer this
    /// task's.
    #[php(defaults(delay = 0))]
    pub fn nack(
        &self,
        task: &Task,
        delay: Arg<Float>,
        reason: Arg<NullableText>,
    ) -> PhpResult<bool> {
        let delay = delay_seconds(&delay, "RedisLock\\Queue::nack(): Argument #2 ($delay)")?;
        let reason = reason.bytes("RedisLock\\Queue::nack(): Argument #3 ($reason)")?;
        let (part, id, token) = self.own(task, "nack")?;
        let done =
            engine(
                self.handle
                    .queue()
                    .nack(part, id, token, delay, self.terms(None), &reason),
            )?;
        Ok(done != Nack::NotLeased)
    }

    /// Gives a task back, due again after `$delay` seconds, without spending
    /// the attempt its reserve counted and keeping its last failure: for a
    /// task that did not fail but must wait (the API it calls answered 429;
    /// see `throttle()`). False if the lease is no longer this task's.
    #[php(defaults(delay = 0))]
    pub fn release(&self, task: &Task, delay: Arg<Float>) -> PhpResult<bool> {
        let delay = delay_seconds(&delay, "RedisLock\\Queue::release(): Argument #2 ($delay)")?;
        let (part, id, token) = self.own(task, "release")?;
        engine(self.handle.queue().release(part, id, token, delay))
    }

    /// Sends a task to the dead letters now, whatever its attempts: for a
    /// task no worker can handle (a payload that cannot be decoded), kept
    /// there to be looked at, retried or purged, with `$reason` (as for
    /// `nack()`). False if the lease is no longer this task's.
    pub fn bury(&self, task: &Task, reason: Arg<NullableText>) -> PhpResult<bool> {
        let reason = reason.bytes("RedisLock\\Queue::bury(): Argument #2 ($reason)")?;
        let (part, id, token) = self.own(task, "bury")?;
        engine(self.handle.queue().bury(part, id, token, &reason))
    }

    /// Sets the task's lease to `$lease` seconds from now (default: the
    /// queue's `lease`); false if the lease is no longer this task's.
    pub fn extend(&self, task: &Task, lease: Arg<NullableFloat>) -> PhpResult<bool> {
        let lease = lease_or(
            &lease,
            "RedisLock\\Queue::extend(): Argument #2 ($lease)",
            self.handle.lease(),
        )?;
        let (part, id, token) = self.own(task, "extend")?;
        engine(self.handle.queue().extend(part, id, token, lease))
    }

    /// Counts at one instant: `ready` (due now), `delayed`, `leased`, `dead`,
    /// `oldestDueAge` (seconds the oldest due task has waited, null when none
    /// is due), `paused` (when `pause()` paused its consumers, server time;
    /// null when they take tasks), `throttled` (until when `throttle()` keeps
    /// them from taking tasks, server time; null when it does not), `groups`
    /// (how many groups have tasks queued; see `groups()`), and `totals`: what
    /// happened to its tasks since the queue was first used (`enqueued`; `acked`, the drop-in
    /// `RedisQueue`'s pop and dequeue included; `nacked` back to the queue;
    /// `retried` from the dead letters; `dead` out of attempts; `expired`
    /// leases that ran out).
    pub fn metrics(&self) -> PhpResult<Zval> {
        metrics_array(&engine(self.handle.queue().metrics())?)
    }

    /// How many partitions the queue is kept in (the `partitions` option; 1:
    /// one hash slot).
    pub fn partitions(&self) -> i64 {
        i64::try_from(self.handle.queue().partitions()).unwrap_or(i64::MAX)
    }

    /// `metrics()` of each partition, in partition order (one entry for a
    /// queue of one slot): `metrics()` is their sum.
    pub fn partition_metrics(&self) -> PhpResult<Zval> {
        let all = engine(self.handle.queue().partition_metrics())?;
        let mut list = ZendHashTable::with_capacity(u32::try_from(all.len()).unwrap_or(u32::MAX));
        for m in &all {
            list.push(metrics_array(m)?)?;
        }
        Ok(array(list))
    }

    /// The `totals` of `metrics()` per 10 seconds of server time over the last
    /// 10 minutes: 60 periods, oldest first, each with `at` (when it began,
    /// Unix time); the last one is still running.
    pub fn history(&self) -> PhpResult<Zval> {
        let (_, periods) = engine(self.handle.queue().history())?;
        let mut list = ZendHashTable::with_capacity(periods.len() as u32);
        for period in periods {
            list.push(array(counts(&period.counts, Some(period.start))?))?;
        }
        Ok(array(list))
    }

    /// The queue's recent attempts, newest first, up to `$limit` (1 to 1000),
    /// of the task `$id` and with the tag `$tag` only when given (see
    /// `enqueue()`): each attempt that ended with an ack,
    /// a nack, a bury or a lease that ran out, with its `id`, `outcome`
    /// ('acked', 'nacked', 'expired': due again, or 'dead'), `at` (when it
    /// ended, server time), `attempts` (this one included), `runtime` (from
    /// its reserve to its end, seconds), `wait` (how long it had been due when
    /// it was reserved, seconds), `worker` (the id of the worker's process, as
    /// `workers()` names it), `reason` (why it failed, or null) and `tags`.
    /// The queue keeps its last 100 for an hour unless `keepRecent()` said
    /// otherwise.
    #[php(defaults(limit = 100))]
    pub fn recent(
        &self,
        limit: Arg<Int>,
        id: Arg<NullableText>,
        tag: Arg<NullableText>,
    ) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::recent(): Argument #1 ($limit)")?;
        let id = match &id.0 {
            Value::Null => None,
            value => Some(non_empty(
                value,
                "RedisLock\\Queue::recent(): Argument #2 ($id)",
            )?),
        };
        let tag = match &tag.0 {
            Value::Null => None,
            value => Some(self::tag(
                value,
                Argument("RedisLock\\Queue::recent()", 3, "tag"),
            )?),
        };
        let (_, attempts) = engine(self.handle.queue().recent(
            limit,
            id.as_deref(),
            tag.as_deref(),
        ))?;
        let mut list =
            ZendHashTable::with_capacity(u32::try_from(attempts.len()).unwrap_or(u32::MAX));
        for a in attempts {
            let mut row = ZendHashTable::new();
            row.insert("id", binary(&a.id))?;
            row.insert("outcome", a.outcome.as_str())?;
            row.insert("at", a.at)?;
            row.insert("attempts", a.attempts)?;
            row.insert("runtime", optional_float(a.runtime))?;
            row.insert("wait", optional_float(a.wait))?;
            row.insert("worker", a.worker)?;
            row.insert("reason", optional_binary(a.reason.as_deref()))?;
            row.insert("tags", tag_list(&a.tags)?)?;
            row.insert("group", optional_binary(a.group.as_deref()))?;
            list.push(array(row))?;
        }
        Ok(array(list))
    }

    /// What the queue's recent attempts take in Redis: `kept` (records held
    /// now), `bytes` (the memory of their list, Redis' `MEMORY USAGE`;
    /// null where the server refuses that command), `keep`, `seconds` and
    /// `maxBytes` (the terms they are kept by: `keepRecent()`'s; `maxBytes`
    /// null: no bound).
    pub fn recent_footprint(&self) -> PhpResult<Zval> {
        let f = engine(self.handle.queue().recent_footprint())?;
        let mut out = ZendHashTable::new();
        out.insert("kept", int(f.kept))?;
        let mut bytes = Zval::new();
        if let Some(b) = f.bytes {
            bytes.set_long(int(b));
        }
        out.insert("bytes", bytes)?;
        out.insert("keep", int(f.keep))?;
        out.insert("seconds", f.how_long.as_secs_f64())?;
        let mut max_bytes = Zval::new();
        if let Some(b) = f.max_bytes {
            max_bytes.set_long(int(b));
        }
        out.insert("maxBytes", max_bytes)?;
        Ok(array(out))
    }

    /// Sets how many recent attempts the queue keeps (`$count`, 0 to 100000;
    /// 0 keeps none and records none), for how long (`$seconds`, up to a
    /// year) and, when `$maxBytes` is given (1 to 2^40), only as many of the
    /// newest as fit in that many bytes of records (a partitioned queue's
    /// partitions share it out): what is past them goes now. These terms
    /// replace the earlier ones. Stored with the queue, for every worker.
    #[php(defaults(seconds = 3600))]
    pub fn keep_recent(
        &self,
        count: Arg<Int>,
        seconds: Arg<Float>,
        maxBytes: Arg<NullableInt>,
    ) -> PhpResult<bool> {
        const M: &str = "RedisLock\\Queue::keepRecent()";
        let count = natural(&count.0, Argument(M, 1, "count"))?;
        if count > leased::RECENT_KEEP_MAX {
            return Err(value_error(format!(
                "{M}: Argument #1 ($count) must be at most {}, {count} given",
                leased::RECENT_KEEP_MAX
            )));
        }
        let how_long = positive_seconds(&seconds, Argument(M, 2, "seconds"))?;
        if how_long > leased::RECENT_FOR_MAX {
            return Err(value_error(format!(
                "{M}: Argument #2 ($seconds) must be at most a year ({} seconds), {} given",
                leased::RECENT_FOR_MAX.as_secs(),
                how_long.as_secs_f64()
            )));
        }
        let max_bytes = match &maxBytes.0 {
            Value::Null => None,
            value => Some(super::value::whole_in(
                value,
                Argument(M, 3, "maxBytes"),
                1..=leased::RECENT_BYTES_MAX,
            )?),
        };
        engine(self.handle.queue().keep_recent(count, how_long, max_bytes))?;
        Ok(true)
    }

    /// The oldest dead letters, up to `$limit` (1 to 1000), with the server
    /// time they died at and why (their last nack's or bury's reason, or 'lease
    /// ran out'; null when none was given).
    #[php(defaults(limit = 100))]
    pub fn dead(&self, limit: Arg<Int>) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::dead(): Argument #1 ($limit)")?;
        let dead = engine(self.handle.queue().dead(limit))?;
        let mut list = ZendHashTable::with_capacity(u32::try_from(dead.len()).unwrap_or(u32::MAX));
        for d in dead {
            let mut row = ZendHashTable::new();
            row.insert("id", binary(&d.id))?;
            row.insert("payload", optional_binary(d.payload.as_deref()))?;
            row.insert("attempts", d.attempts)?;
            row.insert("diedAt", d.died_at)?;
            row.insert("reason", optional_binary(d.reason.as_deref()))?;
            row.insert("tags", tag_list(&d.tags)?)?;
            row.insert("group", optional_binary(d.group.as_deref()))?;
            list.push(array(row))?;
        }
        Ok(array(list))
    }

    /// The queued tasks (due now or later), earliest due first, up to `$limit`
    /// (1 to 1000), without taking them; `at` is when each is due, in server
    /// time, and `reason` why its last attempt failed (or null).
    #[php(defaults(limit = 100))]
    pub fn peek(&self, limit: Arg<Int>) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::peek(): Argument #1 ($limit)")?;
        let tasks = engine(self.handle.queue().queued(limit))?;
        let mut list = ZendHashTable::with_capacity(u32::try_from(tasks.len()).unwrap_or(u32::MAX));
        for t in &tasks {
            list.push(peeked(t)?)?;
        }
        Ok(array(list))
    }

    /// The task with id `$id`, wherever it is, without taking it, or null
    /// when there is no such task. `at`, in server time: when it is due
    /// (state 'queued'), when its lease ends ('leased'), when it died
    /// ('dead'). `reason`: why its last attempt failed (a dead letter: why
    /// it died), or null. A parent waiting for its children (see
    /// `enqueue()`) is in state 'waiting', `at` null, with `children`: how
    /// many of them have not ended, and `childStates`: each child
    /// (`<queue>/<id>`) in order, 'waiting' or how it ended ('acked', 'dead',
    /// 'removed').
    pub fn find(&self, id: Arg<Text>) -> PhpResult<Zval> {
        let id = non_empty(&id, "RedisLock\\Queue::find(): Argument #1 ($id)")?;
        if let Some(t) = engine(self.handle.queue().find(&id))? {
            return peeked(&t);
        }
        match engine(self.handle.queue().waiting(&id))? {
            Some(w) => waiting(&id, &w),
            None => Ok(Zval::new()),
        }
    }

    /// The queue's groups (see `enqueue()`), the one `reserve()` serves next
    /// first, up to `$limit` (1 to 1000): `group` (null: the tasks enqueued
    /// without one, in a queue that has groups), `queued` (its tasks due now
    /// or later, as its hints count them: a task removed since, or taken by
    /// the drop-in `RedisQueue::pop()`, counts until a `reserve()` finds it
    /// gone), `leased` (its tasks leased now, counted while the queue has a
    /// `setGroupConcurrency()`; null otherwise, and for the tasks without a
    /// group) and `throttled` (the seconds its own `throttle()` has left; 0:
    /// none).
    #[php(defaults(limit = 100))]
    pub fn groups(&self, limit: Arg<Int>) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::groups(): Argument #1 ($limit)")?;
        let groups = engine(self.handle.queue().groups(limit))?;
        let mut list =
            ZendHashTable::with_capacity(u32::try_from(groups.len()).unwrap_or(u32::MAX));
        for g in groups {
            let mut row = ZendHashTable::new();
            row.insert(
                "group",
                optional_binary((!g.name.is_empty()).then_some(g.name.as_slice())),
            )?;
            row.insert("queued", int(g.queued))?;
            row.insert("leased", g.leased.map(int))?;
            row.insert("throttled", g.throttled.as_secs_f64())?;
            list.push(array(row))?;
        }
        Ok(array(list))
    }

    /// The tasks with the tag `$tag` (see `enqueue()`), up to `$limit` (1 to
    /// 1000), as `find()` shows them, the earliest `at` of them all first:
    /// queued, leased and dead (ask for one more to know whether there are
    /// more). It reads the tags of every task of the queue, 1000 per round
    /// trip: a search for operators, not for a worker's loop.
    #[php(defaults(limit = 100))]
    pub fn tagged(&self, tag: Arg<Text>, limit: Arg<Int>) -> PhpResult<Zval> {
        const M: &str = "RedisLock\\Queue::tagged()";
        let tag = self::tag(&tag, Argument(M, 1, "tag"))?;
        let limit = count(&limit, "RedisLock\\Queue::tagged(): Argument #2 ($limit)")?;
        let tasks = engine(self.handle.queue().tagged(&tag, limit))?;
        let mut list = ZendHashTable::with_capacity(u32::try_from(tasks.len()).unwrap_or(u32::MAX));
        for t in &tasks {
            list.push(peeked(t)?)?;
        }
        Ok(array(list))
    }

    /// Moves the tasks waiting here (due now or later, as many as it held
    /// when the move began) to `$to`: another name, prefix, database or
    /// server. Each keeps its id, payload, attempts and last failure, and
    /// its due time relative to the server's clock (so their order). This
    /// queue is paused meanwhile (unless it was already; then it stays
    /// paused), so each task runs on one side only. Leased tasks, the
    /// reruns of leased ids and dead letters stay. A task `$to` already
    /// holds under its id stays as it is there, and the one here is
    /// removed. Returns how many tasks left this queue. A move to the queue
    /// itself (the same keys on the same server, whatever address reaches
    /// it) is a `ValueError` before anything changes; `$to`'s `maxLength`
    /// stops it with `QueueFullException` (nothing of that batch moved).
    /// Between queues kept in different partition counts each task goes to
    /// its partition there, by its group or id: how a queue's count changes
    /// (docs/past-one-node.md).
    pub fn move_to(&self, to: &Queue) -> PhpResult<i64> {
        match engine(self.handle.move_to(&to.handle))?.map_err(full)? {
            Some(moved) => Ok(int(moved)),
            None => Err(value_error(format!(
                "RedisLock\\Queue::moveTo(): Argument #1 ($to) is queue '{}' itself (the same server, database and keys): nothing was moved",
                super::value::escaped(self.handle.queue().name())
            ))),
        }
    }

    /// Puts dead letters back in the queue, due now with their attempts
    /// reset: the given ids, or all of them (null), the oldest first.
    /// Returns how many. One that would take the queue past its
    /// `maxLength` stops the retry with `QueueFullException`: those before
    /// it are retried, it and the rest stay dead letters.
    pub fn retry_dead(&self, ids: Arg<NullableArray>) -> PhpResult<i64> {
        let ids = id_list(&ids, "RedisLock\\Queue::retryDead(): Argument #1 ($ids)")?;
        Ok(int(engine(self.handle.retry_dead(&ids))?.map_err(full)?))
    }

    /// Deletes dead letters and their payloads: the given ids, or all of
    /// them (null). Returns how many.
    pub fn purge_dead(&self, ids: Arg<NullableArray>) -> PhpResult<i64> {
        let ids = id_list(&ids, "RedisLock\\Queue::purgeDead(): Argument #1 ($ids)")?;
        let n = engine(self.handle.queue().purge_dead(&ids))?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Removes the tasks waiting under these ids: queued (due now or
    /// later), or enqueued again while their id runs. A task leased to a
    /// worker stays with it (its ack or nack settles it); dead letters are
    /// `purgeDead()`'s. Returns how many were removed.
    pub fn remove(&self, ids: Arg<List>) -> PhpResult<i64> {
        let ids = id_items(
            &ids,
            "RedisLock\\Queue::remove(): Argument #1 ($ids)",
            "array",
        )?;
        let n = engine(self.handle.queue().remove(&ids))?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Removes every task waiting in the queue (see `remove()`), 1000 per
    /// round trip: tasks leased to workers finish as usual, dead letters
    /// stay. Returns how many were removed.
    pub fn clear(&self) -> PhpResult<i64> {
        let n = engine(self.handle.queue().clear())?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// The tasks leased to workers now, the earliest lease end first, up to
    /// `$limit` (1 to 1000): why its last attempt failed (`reason`), when it
    /// was reserved (`leasedAt`, null for a lease of an earlier release) and
    /// its lease ends (`until`), server time, and its worker (null when the
    /// process is not described).
    #[php(defaults(limit = 100))]
    pub fn leased(&self, limit: Arg<Int>) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::leased(): Argument #1 ($limit)")?;
        let tasks = engine(self.handle.queue().leased(limit))?;
        let mut list = ZendHashTable::with_capacity(u32::try_from(tasks.len()).unwrap_or(u32::MAX));
        for (t, worker) in tasks {
            let mut row = ZendHashTable::new();
            row.insert("id", binary(&t.id))?;
            row.insert("payload", optional_binary(t.payload.as_deref()))?;
            row.insert("attempts", t.attempts)?;
            row.insert("reason", optional_binary(t.reason.as_deref()))?;
            row.insert("leasedAt", optional_float(t.since))?;
            row.insert("until", t.at)?;
            row.insert("worker", inspect::holder(worker)?)?;
            row.insert("tags", tag_list(&t.tags)?)?;
            row.insert("group", optional_binary(t.group.as_deref()))?;
            list.push(array(row))?;
        }
        Ok(array(list))
    }

    /// The processes consuming the queue, the last seen first, up to `$limit`
    /// (1 to 1000): `id` (the process's id in its tokens), its `host`, `pid`
    /// and `process` (null once its description expired), `since` (when it
    /// started using redislock, its own clock), `seen` (when it last reserved,
    /// server time) and `done` (tasks it acked). A worker not seen for a day is
    /// forgotten.
    #[php(defaults(limit = 100))]
    pub fn workers(&self, limit: Arg<Int>) -> PhpResult<Zval> {
        let limit = count(&limit, "RedisLock\\Queue::workers(): Argument #1 ($limit)")?;
        let workers = engine(self.handle.queue().workers(limit))?;
        let mut list =
            ZendHashTable::with_capacity(u32::try_from(workers.len()).unwrap_or(u32::MAX));
        for w in workers {
            let mut row = ZendHashTable::new();
            let since = w.holder.as_ref().map(|h| h.since).filter(|&s| s > 0);
            row.insert("id", w.id.as_str())?;
            row.insert("host", w.holder.as_ref().map(|h| h.host.clone()))?;
            row.insert("pid", w.holder.as_ref().map(|h| i64::from(h.pid)))?;
            row.insert("process", w.holder.as_ref().map(|h| h.process.clone()))?;
            row.insert("since", optional_float(since.map(|s| s as f64)))?;
            row.insert("seen", w.seen)?;
            row.insert("done", int(w.done))?;
            list.push(array(row))?;
        }
        Ok(array(list))
    }

    /// Stops the queue's consumers taking tasks: `reserve()` (a waiting one
    /// keeps waiting) and the drop-in `RedisQueue::pop()` get none until
    /// `resume()`. Leased tasks finish as usual; enqueues go on. False when
    /// it was paused already.
    pub fn pause(&self) -> PhpResult<bool> {
        engine(self.handle.queue().pause())
    }

    /// Lets the queue's consumers take tasks again, waking the waiting
    /// ones. False when it was not paused.
    pub fn resume(&self) -> PhpResult<bool> {
        engine(self.handle.queue().resume())
    }

    /// Sets the queue's rate, which every worker keeps: `reserve()` hands out
    /// at most `$limit` tasks per `$per` seconds across all workers, and at
    /// most `$burst` (default `$limit`) at once, on the server's clock (a token
    /// bucket). A task that waits for the rate stays queued, its attempts
    /// untouched, and a waiting `reserve()` takes it when the rate allows
    /// (without polling). Null: no rate. Stored with the queue.
    #[php(defaults(per = 1))]
    pub fn set_rate(
        &self,
        limit: Arg<NullableInt>,
        per: Arg<Float>,
        burst: Arg<NullableInt>,
    ) -> PhpResult<bool> {
        let rate = rate_args("RedisLock\\Queue::setRate()", &limit, &per, &burst)?;
        engine(self.handle.queue().set_rate(rate))?;
        Ok(true)
    }

    /// Holds each group of the queue (see `enqueue()`; not the tasks enqueued
    /// without one) to `$concurrency` leased tasks at once, across all
    /// workers: `reserve()` passes over a group at its limit, and a waiting
    /// `reserve()` takes the group's next task when one of its leases ends
    /// (ack, nack, bury, release or run out). Null: no limit. Stored with
    /// the queue; the tasks leased when a limit is first set count.
    pub fn set_group_concurrency(&self, concurrency: Arg<NullableInt>) -> PhpResult<bool> {
        let concurrency = match &concurrency.0 {
            Value::Null => 0,
            value => rate_count(
                value,
                Argument("RedisLock\\Queue::setGroupConcurrency()", 1, "concurrency"),
            )?,
        };
        engine(self.handle.queue().set_group_concurrency(concurrency))?;
        Ok(true)
    }

    /// `setRate()` for each group of the queue (not the tasks enqueued
    /// without one), each with a bucket of its own: `reserve()` hands out at
    /// most `$limit` tasks of a group per `$per` seconds, `$burst` at once.
    /// Null: no rate per group. Stored with the queue.
    #[php(defaults(per = 1))]
    pub fn set_group_rate(
        &self,
        limit: Arg<NullableInt>,
        per: Arg<Float>,
        burst: Arg<NullableInt>,
    ) -> PhpResult<bool> {
        let rate = rate_args("RedisLock\\Queue::setGroupRate()", &limit, &per, &burst)?;
        engine(self.handle.queue().set_group_rate(rate))?;
        Ok(true)
    }

    /// Keeps every consumer of the queue from taking tasks for `$seconds`
    /// (a rate limit the tasks' API answered with: `reserve()` and the drop-in
    /// `RedisQueue::pop()` get none, and a waiting `reserve()` takes tasks
    /// again when the throttle ends, without polling), or longer when a longer
    /// throttle is in force; 0 ends it now. With `$group`, only that group's
    /// tasks wait (one tenant's API said 429), and `reserve()` goes on with
    /// the other groups'. The tasks and their attempts are not touched.
    /// Returns the seconds it lasts from now.
    pub fn throttle(&self, seconds: Arg<Float>, group: Arg<NullableText>) -> PhpResult<f64> {
        const M: &str = "RedisLock\\Queue::throttle()";
        let param = Argument(M, 1, "seconds");
        let seconds = super::span_seconds(&seconds, param)?;
        if seconds > Duration::from_secs(86_400) {
            return Err(value_error(format!(
                "{param} must be at most a day (86400 seconds); pause() the queue for longer"
            )));
        }
        let left = match &group.0 {
            Value::Null => engine(self.handle.queue().throttle(seconds.as_secs_f64()))?,
            value => {
                let param = Argument(M, 2, "group");
                let group = value.bytes(param)?;
                Tags::check(&group).map_err(|why| {
                    value_error(format!(
                        "{param}: {}, {} given",
                        why.replace("a tag", "a group"),
                        quoted(&group)
                    ))
                })?;
                engine(
                    self.handle
                        .queue()
                        .throttle_group(&group, seconds.as_secs_f64()),
                )?
            }
        };
        Ok(left.as_secs_f64())
    }

    /// The queue's name.
    pub fn name(&self) -> Zval {
        binary(self.handle.queue().name())
    }

    /// What `var_dump()` shows: the queue's name.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        super::value::debug_info(vec![("name", self.name())])
    }
}

/// A task looked at, as a PHP array.
/// A parent waiting for its children, as `find()` shows it: state
/// 'waiting', `at` null, and how many `children` have not ended.
fn waiting(id: &[u8], w: &queue::flow::Waiting) -> PhpResult<Zval> {
    let mut row = ZendHashTable::new();
    row.insert("id", binary(id))?;
    row.insert("payload", optional_binary(w.payload.as_deref()))?;
    row.insert("attempts", 0i64)?;
    row.insert("state", "waiting")?;
    row.insert("at", ())?;
    row.insert("reason", ())?;
    row.insert("tags", tag_list(&w.tags)?)?;
    row.insert("group", optional_binary(w.group.as_deref()))?;
    row.insert("children", i64::try_from(w.left).unwrap_or(i64::MAX))?;
    let mut states = ZendHashTable::new();
    for child in &w.children {
        insert_keyed(&mut states, &child.name, binary(&child.outcome))?;
    }
    row.insert("childStates", array(states))?;
    Ok(array(row))
}

/// The entry of `table` under `key`.
fn key_of<'a>(table: &'a ZendHashTable, key: &Key) -> Option<&'a Zval> {
    match key {
        Key::Int(n) => table.get(*n),
        Key::Str(s) => table.get(String::from_utf8_lossy(s).as_ref()),
    }
}

fn peeked(t: &leased::Peeked) -> PhpResult<Zval> {
    let mut row = ZendHashTable::new();
    row.insert("id", binary(&t.id))?;
    row.insert("payload", optional_binary(t.payload.as_deref()))?;
    row.insert("attempts", t.attempts)?;
    row.insert("state", t.state.as_str())?;
    row.insert("at", t.at)?;
    row.insert("reason", optional_binary(t.reason.as_deref()))?;
    row.insert("tags", tag_list(&t.tags)?)?;
    row.insert("group", optional_binary(t.group.as_deref()))?;
    Ok(array(row))
}
