//! `RedisQueue` (seed 003): a de-duplicating, delayable task queue in the
//! sorted set `Queue:<name>`.

// Parameter names are the seeds' (PHP named arguments use them).
#![allow(non_snake_case)]

use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ArrayKey, ZendHashTable, ZendStr, Zval};

use super::injected::Connection;
use super::value::{Argument, Ids, Optional, Value, value_error};
use super::{config_from_connection, engine};
use crate::config::Config;
use crate::queue::{Queue, Task};

#[php_class]
#[php(name = "RedisQueue")]
pub struct RedisQueue {
    config: Arc<Config>,
    /// The queue of the last call: a worker or producer names the same
    /// queue call after call, and its keys are built once.
    last: Option<Queue>,
}

impl RedisQueue {
    /// The queue `name` of this object's server.
    fn queue(&mut self, name: &Value, method: &'static str) -> PhpResult<&Queue> {
        let owned;
        let name: &[u8] = match name {
            Value::Str(s) => s,
            other => {
                owned = other.bytes(Argument(method, 1, "name"))?;
                &owned
            }
        };
        let queue = match self.last.take() {
            Some(q) if q.name() == name => q,
            _ => Queue::partitioned(
                self.config.clone(),
                name.to_vec(),
                usize::try_from(super::ini::partitions_of(name)).unwrap_or(1),
            ),
        };
        Ok(self.last.insert(queue))
    }
}

/// An id that PHP turns into an int when it is an array key: a canonical
/// decimal integer in range ("17", "-3"; not "017", "+1", "-0", "1.0").
fn canonical_int(id: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(id).ok()?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if canonical { text.parse().ok() } else { None }
}

/// A task as the seed's `foreach ($array as $id => $score)` builds it: the
/// id was an array key, so a canonical decimal integer comes back an int.
fn task_array(task: Task, fields: &TaskFields) -> PhpResult<Zval> {
    let mut arr = ZendHashTable::new();
    let mut id = Zval::new();
    match canonical_int(&task.id) {
        Some(n) => id.set_long(n),
        None => id.set_zend_string(ZendStr::new(&task.id, false)),
    }
    arr.insert(ArrayKey::ZendString(&fields.id), id)?;
    arr.insert(ArrayKey::ZendString(&fields.score), task.score)?;
    let mut zv = Zval::new();
    zv.set_hashtable(arr);
    Ok(zv)
}

/// The field names of a task's array, made once per call: each array takes
/// a reference to them instead of a copy (and their hash is kept).
struct TaskFields {
    id: ZBox<ZendStr>,
    score: ZBox<ZendStr>,
}

impl TaskFields {
    fn new() -> Self {
        TaskFields {
            id: ZendStr::new("id", false),
            score: ZendStr::new("score", false),
        }
    }
}

/// The seed's shapes: for `$count == 1` one task or false, else a list.
fn tasks_result(tasks: Vec<Task>, single: bool) -> PhpResult<Zval> {
    let fields = TaskFields::new();
    let mut zv = Zval::new();
    if single {
        match tasks.into_iter().next() {
            Some(task) => return task_array(task, &fields),
            None => zv.set_bool(false),
        }
        return Ok(zv);
    }
    let mut list = ZendHashTable::with_capacity(tasks.len().try_into().unwrap_or(u32::MAX));
    for task in tasks {
        list.push(task_array(task, &fields)?)?;
    }
    zv.set_hashtable(list);
    Ok(zv)
}

fn empty_list() -> Zval {
    let mut zv = Zval::new();
    zv.set_hashtable(ZendHashTable::new());
    zv
}

/// A count as the seed's LIMIT takes it: the whole part of a positive number.
fn count_of(count: f64) -> u64 {
    (count.floor().max(0.0) as u64).min(i64::MAX as u64)
}

#[php_impl]
impl RedisQueue {
    /// `$param`: null for the `redislock.*` INI defaults, a DSN string (it
    /// has `://`), a connection name of `redislock.connections` (any other
    /// string), an options array as for `RedisLock\Client`, or a phpredis
    /// `\Redis` or Predis client (its server, database, credentials and
    /// prefix).
    pub fn __construct(param: Connection) -> PhpResult<Self> {
        Ok(Self {
            config: config_from_connection(param, "$param")?,
            last: None,
        })
    }

    /// Queues task `$id` (or each id of a list) due `$afterInterval` seconds
    /// from now by the Redis server's clock. An id already queued keeps its
    /// score.
    #[php(defaults(timeout = 10, afterInterval = 0))]
    pub fn enqueue(
        &mut self,
        name: Value,
        id: Ids,
        timeout: Optional,
        afterInterval: Optional,
    ) -> PhpResult<bool> {
        if name.is_empty() || id.is_empty() {
            return Ok(false);
        }
        if timeout.number("RedisQueue::enqueue(): Argument #3 ($timeout)")? <= 0.0 {
            return Ok(false);
        }
        let delay = afterInterval.finite("RedisQueue::enqueue(): Argument #4 ($afterInterval)")?;
        let ids = id.bytes(
            "RedisQueue::enqueue(): Argument #2 ($id)",
            "RedisQueue::enqueue(): Argument #2 ($id) items",
        )?;
        let queue = self.queue(&name, "RedisQueue::enqueue()")?;
        engine(queue.enqueue(&ids, delay))?;
        Ok(true)
    }

    /// Removes task `$id` only if its score is still `$score` (as `pop` or
    /// `top` returned it): the seed's `(float)` delete count, 1.0; false if
    /// it was queued again since, or is gone.
    #[php(defaults(timeout = 10))]
    pub fn dequeue(
        &mut self,
        name: Value,
        id: Value,
        score: Value,
        timeout: Optional,
    ) -> PhpResult<Zval> {
        let _ = timeout;
        let mut result = Zval::new();
        result.set_bool(false);
        if name.is_empty() || id.is_empty() || score.is_empty() {
            return Ok(result);
        }
        let score = score.number("RedisQueue::dequeue(): Argument #3 ($score)")?;
        if !score.is_finite() {
            return Ok(result);
        }
        let id = id.bytes("RedisQueue::dequeue(): Argument #2 ($id)")?;
        let queue = self.queue(&name, "RedisQueue::dequeue()")?;
        if engine(queue.dequeue(&id, score))? {
            result.set_double(1.0);
        }
        Ok(result)
    }

    /// Removes and returns up to `$count` due tasks, earliest first: for
    /// `$count == 1` one task or false, else a list of them (an empty list for
    /// an empty name or a `$count` below 1). An id that is a canonical decimal
    /// integer comes back an int, as the original's array keys made it.
    #[php(defaults(count = 1, timeout = 10))]
    pub fn pop(&mut self, name: Value, count: Optional, timeout: Optional) -> PhpResult<Zval> {
        let _ = timeout;
        self.due(name, count, true, "RedisQueue::pop()")
    }

    /// Returns up to `$count` due tasks without removing them (shapes as `pop`).
    #[php(defaults(count = 1))]
    pub fn top(&mut self, name: Value, count: Optional) -> PhpResult<Zval> {
        self.due(name, count, false, "RedisQueue::top()")
    }
}

impl RedisQueue {
    fn due(
        &mut self,
        name: Value,
        count: Optional,
        remove: bool,
        method: &'static str,
    ) -> PhpResult<Zval> {
        if name.is_empty() {
            return Ok(empty_list());
        }
        let count = count.number(Argument(method, 2, "count"))?;
        // pop() refuses `$count <= 0`, top() `$count < 1` (NAN fails both:
        // the negated comparisons say so).
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let refused = if remove {
            !(count > 0.0)
        } else {
            !(count >= 1.0)
        };
        if refused || count < 1.0 {
            return Ok(empty_list());
        }
        if count.is_infinite() {
            return Err(value_error(format!(
                "{method}: Argument #2 ($count) must be finite"
            )));
        }
        let queue = self.queue(&name, method)?;
        let tasks = if remove {
            engine(queue.pop(count_of(count)))?
        } else {
            engine(queue.top(count_of(count)))?
        };
        tasks_result(tasks, count == 1.0)
    }
}
