//! A queue's spans and metrics, after OpenTelemetry's messaging semantic
//! conventions: `enqueue` (send, a producer span), `reserve` (receive, a
//! client span), `process` (a consumer span per task reserved, from its
//! reserve to its settle, the child of the span that enqueued it and linked
//! to it), and `ack`, `nack`, `release`, `bury` (settle, client spans, the
//! children of the task's process span). Span names are
//! `{messaging.operation.name} {messaging.destination.name}`.

use opentelemetry::KeyValue;
use opentelemetry::trace::{Link, SpanKind, TraceContextExt as _};

use super::{Metric, Op, Start, close, context_of, keep};

/// `messaging.system`: no well-known value names us.
const SYSTEM: &str = "redislock";

fn start(
    operation: &'static str,
    kind: &'static str,
    queue: &[u8],
    span: SpanKind,
) -> Start<'static> {
    let queue = String::from_utf8_lossy(queue).into_owned();
    Start {
        name: format!("{operation} {queue}"),
        kind: span,
        attributes: vec![
            KeyValue::new("messaging.system", SYSTEM),
            KeyValue::new("messaging.operation.name", operation),
            KeyValue::new("messaging.operation.type", kind),
            KeyValue::new("messaging.destination.name", queue),
        ],
        parent: None,
        links: Vec::new(),
        metric: Metric::Operation,
    }
}

/// Sets the ids of a batch: the one id, or how many.
fn ids(op: &mut Op, ids: &[&[u8]]) {
    match ids {
        [id] => op.set(
            "messaging.message.id",
            String::from_utf8_lossy(id).into_owned(),
        ),
        _ => op.set("messaging.batch.message_count", ids.len() as i64),
    }
}

/// An enqueue of the tasks `ids` starts: its span's `traceparent` is
/// stored with them ([`crate::queue::Tags::traced`]).
pub fn send<'a>(
    queue: &[u8],
    task_ids: impl Iterator<Item = &'a [u8]>,
    group: Option<&[u8]>,
) -> Op {
    if !super::on() {
        return Op::default();
    }
    let mut op = Op::start(start("enqueue", "send", queue, SpanKind::Producer));
    ids(&mut op, &task_ids.collect::<Vec<_>>());
    grouped(&mut op, group);
    op
}

/// Sets the tasks' group (a tenant: `redislock.task.group`), if they have
/// one.
fn grouped(op: &mut Op, group: Option<&[u8]>) {
    if let Some(group) = group {
        op.set(
            "redislock.task.group",
            String::from_utf8_lossy(group).into_owned(),
        );
    }
}

/// The enqueue ended: `n` tasks sent, or failed (`error`).
pub fn sent(op: Op, n: usize, error: Option<&'static str>) {
    if error.is_none() {
        op.count(true, n as u64);
    }
    op.end(error);
}

/// A reserve from `queue` starts.
pub fn receive(queue: &[u8]) -> Op {
    if !super::on() {
        return Op::default();
    }
    Op::start(start("reserve", "receive", queue, SpanKind::Client))
}

/// A reserved task, as the process span takes it.
pub struct Received<'a> {
    pub id: &'a [u8],
    pub token: &'a str,
    pub attempts: i64,
    /// The trace context stored with it, if any.
    pub trace: Option<&'a [u8]>,
    pub group: Option<&'a [u8]>,
}

/// The reserve ended with `tasks` from `queue` (or failed): each task's
/// processing starts, the child of the span that enqueued it.
pub fn received(mut op: Op, queue: &[u8], tasks: &[Received<'_>], error: Option<&'static str>) {
    if !op.live() {
        return;
    }
    let name = String::from_utf8_lossy(queue).into_owned();
    op.rename(format!("reserve {name}"));
    op.set("messaging.destination.name", name);
    let task_ids: Vec<&[u8]> = tasks.iter().map(|t| t.id).collect();
    if !task_ids.is_empty() {
        ids(&mut op, &task_ids);
    }
    op.count(false, tasks.len() as u64);
    op.end(error);
    for task in tasks {
        let sent = task.trace.and_then(|tp| context_of(tp, None));
        let mut start = start("process", "process", queue, SpanKind::Consumer);
        start.metric = Metric::Process;
        if let Some(cx) = &sent {
            start.links = vec![Link::with_context(cx.span().span_context().clone())];
        }
        start.parent = sent.as_ref();
        let mut process = Op::start(start);
        process.set(
            "messaging.message.id",
            String::from_utf8_lossy(task.id).into_owned(),
        );
        process.set("messaging.message.delivery_count", task.attempts);
        grouped(&mut process, task.group);
        keep(task.token, process);
    }
}

/// What a settle did to the task: its process span's outcome.
#[derive(Clone, Copy)]
pub enum Outcome {
    Acked,
    Nacked,
    Released,
    Buried,
}

impl Outcome {
    fn operation(self) -> &'static str {
        match self {
            Outcome::Acked => "ack",
            Outcome::Nacked => "nack",
            Outcome::Released => "release",
            Outcome::Buried => "bury",
        }
    }
}

/// A settle (`outcome`) of the tasks `held` (id, lease token) of `queue`
/// runs `settle`, which says whether each lease was still this worker's;
/// each task's process span ends with it.
pub fn settle<'a, T>(
    queue: &[u8],
    outcome: Outcome,
    held: impl Iterator<Item = (&'a [u8], &'a str)>,
    settle: impl FnOnce() -> Result<T, crate::conn::Error>,
    done: impl Fn(&T) -> bool,
) -> Result<T, crate::conn::Error> {
    if !super::on() {
        return settle();
    }
    let held: Vec<(&[u8], &str)> = held.collect();
    if held.is_empty() {
        return settle();
    }
    let processes: Vec<Op> = held
        .iter()
        .map(|(_, token)| close(token).unwrap_or_default())
        .collect();
    let mut start = start(outcome.operation(), "settle", queue, SpanKind::Client);
    let parent = match processes.as_slice() {
        [one] => one.context(),
        _ => None,
    };
    start.parent = parent.as_ref();
    let mut op = Op::start(start);
    let task_ids: Vec<&[u8]> = held.iter().map(|(id, _)| *id).collect();
    ids(&mut op, &task_ids);
    let result = settle();
    let (error, kept) = match &result {
        Err(_) => (Some("redis"), false),
        Ok(r) if !done(r) => (Some("lease_lost"), false),
        Ok(_) => (None, true),
    };
    op.end(error);
    for mut process in processes {
        process.set("redislock.outcome", outcome.operation());
        let failed = match outcome {
            _ if !kept => error,
            Outcome::Nacked => Some("nacked"),
            Outcome::Buried => Some("buried"),
            Outcome::Acked | Outcome::Released => None,
        };
        process.end(failed);
    }
    result
}
