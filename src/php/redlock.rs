//! `RedisLock\Redlock`: one named lock over N independent Redis masters,
//! with the interface of `RedisLock\Lock`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;

use super::errors::{Kind, exception};
use super::value::{
    Arg, Float, NullableArray, NullableFloat, Text, Value, non_empty, type_error, value_error,
};
use super::{config_from_param, positive_seconds, wait_seconds};
use crate::lock::redlock::{self, Held, Nodes, Refused};
use crate::token::new_token;

const OPTIONS: &str = "nodes, ttl, driftFactor, drift, retryDelay";

/// A lock over independent Redis masters (Redlock): held when a majority
/// of `nodes` took it, for the time left after the elapsed time and the
/// clock drift allowance. Released when the object goes away.
#[php_class]
#[php(name = "RedisLock\\Redlock")]
pub struct Redlock {
    nodes: Nodes,
    name: Vec<u8>,
    ttl: Duration,
    held: Option<(String, Held)>,
}

impl Redlock {
    fn display_name(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }

    fn not_held(&self, action: &str) -> PhpException {
        exception(
            Kind::NotHeld,
            format!(
                "redislock: cannot {action} Redlock '{}': it is not held",
                self.display_name()
            ),
        )
    }

    fn refused(&self, refused: Refused, lost: bool) -> PhpException {
        match refused {
            Refused::Busy => exception(
                Kind::LockLost,
                format!(
                    "redislock: Redlock '{}' was lost: fewer than {} of {} nodes still held it",
                    self.display_name(),
                    self.nodes.quorum(),
                    self.nodes.nodes.len()
                ),
            ),
            Refused::Unavailable(failed) => {
                let list: Vec<String> = failed
                    .iter()
                    .map(|e| format!("{}: {}", e.server(), e.cause()))
                    .collect();
                // Nodes that answered with errors (OOM, NOAUTH) are not out
                // of reach: a ServerException says so.
                let answered = failed
                    .iter()
                    .all(|e| matches!(e, crate::conn::Error::Server { .. }));
                exception(
                    if lost {
                        Kind::LockLost
                    } else if answered {
                        Kind::Server
                    } else {
                        Kind::Connection
                    },
                    format!(
                        "redislock: Redlock '{}': a majority of the {} nodes is out of reach ({})",
                        self.display_name(),
                        self.nodes.nodes.len(),
                        list.join("; ")
                    ),
                )
            }
        }
    }

    /// Time left on the current hold, by this process's clock.
    fn left(&self) -> Option<Duration> {
        let (_, held) = self.held.as_ref()?;
        (held.since + held.validity).checked_duration_since(Instant::now())
    }
}

fn nodes_of(value: &Value, param: &str) -> PhpResult<Vec<Arc<crate::config::Config>>> {
    let Value::Array(items) = value else {
        return Err(type_error(format!(
            "{param} must be a list of DSNs or options arrays, {} given",
            value.type_name()
        )));
    };
    if items.is_empty() {
        return Err(value_error(format!("{param} must name at least one node")));
    }
    items
        .iter()
        .map(|(_, node)| match node {
            Value::Str(_) | Value::Array(_) => config_from_param(node.clone(), "$options['nodes']"),
            other => Err(type_error(format!(
                "{param} must hold DSN strings or options arrays, {} given",
                other.type_name()
            ))),
        })
        .collect()
}

/// The nodes the INI entry names, or why there are none.
fn ini_nodes() -> Result<Vec<Arc<crate::config::Config>>, String> {
    let settings = super::ini::settings();
    if settings.redlock_nodes.is_empty() {
        return Err("is empty".into());
    }
    settings
        .redlock_nodes
        .iter()
        .map(|dsn| {
            crate::config::Config::from_dsn(dsn, &settings.defaults)
                .map(Arc::new)
                .map_err(|e| format!("is invalid: {e}"))
        })
        .collect()
}

#[php_impl]
impl Redlock {
    /// `$options`: `nodes` (DSN strings or options arrays, one per
    /// independent master; default: the `redislock.redlock_nodes` INI entry,
    /// DSNs separated by spaces), `ttl` (seconds, default 30), `driftFactor`
    /// (default 0.01) and `drift` (seconds, default 0.002): the clock drift
    /// allowance, `ttl * driftFactor + drift`; `retryDelay` (the longest
    /// random pause between attempts, seconds, default 0.2).
    pub fn __construct(name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Self> {
        const M: &str = "RedisLock\\Redlock::__construct()";
        let name = non_empty(&name, &format!("{M}: Argument #1 ($name)"))?;
        let param = format!("{M}: Argument #2 ($options)");
        let entries = match &options.0 {
            Value::Array(entries) => entries.as_slice(),
            _ => &[],
        };
        let mut nodes = None;
        let mut ttl = Duration::from_secs(30);
        let (mut drift_factor, mut drift_fixed) = (0.01, Duration::from_millis(2));
        let mut retry_delay = Duration::from_millis(200);
        for (key, value) in entries {
            let key = String::from_utf8_lossy(key);
            let option = format!("{param} option '{key}'");
            match &*key {
                "nodes" => nodes = Some(nodes_of(value, &option)?),
                "ttl" => ttl = positive_seconds(value, &option)?,
                "drift" => drift_fixed = wait_seconds(value, &option)?,
                "retryDelay" => retry_delay = wait_seconds(value, &option)?,
                "driftFactor" => {
                    drift_factor = value.finite(&option)?;
                    if !(0.0..1.0).contains(&drift_factor) {
                        return Err(value_error(format!(
                            "{option} must be in [0, 1), {drift_factor} given"
                        )));
                    }
                }
                _ => {
                    return Err(value_error(format!(
                        "{param} has an unknown option {} (known: {OPTIONS})",
                        super::value::quoted(key.as_bytes())
                    )));
                }
            }
        }
        let nodes = match nodes {
            Some(nodes) => nodes,
            None => ini_nodes().map_err(|e| {
                value_error(format!(
                    "{param} has no 'nodes' and the {} INI entry {e}",
                    super::ini::REDLOCK_NODES
                ))
            })?,
        };
        let drift = ttl.mul_f64(drift_factor) + drift_fixed;
        if drift >= ttl {
            return Err(value_error(format!(
                "{param}: the clock drift allowance (ttl * driftFactor + drift = {} s) must be below the ttl ({} s), or the lock could never be acquired",
                drift.as_secs_f64(),
                ttl.as_secs_f64()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for node in &nodes {
            if !seen.insert((node.server.clone(), node.info.redis_settings().db())) {
                return Err(value_error(format!(
                    "{param}: node {} is listed twice; Redlock needs independent masters",
                    node.server
                )));
            }
        }
        Ok(Self {
            nodes: Nodes {
                nodes,
                drift_factor,
                drift_fixed,
                retry_delay,
            },
            name,
            ttl,
            held: None,
        })
    }

    /// Takes the lock on a majority of the nodes, trying again after random
    /// pauses for up to `$wait` seconds. False when not acquired;
    /// `ConnectionException` (naming each failed node) when too many nodes
    /// are out of reach for a majority.
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        const PARAM: &str = "RedisLock\\Redlock::acquire(): Argument #1 ($wait)";
        let wait = wait_seconds(&wait, PARAM)?;
        if !wait.is_zero() && self.nodes.retry_delay > wait {
            return Err(value_error(format!(
                "{PARAM} ({} s) is shorter than the Redlock's retryDelay ({} s): no retry could happen within it",
                wait.as_secs_f64(),
                self.nodes.retry_delay.as_secs_f64()
            )));
        }
        if self.left().is_some() {
            return Err(exception(
                Kind::Root,
                format!(
                    "redislock: Redlock '{}' is already held by this object",
                    self.display_name()
                ),
            ));
        }
        let token = new_token();
        match redlock::acquire(&self.nodes, &self.name, &token, self.ttl, wait) {
            Ok(held) => {
                self.held = Some((token, held));
                Ok(true)
            }
            Err(Refused::Busy) => Ok(false),
            Err(refused) => Err(self.refused(refused, false)),
        }
    }

    /// Releases the lock on every node; true. `NotHeldException` if not
    /// held, `LockLostException` if fewer than a majority still had it.
    pub fn release(&mut self) -> PhpResult<bool> {
        let Some((token, _)) = self.held.take() else {
            return Err(self.not_held("release"));
        };
        let released = redlock::release(&self.nodes, &self.name, &token, self.ttl);
        if released >= self.nodes.quorum() {
            Ok(true)
        } else {
            Err(self.refused(Refused::Busy, true))
        }
    }

    /// A new lease of `$ttl` seconds (default: the lock's ttl) on every node
    /// still holding it; held again only with a majority.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let ttl = match &ttl.0 {
            Value::Null => self.ttl,
            value => positive_seconds(value, "RedisLock\\Redlock::extend(): Argument #1 ($ttl)")?,
        };
        let Some((token, _)) = self.held.take() else {
            return Err(self.not_held("extend"));
        };
        match redlock::extend(&self.nodes, &self.name, &token, ttl) {
            Ok(held) => {
                self.held = Some((token, held));
                Ok(true)
            }
            Err(refused) => Err(self.refused(refused, true)),
        }
    }

    /// Held by this object, within its validity, and a majority of the
    /// nodes still has its token.
    pub fn is_held(&self) -> bool {
        match (&self.held, self.left()) {
            (Some((token, _)), Some(_)) => {
                redlock::holders(&self.nodes, &self.name, token, self.ttl) >= self.nodes.quorum()
            }
            _ => false,
        }
    }

    /// Seconds of validity left (by this process's clock), or null.
    pub fn remaining(&self) -> Option<f64> {
        self.left().map(|d| d.as_secs_f64())
    }
}

impl Drop for Redlock {
    fn drop(&mut self) {
        if let Some((token, _)) = self.held.take() {
            let (nodes, name, ttl) = (&self.nodes, &self.name, self.ttl);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                redlock::release(nodes, name, &token, ttl)
            }));
        }
    }
}
