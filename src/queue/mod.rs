//! The queue engine (the seed's `RedisQueue`): a sorted set of task ids
//! scored by due time in seconds on the Redis server's clock. Every
//! operation is one Lua script, so no lock is needed around it.

use std::sync::LazyLock;

use redis::Script;

use crate::config::Config;
use crate::conn::{self, Error};

static ENQUEUE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/queue_enqueue.lua")));
static DEQUEUE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/queue_dequeue.lua")));
static DUE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/queue_due.lua")));

/// A task as stored: its id and its due time (the score).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub id: Vec<u8>,
    pub score: f64,
}

/// A score as text that parses back to the same `f64` (Rust's shortest
/// round-trip form; Redis and Lua read it with strtod).
pub fn score_arg(score: f64) -> String {
    format!("{score}")
}

/// Adds `ids` due `delay` seconds from the server's now; ids already queued
/// keep their score. Returns how many were added.
pub fn enqueue(config: &Config, key: &[u8], ids: &[Vec<u8>], delay: f64) -> Result<u64, Error> {
    conn::with(config, |c| {
        let mut call = ENQUEUE.key(key);
        call.arg(score_arg(delay));
        for id in ids {
            call.arg(id.as_slice());
        }
        call.invoke(c)
    })
}

/// Removes `id` if its score is still exactly `score`.
pub fn dequeue(config: &Config, key: &[u8], id: &[u8], score: f64) -> Result<bool, Error> {
    let removed: i64 = conn::with(config, |c| {
        DEQUEUE.key(key).arg(id).arg(score_arg(score)).invoke(c)
    })?;
    Ok(removed == 1)
}

/// Removes and returns up to `count` due tasks, earliest first.
pub fn pop(config: &Config, key: &[u8], count: u64) -> Result<Vec<Task>, Error> {
    due(config, key, count, true)
}

/// Returns up to `count` due tasks, earliest first, leaving them queued.
pub fn top(config: &Config, key: &[u8], count: u64) -> Result<Vec<Task>, Error> {
    due(config, key, count, false)
}

fn due(config: &Config, key: &[u8], count: u64, remove: bool) -> Result<Vec<Task>, Error> {
    let flat: Vec<Vec<u8>> = conn::with(config, |c| {
        DUE.key(key)
            .arg(count)
            .arg(if remove { "1" } else { "0" })
            .invoke(c)
    })?;
    let mut tasks = Vec::with_capacity(flat.len() / 2);
    let mut it = flat.into_iter();
    while let (Some(id), Some(score)) = (it.next(), it.next()) {
        let score = std::str::from_utf8(&score)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| Error::Server {
                server: config.server.clone(),
                cause: format!(
                    "score of task in {} is not a number",
                    String::from_utf8_lossy(key)
                ),
            })?;
        tasks.push(Task { id, score });
    }
    Ok(tasks)
}
