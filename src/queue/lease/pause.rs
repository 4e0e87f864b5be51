//! Pausing a queue's consumers: while it is paused, `reserve()` and the
//! seed's `pop()` take nothing (leased tasks finish as usual, producers go
//! on enqueueing); resuming wakes the consumers waiting in its line.

use std::sync::LazyLock;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::{Keys, register, wake_ms};
use crate::scripts::{Script, script};

static PAUSE: LazyLock<Script> = script!("queue_pause.lua");

fn switch(config: &Config, keys: &Keys, op: &str) -> Result<bool, Error> {
    let changed: i64 = conn::with(config, |c| {
        keys.call(&PAUSE)
            .arg(op)
            .arg(&keys.waiters)
            .arg(wake_ms())
            .invoke(c)
    })?;
    Ok(changed == 1)
}

/// Pauses the queue's consumers; false when it was paused already. A queue
/// paused before its first enqueue is listed from then on.
pub fn pause(config: &Config, keys: &Keys) -> Result<bool, Error> {
    let changed = switch(config, keys, "pause")?;
    register(config, keys)?;
    Ok(changed)
}

/// Lets the queue's consumers take tasks again, waking those waiting; false
/// when it was not paused.
pub fn resume(config: &Config, keys: &Keys) -> Result<bool, Error> {
    switch(config, keys, "resume")
}
