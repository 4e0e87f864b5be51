//! `RedisLock\Client`: the entry point of the object API, one per Redis
//! server (or DSN), handing out `RedisLock\Lock` objects.

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::prelude::*;

use super::lock::{Lock, Options};
use super::value::{Arg, NullableArray, Optional, Text, Value, type_error, value_error};
use super::{config_from_param, lease};
use crate::config::Config;

/// The object API's entry point: one Redis server (DSN or options), handing
/// out locks.
#[php_class]
#[php(name = "RedisLock\\Client")]
pub struct Client {
    config: Arc<Config>,
}

const DEFAULT_TTL: f64 = 30.0;
const DEFAULT_MAX_HOLD: f64 = 300.0;
const OPTION_NAMES: &str = "ttl, reentrant, autoRenew, maxHold";

fn flag(value: &Value, param: &str) -> PhpResult<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(type_error(format!(
            "{param} must be of type bool, {} given",
            other.type_name()
        ))),
    }
}

/// A positive number of seconds.
fn seconds(value: &Value, param: &str) -> PhpResult<Duration> {
    let n = value.number(param)?;
    if n.is_nan() || n <= 0.0 {
        return Err(value_error(format!(
            "{param} must be a number of seconds greater than 0, {n} given"
        )));
    }
    lease(n, param)
}

fn lock_options(options: &Value) -> PhpResult<Options> {
    const METHOD: &str = "RedisLock\\Client::lock(): Argument #2 ($options)";
    let entries: &[(String, Value)] = match options {
        Value::Null => &[],
        Value::Array(entries) => entries,
        other => {
            return Err(type_error(format!(
                "{METHOD} must be of type ?array, {} given",
                other.type_name()
            )));
        }
    };
    let mut ttl = Duration::from_secs_f64(DEFAULT_TTL);
    let mut max_hold = Duration::from_secs_f64(DEFAULT_MAX_HOLD);
    let (mut reentrant, mut auto_renew) = (false, false);
    for (name, value) in entries {
        let param = format!("{METHOD} option '{name}'");
        match name.as_str() {
            "ttl" => ttl = seconds(value, &param)?,
            "maxHold" => max_hold = seconds(value, &param)?,
            "reentrant" => reentrant = flag(value, &param)?,
            "autoRenew" => auto_renew = flag(value, &param)?,
            _ => {
                return Err(value_error(format!(
                    "{METHOD} has an unknown option '{name}' (known: {OPTION_NAMES})"
                )));
            }
        }
    }
    Ok(Options {
        // A renewed lock never holds a lease past its maximum hold time.
        lease: if auto_renew { ttl.min(max_hold) } else { ttl },
        reentrant,
        auto_renew,
        max_hold,
    })
}

#[php_impl]
impl Client {
    /// `$connection`: null for the `redislock.*` INI defaults, a DSN string,
    /// or an options array (dsn, host, port, socket, database, username,
    /// password, timeout, read_timeout, prefix).
    pub fn __construct(connection: Optional) -> PhpResult<Self> {
        Ok(Self {
            config: config_from_param(connection.0, "$connection")?,
        })
    }

    /// A lock named `$name` (key `lock:{<name>}`). Options: `ttl` (lease in
    /// seconds, default 30), `reentrant` (bool: the process may acquire it
    /// again, and only the last release frees it), `autoRenew` (bool: a
    /// background thread keeps the lease alive while held), `maxHold`
    /// (seconds a renewed lock may be held at most, default 300).
    pub fn lock(&self, name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Lock> {
        let name = name.bytes("RedisLock\\Client::lock(): Argument #1 ($name)")?;
        if name.is_empty() {
            return Err(value_error(
                "RedisLock\\Client::lock(): Argument #1 ($name) must not be empty".into(),
            ));
        }
        Ok(Lock::new(
            self.config.clone(),
            name,
            lock_options(&options)?,
        ))
    }
}
