//! `RedisLock\Runtime`: the request boundary of runtimes whose PHP process
//! serves many requests (RoadRunner, FrankenPHP's worker mode, Laravel
//! Octane, Swoole, queue workers), where PHP's own request end never comes.

use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::ini;
use super::value::{array, binary};
use crate::lock::registry;

/// The request boundary: what PHP does for the locks at the end of every
/// request, for a loop to do after each request it serves.
#[php_class]
#[php(name = "RedisLock\\Runtime")]
pub struct Runtime;

#[php_impl]
impl Runtime {
    /// Not for PHP code: the methods are static.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(super::errors::made_by(
            "RedisLock\\Runtime",
            "its methods are static (RedisLock\\Runtime::endRequest())",
        ))
    }

    /// Ends the request for the locks, as the end of a PHP-FPM or CLI request
    /// does: stops every lease renewal, releases every lock still held (unless
    /// `redislock.release_at_request_end` is off, or the lock was made with
    /// `releaseAtRequestEnd` false: those are left to their leases) and forgets
    /// reentrant holds and the request's trace parent (`Telemetry::setParent()`).
    /// Lock objects that live on (in a static, a service) hold nothing
    /// afterwards.
    pub fn end_request() -> i64 {
        crate::telemetry::end_request();
        registry::end_request(ini::settings().release_at_request_end) as i64
    }

    /// The Redis keys of the locks this process holds now (a lock taken
    /// twice, reentrantly, once): what the next `endRequest()` lets go of.
    pub fn held() -> PhpResult<Zval> {
        let mut list = ZendHashTable::new();
        for key in registry::keys() {
            list.push(binary(&key))?;
        }
        Ok(array(list))
    }
}
