//! The lock contract: what every kind of hold answers (a lock, a read or
//! write lock, a semaphore's permits, a multi-lock, a Redlock), with one
//! refusal type ([`Refused`]). `tests/contract.rs` runs one suite over
//! every kind through it; PHP's `RedisLock\LockInterface` is its face.

use std::time::Duration;

use super::Wait;
use super::hold::{Hold, Refused};
use super::multi::MultiHold;
use super::redlock::{Denied, NoQuorum, Nodes, Redlock};
use crate::conn::Error;

/// One kind of hold, as its holder uses it.
pub trait Holding: Send {
    /// Takes it, waiting up to `wait`; false when not taken in time.
    fn acquire(&mut self, wait: Duration) -> Result<bool, Refused>;
    /// Gives it back: [`Refused::NotHeld`] when this object holds
    /// nothing, [`Refused::Lost`] when it was lost before.
    fn release(&mut self) -> Result<(), Refused>;
    /// A new lease (None: the hold's own); refused as `release`.
    fn extend(&mut self, lease: Option<Duration>) -> Result<(), Refused>;
    /// Whether this object holds it and Redis still has it.
    fn is_held(&self) -> Result<bool, Error>;
    /// What is left of the hold (`Duration::MAX`: no expiry); None when
    /// not held.
    fn remaining(&self) -> Result<Option<Duration>, Error>;
    /// The fencing token of the current hold (None: not held, or a kind
    /// without one).
    fn fence(&self) -> Option<i64>;
}

impl Holding for Hold {
    fn acquire(&mut self, wait: Duration) -> Result<bool, Refused> {
        Hold::acquire(self, Wait::up_to(wait))
    }
    fn release(&mut self) -> Result<(), Refused> {
        Hold::release(self)
    }
    fn extend(&mut self, lease: Option<Duration>) -> Result<(), Refused> {
        Hold::extend(self, lease)
    }
    fn is_held(&self) -> Result<bool, Error> {
        Hold::is_held(self)
    }
    fn remaining(&self) -> Result<Option<Duration>, Error> {
        Hold::remaining(self)
    }
    fn fence(&self) -> Option<i64> {
        Hold::fence(self)
    }
}

/// A multi-lock's refusal is its failing lock's (which one: `Failed::at`,
/// for messages).
impl Holding for MultiHold {
    fn acquire(&mut self, wait: Duration) -> Result<bool, Refused> {
        MultiHold::acquire(self, wait).map_err(|f| f.refused)
    }
    fn release(&mut self) -> Result<(), Refused> {
        MultiHold::release(self).map_err(|f| f.refused)
    }
    fn extend(&mut self, lease: Option<Duration>) -> Result<(), Refused> {
        MultiHold::extend(self, lease).map_err(|f| f.refused)
    }
    fn is_held(&self) -> Result<bool, Error> {
        MultiHold::is_held(self)
    }
    fn remaining(&self) -> Result<Option<Duration>, Error> {
        MultiHold::remaining(self)
    }
    /// Its first lock's (a fencing token per lock: `holds()`).
    fn fence(&self) -> Option<i64> {
        self.holds().next().and_then(|(_, h)| h.fence())
    }
}

/// What a Redlock's denial is as a refusal.
pub fn refusal(denied: Denied, nodes: &Nodes) -> Refused {
    let (n, quorum) = (nodes.nodes.len(), nodes.quorum());
    match denied {
        Denied::NotHeld => Refused::NotHeld,
        Denied::AlreadyHeld => Refused::AlreadyHeld,
        Denied::WaitBelowRetryDelay(wait) => Refused::Invalid(format!(
            "RedisLock\\Redlock::acquire(): Argument #1 ($wait) ({} s) is shorter than the Redlock's retryDelay ({} s): no retry could happen within it",
            wait.as_secs_f64(),
            nodes.retry_delay.as_secs_f64()
        )),
        Denied::Nodes(NoQuorum::Busy) => {
            Refused::Lost(format!("fewer than {quorum} of {n} nodes still held it"))
        }
        Denied::Nodes(NoQuorum::Unavailable(failed)) => Refused::Unreachable { failed, nodes: n },
    }
}

impl Holding for Redlock {
    fn acquire(&mut self, wait: Duration) -> Result<bool, Refused> {
        let nodes = self.nodes().clone();
        Redlock::acquire(self, wait).map_err(|d| refusal(d, &nodes))
    }
    fn release(&mut self) -> Result<(), Refused> {
        let nodes = self.nodes().clone();
        Redlock::release(self).map_err(|d| refusal(d, &nodes))
    }
    fn extend(&mut self, lease: Option<Duration>) -> Result<(), Refused> {
        let nodes = self.nodes().clone();
        Redlock::extend(self, lease).map_err(|d| refusal(d, &nodes))
    }
    fn is_held(&self) -> Result<bool, Error> {
        Ok(Redlock::is_held(self))
    }
    fn remaining(&self) -> Result<Option<Duration>, Error> {
        Ok(Redlock::remaining(self))
    }
    /// None: each node would count its own.
    fn fence(&self) -> Option<i64> {
        None
    }
}
