//! Durations as Redis takes them.

use std::time::Duration;

/// Milliseconds for Redis, at least 1.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The lease of a lock that never expires (Laravel's `seconds = 0`): it
/// stays until a release, or a forced one.
pub const FOREVER: Duration = Duration::MAX;

/// A lock's lease as the scripts take it: ms, or 0 for [`FOREVER`].
pub fn lease_ms(lease: Duration) -> u64 {
    if lease == FOREVER { 0 } else { millis(lease) }
}
