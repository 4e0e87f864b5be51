//! `RedisLock\Task`: a task reserved from a `RedisLock\Queue`.

use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::value::{binary, debug_info, optional_binary};
use crate::queue::{self, lease::Leased};

/// A reserved task, from `RedisLock\Queue::reserve()`: ack or nack it with
/// the queue while its lease runs.
#[php_class]
#[php(name = "RedisLock\\Task")]
pub struct Task {
    queue: Arc<queue::Queue>,
    leased: Leased,
    /// The partition of its queue it was reserved from.
    part: usize,
}

impl Task {
    pub fn new(queue: Arc<queue::Queue>, leased: Leased, part: usize) -> Self {
        Task {
            queue,
            leased,
            part,
        }
    }

    /// Whether it was reserved from `queue`.
    pub fn is_of(&self, queue: &queue::Queue) -> bool {
        self.queue.is(queue)
    }

    /// The name of its queue.
    pub fn queue_name(&self) -> &[u8] {
        self.queue.name()
    }

    /// How many partitions its queue was kept in.
    pub fn partitions(&self) -> usize {
        self.queue.partitions()
    }

    /// Its lease.
    pub fn leased(&self) -> &Leased {
        &self.leased
    }

    /// Its lease as its queue settles it: partition, id and token.
    pub fn held(&self) -> queue::Held<'_> {
        (self.part, &self.leased.id, &self.leased.token)
    }
}

#[php_impl]
impl Task {
    /// Not for PHP code: tasks come from $queue->reserve() (or $client->reserve()).
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Task",
            "tasks come from $queue->reserve() (or $client->reserve())",
        ))
    }

    /// The task's id.
    pub fn id(&self) -> Zval {
        binary(&self.leased.id)
    }

    /// The task's payload, null if it has none.
    pub fn payload(&self) -> Zval {
        optional_binary(self.leased.payload.as_deref())
    }

    /// How many times the task has been reserved, this time included.
    pub fn attempts(&self) -> i64 {
        self.leased.attempts
    }

    /// The name of the queue it came from.
    pub fn queue(&self) -> Zval {
        binary(self.queue.name())
    }

    /// The results of the task's children, when it is the parent of a
    /// workflow (see `Queue::enqueue()`): `'<queue>/<id>' => result` (null:
    /// acked without one) for each child that was acked, in the order they
    /// were given; the children that went to the dead letters (policy
    /// 'ignore' or 'continue') or had not ended (policy 'continue') are not
    /// in it. An empty array for a task without children. Asks Redis.
    pub fn child_results(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let children = super::engine(self.queue.child_results(self.part, &self.leased.id))?;
        let mut out = ZendHashTable::new();
        for c in children.iter().filter(|c| c.outcome == b"acked") {
            super::value::insert_keyed(&mut out, &c.name, optional_binary(c.value.as_deref()))?;
        }
        Ok(out)
    }

    /// What `var_dump()` shows: the queue, id, payload and attempts.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        debug_info(vec![
            ("queue", self.queue()),
            ("id", self.id()),
            ("payload", self.payload()),
            ("attempts", self.attempts().into_zval(false)?),
        ])
    }
}
