//! redislock: distributed locks and task queues on Redis for PHP.
//!
//! The engines (`lock`, `queue`) know nothing of PHP; the bindings in `php`
//! know nothing of Redis. Built without the `php` feature, the crate is the
//! engines alone, which is how the Rust integration tests link it.

pub mod batch;
pub mod config;
pub mod conn;
pub mod identity;
pub mod keys;
pub mod limit;
pub mod lock;
pub mod once;
pub mod process;
pub mod queue;
mod resp;
mod scripts;
pub mod shown;
pub mod signals;
pub mod stock;
pub mod telemetry;
pub mod time;
pub mod token;
pub mod wait;
pub mod wire;

#[cfg(feature = "php")]
mod php;
