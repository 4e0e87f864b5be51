//! `RedisLock\Redlock`: one named lock over N independent Redis masters,
//! with the interface of `RedisLock\Lock`.

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;

use super::value::{
    Arg, Argument, Float, NullableArray, NullableFloat, Opt, Text, Value, non_empty, opt,
    read_options, shown, type_error, value_error,
};
use super::{config_from_param, positive_seconds, span_seconds, wait_seconds};
use crate::lock::contract;
use crate::lock::redlock::{self, Denied, Invalid, Nodes};

/// What the options of `new Redlock()` ask.
struct RedlockOptions {
    nodes: Option<Vec<Arc<crate::config::Config>>>,
    ttl: Duration,
    drift_factor: f64,
    drift_fixed: Duration,
    retry_delay: Duration,
    release_at_end: bool,
}

/// The options of `new Redlock()`.
const OPTIONS: &[Opt<RedlockOptions>] = &[
    opt!("nodes" => nodes = |v, p| nodes_of(v, p).map(Some)),
    opt!("ttl" => ttl = positive_seconds),
    Opt {
        name: "driftFactor",
        read: |o, v, p| {
            o.drift_factor = v.finite(p)?;
            if !(0.0..1.0).contains(&o.drift_factor) {
                return Err(value_error(format!(
                    "{p} must be in [0, 1), {} given",
                    shown(o.drift_factor)
                )));
            }
            Ok(())
        },
    },
    opt!("drift" => drift_fixed = span_seconds),
    opt!("retryDelay" => retry_delay = span_seconds),
    opt!("releaseAtRequestEnd" => release_at_end = super::value::flag),
];

/// A lock over independent Redis masters (Redlock): held when a majority
/// of `nodes` took it, for the time left after the elapsed time and the
/// clock drift allowance. Released when the object goes away.
#[php_class]
#[php(name = "RedisLock\\Redlock")]
#[php(implements(super::contract::PhpInterfaceLockInterface))]
pub struct Redlock {
    lock: redlock::Redlock,
}

impl Redlock {
    fn display_name(&self) -> String {
        super::value::escaped(self.lock.name())
    }

    /// The PHP exception for what was denied, for `action` (acquire,
    /// release, extend): the one conversion every kind of hold goes
    /// through (`lock::refused_as`), with the engine's refusal.
    fn denied(&self, denied: Denied, action: &str) -> PhpException {
        super::lock::refused_as(
            &format!("Redlock '{}'", self.display_name()),
            contract::refusal(denied, self.lock.nodes()),
            action,
            "",
        )
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
    /// random pause between attempts, seconds, default 0.2);
    /// `releaseAtRequestEnd` (bool, default true; false: a hold outlives
    /// this object and the request until its validity ends or a release).
    pub fn __construct(name: Arg<Text>, options: Arg<NullableArray>) -> PhpResult<Self> {
        const M: &str = "RedisLock\\Redlock::__construct()";
        let name = non_empty(&name, Argument(M, 1, "name"))?;
        let param = format!("{M}: Argument #2 ($options)");
        let mut asked = RedlockOptions {
            nodes: None,
            ttl: Duration::from_secs(30),
            drift_factor: 0.01,
            drift_fixed: Duration::from_millis(2),
            retry_delay: Duration::from_millis(200),
            release_at_end: true,
        };
        read_options(&options, &param, OPTIONS, &mut asked)?;
        let RedlockOptions {
            nodes,
            ttl,
            drift_factor,
            drift_fixed,
            retry_delay,
            release_at_end,
        } = asked;
        let nodes = match nodes {
            Some(nodes) => nodes,
            None => ini_nodes().map_err(|e| {
                value_error(format!(
                    "{param} has no 'nodes' and the {} INI entry {e}",
                    super::ini::REDLOCK_NODES
                ))
            })?,
        };
        let nodes = Nodes {
            nodes,
            drift_factor,
            drift_fixed,
            retry_delay,
        };
        let lock = redlock::Redlock::new(nodes, name, ttl).map_err(|invalid| match invalid {
            Invalid::Drift { drift, ttl } => value_error(format!(
                "{param}: the clock drift allowance (ttl * driftFactor + drift = {} s) must be below the ttl ({} s), or the lock could never be acquired",
                drift.as_secs_f64(),
                ttl.as_secs_f64()
            )),
            Invalid::Twice(server) => value_error(format!(
                "{param}: node {server} is listed twice; Redlock needs independent masters"
            )),
        })?;
        let mut lock = lock;
        lock.release_at_end = release_at_end;
        Ok(Self { lock })
    }

    /// Takes the lock on a majority of the nodes, trying again after random
    /// pauses for up to `$wait` seconds. False when not acquired.
    #[php(defaults(wait = 0))]
    pub fn acquire(&mut self, wait: Arg<Float>) -> PhpResult<bool> {
        let wait = wait_seconds(&wait, "RedisLock\\Redlock::acquire(): Argument #1 ($wait)")?;
        self.lock
            .acquire(wait)
            .map_err(|d| self.denied(d, "acquire"))
    }

    /// Releases the lock on every node.
    pub fn release(&mut self) -> PhpResult<bool> {
        match self.lock.release() {
            Ok(()) => Ok(true),
            Err(d) => Err(self.denied(d, "release")),
        }
    }

    /// A new lease of `$ttl` seconds (default: the lock's ttl) on every node
    /// still holding it; held again only with a majority.
    pub fn extend(&mut self, ttl: Arg<NullableFloat>) -> PhpResult<bool> {
        let ttl = match &ttl.0 {
            Value::Null => None,
            value => Some(positive_seconds(
                value,
                "RedisLock\\Redlock::extend(): Argument #1 ($ttl)",
            )?),
        };
        match self.lock.extend(ttl) {
            Ok(()) => Ok(true),
            Err(d) => Err(self.denied(d, "extend")),
        }
    }

    /// Held by this object, within its validity, and a majority of the
    /// nodes still has its token.
    pub fn is_held(&self) -> bool {
        self.lock.is_held()
    }

    /// Seconds of validity left (by this process's clock), or null.
    pub fn remaining(&self) -> Option<f64> {
        self.lock.remaining().map(|d| d.as_secs_f64())
    }

    /// Null: a Redlock has no fencing token (each node would count its
    /// own; `RedisLock\LockInterface`).
    pub fn token(&self) -> Option<i64> {
        None
    }

    /// What `var_dump()` shows: the name and the nodes' servers (never a
    /// password), without a round trip.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let mut nodes = ZendHashTable::new();
        for node in &self.lock.nodes().nodes {
            nodes.push(node.server.as_str())?;
        }
        super::value::debug_info(vec![
            ("name", super::value::binary(self.lock.name())),
            ("nodes", super::value::array(nodes)),
        ])
    }
}
