//! Spans of the work no OpenTelemetry convention covers (our own names,
//! docs/operating.md#opentelemetry): a lock's wait (`lock.acquire <key>`)
//! and hold (`lock.hold <key>`, from its acquire to its release, under its
//! token), a stock's take (`stock.take <name>`) and a limiter's decision
//! (`limit.attempt <name>`). Attributes are `redislock.*`.

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

use super::{Metric, Op, Start, close, keep};

fn start(name: String, attributes: Vec<KeyValue>, metric: Metric) -> Op {
    // A hold is this process's own time; the others are calls to Redis.
    let kind = match metric {
        Metric::LockHold => SpanKind::Internal,
        _ => SpanKind::Client,
    };
    Op::start(Start {
        name,
        kind,
        attributes,
        parent: None,
        links: Vec::new(),
        metric,
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A wait for the lock at `key` starts.
pub fn acquire(key: &[u8]) -> Op {
    if !super::on() {
        return Op::default();
    }
    let key = text(key);
    start(
        format!("lock.acquire {key}"),
        vec![KeyValue::new("redislock.lock.key", key)],
        Metric::LockWait,
    )
}

/// The wait ended: acquired with `token` (its hold starts), not in time,
/// or failed.
pub fn acquired(mut op: Op, key: &[u8], token: &str, result: Result<bool, ()>) {
    if !op.live() {
        return;
    }
    op.set("redislock.lock.acquired", result == Ok(true));
    op.end(result.is_err().then_some("redis"));
    if result == Ok(true) {
        let key = text(key);
        let hold = start(
            format!("lock.hold {key}"),
            vec![KeyValue::new("redislock.lock.key", key)],
            Metric::LockHold,
        );
        keep(token, hold);
    }
}

/// The lock held with `token` was released (`released`: Redis still had
/// its token), or found lost.
pub fn released(token: &[u8], released: bool) {
    if !super::on() {
        return;
    }
    let Some(hold) = std::str::from_utf8(token).ok().and_then(close) else {
        return;
    };
    hold.end((!released).then_some("lost"));
}

/// A take of `units` from the stock `name` starts.
pub fn take(name: &[u8], units: u64) -> Op {
    if !super::on() {
        return Op::default();
    }
    let name = text(name);
    start(
        format!("stock.take {name}"),
        vec![
            KeyValue::new("redislock.stock.name", name),
            KeyValue::new("redislock.stock.units", units as i64),
        ],
        Metric::None,
    )
}

/// A decision of the limiter `name` starts (the limited key, an address or
/// a user's id, is not recorded).
pub fn limit(name: &[u8], cost: u64) -> Op {
    if !super::on() {
        return Op::default();
    }
    let name = text(name);
    start(
        format!("limit.attempt {name}"),
        vec![
            KeyValue::new("redislock.limiter.name", name),
            KeyValue::new("redislock.limiter.cost", cost as i64),
        ],
        Metric::None,
    )
}

/// Ends `op` with `result`: `granted` when done, or failed.
pub fn ended<T, E>(mut op: Op, result: &Result<T, E>, granted: impl Fn(&T) -> bool) {
    if !op.live() {
        return;
    }
    match result {
        Ok(r) => {
            op.set("redislock.granted", granted(r));
            op.end(None);
        }
        Err(_) => op.end(Some("redis")),
    }
}
