//! The seed's `RedisLock`: one object's named locks (`Lock:<name>`), each
//! with an owner token of its own, kept in the process's registry of held
//! locks so the object, the request end or the process end releases them.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use super::registry::{self, Held};
use super::{Keys, Wait};
use crate::config::Config;
use crate::conn::Error;

/// How a lock stands for the object that took it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The object never took it (or released it).
    NotTaken,
    /// The object took it, but the key is gone or holds another's token.
    Lost,
    /// Held: its lease ends at this unix second on the server's clock (-1:
    /// somebody removed its expiry).
    Until(i64),
}

/// The locks one object holds.
pub struct SeedLocks {
    config: Arc<Config>,
    owner: u64,
    /// The keys of the last name acquired: code that locks one name again
    /// and again builds them once.
    last: RefCell<Option<(Vec<u8>, Arc<Keys>)>>,
}

impl SeedLocks {
    pub fn new(config: Arc<Config>) -> Self {
        Self {
            config,
            owner: registry::new_owner(),
            last: RefCell::new(None),
        }
    }

    /// Takes lock `name` for `lease`, waiting as `wait` says; true if taken.
    pub fn acquire(&self, name: &[u8], lease: Duration, wait: Wait) -> Result<bool, Error> {
        let keys = self.keys(name);
        let token = crate::identity::token();
        let acquired = super::acquire(&self.config, &keys, &token, lease, wait)?.is_some();
        if acquired {
            let held = Held::new(self.config.clone(), keys, token);
            registry::insert(self.owner, name.to_vec(), held);
        }
        Ok(acquired)
    }

    /// The keys of lock `name`.
    fn keys(&self, name: &[u8]) -> Arc<Keys> {
        let mut last = self.last.borrow_mut();
        match &*last {
            Some((known, keys)) if known == name => keys.clone(),
            _ => {
                let keys = Arc::new(Keys::seed(&self.config.prefix, name));
                *last = Some((name.to_vec(), keys.clone()));
                keys
            }
        }
    }

    /// Releases lock `name` if Redis still holds this object's token for it;
    /// true only if this call deleted it. The object forgets it in any case.
    pub fn release(&self, name: &[u8]) -> Result<bool, Error> {
        match registry::remove(self.owner, name) {
            Some(h) => super::release(&h.config, &h.keys, h.token.as_bytes()),
            None => Ok(false),
        }
    }

    /// Releases every lock of this object: true if each one was released;
    /// the first error, after trying them all.
    pub fn release_all(&self) -> Result<bool, Error> {
        let mut all = true;
        let mut first_error = None;
        for name in registry::names(self.owner) {
            match self.release(&name) {
                Ok(released) => all &= released,
                Err(e) => {
                    all = false;
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(all),
        }
    }

    /// Sets a new lease on lock `name`; false if this object does not hold
    /// it (any more).
    pub fn extend(&self, name: &[u8], lease: Duration) -> Result<bool, Error> {
        match registry::get(self.owner, name) {
            Some(h) => super::extend(&h.config, &h.keys.lock, &h.token, lease),
            None => Ok(false),
        }
    }

    /// How lock `name` stands for this object, as the seed's `isLocking()`
    /// reads it.
    pub fn standing(&self, name: &[u8]) -> Result<Standing, Error> {
        Ok(match registry::get(self.owner, name) {
            None => Standing::NotTaken,
            Some(h) => match super::expiry(&h.config, &h.keys.lock, &h.token)? {
                Some(at) => Standing::Until(at),
                None => Standing::Lost,
            },
        })
    }

    /// Whether this object took lock `name` (whatever Redis says now).
    pub fn took(&self, name: &[u8]) -> bool {
        registry::get(self.owner, name).is_some()
    }

    /// Gives up the object's locks: released when `release` (the request-end
    /// setting), else left to their leases.
    pub fn end(&self, release: bool) {
        registry::end(registry::take_owner(self.owner), release);
    }
}
