//! One queue of a deployment, as a front end holds it: its server and its
//! key layout (both fixed by the config, the name and the partition
//! count), with every transition of its tasks as a method. The functions it
//! calls take the keys themselves; front ends never do.
//!
//! A queue in partitions (docs/decisions/0007-partitioned-queue.md) is
//! that many key sets, each in a hash slot of its own: a task goes to its
//! group's partition, or without a group to its id's; a reserve starts at
//! the partition after the last one this process started at; what reads
//! or sets the whole queue asks every partition, each in a step of its
//! own, and merges.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::lease::{self, DeadTask, Leased, Metrics, Nack, Peeked, Period, Reserve, Terms, Worker};
use super::{Keys, NewTask, Policy, Put, Tags, Task};
use crate::config::Config;
use crate::conn::Error;
use crate::identity::Holder;
use crate::telemetry::queue::{self as telemetry, Outcome, Received};

/// The most partitions a queue is kept in.
pub const MAX_PARTITIONS: usize = 128;

#[derive(Clone, Debug)]
pub struct Queue {
    config: Arc<Config>,
    name: Vec<u8>,
    /// Its partitions' keys: one set, the seed's layout, for a queue of
    /// one slot.
    parts: Vec<Keys>,
}

/// A task's lease as the queue settles it: its partition, id and token.
pub type Held<'a> = (usize, &'a [u8], &'a str);

/// Methods that run the function of the same name on the partition the
/// task's lease names.
macro_rules! on_its_partition {
    ($($(#[$doc:meta])* $method:ident => $($function:ident)::+ ($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $method(&self, part: usize, $($arg: $ty),*) -> Result<$out, Error> {
                $($function)::+(&self.config, self.part(part), $($arg),*)
            }
        )*
    };
}

impl Queue {
    /// The queue `name` of the deployment `config` (sorted set
    /// `Queue:<name>`, shared with the seed `RedisQueue`).
    pub fn new(config: Arc<Config>, name: Vec<u8>) -> Self {
        Self::partitioned(config, name, 1)
    }

    /// The queue `name` kept in `n` partitions (1 to [`MAX_PARTITIONS`];
    /// 1: the seed's layout), each in a slot of its own (see
    /// [`Keys::partition`]).
    pub fn partitioned(config: Arc<Config>, name: Vec<u8>, n: usize) -> Self {
        let n = n.clamp(1, MAX_PARTITIONS);
        let parts = if n == 1 {
            vec![Keys::new(&config.prefix, &name)]
        } else {
            (0..n)
                .map(|i| Keys::partition(&config.prefix, &name, i, n))
                .collect()
        };
        Queue {
            config,
            name,
            parts,
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// How many partitions it is kept in.
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// The keys of its first partition (its only one unless it is
    /// partitioned), for engines that act on several things in one script.
    pub(crate) fn keys(&self) -> &Keys {
        &self.parts[0]
    }

    /// The keys of partition `part` (the last one past the count), for
    /// engines that write into one partition in their own scripts (a
    /// sharded stock's order tasks, a workflow's tasks).
    pub fn part(&self, part: usize) -> &Keys {
        &self.parts[part.min(self.parts.len() - 1)]
    }

    /// Whether `other` is this same queue.
    pub fn is(&self, other: &Queue) -> bool {
        self.parts == other.parts
    }

    /// The partition of a task with `id` in `group`.
    pub fn partition_of(&self, id: &[u8], group: Option<&[u8]>) -> usize {
        crate::keys::spread(group.unwrap_or(id), self.parts.len())
    }

    /// A partition's share of a queue-wide maximum length (0: none), which
    /// bounds each partition.
    pub fn part_max_length(&self, max_length: u64) -> u64 {
        max_length.div_ceil(self.parts.len() as u64)
    }

    /// `f` on every partition, in turn: each a step of its own.
    fn each<T>(&self, f: impl FnMut(&Keys) -> Result<T, Error>) -> Result<Vec<T>, Error> {
        self.parts.iter().map(f).collect()
    }

    /// Where this process's next reserve starts: the partition after the
    /// last one it started at (from a place its pid sets), so that no
    /// partition waits behind the others.
    fn start(&self) -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = self.parts.len();
        if n == 1 {
            return 0;
        }
        (NEXT.fetch_add(1, Ordering::Relaxed) + std::process::id() as usize) % n
    }

    /// [`super::enqueue`] (the seed's), each id in its partition.
    pub fn enqueue(&self, ids: &[std::borrow::Cow<'_, [u8]>], delay: f64) -> Result<u64, Error> {
        if self.parts.len() == 1 {
            return super::enqueue(&self.config, self.keys(), ids, delay);
        }
        let mut added = 0;
        for (part, keys) in self.parts.iter().enumerate() {
            let mine: Vec<std::borrow::Cow<'_, [u8]>> = ids
                .iter()
                .filter(|id| self.partition_of(id, None) == part)
                .cloned()
                .collect();
            if !mine.is_empty() {
                added += super::enqueue(&self.config, keys, &mine, delay)?;
            }
        }
        Ok(added)
    }

    /// [`super::dequeue`] (the seed's), in the id's partition.
    pub fn dequeue(&self, id: &[u8], score: f64) -> Result<bool, Error> {
        super::dequeue(
            &self.config,
            &self.parts[self.partition_of(id, None)],
            id,
            score,
        )
    }

    /// [`super::pop`] (the seed's): from the partition where this
    /// process's turn starts, then the others, until `count` are taken.
    pub fn pop(&self, count: u64) -> Result<Vec<Task>, Error> {
        let (n, start) = (self.parts.len(), self.start());
        let mut tasks = Vec::new();
        for part in (0..n).map(|i| (start + i) % n) {
            let left = count.saturating_sub(tasks.len() as u64);
            if left == 0 {
                break;
            }
            tasks.extend(super::pop(&self.config, &self.parts[part], left)?);
        }
        Ok(tasks)
    }

    /// [`super::top`] (the seed's): the earliest of every partition's.
    pub fn top(&self, count: u64) -> Result<Vec<Task>, Error> {
        let all = self.each(|k| super::top(&self.config, k, count))?;
        Ok(earliest(all, count, |t| t.score))
    }

    on_its_partition! {
        /// [`lease::extend`].
        extend => lease::extend(id: &[u8], token: &str, lease: Duration) -> bool;
    }

    /// [`lease::ack`] (the task's processing ends, see `telemetry::queue`).
    pub fn ack(&self, part: usize, id: &[u8], token: &str) -> Result<bool, Error> {
        let keys = self.part(part);
        let ack = || lease::ack(&self.config, keys, id, token);
        let held = std::iter::once((id, token));
        telemetry::settle(&self.name, Outcome::Acked, held, ack, |&done| done)
    }

    /// [`lease::nack`].
    pub fn nack(
        &self,
        part: usize,
        id: &[u8],
        token: &str,
        delay: f64,
        terms: Terms,
        reason: &[u8],
    ) -> Result<Nack, Error> {
        let keys = self.part(part);
        let nack = || lease::nack(&self.config, keys, id, token, delay, terms, reason);
        let done = |n: &Nack| *n != Nack::NotLeased;
        let held = std::iter::once((id, token));
        telemetry::settle(&self.name, Outcome::Nacked, held, nack, done)
    }

    /// [`lease::bury`].
    pub fn bury(&self, part: usize, id: &[u8], token: &str, reason: &[u8]) -> Result<bool, Error> {
        let keys = self.part(part);
        let bury = || lease::bury(&self.config, keys, id, token, reason);
        let held = std::iter::once((id, token));
        telemetry::settle(&self.name, Outcome::Buried, held, bury, |&done| done)
    }

    /// [`lease::release`].
    pub fn release(&self, part: usize, id: &[u8], token: &str, delay: f64) -> Result<bool, Error> {
        let keys = self.part(part);
        let release = || lease::release(&self.config, keys, id, token, delay);
        let held = std::iter::once((id, token));
        telemetry::settle(&self.name, Outcome::Released, held, release, |&done| done)
    }

    /// [`super::put_tagged`], each task in its partition (a partition's
    /// tasks in one call; a partition full stops the rest: its `enqueued`
    /// counts the tasks enqueued in every partition). With telemetry on,
    /// the enqueue's span context is stored with the tasks (see
    /// [`Tags::traced`]).
    pub fn put(
        &self,
        tasks: &[NewTask],
        delay: f64,
        policy: Policy,
        max_length: u64,
        tags: &Tags,
    ) -> Result<Put, Error> {
        let ids = tasks.iter().map(|t| t.id.as_slice());
        let op = telemetry::send(&self.name, ids, tags.group());
        let traced = op.traceparent().map(|tp| tags.traced(&tp));
        let put = self.put_in_parts(
            tasks,
            delay,
            policy,
            max_length,
            traced.as_ref().unwrap_or(tags),
        );
        let (sent, error) = match &put {
            Ok(Put::Done(_)) => (tasks.len(), None),
            Ok(Put::Full { enqueued, .. }) => (*enqueued, Some("queue_full")),
            Err(_) => (0, Some("redis")),
        };
        telemetry::sent(op, sent, error);
        put
    }

    fn put_in_parts(
        &self,
        tasks: &[NewTask],
        delay: f64,
        policy: Policy,
        max_length: u64,
        tags: &Tags,
    ) -> Result<Put, Error> {
        if self.parts.len() == 1 {
            return super::put_tagged(
                &self.config,
                self.keys(),
                tasks,
                delay,
                policy,
                max_length,
                tags,
            );
        }
        let max_length = self.part_max_length(max_length);
        let mut statuses = vec![super::Status::Ignored; tasks.len()];
        let mut enqueued = 0;
        for (part, keys) in self.parts.iter().enumerate() {
            let mine: Vec<usize> = (0..tasks.len())
                .filter(|&i| self.partition_of(&tasks[i].id, tags.group()) == part)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let batch: Vec<NewTask> = mine.iter().map(|&i| tasks[i].clone()).collect();
            match super::put_tagged(&self.config, keys, &batch, delay, policy, max_length, tags)? {
                Put::Done(done) => {
                    for (&i, status) in mine.iter().zip(done) {
                        statuses[i] = status;
                    }
                    enqueued += mine.len();
                }
                Put::Full {
                    length,
                    enqueued: some,
                } => {
                    return Ok(Put::Full {
                        length,
                        enqueued: enqueued + some,
                    });
                }
            }
        }
        Ok(Put::Done(statuses))
    }

    /// [`lease::ack_many`], each partition's in one call.
    pub fn ack_many(&self, tasks: &[Held<'_>]) -> Result<u64, Error> {
        self.ack_with(tasks, &[])
    }

    /// [`lease::ack_with`]: [`Queue::ack_many`] with each task's result
    /// (`results[i]`: `tasks[i]`'s), kept for its parent when it is a
    /// child of a workflow (see [`super::flow`]).
    pub fn ack_with(&self, tasks: &[Held<'_>], results: &[Option<&[u8]>]) -> Result<u64, Error> {
        let held = tasks.iter().map(|t| (t.1, t.2));
        let all = tasks.len() as u64;
        let ack = || self.ack_each(tasks, results);
        telemetry::settle(&self.name, Outcome::Acked, held, ack, |&n| n == all)
    }

    fn ack_each(&self, tasks: &[Held<'_>], results: &[Option<&[u8]>]) -> Result<u64, Error> {
        let mut acked = 0;
        for (part, keys) in self.parts.iter().enumerate() {
            let mut mine: Vec<(&[u8], &str)> = Vec::new();
            let mut kept: Vec<Option<&[u8]>> = Vec::new();
            for (i, t) in tasks.iter().enumerate() {
                if t.0.min(self.parts.len() - 1) == part {
                    mine.push((t.1, t.2));
                    kept.push(results.get(i).copied().flatten());
                }
            }
            if !mine.is_empty() {
                acked += lease::ack_with(&self.config, keys, &mine, &kept)?;
            }
        }
        Ok(acked)
    }

    /// The children of the parent `id`, reserved from partition `part`
    /// (see [`super::flow::children`]).
    pub fn child_results(&self, part: usize, id: &[u8]) -> Result<Vec<super::flow::Child>, Error> {
        super::flow::children(&self.config, self.part(part), id)
    }

    /// The parent `id` while it waits for its children (see
    /// [`super::flow::waiting`]), in whichever partition it is.
    pub fn waiting(&self, id: &[u8]) -> Result<Option<super::flow::Waiting>, Error> {
        let first = self.partition_of(id, None);
        for i in (0..self.parts.len()).map(|i| (first + i) % self.parts.len()) {
            if let Some(found) = super::flow::waiting(&self.config, &self.parts[i], id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// [`lease::metrics`], summed over the partitions.
    pub fn metrics(&self) -> Result<Metrics, Error> {
        let all = self.each(|k| lease::metrics(&self.config, k))?;
        Ok(sum_metrics(&all))
    }

    /// Each partition's [`lease::metrics`].
    pub fn partition_metrics(&self) -> Result<Vec<Metrics>, Error> {
        self.each(|k| lease::metrics(&self.config, k))
    }

    /// [`lease::history`], summed over the partitions period by period.
    pub fn history(&self) -> Result<(Metrics, Vec<Period>), Error> {
        let all = self.each(|k| lease::history(&self.config, k))?;
        let metrics: Vec<Metrics> = all.iter().map(|(m, _)| *m).collect();
        let mut periods = all.first().map(|(_, p)| p.clone()).unwrap_or_default();
        for (_, more) in all.iter().skip(1) {
            for (period, other) in periods.iter_mut().zip(more) {
                for (count, add) in period.counts.iter_mut().zip(other.counts) {
                    *count += add;
                }
            }
        }
        Ok((sum_metrics(&metrics), periods))
    }

    /// [`lease::recent`], the newest of every partition's.
    pub fn recent(
        &self,
        limit: u64,
        id: Option<&[u8]>,
        tag: Option<&[u8]>,
    ) -> Result<(f64, Vec<lease::Attempt>), Error> {
        let all = self.each(|k| lease::recent(&self.config, k, limit, id, tag))?;
        let now = all.iter().map(|(now, _)| *now).fold(0.0, f64::max);
        let mut attempts: Vec<lease::Attempt> = all.into_iter().flat_map(|(_, a)| a).collect();
        attempts.sort_by(|a, b| b.at.total_cmp(&a.at));
        attempts.truncate(limit as usize);
        Ok((now, attempts))
    }

    /// [`lease::keep_recent`], on every partition: each keeps `keep`
    /// records, within its share of `max_bytes`.
    pub fn keep_recent(
        &self,
        keep: u64,
        how_long: Duration,
        max_bytes: Option<u64>,
    ) -> Result<(), Error> {
        let share = max_bytes.map(|b| b.div_ceil(self.parts.len() as u64));
        self.each(|k| lease::keep_recent(&self.config, k, keep, how_long, share))
            .map(drop)
    }

    /// [`lease::footprint`], summed over the partitions.
    pub fn recent_footprint(&self) -> Result<lease::Footprint, Error> {
        let mut sum = lease::footprint(&self.config, &self.parts[0])?;
        for keys in &self.parts[1..] {
            let more = lease::footprint(&self.config, keys)?;
            sum.kept += more.kept;
            sum.max_bytes = match (sum.max_bytes, more.max_bytes) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            sum.bytes = match (sum.bytes, more.bytes) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
        Ok(sum)
    }

    /// [`lease::set_rate`]: a queue-wide rate is each partition's at 1/n
    /// of it (`limit` per n times `per`, the burst shared out), exact while
    /// the partitions are evenly loaded and below it when they are not.
    pub fn set_rate(&self, rate: Option<lease::Rate>) -> Result<(), Error> {
        let n = self.parts.len() as u64;
        let rate = rate.map(|r| lease::Rate {
            limit: r.limit,
            per: r.per.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX)),
            burst: r.burst.div_ceil(n).max(1),
        });
        self.each(|k| lease::set_rate(&self.config, k, rate))
            .map(drop)
    }

    /// [`lease::set_terms`], on every partition.
    pub fn set_terms(
        &self,
        max_attempts: Option<u64>,
        lease: Option<Duration>,
    ) -> Result<(), Error> {
        self.each(|k| lease::set_terms(&self.config, k, max_attempts, lease))
            .map(drop)
    }

    /// [`lease::dead`], the oldest of every partition's.
    pub fn dead(&self, limit: u64) -> Result<Vec<DeadTask>, Error> {
        let mut all: Vec<DeadTask> = self
            .each(|k| lease::dead(&self.config, k, limit))?
            .into_iter()
            .flatten()
            .collect();
        all.sort_by(|a, b| a.died_at.total_cmp(&b.died_at));
        all.truncate(limit as usize);
        Ok(all)
    }

    /// [`lease::queued`], the earliest due of every partition's.
    pub fn queued(&self, limit: u64) -> Result<Vec<Peeked>, Error> {
        let all = self.each(|k| lease::queued(&self.config, k, limit))?;
        Ok(earliest(all, limit, |p| p.at))
    }

    /// [`lease::leased`], the earliest lease ends of every partition's.
    pub fn leased(&self, limit: u64) -> Result<Vec<(Peeked, Option<Holder>)>, Error> {
        let all = self.each(|k| lease::leased(&self.config, k, limit))?;
        Ok(earliest(all, limit, |(p, _)| p.at))
    }

    /// [`lease::tagged`], the earliest of every partition's.
    pub fn tagged(&self, tag: &[u8], limit: u64) -> Result<Vec<Peeked>, Error> {
        let all = self.each(|k| lease::tagged(&self.config, k, tag, limit))?;
        Ok(earliest(all, limit, |p| p.at))
    }

    /// [`lease::workers`], a worker of several partitions once (seen last
    /// where it was last seen, its acks summed), the last seen first.
    pub fn workers(&self, limit: u64) -> Result<Vec<Worker>, Error> {
        let mut merged: Vec<Worker> = Vec::new();
        for worker in self
            .each(|k| lease::workers(&self.config, k, limit))?
            .into_iter()
            .flatten()
        {
            match merged.iter_mut().find(|w| w.id == worker.id) {
                Some(w) => {
                    w.done += worker.done;
                    if worker.seen > w.seen {
                        w.seen = worker.seen;
                    }
                    if w.holder.is_none() {
                        w.holder = worker.holder;
                    }
                }
                None => merged.push(worker),
            }
        }
        merged.sort_by(|a, b| b.seen.total_cmp(&a.seen));
        merged.truncate(limit as usize);
        Ok(merged)
    }

    /// [`lease::find`]: in the id's partition first, then in the others
    /// (a task with a group is in its group's).
    pub fn find(&self, id: &[u8]) -> Result<Option<Peeked>, Error> {
        let first = self.partition_of(id, None);
        for i in (0..self.parts.len()).map(|i| (first + i) % self.parts.len()) {
            if let Some(found) = lease::find(&self.config, &self.parts[i], id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// [`lease::groups`] of every partition (each group is in one).
    pub fn groups(&self, limit: u64) -> Result<Vec<lease::Group>, Error> {
        let mut all: Vec<lease::Group> = self
            .each(|k| lease::groups(&self.config, k, limit))?
            .into_iter()
            .flatten()
            .collect();
        all.truncate(limit as usize);
        Ok(all)
    }

    /// [`lease::retry_dead`] on every partition, each held to its share of
    /// `max_length`.
    pub fn retry_dead(&self, ids: &[Vec<u8>], max_length: u64) -> Result<lease::Retried, Error> {
        let max_length = self.part_max_length(max_length);
        let mut sum = lease::Retried {
            retried: 0,
            full: None,
        };
        for keys in &self.parts {
            let r = lease::retry_dead(&self.config, keys, ids, max_length)?;
            sum.retried += r.retried;
            sum.full = sum.full.or(r.full);
        }
        Ok(sum)
    }

    /// [`lease::purge_dead`] on every partition.
    pub fn purge_dead(&self, ids: &[Vec<u8>]) -> Result<u64, Error> {
        Ok(self
            .each(|k| lease::purge_dead(&self.config, k, ids))?
            .iter()
            .sum())
    }

    /// [`lease::remove`] on every partition.
    pub fn remove(&self, ids: &[Vec<u8>]) -> Result<u64, Error> {
        Ok(self
            .each(|k| lease::remove(&self.config, k, ids))?
            .iter()
            .sum())
    }

    /// [`lease::clear`] on every partition.
    pub fn clear(&self) -> Result<u64, Error> {
        Ok(self.each(|k| lease::clear(&self.config, k))?.iter().sum())
    }

    /// [`lease::pause`] on every partition: whether any was running.
    pub fn pause(&self) -> Result<bool, Error> {
        Ok(self
            .each(|k| lease::pause(&self.config, k))?
            .contains(&true))
    }

    /// [`lease::resume`] on every partition: whether any was paused.
    pub fn resume(&self) -> Result<bool, Error> {
        Ok(self
            .each(|k| lease::resume(&self.config, k))?
            .contains(&true))
    }

    /// [`lease::throttle`] on every partition: the longest it lasts.
    pub fn throttle(&self, seconds: f64) -> Result<Duration, Error> {
        let all = self.each(|k| lease::throttle(&self.config, k, seconds))?;
        Ok(all.into_iter().max().unwrap_or_default())
    }

    /// [`lease::throttle_group`], in the group's partition.
    pub fn throttle_group(&self, group: &[u8], seconds: f64) -> Result<Duration, Error> {
        let keys = &self.parts[self.partition_of(group, Some(group))];
        lease::throttle_group(&self.config, keys, group, seconds)
    }

    /// [`lease::set_group_concurrency`] on every partition.
    pub fn set_group_concurrency(&self, concurrency: u64) -> Result<(), Error> {
        self.each(|k| lease::set_group_concurrency(&self.config, k, concurrency))
            .map(drop)
    }

    /// [`lease::set_group_rate`] on every partition (a group lives in one).
    pub fn set_group_rate(&self, rate: Option<lease::Rate>) -> Result<(), Error> {
        self.each(|k| lease::set_group_rate(&self.config, k, rate))
            .map(drop)
    }
}

/// Metrics of several partitions as one queue's: the counts summed, the
/// oldest due age the oldest, paused while any partition is, throttled
/// until the last throttle ends.
fn sum_metrics(all: &[Metrics]) -> Metrics {
    let mut sum = all[0];
    for m in &all[1..] {
        sum.ready += m.ready;
        sum.delayed += m.delayed;
        sum.leased += m.leased;
        sum.dead += m.dead;
        sum.groups += m.groups;
        sum.waiting += m.waiting;
        sum.oldest_due_ms = sum.oldest_due_ms.max(m.oldest_due_ms);
        sum.paused_at_ms = match (sum.paused_at_ms, m.paused_at_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        sum.throttled_until_ms = sum.throttled_until_ms.max(m.throttled_until_ms);
        for (count, add) in sum.totals.iter_mut().zip(m.totals) {
            *count += add;
        }
    }
    sum
}

/// Every partition's list as one, the earliest `at` first, up to `limit`.
fn earliest<T>(all: Vec<Vec<T>>, limit: u64, at: impl Fn(&T) -> f64) -> Vec<T> {
    let mut all: Vec<T> = all.into_iter().flatten().collect();
    all.sort_by(|a, b| at(a).total_cmp(&at(b)));
    all.truncate(limit as usize);
    all
}

/// What a reserve over several queues got: which queue (its place in the
/// list), which of its partitions, and the tasks.
pub type Got = Option<(usize, usize, Vec<Leased>)>;

/// Reserves from the first of `queues` (of one server or Cluster) that has
/// due tasks, each on its own terms: [`lease::reserve`], each partitioned
/// queue's partitions from where its turn starts.
pub fn reserve(queues: &[(&Queue, Terms)], how: &Reserve) -> Result<Got, Error> {
    let Some((first, _)) = queues.first() else {
        return Ok(None);
    };
    let op = telemetry::receive(&first.name);
    let got = reserve_from(queues, how);
    match &got {
        Ok(Some((q, part, tasks))) => queues[*q].0.received(op, *part, tasks, None),
        Ok(None) => first.received(op, 0, &[], None),
        Err(_) => first.received(op, 0, &[], Some("redis")),
    }
    got
}

fn reserve_from(queues: &[(&Queue, Terms)], how: &Reserve) -> Result<Got, Error> {
    let Some((first, _)) = queues.first() else {
        return Ok(None);
    };
    let mut keyed: Vec<(&Keys, Terms)> = Vec::new();
    let mut whose: Vec<(usize, usize)> = Vec::new();
    for (q, (queue, terms)) in queues.iter().enumerate() {
        let n = queue.parts.len();
        let start = queue.start();
        for part in (0..n).map(|i| (start + i) % n) {
            keyed.push((&queue.parts[part], *terms));
            whose.push((q, part));
        }
    }
    Ok(
        lease::reserve(&first.config, &keyed, how)?.map(|(i, tasks)| {
            let (q, part) = whose[i];
            (q, part, tasks)
        }),
    )
}
impl Queue {
    /// Moves the tasks waiting here to `to` ([`lease::move_to`]), which
    /// takes none past `max_length` (0: no limit).
    /// A partitioned queue's partition i goes to the destination's
    /// partition i when both have as many ([`Queue::partitions`]); else
    /// each task goes to its partition there, by its group or id. Each
    /// source partition is moved in turn, each destination partition held
    /// to its share of `max_length`.
    pub fn move_to(&self, to: &Queue, max_length: u64) -> Result<lease::Moved, Error> {
        if self.parts.len() != to.parts.len() {
            return self.move_routed(to, max_length);
        }
        if self.parts.len() == 1 {
            return lease::move_to(
                (&self.config, self.keys()),
                (&to.config, to.keys()),
                max_length,
            );
        }
        let max_length = to.part_max_length(max_length);
        let (mut moved, mut paused, mut itself) = (0, false, true);
        for (from, dest) in self.parts.iter().zip(&to.parts) {
            match lease::move_to((&self.config, from), (&to.config, dest), max_length)? {
                lease::Moved::Itself => {}
                lease::Moved::Done {
                    moved: m,
                    paused: p,
                } => {
                    (moved, paused, itself) = (moved + m, paused || p, false);
                }
                lease::Moved::Full { moved: m, length } => {
                    return Ok(lease::Moved::Full {
                        moved: moved + m,
                        length,
                    });
                }
            }
        }
        Ok(if itself {
            lease::Moved::Itself
        } else {
            lease::Moved::Done { moved, paused }
        })
    }

    /// [`Queue::move_to`] between queues of different partition counts
    /// (one of them possibly in one slot).
    fn move_routed(&self, to: &Queue, max_length: u64) -> Result<lease::Moved, Error> {
        let max_length = to.part_max_length(max_length);
        let dest: Vec<(&Config, &Keys)> = to.parts.iter().map(|k| (&*to.config, k)).collect();
        let route = |t: &Peeked| to.partition_of(&t.id, t.group.as_deref());
        let (mut moved, mut paused) = (0, false);
        for from in &self.parts {
            match lease::move_routed((&self.config, from), &dest, route, max_length)? {
                lease::Moved::Done {
                    moved: m,
                    paused: p,
                } => {
                    (moved, paused) = (moved + m, paused || p);
                }
                lease::Moved::Itself => {}
                lease::Moved::Full { moved: m, length } => {
                    return Ok(lease::Moved::Full {
                        moved: moved + m,
                        length,
                    });
                }
            }
        }
        Ok(lease::Moved::Done { moved, paused })
    }

    /// Finishes the tasks `done` and reserves, in one round trip when
    /// nothing has to be waited for: [`lease::ack_and_reserve`]. How many
    /// were finished, and the tasks reserved (none when none came in time).
    ///
    /// A partitioned queue's reserve starts at the partition after the
    /// last one this process started at, and goes round the others; the
    /// finished tasks of that first partition are acked in its round trip,
    /// the others' first, each partition's in one. Returns the partition
    /// the tasks came from.
    pub fn ack_and_reserve(
        &self,
        terms: Terms,
        how: &Reserve,
        done: &[Held<'_>],
    ) -> Result<(u64, usize, Vec<Leased>), Error> {
        let held = done.iter().map(|t| (t.1, t.2));
        let all = done.len() as u64;
        let op = telemetry::receive(&self.name);
        let run = || self.ack_then_reserve(terms, how, done);
        let got = telemetry::settle(&self.name, Outcome::Acked, held, run, |r| r.0 == all);
        match &got {
            Ok((_, part, tasks)) => self.received(op, *part, tasks, None),
            Err(_) => self.received(op, 0, &[], Some("redis")),
        }
        got
    }

    /// Telemetry of a reserve that ended (`op`) with `tasks` from
    /// partition `part`: their trace contexts are read (one round trip,
    /// only while telemetry is on) for their process spans.
    fn received(
        &self,
        op: crate::telemetry::Op,
        part: usize,
        tasks: &[Leased],
        error: Option<&'static str>,
    ) {
        if !op.live() {
            return;
        }
        let ids: Vec<&[u8]> = tasks.iter().map(|t| t.id.as_slice()).collect();
        let traces = lease::traces(&self.config, self.part(part), &ids).unwrap_or_default();
        let received: Vec<Received<'_>> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| Received {
                id: &t.id,
                token: &t.token,
                attempts: t.attempts,
                trace: traces.get(i).and_then(|t| t.trace.as_deref()),
                group: traces.get(i).and_then(|t| t.group.as_deref()),
            })
            .collect();
        telemetry::received(op, &self.name, &received, error);
    }

    fn ack_then_reserve(
        &self,
        terms: Terms,
        how: &Reserve,
        done: &[Held<'_>],
    ) -> Result<(u64, usize, Vec<Leased>), Error> {
        let n = self.parts.len();
        let start = self.start();
        let (home, elsewhere): (Vec<Held<'_>>, Vec<Held<'_>>) =
            done.iter().partition(|t| t.0.min(n - 1) == start);
        let acked = if elsewhere.is_empty() {
            0
        } else {
            self.ack_many(&elsewhere)?
        };
        let home: Vec<(&[u8], &str)> = home.iter().map(|t| (t.1, t.2)).collect();
        let order: Vec<usize> = (0..n).map(|i| (start + i) % n).collect();
        let keyed: Vec<(&Keys, Terms)> = order.iter().map(|&p| (&self.parts[p], terms)).collect();
        let (more, got) = lease::ack_and_reserve(&self.config, &keyed, how, &home)?;
        Ok(match got {
            Some((i, tasks)) => (acked + more, order[i], tasks),
            None => (acked + more, start, Vec::new()),
        })
    }
}
