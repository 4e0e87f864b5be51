//! One queue of a deployment, as a front end holds it: its server and its
//! key layout (both fixed by the config and the name), with every
//! transition of its tasks as a method. The functions it calls take the
//! keys themselves; front ends never do.

use std::sync::Arc;
use std::time::Duration;

use super::lease::{self, DeadTask, Leased, Metrics, Nack, Peeked, Period, Reserve, Terms, Worker};
use super::{Keys, NewTask, Policy, Put, Tags, Task};
use crate::config::Config;
use crate::conn::Error;
use crate::identity::Holder;

#[derive(Clone, Debug)]
pub struct Queue {
    config: Arc<Config>,
    name: Vec<u8>,
    keys: Keys,
}

/// Methods that are the function of the same name on this queue's server
/// and keys.
macro_rules! on_this_queue {
    ($($(#[$doc:meta])* $method:ident => $($function:ident)::+ ($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $method(&self, $($arg: $ty),*) -> Result<$out, Error> {
                $($function)::+(&self.config, &self.keys, $($arg),*)
            }
        )*
    };
}

impl Queue {
    /// The queue `name` of the deployment `config` (sorted set
    /// `Queue:<name>`, shared with the seed `RedisQueue`).
    pub fn new(config: Arc<Config>, name: Vec<u8>) -> Self {
        Queue {
            keys: Keys::new(&config.prefix, &name),
            config,
            name,
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// Its keys, for engines that act on several things in one script.
    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Whether `other` is this same queue.
    pub fn is(&self, other: &Queue) -> bool {
        self.keys == other.keys
    }

    on_this_queue! {
        /// [`super::put_tagged`].
        put => super::put_tagged(tasks: &[NewTask], delay: f64, policy: Policy, max_length: u64, tags: &Tags) -> Put;
        /// [`super::enqueue`] (the seed's).
        enqueue => super::enqueue(ids: &[std::borrow::Cow<'_, [u8]>], delay: f64) -> u64;
        /// [`super::dequeue`] (the seed's).
        dequeue => super::dequeue(id: &[u8], score: f64) -> bool;
        /// [`super::pop`] (the seed's).
        pop => super::pop(count: u64) -> Vec<Task>;
        /// [`super::top`] (the seed's).
        top => super::top(count: u64) -> Vec<Task>;
        /// [`lease::ack`].
        ack => lease::ack(id: &[u8], token: &str) -> bool;
        /// [`lease::ack_many`].
        ack_many => lease::ack_many(tasks: &[(&[u8], &str)]) -> u64;
        /// [`lease::nack`].
        nack => lease::nack(id: &[u8], token: &str, delay: f64, terms: Terms, reason: &[u8]) -> Nack;
        /// [`lease::bury`].
        bury => lease::bury(id: &[u8], token: &str, reason: &[u8]) -> bool;
        /// [`lease::release`].
        release => lease::release(id: &[u8], token: &str, delay: f64) -> bool;
        /// [`lease::extend`].
        extend => lease::extend(id: &[u8], token: &str, lease: Duration) -> bool;
        /// [`lease::metrics`].
        metrics => lease::metrics() -> Metrics;
        /// [`lease::history`].
        history => lease::history() -> (Metrics, Vec<Period>);
        /// [`lease::recent`].
        recent => lease::recent(limit: u64, id: Option<&[u8]>, tag: Option<&[u8]>) -> (f64, Vec<lease::Attempt>);
        /// [`lease::keep_recent`].
        keep_recent => lease::keep_recent(keep: u64, how_long: Duration) -> ();
        /// [`lease::footprint`].
        recent_footprint => lease::footprint() -> lease::Footprint;
        /// [`lease::set_rate`].
        set_rate => lease::set_rate(rate: Option<lease::Rate>) -> ();
        /// [`lease::set_terms`].
        set_terms => lease::set_terms(max_attempts: Option<u64>, lease: Option<std::time::Duration>) -> ();
        /// [`lease::dead`].
        dead => lease::dead(limit: u64) -> Vec<DeadTask>;
        /// [`lease::queued`].
        queued => lease::queued(limit: u64) -> Vec<Peeked>;
        /// [`lease::leased`].
        leased => lease::leased(limit: u64) -> Vec<(Peeked, Option<Holder>)>;
        /// [`lease::workers`].
        workers => lease::workers(limit: u64) -> Vec<Worker>;
        /// [`lease::find`].
        find => lease::find(id: &[u8]) -> Option<Peeked>;
        /// [`lease::groups`].
        groups => lease::groups(limit: u64) -> Vec<lease::Group>;
        /// [`lease::tagged`].
        tagged => lease::tagged(tag: &[u8], limit: u64) -> Vec<Peeked>;
        /// [`lease::retry_dead`].
        retry_dead => lease::retry_dead(ids: &[Vec<u8>], max_length: u64) -> lease::Retried;
        /// [`lease::purge_dead`].
        purge_dead => lease::purge_dead(ids: &[Vec<u8>]) -> u64;
        /// [`lease::remove`].
        remove => lease::remove(ids: &[Vec<u8>]) -> u64;
        /// [`lease::clear`].
        clear => lease::clear() -> u64;
        /// [`lease::pause`].
        pause => lease::pause() -> bool;
        /// [`lease::resume`].
        resume => lease::resume() -> bool;
        /// [`lease::throttle`].
        throttle => lease::throttle(seconds: f64) -> std::time::Duration;
        /// [`lease::throttle_group`].
        throttle_group => lease::throttle_group(group: &[u8], seconds: f64) -> std::time::Duration;
        /// [`lease::set_group_concurrency`].
        set_group_concurrency => lease::set_group_concurrency(concurrency: u64) -> ();
        /// [`lease::set_group_rate`].
        set_group_rate => lease::set_group_rate(rate: Option<lease::Rate>) -> ();
    }
}

/// Reserves from the first of `queues` (of one server) that has due tasks,
/// each on its own terms: [`lease::reserve`]. Which queue (its place in
/// `queues`) and the tasks, or None when none came in time.
pub fn reserve(
    queues: &[(&Queue, Terms)],
    how: &Reserve,
) -> Result<Option<(usize, Vec<Leased>)>, Error> {
    let Some((first, _)) = queues.first() else {
        return Ok(None);
    };
    let keyed: Vec<(&Keys, Terms)> = queues.iter().map(|(q, t)| (&q.keys, *t)).collect();
    lease::reserve(&first.config, &keyed, how)
}

impl Queue {
    /// Moves the tasks waiting here to `to` ([`lease::move_to`]), which
    /// takes none past `max_length` (0: no limit).
    pub fn move_to(&self, to: &Queue, max_length: u64) -> Result<lease::Moved, Error> {
        lease::move_to(
            (&self.config, &self.keys),
            (&to.config, &to.keys),
            max_length,
        )
    }

    /// Finishes the tasks `done` and reserves, in one round trip when
    /// nothing has to be waited for: [`lease::ack_and_reserve`]. How many
    /// were finished, and the tasks reserved (none when none came in time).
    pub fn ack_and_reserve(
        &self,
        terms: Terms,
        how: &Reserve,
        done: &[(&[u8], &str)],
    ) -> Result<(u64, Vec<Leased>), Error> {
        let (acked, got) = lease::ack_and_reserve(&self.config, &[(&self.keys, terms)], how, done)?;
        Ok((acked, got.map(|(_, tasks)| tasks).unwrap_or_default()))
    }
}
