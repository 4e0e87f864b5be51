//! Several named locks held all or none (`RedisLock\MultiLock`).
//!
//! Every caller takes them in key order, so two callers asking for
//! overlapping sets never wait on each other in a circle. When one script
//! can reach them all (one server, or one Cluster slot) the first try takes
//! them in one round trip; then each is waited for in its own line, within
//! one deadline. Whatever fails, none is kept.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Wait;
use super::hold::{Hold, Options, Refused};
use crate::config::Config;
use crate::conn::Error;

/// Which lock (its place in key order) refused, and why.
#[derive(Debug)]
pub struct Failed {
    pub at: usize,
    pub refused: Refused,
}

pub struct MultiHold {
    config: Arc<Config>,
    /// Each lock's name and hold, in key order.
    holds: Vec<(Vec<u8>, Hold)>,
    /// Whether one script may take them all.
    one_script: bool,
}

impl MultiHold {
    /// The locks `names` (duplicates taken once), not yet taken.
    pub fn new(config: Arc<Config>, names: Vec<Vec<u8>>, options: Options) -> Self {
        let mut holds: Vec<(Vec<u8>, Hold)> = names
            .into_iter()
            .map(|name| {
                let hold = Hold::new(config.clone(), &name, options.clone());
                (name, hold)
            })
            .collect();
        holds.sort_by(|a, b| a.1.keys().lock.cmp(&b.1.keys().lock));
        holds.dedup_by(|a, b| a.1.keys().lock == b.1.keys().lock);
        let keys: Vec<&[u8]> = holds
            .iter()
            .map(|(_, h)| h.keys().lock.as_slice())
            .collect();
        let one_script = config.one_slot(&keys);
        MultiHold {
            config,
            holds,
            one_script,
        }
    }

    /// The names and holds, in the order they are taken.
    pub fn holds(&self) -> impl Iterator<Item = (&[u8], &Hold)> {
        self.holds
            .iter()
            .map(|(name, hold)| (name.as_slice(), hold))
    }

    /// Whether this object holds any of them (without asking Redis).
    pub fn holds_any(&self) -> bool {
        self.holds.iter().any(|(_, h)| h.is_mine())
    }

    /// Takes every lock, or none, waiting up to `wait` (zero: one try);
    /// false when not all were taken in time. Refused (`AlreadyHeld` at 0)
    /// while this object holds any.
    pub fn acquire(&mut self, wait: Duration) -> Result<bool, Failed> {
        if self.holds_any() {
            return Err(Failed {
                at: 0,
                refused: Refused::AlreadyHeld,
            });
        }
        if self.one_script {
            if self.take_at_once()? {
                return Ok(true);
            }
            if wait.is_zero() {
                return Ok(false);
            }
        }
        self.take_in_order(wait)
    }

    /// One try at all of them in one round trip.
    fn take_at_once(&mut self) -> Result<bool, Failed> {
        let tokens: Vec<String> = self
            .holds
            .iter()
            .map(|_| crate::identity::token())
            .collect();
        let keys: Vec<&super::Keys> = self.holds.iter().map(|(_, h)| h.keys()).collect();
        let lease = self.holds[0].1.lease();
        let fences =
            super::acquire_all(&self.config, &keys, &tokens, lease).map_err(|e| Failed {
                at: 0,
                refused: e.into(),
            })?;
        let Some(fences) = fences else {
            return Ok(false);
        };
        let taken: Vec<(String, i64)> = tokens.into_iter().zip(fences).collect();
        for (at, (token, fence)) in taken.iter().enumerate() {
            if let Err(refused) = self.holds[at].1.adopt(token.clone(), *fence) {
                // Replicas fell short or renewal failed: none is kept, also
                // not those taken by the script but not adopted yet.
                for ((_, h), (token, _)) in self.holds[at + 1..].iter().zip(&taken[at + 1..]) {
                    let _ = super::release(&self.config, h.keys(), token.as_bytes());
                }
                self.release_held();
                return Err(Failed { at, refused });
            }
        }
        Ok(true)
    }

    /// Each in key order, waiting in each line within one deadline.
    fn take_in_order(&mut self, wait: Duration) -> Result<bool, Failed> {
        let deadline = Instant::now().checked_add(wait);
        for at in 0..self.holds.len() {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let taken = self.holds[at].1.acquire(Wait::up_to(left));
            if !matches!(taken, Ok(true)) {
                self.release_held();
                return taken.map_err(|refused| Failed { at, refused });
            }
        }
        Ok(true)
    }

    /// Releases every lock held, in reverse key order (best effort); the
    /// first refusal, if any.
    fn release_held(&mut self) -> Option<Failed> {
        let mut first = None;
        for (at, (_, h)) in self.holds.iter_mut().enumerate().rev() {
            if h.is_mine()
                && let Err(refused) = h.release()
            {
                first.get_or_insert(Failed { at, refused });
            }
        }
        first
    }

    /// Releases every lock; `NotHeld` when this object holds none. A lock
    /// lost does not keep the others held.
    pub fn release(&mut self) -> Result<(), Failed> {
        if !self.holds_any() {
            return Err(Failed {
                at: 0,
                refused: Refused::NotHeld,
            });
        }
        match self.release_held() {
            None => Ok(()),
            Some(failed) => Err(failed),
        }
    }

    /// Sets the lease of every lock to `lease` (default: the locks') from now.
    pub fn extend(&mut self, lease: Option<Duration>) -> Result<(), Failed> {
        for (at, (_, h)) in self.holds.iter_mut().enumerate() {
            h.extend(lease).map_err(|refused| Failed { at, refused })?;
        }
        Ok(())
    }

    /// Whether this object holds every lock and Redis still has them.
    pub fn is_held(&self) -> Result<bool, Error> {
        for (_, h) in &self.holds {
            if !h.is_held()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// What is left of the shortest lease (the hold ends with it); None
    /// when not every lock is held.
    pub fn remaining(&self) -> Result<Option<Duration>, Error> {
        let mut least: Option<Duration> = None;
        for (_, h) in &self.holds {
            match h.remaining()? {
                Some(left) => least = Some(least.map_or(left, |l| l.min(left))),
                None => return Ok(None),
            }
        }
        Ok(least)
    }

    /// The object goes away: see [`Hold::end`].
    pub fn end(&mut self, release: bool) {
        for (_, h) in self.holds.iter_mut().rev() {
            h.end(release);
        }
    }
}
