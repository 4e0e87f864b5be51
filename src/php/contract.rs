//! `RedisLock\LockInterface`: what every kind of lock answers, so that
//! application code can take "a lock" without caring which (a `Lock`, a
//! read or write lock, a `MultiLock`, a `Redlock`), as symfony/lock's
//! `LockInterface` lets its users. The classes implement it with their own
//! methods; PHP checks at startup that each one's match.

use ext_php_rs::prelude::*;

use super::value::{Arg, Float, NullableFloat};

/// The lock contract, as PHP sees it (the trait declares the interface:
/// the classes answer it with their own methods, not through Rust).
#[allow(dead_code)]
#[php_interface]
#[php(name = "RedisLock\\LockInterface")]
pub trait LockInterface {
    /// Takes the lock, waiting up to `$wait` seconds (0: one try, INF: no
    /// limit); false when not acquired in time.
    #[php(defaults(wait = 0))]
    fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool>;

    /// Releases the lock; true. `NotHeldException` when this object does
    /// not hold it, `LockLostException` when it was lost before.
    fn release(&mut self) -> PhpResult<bool>;

    /// A new lease of `$ttl` seconds (default: the lock's ttl); exceptions
    /// as `release()`.
    fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool>;

    /// Whether this object holds the lock and Redis still has it.
    fn is_held(&self) -> PhpResult<bool>;

    /// Seconds left of the hold, or null when not held.
    fn remaining(&self) -> PhpResult<Option<f64>>;

    /// The fencing token of the current hold, or null (not held, or a
    /// kind without one).
    fn token(&self) -> Option<i64>;
}
