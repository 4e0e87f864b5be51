//! `Lock_Service` (seed 001): per-order locks whose id outlives the request.

// Parameter names are the seeds' (PHP named arguments use them).
#![allow(non_snake_case)]

use ext_php_rs::convert::{IntoZval, IntoZvalDyn};
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::{ClassEntry, ExecutorGlobals, ce};

use super::value::{Defaulted, Literal, Value};
use super::{engine, ini, lease, value_error};
use crate::lock::order;

/// Order locks: `order_lock_<id>` holds an id from `INCR lock_unique_id`.
#[php_class]
#[php(name = "Lock_Service")]
pub struct LockService;

/// The server of the order locks: connection `lock_service` of
/// `redislock.connections` where it is listed (an app whose copy pointed
/// `REDIS_CONFIG_HOST` elsewhere), else the default server.
fn config() -> PhpResult<std::sync::Arc<crate::config::Config>> {
    ini::named_config(Some("lock_service"), true).map_err(value_error)
}

#[php_impl]
impl LockService {
    const REDIS_LOCK_KEY_TEMPLATE: &'static str = "order_lock_%s";
    const REDIS_LOCK_DEFAULT_EXPIRE_TIME: i64 = 86400;
    const REDIS_LOCK_UNIQUE_ID_KEY: &'static str = order::COUNTER;
    const REDIS_CONFIG_HOST: &'static str = "127.0.0.1";
    const REDIS_CONFIG_PORT: i64 = 6379;

    /// The seed class has no constructor of its own, so `new Lock_Service()`
    /// works there (and its methods are static).
    pub fn __construct() -> Self {
        Self
    }

    /// Locks an order for `$intExpireTime` seconds. Returns the lock id (an int
    /// that strictly increases: a fencing token), or false if the order is
    /// already locked or an argument is empty.
    #[php(defaults(intExpireTime = Literal("86400")))]
    pub fn add_lock(intOrderId: Value, intExpireTime: Defaulted) -> PhpResult<Zval> {
        let seconds = intExpireTime.or(ini::seed_defaults().lock_service_expire);
        add(
            config,
            order::Layout::seed(),
            &intOrderId,
            &seconds,
            "Lock_Service::addLock()",
        )
    }

    /// Unlocks an order if it is still locked with `$intLockId`; true only if
    /// this call removed the lock.
    pub fn release_lock(intOrderId: Value, intLockId: Value) -> PhpResult<bool> {
        release(
            config,
            order::Layout::seed(),
            &intOrderId,
            &intLockId,
            "Lock_Service::releaseLock()",
        )
    }

    /// The seed's public helper: a phpredis `\Redis` connected to
    /// `$strIp:$intPort`, or, with both omitted, to the server (database,
    /// credentials, key prefix) the order locks use. An `Error` where
    /// phpredis is not loaded.
    #[php(defaults(strIp = Literal("'127.0.0.1'"), intPort = Literal("6379")))]
    pub fn get_redis_conn(strIp: Defaulted, intPort: Defaulted) -> PhpResult<Zval> {
        let Some(class) = ClassEntry::try_find("Redis") else {
            return Err(PhpException::new(
                "Lock_Service::getRedisConn() returns a phpredis \\Redis, and phpredis is not \
                 loaded (install php-redis, or take the server from redislock.default_dsn)"
                    .to_owned(),
                0,
                ce::error(),
            ));
        };
        let mut redis = class.new().into_zval(false)?;
        match connect_phpredis(&mut redis, strIp, intPort) {
            Ok(()) => Ok(redis),
            // phpredis threw (a refused connection, a wrong password): its
            // exception is the call's.
            Err(None) => Ok(Zval::new()),
            Err(Some(e)) => Err(e),
        }
    }

    /// A new unique id from `INCR lock_unique_id`.
    pub fn generate_unique_lock_id() -> PhpResult<i64> {
        let config = config()?;
        engine(order::next_id(&config))
    }
}

/// `addLock()` of order locks of `layout` (the drop-in's and
/// `RedisLock\OrderLocks`', on the server `config` gives, asked once the
/// arguments are read): false for an empty order id or a lease <= 0,
/// as the seed; else the new id, or false when the order is locked.
pub fn add(
    config: impl FnOnce() -> PhpResult<std::sync::Arc<crate::config::Config>>,
    layout: &order::Layout,
    order_id: &Value,
    seconds: &Value,
    method: &str,
) -> PhpResult<Zval> {
    let mut result = Zval::new();
    result.set_bool(false);
    if order_id.is_empty() {
        return Ok(result);
    }
    let param = format!("{method}: Argument #2 ($intExpireTime)");
    let seconds = seconds.number(&param)?;
    if seconds <= 0.0 {
        return Ok(result);
    }
    let lease = lease(seconds, &param)?;
    let order = order_id.bytes(&format!("{method}: Argument #1 ($intOrderId)"))?;
    if let Some(id) = engine(order::acquire_in(&*config()?, layout, &order, lease))? {
        result.set_long(id);
    }
    Ok(result)
}

/// `releaseLock()` of order locks of `layout`: false for an empty argument;
/// true only if this call removed the lock.
pub fn release(
    config: impl FnOnce() -> PhpResult<std::sync::Arc<crate::config::Config>>,
    layout: &order::Layout,
    order_id: &Value,
    lock_id: &Value,
    method: &str,
) -> PhpResult<bool> {
    if order_id.is_empty() || lock_id.is_empty() {
        return Ok(false);
    }
    let order = order_id.bytes(&format!("{method}: Argument #1 ($intOrderId)"))?;
    // The seed compares loosely (`$id == GET`): 7, 7.0 and "7" all match
    // the stored "7".
    let id = match lock_id.number("") {
        Ok(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => (n as i64).to_string().into_bytes(),
        _ => lock_id.bytes(&format!("{method}: Argument #2 ($intLockId)"))?,
    };
    engine(order::release_in(&*config()?, layout, &order, &id))
}

/// Connects a new phpredis object as `getRedisConn()` says; `Err(None)`
/// when phpredis threw.
#[allow(clippy::needless_pass_by_value)]
fn connect_phpredis(
    redis: &mut Zval,
    ip: Defaulted,
    port: Defaulted,
) -> Result<(), Option<PhpException>> {
    let config = config()?;
    let call = |method: &str, args: Vec<&dyn IntoZvalDyn>| -> Result<(), Option<PhpException>> {
        let result = redis.try_call_method(method, args);
        if ExecutorGlobals::has_exception() {
            return Err(None);
        }
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(Some(value_error(format!(
                "Lock_Service::getRedisConn(): \\Redis::{method}(): {e}"
            )))),
        }
    };
    call("__construct", vec![])?;
    let timeout = config.connect_timeout.as_secs_f64();
    if ip.given.is_some() || port.given.is_some() {
        let ip = ip.given.unwrap_or(Value::Str(b"127.0.0.1".to_vec()));
        let ip = ip.bytes("Lock_Service::getRedisConn(): Argument #1 ($strIp)")?;
        let port = port
            .given
            .unwrap_or(Value::Int(6379))
            .number("Lock_Service::getRedisConn(): Argument #2 ($intPort)")?;
        let ip = String::from_utf8_lossy(&ip).into_owned();
        return call("connect", vec![&ip, &(port as i64), &timeout]);
    }
    let Some(at) = config.endpoint() else {
        return Err(Some(value_error(format!(
            "Lock_Service::getRedisConn(): {} is not one server, which phpredis' \\Redis \
             cannot reach (pass a host and port)",
            config.server
        ))));
    };
    let host = if at.tls {
        format!("tls://{}", at.host)
    } else {
        at.host
    };
    call("connect", vec![&host, &i64::from(at.port), &timeout])?;
    match (at.username, at.password) {
        (Some(user), Some(password)) => call("auth", vec![&vec![user, password]])?,
        (None, Some(password)) => call("auth", vec![&password])?,
        _ => {}
    }
    if at.database != 0 {
        call("select", vec![&at.database])?;
    }
    if !at.prefix.is_empty() {
        // Redis::OPT_PREFIX
        let prefix = String::from_utf8_lossy(&at.prefix).into_owned();
        call("setOption", vec![&2_i64, &prefix])?;
    }
    Ok(())
}
