//! A queue as an application's object holds it (`RedisLock\Queue`): the
//! terms and limits it was given, stored with the queue at its first use,
//! and what a full queue refuses, said once for every front end.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::lease::{self, Moved, Terms};
use super::{NewTask, Policy, Put, Queue, Status, Tags};
use crate::config::Config;
use crate::conn::Error;
use crate::shown::escaped;

/// What an application asked of its queue object.
#[derive(Clone, Debug)]
pub struct Options {
    /// None: not given (the queue's stored term, else [`DEFAULT_LEASE`]).
    pub lease: Option<Duration>,
    /// None: not given (the queue's stored term, else
    /// [`DEFAULT_MAX_ATTEMPTS`]).
    pub max_attempts: Option<u64>,
    /// The most tasks the queue holds (0: no limit).
    pub max_length: u64,
    /// The queue's rate (`setRate()`), stored at this object's first
    /// enqueue or reserve; None: not given.
    pub rate: Option<lease::Rate>,
    /// How many partitions the queue is kept in (1: one hash slot).
    pub partitions: u64,
}

/// A queue's lease when neither its object nor a producer gave one.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// A queue's `maxAttempts` when neither its object nor a producer gave one.
pub const DEFAULT_MAX_ATTEMPTS: u64 = 5;

/// A queue and what its object was given.
pub struct Handle {
    queue: Arc<Queue>,
    options: Options,
    /// Whether the terms given are stored with the queue (at its first
    /// enqueue: [`Handle::store_terms`]).
    terms_stored: Cell<bool>,
    /// Whether the rate given is stored with the queue (at its first
    /// enqueue or reserve: [`Handle::store_rate`]).
    rate_stored: Cell<bool>,
}

/// What a full queue refused: its `Display` is the message an application
/// is shown (`QueueFullException`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Full {
    /// An enqueue of `batch` tasks, of which `enqueued` went in before the
    /// queue (or, with `partitions` > 1, a partition) held `length`.
    Put {
        queue: Vec<u8>,
        max_length: u64,
        partitions: usize,
        part_max_length: u64,
        length: u64,
        enqueued: usize,
        batch: usize,
    },
    /// A move to `to`, which held `length`, after `moved` tasks of `from`.
    Move {
        to: Vec<u8>,
        from: Vec<u8>,
        max_length: u64,
        length: u64,
        moved: u64,
    },
    /// Dead letters retried into a queue that then held `length`.
    Retry {
        queue: Vec<u8>,
        max_length: u64,
        length: u64,
        retried: u64,
    },
}

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Full::Put {
                queue,
                max_length,
                partitions: partitions @ 2..,
                part_max_length,
                length,
                enqueued,
                batch,
            } => write!(
                f,
                "redislock: a partition of queue '{}' is full: {length} tasks of at most {part_max_length} (its share of maxLength {max_length} over {partitions} partitions); {enqueued} of the {batch} tasks were enqueued, the others not",
                escaped(queue)
            ),
            Full::Put {
                queue,
                max_length,
                length,
                enqueued,
                batch,
                ..
            } => {
                write!(f, "redislock: queue '{}' ", escaped(queue))?;
                match max_length.checked_sub(*length) {
                    Some(room @ 1..) => write!(
                        f,
                        "has room for {room} more {} (at most {max_length}), fewer than the batch adds",
                        if room == 1 { "task" } else { "tasks" }
                    )?,
                    _ => write!(f, "is full: {length} tasks of at most {max_length}")?,
                }
                match enqueued {
                    0 => write!(f, "; nothing was enqueued"),
                    n => write!(
                        f,
                        "; the first {n} of the {batch} tasks were enqueued, the others not"
                    ),
                }
            }
            Full::Move {
                to,
                from,
                max_length,
                length,
                moved,
            } => write!(
                f,
                "redislock: queue '{}' is full: {length} tasks of at most {max_length}; {moved} task(s) of queue '{}' moved before, the rest stay",
                escaped(to),
                escaped(from)
            ),
            Full::Retry {
                queue,
                max_length,
                length,
                retried,
            } => write!(
                f,
                "redislock: queue '{}' is full: {length} tasks of at most {max_length}; {retried} dead letter(s) retried before, the rest stay dead",
                escaped(queue)
            ),
        }
    }
}

impl Handle {
    /// The queue `name` of `config` as `options` ask.
    pub fn new(config: Arc<Config>, name: Vec<u8>, options: Options) -> Self {
        let parts = usize::try_from(options.partitions).unwrap_or(1);
        Self {
            queue: Arc::new(Queue::partitioned(config, name, parts)),
            options,
            terms_stored: Cell::new(false),
            rate_stored: Cell::new(false),
        }
    }

    pub fn queue(&self) -> &Arc<Queue> {
        &self.queue
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The `rate` this object was given is the queue's from its first
    /// enqueue or reserve on (one round trip per object), as `setRate()`
    /// makes it.
    pub fn store_rate(&self) -> Result<(), Error> {
        if self.rate_stored.get() || self.options.rate.is_none() {
            return Ok(());
        }
        self.queue.set_rate(self.options.rate)?;
        self.rate_stored.set(true);
        Ok(())
    }

    /// A producer's terms go with its tasks: the `maxAttempts` and `lease`
    /// this object was given are stored with the queue at its first
    /// enqueue (one round trip per object), for the workers that were not
    /// given their own (docs/queues.md).
    pub fn store_terms(&self) -> Result<(), Error> {
        let (max_attempts, lease) = (self.options.max_attempts, self.options.lease);
        if self.terms_stored.get() || (max_attempts.is_none() && lease.is_none()) {
            return Ok(());
        }
        self.queue.set_terms(max_attempts, lease)?;
        self.terms_stored.set(true);
        Ok(())
    }

    /// This queue's terms for what is reserved from it: its own lease
    /// unless `lease` sets one, and its own `maxAttempts` (those it was not
    /// given: the queue's stored terms, else the defaults).
    pub fn terms(&self, lease: Option<Duration>) -> Terms {
        let lease = lease.or(self.options.lease);
        Terms {
            lease: lease.unwrap_or(DEFAULT_LEASE),
            max_attempts: self.options.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            defaults: lease::Defaults {
                lease: lease.is_none(),
                max_attempts: self.options.max_attempts.is_none(),
            },
        }
    }

    /// The lease of a task extended by this object with no length given.
    pub fn lease(&self) -> Duration {
        self.options.lease.unwrap_or(DEFAULT_LEASE)
    }

    /// Enqueues `tasks` within the queue's `maxLength`, this object's terms
    /// and rate stored first.
    pub fn put(
        &self,
        tasks: &[NewTask],
        delay: f64,
        policy: Policy,
        tags: &Tags,
    ) -> Result<Result<Vec<Status>, Full>, Error> {
        self.store_terms()?;
        self.store_rate()?;
        let max_length = self.options.max_length;
        Ok(
            match self.queue.put(tasks, delay, policy, max_length, tags)? {
                Put::Done(statuses) => Ok(statuses),
                Put::Full { length, enqueued } => Err(Full::Put {
                    queue: self.queue.name().to_vec(),
                    max_length,
                    partitions: self.queue.partitions(),
                    part_max_length: self.queue.part_max_length(max_length),
                    length,
                    enqueued,
                    batch: tasks.len(),
                }),
            },
        )
    }

    /// Moves the queued tasks to `to`, within its `maxLength` (see
    /// [`Queue::move_to`]): how many moved, or `None` when `to` is this
    /// queue itself.
    pub fn move_to(&self, to: &Handle) -> Result<Result<Option<u64>, Full>, Error> {
        Ok(
            match self.queue.move_to(&to.queue, to.options.max_length)? {
                Moved::Done { moved, .. } => Ok(Some(moved)),
                Moved::Itself => Ok(None),
                Moved::Full { moved, length } => Err(Full::Move {
                    to: to.queue.name().to_vec(),
                    from: self.queue.name().to_vec(),
                    max_length: to.options.max_length,
                    length,
                    moved,
                }),
            },
        )
    }

    /// Retries dead letters (see [`Queue::retry_dead`]) within the queue's
    /// `maxLength`: how many.
    pub fn retry_dead(&self, ids: &[Vec<u8>]) -> Result<Result<u64, Full>, Error> {
        let max_length = self.options.max_length;
        let done = self.queue.retry_dead(ids, max_length)?;
        Ok(match done.full {
            None => Ok(done.retried),
            Some(length) => Err(Full::Retry {
                queue: self.queue.name().to_vec(),
                max_length,
                length,
                retried: done.retried,
            }),
        })
    }
}
