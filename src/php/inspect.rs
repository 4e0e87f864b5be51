//! What `RedisLock\Client`'s operator methods return: queue names, and
//! locks as an operator sees them (`lock::inspect`), as PHP arrays.

use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::engine;
use super::value::{Value, non_empty, type_error, value_error};
use super::value::{array, binary, optional_float};
use crate::config::Config;
use crate::identity::Holder;
use crate::lock::inspect::{self, Kind, State};
use crate::queue;

/// The longest list `locks()` returns.
pub const MAX_LOCKS: i64 = 10_000;

pub fn queues(config: &Config) -> PhpResult<Zval> {
    binary_list(engine(queue::names(config))?)
}

pub fn queue_partitions(config: &Config) -> PhpResult<Zval> {
    let listed = engine(queue::listed(config))?;
    let mut map = ZendHashTable::new();
    for (name, n) in listed.into_iter().filter(|(_, n)| *n > 1) {
        super::value::insert_keyed(&mut map, &name, i64::try_from(n).unwrap_or(i64::MAX))?;
    }
    Ok(array(map))
}

pub fn queue_prefixes(config: &Config) -> PhpResult<Zval> {
    binary_list(engine(queue::prefixes(config))?)
}

/// A PHP list of byte strings.
fn binary_list(items: Vec<Vec<u8>>) -> PhpResult<Zval> {
    let mut list = ZendHashTable::with_capacity(u32::try_from(items.len()).unwrap_or(u32::MAX));
    for item in items {
        list.push(binary(&item))?;
    }
    Ok(array(list))
}

/// A lock kind parameter: null or 'lock' for `RedisLock\Lock`, 'exact' for
/// one with `exactKey`, 'RedisLock' (or its old name 'seed') for the
/// drop-in `RedisLock`'s, 'semaphore',
/// 'rwlock'.
fn kind(value: &Value, param: &str) -> PhpResult<Kind> {
    match value {
        Value::Null => Ok(Kind::Lock),
        Value::Str(s) => Kind::named(s).ok_or_else(|| {
            value_error(format!(
                "{param} must be 'lock', 'exact', 'RedisLock', 'semaphore', 'rwlock' or 'Lock_Service', {} given",
                super::value::quoted(s)
            ))
        }),
        other => Err(type_error(format!(
            "{param} must be of type ?string, {} given",
            other.type_name()
        ))),
    }
}

/// Adds the state of a lock of `kind` to `out`: 'held', 'remaining',
/// 'token', 'holder', 'waiting', 'holders', 'permits' (a semaphore's
/// permits in use; for the other kinds, one per holder), 'total' (a
/// semaphore's permits in all; null while none are held, and for the
/// other kinds).
fn add_state(out: &mut ZendHashTable, kind: Kind, state: State) -> PhpResult<()> {
    out.insert("held", state.token.is_some())?;
    out.insert(
        "remaining",
        optional_float(state.remaining.map(|left| left.as_secs_f64())),
    )?;
    let mut fence = Zval::new();
    if let Some(f) = state.fence.filter(|_| state.token.is_some()) {
        fence.set_long(f);
    }
    out.insert("token", fence)?;
    out.insert("holder", holder(state.holder)?)?;
    out.insert("waiting", i64::try_from(state.waiting).unwrap_or(i64::MAX))?;
    out.insert("holders", i64::try_from(state.holders).unwrap_or(i64::MAX))?;
    let permits = if kind == Kind::Semaphore {
        state.permits
    } else {
        state.holders
    };
    out.insert("permits", i64::try_from(permits).unwrap_or(i64::MAX))?;
    let mut total = Zval::new();
    if let Some(of) = state
        .of
        .filter(|_| kind == Kind::Semaphore && state.token.is_some())
    {
        total.set_long(i64::try_from(of).unwrap_or(i64::MAX));
    }
    out.insert("total", total)?;
    Ok(())
}

/// A process as PHP sees it: ['host', 'pid', 'process'], or null.
pub fn holder(h: Option<Holder>) -> PhpResult<Zval> {
    let Some(h) = h else {
        return Ok(Zval::new());
    };
    let mut table = ZendHashTable::new();
    table.insert("host", h.host)?;
    table.insert("pid", i64::from(h.pid))?;
    table.insert("process", h.process)?;
    Ok(array(table))
}

/// The lock a `($name, $kind)` pair of `method`'s arguments names.
fn named(name: &Value, kind: &Value, method: &str) -> PhpResult<(Vec<u8>, Kind)> {
    let kind = self::kind(kind, &format!("{method}: Argument #2 ($kind)"))?;
    let name = non_empty(name, &format!("{method}: Argument #1 ($name)"))?;
    Ok((name, kind))
}

pub fn lock_state(config: &Config, name: &Value, kind: &Value, method: &str) -> PhpResult<Zval> {
    let (name, kind) = named(name, kind, method)?;
    let mut out = ZendHashTable::new();
    add_state(&mut out, kind, engine(inspect::state(config, kind, &name))?)?;
    Ok(array(out))
}

pub fn force_release(config: &Config, name: &Value, kind: &Value, method: &str) -> PhpResult<bool> {
    let (name, kind) = named(name, kind, method)?;
    engine(inspect::force_release(config, kind, &name))
}

pub fn locks(config: &Config, pattern: &Value, limit: &Value, method: &str) -> PhpResult<Zval> {
    let pattern = match pattern {
        Value::Null => b"*".to_vec(),
        other => non_empty(other, &format!("{method}: Argument #1 ($pattern)"))?,
    };
    let limit = match limit {
        Value::Null => 100,
        other => super::value::whole_in(
            other,
            format_args!("{method}: Argument #2 ($limit)"),
            1..=MAX_LOCKS as u64,
        )? as i64,
    };
    if !inspect::listable(config) {
        return Err(value_error(format!(
            "{method}: listing locks scans one server's keys, and {} is a cluster; look at a lock by name with lockState()",
            config.server
        )));
    }
    let found = engine(inspect::list(config, &pattern, limit as usize))?;
    let states = engine(inspect::states(config, &found))?;
    let mut list = ZendHashTable::with_capacity(u32::try_from(found.len()).unwrap_or(u32::MAX));
    for ((kind, name), state) in found.into_iter().zip(states) {
        let mut entry = ZendHashTable::new();
        entry.insert("name", binary(&name))?;
        entry.insert("kind", kind.name())?;
        add_state(&mut entry, kind, state)?;
        list.push(array(entry))?;
    }
    Ok(array(list))
}
