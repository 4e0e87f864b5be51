//! A lock held through one object (a `RedisLock\Lock`): how often it is held
//! (reentrancy), whether it still counts as held or was lost, and the lease
//! renewal that keeps it. The binding only words the outcomes.
//!
//! Owner rules: a plain lock belongs to its object; a reentrant one to the
//! process (Redisson's per-thread ownership: a PHP request runs on one
//! thread), shared by every object of the same deployment and name. Each
//! object counts the holds it took itself, so dropping it gives back those.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::permits::UNLIMITED;
use super::registry::{self, Held};
use super::renew::{self, Lease};
use super::{Keys, Wait};
use crate::config::Config;
use crate::conn::Error;
use crate::keys::Kind;

/// What a lock is asked for.
#[derive(Clone, Debug)]
pub struct Options {
    pub lease: Duration,
    pub reentrant: bool,
    pub auto_renew: bool,
    pub max_hold: Duration,
    /// Replicas that must acknowledge an acquire within `replica_timeout`
    /// (0: do not wait for replicas).
    pub replicas: u64,
    pub replica_timeout: Duration,
    /// False: the lock outlives its object and the request, until its lease
    /// runs out or a release (framework locks passed between requests).
    pub release_at_end: bool,
    /// The owner the caller names (plain locks only): the lock then belongs
    /// to whoever names that owner, in any object or process, and not to
    /// the object that took it (Laravel's owners, restored between jobs).
    pub owner: Option<Vec<u8>>,
    /// The lock is the key named as is ([`Keys::exact`]), not `lock:{<name>}`.
    pub exact_key: bool,
}

/// Why an operation on a hold did not do what was asked.
#[derive(Debug)]
pub enum Refused {
    /// Redis failed or answered with an error.
    Redis(Error),
    /// This object does not hold the lock.
    NotHeld,
    /// The lock was held and is no longer: the reason.
    Lost(String),
    /// Held already by this object, and not reentrant.
    AlreadyHeld,
    /// Fewer replicas acknowledged the acquire than asked; it was released.
    Unconfirmed { acked: u64, wanted: u64 },
    /// The renewal thread could not be started; the lock was released.
    Renewal(std::io::Error),
    /// Promotion and demotion are for holds of a read-write lock that are
    /// not reentrant.
    NotReadWrite,
    /// A forced release is for plain locks (not permits).
    NotPlain,
    /// Asked in a way that could never work (a Redlock's wait shorter than
    /// its retry delay): the whole message.
    Invalid(String),
    /// Too many of a Redlock's `nodes` failed for a majority to be
    /// possible: each failure.
    Unreachable { failed: Vec<Error>, nodes: usize },
}

impl From<Error> for Refused {
    fn from(e: Error) -> Self {
        Refused::Redis(e)
    }
}

/// Why a lock is lost when Redis no longer has its token.
pub const GONE: &str = "its lease ran out, or its key was deleted or taken by another owner";

pub struct Hold {
    config: Arc<Config>,
    keys: Arc<Keys>,
    options: Options,
    /// Who holds it in the process's registry: the object, or the process.
    owner: u64,
    /// Its name in that registry.
    entry: Vec<u8>,
    /// How many of the holds were taken through this object.
    mine: u32,
    /// The request they were taken in ([`registry::request`]): a request
    /// boundary ends them, though the object lives on.
    request: u64,
    /// The owner token of a caller-named owner ([`Options::owner`]).
    named: Option<String>,
}

/// Why the renewal of a held lock gave up on it, if it did.
fn lost_reason(h: &Held) -> Option<String> {
    h.renewal.and_then(renew::lost)
}

/// Whether `name` may not name an `exactKey` lock or read-write lock under
/// `config`: `<prefix><name>` is a key the extension keeps for another
/// name ([`crate::keys::reserved`]).
pub fn exact_refused(config: &Config, name: &[u8]) -> bool {
    crate::keys::reserved(&config.prefix, name)
}

impl Hold {
    /// A hold of the `RedisLock\` lock `name`, not yet taken.
    pub fn new(config: Arc<Config>, name: &[u8], options: Options) -> Self {
        let keys = if options.exact_key {
            Keys::exact(&config.prefix, name)
        } else {
            Keys::named(&config.prefix, name)
        };
        Self::of(config, keys, options)
    }

    /// A hold of the leader `name`'s lock (see `leader`), not yet taken.
    pub fn leader(config: Arc<Config>, name: &[u8], options: Options) -> Self {
        let keys = super::leader::keys(&config.prefix, name);
        Self::of(config, keys, options)
    }

    /// A hold of `take` of the `permits` permits of semaphore `name`.
    pub fn semaphore(
        config: Arc<Config>,
        name: &[u8],
        take: u64,
        permits: u64,
        options: Options,
    ) -> Self {
        let keys = Keys::permits(&config.prefix, Kind::Semaphore, name, take, permits);
        Self::of(config, keys, options)
    }

    /// The write hold (`write`) or a read hold of read-write lock `name`
    /// (with [`Options::exact_key`], on the key itself in Symfony's format).
    pub fn read_write(config: Arc<Config>, name: &[u8], write: bool, options: Options) -> Self {
        let take = if write { UNLIMITED } else { 1 };
        let keys = if options.exact_key {
            Keys::symfony(&config.prefix, name, take)
        } else {
            Keys::permits(&config.prefix, Kind::RwLock, name, take, UNLIMITED)
        };
        Self::of(config, keys, options)
    }

    /// A hold of what `keys` name (a lock, or permits), not yet taken.
    pub fn of(config: Arc<Config>, keys: Keys, mut options: Options) -> Self {
        if options.auto_renew {
            // A renewed lock never holds a lease past its maximum hold time.
            options.lease = options.lease.min(options.max_hold);
        }
        let (owner, entry) = if options.reentrant {
            let mut entry = config.id.clone().into_bytes();
            entry.push(0);
            entry.extend_from_slice(&keys.lock);
            // A read and a write hold of one read-write lock are two holds.
            if let Some(p) = &keys.permits {
                entry.extend_from_slice(format!("\0{}/{}", p.take, p.of).as_bytes());
            }
            (registry::PROCESS, entry)
        } else {
            (registry::new_owner(), keys.lock.clone())
        };
        let named = options.owner.as_deref().map(crate::token::owner_token);
        Hold {
            keys: Arc::new(keys),
            config,
            options,
            owner,
            entry,
            mine: 0,
            request: 0,
            named,
        }
    }

    /// The keys of what is held.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// What it is, for messages: lock, read lock, write lock, semaphore.
    pub fn what(&self) -> &'static str {
        self.keys.what()
    }

    /// How many permits this object holds now (0: none; 0 for a lock).
    pub fn permits_held(&self) -> u64 {
        match &self.keys.permits {
            Some(p) if self.is_mine() => p.take,
            _ => 0,
        }
    }

    /// The permits in use and the waiters in line, now (holds of permits).
    pub fn permits_usage(&self) -> Result<super::permits::Usage, Error> {
        super::permits::usage(&self.config, &self.keys, None)
    }

    /// The registry's record of this lock for its owner, in this process.
    fn record(&self) -> Option<Held> {
        registry::get(self.owner, &self.entry).filter(|h| h.pid == crate::process::id())
    }

    /// The record, if this object holds the lock: one taken in an earlier
    /// request only when it was told to outlive the request.
    fn mine(&self) -> Option<Held> {
        if self.mine == 0 {
            return None;
        }
        self.record()
            .filter(|h| self.request == registry::request() || h.outlives_request)
    }

    /// Counts this object's holds from 0 when a request boundary ended them
    /// (not those told to outlive the request).
    fn in_this_request(&mut self) {
        let request = registry::request();
        if self.request != request {
            self.request = request;
            if !self.record().is_some_and(|h| h.outlives_request) {
                self.mine = 0;
            }
        }
    }

    /// The token of a caller-named owner, when this object did not take the
    /// lock itself: it then speaks for that owner, wherever it took the lock.
    fn by_name(&self) -> Option<&str> {
        self.named.as_deref().filter(|_| self.mine().is_none())
    }

    /// The record of a lock this object must hold.
    fn held(&mut self) -> Result<Held, Refused> {
        self.mine().ok_or_else(|| {
            // Released at request end, or never acquired.
            self.mine = 0;
            Refused::NotHeld
        })
    }

    /// Takes the lock, waiting up to `wait` in its line; false when not
    /// acquired in time. A reentrant lock already held by the process is
    /// taken again once Redis confirms it still holds it.
    pub fn acquire(&mut self, wait: Wait) -> Result<bool, Refused> {
        self.in_this_request();
        let mut record = self.record();
        if let Some(h) = record.take_if(|_| !self.options.reentrant) {
            // Held by this object: refused, unless it was lost meanwhile
            // (lease ran out, forced release); then it is taken anew.
            let gone = || super::hold_remaining(&h.config, &h.keys, &h.token).map(|l| l.is_none());
            if lost_reason(&h).is_none() && !gone()? {
                return Err(Refused::AlreadyHeld);
            }
            self.forget(&h);
        }
        // Reentrant: held already, by this object or another of the process.
        if let Some(h) = record {
            if let Some(reason) = lost_reason(&h) {
                return Err(Refused::Lost(reason));
            }
            if super::hold_remaining(&h.config, &h.keys, &h.token)?.is_none() {
                return Err(Refused::Lost(GONE.into()));
            }
            registry::set_count(self.owner, &self.entry, h.count + 1);
            self.mine += 1;
            return Ok(true);
        }
        let token = self.named.clone().unwrap_or_else(crate::identity::token);
        let lease = self.options.lease;
        let Some(fence) = super::acquire(&self.config, &self.keys, &token, lease, wait)? else {
            return Ok(false);
        };
        self.adopt(token, fence)?;
        Ok(true)
    }

    /// Makes a lock just acquired with `token` (by [`super::acquire`], or
    /// with others by [`super::acquire_all`]) this object's hold: replicas
    /// confirmed, renewal started, recorded for release at request end.
    pub fn adopt(&mut self, token: String, fence: i64) -> Result<(), Refused> {
        self.in_this_request();
        let lease = self.options.lease;
        if self.options.replicas > 0 {
            let (wanted, timeout) = (self.options.replicas, self.options.replica_timeout);
            let acked = super::confirm(&self.config, &self.keys, &token, wanted, timeout)?;
            if acked < wanted {
                return Err(Refused::Unconfirmed { acked, wanted });
            }
        }
        let mut h = Held::new(self.config.clone(), self.keys.clone(), token);
        h.fence = fence;
        h.outlives_request = !self.options.release_at_end;
        if self.options.auto_renew {
            let renewal = renew::start(Lease {
                config: self.config.clone(),
                keys: self.keys.clone(),
                token: h.token.clone(),
                lease,
                until: Instant::now() + self.options.max_hold,
                max_hold: self.options.max_hold,
            });
            match renewal {
                Ok(id) => h.renewal = Some(id),
                Err(e) => {
                    let _ = super::release(&h.config, &h.keys, h.token.as_bytes());
                    return Err(Refused::Renewal(e));
                }
            }
        }
        registry::insert(self.owner, self.entry.clone(), h);
        self.mine += 1;
        Ok(())
    }

    /// Makes this object's hold of a read-write lock a hold of `take`
    /// permits (the read lock's one, or the write lock's all) with a new
    /// lease, without waiting: true when done (at once when it holds that
    /// many already), false when a promotion finds other readers (the read
    /// lock stays held).
    pub fn change_permits(&mut self, take: u64) -> Result<bool, Refused> {
        if !self.keys.read_write() || self.options.reentrant {
            return Err(Refused::NotReadWrite);
        }
        let mut h = self.held()?;
        if let Some(reason) = lost_reason(&h) {
            return Err(Refused::Lost(reason));
        }
        let mut keys = (*self.keys).clone();
        keys.permits = keys.permits.map(|p| super::permits::Permits { take, ..p });
        if keys == *self.keys {
            return Ok(true);
        }
        let lease = self.options.lease;
        match super::permits::change(&self.config, &keys, &h.token, lease, take)? {
            super::permits::Changed::Done(fence) => {
                h.fence = fence;
                h.keys = Arc::new(keys);
                self.keys = h.keys.clone();
                registry::insert(self.owner, self.entry.clone(), h);
                Ok(true)
            }
            super::permits::Changed::Busy => Ok(false),
            super::permits::Changed::Gone => Err(Refused::Lost(GONE.into())),
        }
    }

    /// The lease each acquire takes.
    pub fn lease(&self) -> Duration {
        self.options.lease
    }

    /// Gives back one hold; the last one releases the lock (handing it to
    /// the next waiter). Lost if Redis no longer had this hold's token.
    pub fn release(&mut self) -> Result<(), Refused> {
        if let Some(token) = self.by_name() {
            return match super::release(&self.config, &self.keys, token.as_bytes())? {
                true => Ok(()),
                false => Err(Refused::NotHeld),
            };
        }
        let h = self.held()?;
        self.mine -= 1;
        if h.count > 1 {
            registry::set_count(self.owner, &self.entry, h.count - 1);
            return match lost_reason(&h) {
                Some(reason) => Err(Refused::Lost(reason)),
                None => Ok(()),
            };
        }
        registry::remove(self.owner, &self.entry);
        let lost = h.renewal.and_then(renew::stop);
        // Our token still under the key means nobody else held it meanwhile,
        // whatever the renewal thought. A loss the renewal already knew
        // stays the answer when Redis is out of reach (a partition): the
        // key runs out by its lease.
        match (super::release(&h.config, &h.keys, h.token.as_bytes()), lost) {
            (Ok(true), _) => Ok(()),
            (Ok(false), lost) => Err(Refused::Lost(lost.unwrap_or_else(|| GONE.into()))),
            (Err(_), Some(reason)) => Err(Refused::Lost(reason)),
            (Err(e), None) => Err(e.into()),
        }
    }

    /// Sets the lease to `lease` (default: the lock's) from now.
    pub fn extend(&mut self, lease: Option<Duration>) -> Result<(), Refused> {
        let lease = lease.unwrap_or(self.options.lease);
        if let Some(token) = self.by_name() {
            return match super::extend_hold(&self.config, &self.keys, token, lease)? {
                true => Ok(()),
                false => Err(Refused::NotHeld),
            };
        }
        let h = self.held()?;
        if let Some(reason) = lost_reason(&h) {
            return Err(Refused::Lost(reason));
        }
        if super::extend_hold(&h.config, &h.keys, &h.token, lease)? {
            Ok(())
        } else {
            Err(Refused::Lost(GONE.into()))
        }
    }

    /// Whether this object holds the lock and Redis still has its token.
    pub fn is_held(&self) -> Result<bool, Error> {
        Ok(self.remaining()?.is_some())
    }

    /// The lock's owner: the caller-named one ([`Options::owner`]), or the
    /// token of the hold this object took (None when it holds none).
    pub fn owner(&self) -> Option<Vec<u8>> {
        self.options
            .owner
            .clone()
            .or_else(|| self.mine().map(|h| h.token.into_bytes()))
    }

    /// Releases the lock whoever holds it, handing it to the next waiter in
    /// line; true if it was held. This object's own hold ends with it.
    pub fn force_release(&mut self) -> Result<bool, Refused> {
        if self.keys.permits.is_some() {
            return Err(Refused::NotPlain);
        }
        if let Some(h) = self.mine() {
            self.forget(&h);
        }
        Ok(super::force_release(&self.config, &self.keys)?)
    }

    /// Drops this object's record of a hold that ended in Redis.
    fn forget(&mut self, h: &Held) {
        registry::remove(self.owner, &self.entry);
        if let Some(id) = h.renewal {
            renew::stop(id);
        }
        self.mine = 0;
    }

    /// The fencing token of the current hold.
    pub fn fence(&self) -> Option<i64> {
        // Only a hold of all the permits (a write lock) has one.
        let shared = self.keys.permits.as_ref().is_some_and(|p| p.take < p.of);
        self.mine().filter(|_| !shared).map(|h| h.fence)
    }

    /// Whether this object holds it (without asking Redis).
    pub fn is_mine(&self) -> bool {
        self.mine().is_some()
    }

    /// What is left of the lease (`Duration::MAX`: no expiry); None when
    /// not held (any more).
    pub fn remaining(&self) -> Result<Option<Duration>, Error> {
        if let Some(token) = self.by_name() {
            return super::hold_remaining(&self.config, &self.keys, token);
        }
        match self.mine().filter(|h| lost_reason(h).is_none()) {
            Some(h) => super::hold_remaining(&h.config, &h.keys, &h.token),
            None => Ok(None),
        }
    }

    /// The object goes away: gives back its holds, releasing the lock (if
    /// `release`) when they were the last. Never fails.
    pub fn end(&mut self, release: bool) {
        let Some(h) = self.mine() else {
            self.mine = 0;
            return;
        };
        if h.count > self.mine {
            registry::set_count(self.owner, &self.entry, h.count - self.mine);
        } else {
            registry::remove(self.owner, &self.entry);
            registry::end(vec![h], release);
        }
        self.mine = 0;
    }
}
