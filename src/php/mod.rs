//! The PHP face of the engines: module registration, INI, phpinfo, the
//! request-end hook, and the seed classes as thin adapters.

mod batches;
mod client;
mod contract;
mod errors;
mod flow;
mod ini;
mod injected;
mod inspect;
mod last_resort;
mod leader;
mod limiter;
mod lock;
mod lock_service;
mod multi_lock;
mod once;
mod order_locks;
mod queue;
mod redis_lock;
mod redis_queue;
mod redlock;
mod runtime;
mod semaphore;
mod stock;
mod task;
mod telemetry;
mod unconstructed;
mod untyped;
mod value;

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::exception::PhpResult;
use ext_php_rs::prelude::*;
use ext_php_rs::zend::ModuleEntry;
use ext_php_rs::{info_table_end, info_table_row, info_table_start};

use crate::config::{Config, redact};
use crate::conn;
use crate::lock::{registry, renew};
use value::{Value, type_error, value_error};

/// An engine result, with its error as the extension's exception.
fn engine<T>(result: Result<T, conn::Error>) -> PhpResult<T> {
    result.map_err(errors::to_php)
}

/// Longest lease accepted, in seconds (about 68 years).
pub const MAX_SECONDS: f64 = 2_147_483_647.0;

/// A lease from a positive number of seconds.
pub fn lease(seconds: f64, param: impl Display + Copy) -> PhpResult<Duration> {
    if !seconds.is_finite() || seconds > MAX_SECONDS {
        return Err(value_error(format!(
            "{param} must be a finite number of seconds up to {MAX_SECONDS}, {} given",
            value::shown(seconds)
        )));
    }
    Ok(Duration::from_secs_f64(seconds.max(0.001)))
}

/// A lease left as PHP shows it: seconds, INF for one without expiry.
fn seconds(left: Duration) -> f64 {
    if left == Duration::MAX {
        f64::INFINITY
    } else {
        left.as_secs_f64()
    }
}

/// A number of seconds greater than 0, as a lease.
pub fn positive_seconds(value: &Value, param: impl Display + Copy) -> PhpResult<Duration> {
    let n = value.number(param)?;
    if n.is_nan() || n <= 0.0 {
        return Err(value_error(format!(
            "{param} must be a number of seconds greater than 0, {} given",
            value::shown(n)
        )));
    }
    lease(n, param)
}

/// How long to wait: a number of seconds >= 0, INF for (nearly) forever.
pub fn wait_seconds(value: &Value, param: impl Display + Copy) -> PhpResult<Duration> {
    let n = value.number(param)?;
    if n.is_nan() || n < 0.0 {
        return Err(value_error(format!(
            "{param} must be a number of seconds >= 0 (INF to wait without limit), {} given",
            value::shown(n)
        )));
    }
    Ok(Duration::from_secs_f64(n.min(MAX_SECONDS)))
}

/// A span that is no wait: a finite number of seconds >= 0 (Redlock's
/// `drift` and `retryDelay`).
pub fn span_seconds(value: &Value, param: impl Display + Copy) -> PhpResult<Duration> {
    let n = value.number(param)?;
    if !n.is_finite() || n < 0.0 {
        return Err(value_error(format!(
            "{param} must be a finite number of seconds >= 0, {} given",
            value::shown(n)
        )));
    }
    lease(n, param).map(|d| if n == 0.0 { Duration::ZERO } else { d })
}

fn config_or_throw() -> PhpResult<Arc<Config>> {
    ini::default_config().map_err(value_error)
}

/// The config a constructor's parameter (named `name`) describes: null for
/// the INI defaults, a DSN string (it has `://`), a connection name from
/// `redislock.connections` (any other string), or an options array.
fn config_from_param(param: Value, name: &str) -> PhpResult<Arc<Config>> {
    let defaults = ini::settings().defaults;
    let config = match &param {
        Value::Null => return config_or_throw(),
        Value::Str(text) if !text.windows(3).any(|w| w == b"://") => {
            return ini::named_config(Some(&String::from_utf8_lossy(text)), false)
                .map_err(|e| value_error(format!("redislock: {e}")));
        }
        Value::Str(dsn) => Config::from_dsn(&String::from_utf8_lossy(dsn), &defaults),
        Value::Array(entries) => {
            let mut options = Vec::with_capacity(entries.len());
            for (name, value) in entries {
                let name = String::from_utf8_lossy(&name.bytes()).into_owned();
                let value = value.bytes(&format!("option '{name}'"))?;
                options.push((name, value));
            }
            Config::from_options(&options, &defaults)
        }
        other => {
            return Err(type_error(format!(
                "Argument #1 ({name}) must be of type array|string|null, {} given",
                other.type_name()
            )));
        }
    };
    config
        .map(Arc::new)
        .map_err(|e| value_error(format!("redislock: {e}")))
}

/// The config of a constructor's connection parameter: what
/// [`config_from_param`] takes, or a phpredis or Predis client, which stands
/// for its server, database, credentials and prefix.
fn config_from_connection(param: injected::Connection, name: &str) -> PhpResult<Arc<Config>> {
    match param.injected {
        None if !matches!(param.value, Value::Null | Value::Str(_) | Value::Array(_)) => {
            Err(type_error(format!(
                "Argument #1 ({name}) must be of type Redis|Predis\\Client|array|string|null, {} given",
                param.value.type_name()
            )))
        }
        None => config_from_param(param.value, name),
        Some(Err(why)) => Err(value_error(format!("redislock: {name}: {why}"))),
        Some(Ok(options)) => Config::from_options(&options, &ini::settings().defaults)
            .map(Arc::new)
            .map_err(|e| value_error(format!("redislock: {name}: {e}"))),
    }
}

/// What this process runs, for its holder description: the SAPI and the
/// script's file name (never a path or an argument).
fn runs() -> String {
    std::panic::catch_unwind(|| {
        let sapi = ext_php_rs::zend::SapiModule::get().name;
        let sapi = if sapi.is_null() {
            String::new()
        } else {
            // SAFETY: the SAPI's name is a static C string.
            unsafe { std::ffi::CStr::from_ptr(sapi) }
                .to_string_lossy()
                .into_owned()
        };
        let globals = ext_php_rs::zend::SapiGlobals::get();
        let script = globals
            .request_info()
            .path_translated()
            .and_then(|p| {
                std::path::Path::new(p)
                    .file_name()?
                    .to_str()
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        format!("{sapi} {script}").trim().to_owned()
    })
    .unwrap_or_default()
}

extern "C" fn request_startup(_type: i32, _module_number: i32) -> i32 {
    let _ = std::panic::catch_unwind(untyped::prepare_seed_classes);
    0
}

/// Request end: the locks still held are released after every module's
/// request shutdown, the session module's included, so that a session
/// handler holding a lock still holds it when PHP writes the session.
unsafe extern "C" fn post_deactivate() -> i32 {
    let _ = std::panic::catch_unwind(|| {
        registry::end_request(ini::settings().release_at_request_end);
        crate::telemetry::end_request();
    });
    0
}

extern "C" fn module_info(_module: *mut ModuleEntry) {
    let _ = std::panic::catch_unwind(|| {
        let s = ini::settings();
        info_table_start!();
        info_table_row!("redislock support", "enabled");
        info_table_row!("version", env!("CARGO_PKG_VERSION"));
        info_table_row!(ini::DSN, redact(&s.defaults.dsn));
        info_table_row!(ini::CONNECT_TIMEOUT, s.defaults.connect_timeout.to_string());
        info_table_row!(ini::READ_TIMEOUT, s.defaults.read_timeout.to_string());
        info_table_row!(ini::MAX_REPLY_SIZE, s.defaults.max_reply.to_string());
        info_table_row!(
            ini::PREFIX,
            String::from_utf8_lossy(&s.defaults.prefix).into_owned()
        );
        let nodes: Vec<String> = s.redlock_nodes.iter().map(|d| redact(d)).collect();
        info_table_row!(ini::REDLOCK_NODES, nodes.join(" "));
        let connections: Vec<String> = s
            .connections
            .iter()
            .map(|(name, dsn)| format!("{name}={}", redact(dsn)))
            .collect();
        info_table_row!(ini::CONNECTIONS, connections.join(" "));
        info_table_row!(
            ini::LOCK_SERVICE_EXPIRE,
            s.seed.lock_service_expire.to_string()
        );
        info_table_row!(
            ini::REDIS_LOCK_TIMEOUT,
            s.seed.redis_lock_timeout.to_string()
        );
        info_table_row!(ini::REDIS_LOCK_EXPIRE, s.seed.redis_lock_expire.to_string());
        let partitions: Vec<String> = s
            .partitions
            .iter()
            .map(|(queue, count)| format!("{}={count}", String::from_utf8_lossy(queue)))
            .collect();
        info_table_row!(ini::PARTITIONS, partitions.join(" "));
        info_table_row!(
            ini::RELEASE_AT_REQUEST_END,
            if s.release_at_request_end {
                "On"
            } else {
                "Off"
            }
        );
        info_table_row!("OpenTelemetry", crate::telemetry::described());
        for why in &s.refused {
            info_table_row!("refused from configuration", why.as_str());
        }
        info_table_end!();
    });
}

fn startup(_type: i32, module_number: i32) -> i32 {
    let ok = std::panic::catch_unwind(|| {
        ini::register(module_number);
        crate::identity::runs(runs);
        errors::register().is_ok()
    });
    if ok.unwrap_or(false) { 0 } else { -1 }
}

/// Module shutdown: the renewal threads must stop before PHP unloads the
/// code they run, and so must the telemetry exporters (flushing first).
extern "C" fn shutdown(_type: i32, _module_number: i32) -> i32 {
    let _ = std::panic::catch_unwind(renew::shutdown);
    let _ = std::panic::catch_unwind(crate::telemetry::shutdown);
    0
}

#[php_module]
#[php(startup = "startup")]
pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
    module
        .class::<lock_service::LockService>()
        .class::<redis_lock::RedisLock>()
        .class::<redis_queue::RedisQueue>()
        .interface::<contract::PhpInterfaceLockInterface>()
        .class::<client::Client>()
        .class::<lock::Lock>()
        .class::<queue::Queue>()
        .class::<task::Task>()
        .class::<redlock::Redlock>()
        .class::<stock::Stock>()
        .class::<limiter::Limiter>()
        .class::<limiter::Decision>()
        .class::<once::Slot>()
        .class::<leader::Leader>()
        .class::<batches::Batches>()
        .class::<order_locks::OrderLocks>()
        .class::<semaphore::Semaphore>()
        .class::<multi_lock::MultiLock>()
        .class::<runtime::Runtime>()
        .class::<telemetry::Telemetry>()
        .request_startup_function(request_startup)
        .post_deactivate_function(post_deactivate)
        .shutdown_function(shutdown)
        .info_function(module_info)
}
