//! OpenTelemetry: spans and metrics of the extension's work (queues, locks,
//! stocks, limiters; docs/operating.md#opentelemetry), exported over
//! OTLP/HTTP by the SDK's own threads.
//!
//! Off unless the environment names a collector
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the `_TRACES_`/`_METRICS_` one) and
//! `OTEL_SDK_DISABLED` is not `true`: then an instrumented call costs one
//! atomic load ([`on`]). On, a process builds its exporters at its first
//! instrumented call, never at module startup (PHP-FPM forks after it, and
//! threads do not survive a fork); a fork's child builds its own and leaves
//! its parent's alone (they are the parent's to flush); module shutdown
//! flushes what is pending ([`shutdown`]). Exporting never blocks a call:
//! spans and points go to the SDK's bounded queues, which drop what does
//! not fit while a collector is down.
//!
//! An operation is an [`Op`]: a span, and the duration a metric records,
//! both ended by [`Op::end`]. Spans that outlive a call (a reserved task's
//! processing, a lock's hold) wait in [`Open`] under their lease token.

mod http;
pub mod locks;
pub mod queue;

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{
    Link, Span as _, SpanContext, SpanKind, Status, TraceContextExt as _, Tracer as _,
    TracerProvider as _,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue, Value};
use opentelemetry_otlp::{
    MetricExporter, SpanExporter, WithExportConfig as _, WithHttpConfig as _,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};

use crate::process;

/// Whether telemetry is on in this process, and for which pid it was read:
/// `pid << 1 | on`; 0: not read yet.
static STATE: AtomicU64 = AtomicU64::new(0);

/// Whether telemetry is on: read from the environment once per process (an
/// FPM pool's `env[...]` lines are set in each worker, after the fork).
pub fn on() -> bool {
    let pid = u64::from(process::id());
    let state = STATE.load(Ordering::Relaxed);
    if state >> 1 == pid {
        return state & 1 == 1;
    }
    let wanted = wanted();
    let on = wanted.traces || wanted.metrics;
    STATE.store(pid << 1 | u64::from(on), Ordering::Relaxed);
    on
}

/// What phpinfo() says of telemetry: on (and which signals) or off, never
/// the endpoint (its URL may hold a password).
pub fn described() -> &'static str {
    let wanted = wanted();
    match (wanted.traces, wanted.metrics) {
        (true, true) => "on: traces, metrics (OTLP/HTTP)",
        (true, false) => "on: traces (OTLP/HTTP)",
        (false, true) => "on: metrics (OTLP/HTTP)",
        (false, false) if disabled() => "off (OTEL_SDK_DISABLED)",
        (false, false) => "off (no OTEL_EXPORTER_OTLP_ENDPOINT, or its exporters none)",
    }
}

/// The signals the environment asks for.
struct Wanted {
    traces: bool,
    metrics: bool,
}

/// A variable of the environment, trimmed ("": unset).
fn var(name: &str) -> String {
    std::env::var(name)
        .map(|v| v.trim().to_owned())
        .unwrap_or_default()
}

fn disabled() -> bool {
    var("OTEL_SDK_DISABLED").eq_ignore_ascii_case("true")
}

fn wanted() -> Wanted {
    if disabled() {
        return Wanted {
            traces: false,
            metrics: false,
        };
    }
    let any = !var("OTEL_EXPORTER_OTLP_ENDPOINT").is_empty();
    let signal = |signal: &str| {
        (any || !var(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")).is_empty())
            && !var(&format!("OTEL_{signal}_EXPORTER")).eq_ignore_ascii_case("none")
    };
    Wanted {
        traces: signal("TRACES"),
        metrics: signal("METRICS"),
    }
}

/// The exporters of one process, and the instruments it records with.
struct Telemetry {
    pid: u32,
    traces: ManuallyDrop<Option<(SdkTracerProvider, SdkTracer)>>,
    metrics: ManuallyDrop<Option<(SdkMeterProvider, Instruments)>>,
}

/// The metrics recorded (docs/operating.md#opentelemetry).
struct Instruments {
    operation: Histogram<f64>,
    process: Histogram<f64>,
    sent: Counter<u64>,
    consumed: Counter<u64>,
    lock_wait: Histogram<f64>,
    lock_hold: Histogram<f64>,
}

/// OpenTelemetry's advised buckets for messaging durations, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

impl Drop for Telemetry {
    /// In the process that built them, the providers shut down (flushing);
    /// in a fork's child they are left alone: their threads are the
    /// parent's, and waiting on them would wait for nothing.
    fn drop(&mut self) {
        if self.pid == process::id() {
            // SAFETY: dropped once, here, and never used after.
            unsafe {
                ManuallyDrop::drop(&mut self.traces);
                ManuallyDrop::drop(&mut self.metrics);
            }
        }
    }
}

/// The exporter timeout of the environment (OTLP's default: 10 s).
fn timeout(signal: &str) -> Duration {
    [
        format!("OTEL_EXPORTER_OTLP_{signal}_TIMEOUT"),
        "OTEL_EXPORTER_OTLP_TIMEOUT".into(),
    ]
    .iter()
    .find_map(|name| std::env::var(name).ok()?.trim().parse::<u64>().ok())
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("redislock")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

impl Telemetry {
    /// This process's exporters, as the environment asks (a signal whose
    /// exporter cannot be built, a gRPC protocol say, stays off).
    fn build() -> Telemetry {
        let wanted = wanted();
        let resource = Resource::builder().build();
        let traces = wanted.traces.then(|| {
            let exporter = SpanExporter::builder()
                .with_http()
                .with_http_client(http::Client::new(timeout("TRACES")))
                .with_timeout(timeout("TRACES"))
                .build()
                .ok()?;
            let provider = SdkTracerProvider::builder()
                .with_span_processor(BatchSpanProcessor::builder(exporter).build())
                .with_resource(resource.clone())
                .build();
            let tracer = provider.tracer_with_scope(scope());
            Some((provider, tracer))
        });
        let metrics = wanted.metrics.then(|| {
            let exporter = MetricExporter::builder()
                .with_http()
                .with_http_client(http::Client::new(timeout("METRICS")))
                .with_timeout(timeout("METRICS"))
                .build()
                .ok()?;
            let provider = SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(exporter).build())
                .with_resource(resource)
                .build();
            let meter = provider.meter_with_scope(scope());
            let seconds = |name: &'static str, what: &'static str| {
                meter
                    .f64_histogram(name)
                    .with_unit("s")
                    .with_description(what)
                    .with_boundaries(BUCKETS.to_vec())
                    .build()
            };
            let count = |name: &'static str, what: &'static str| {
                meter
                    .u64_counter(name)
                    .with_unit("{message}")
                    .with_description(what)
                    .build()
            };
            let instruments = Instruments {
                operation: seconds(
                    "messaging.client.operation.duration",
                    "Duration of a queue's send, receive and settle operations",
                ),
                process: seconds(
                    "messaging.process.duration",
                    "Duration of a task's processing, from its reserve to its settle",
                ),
                sent: count("messaging.client.sent.messages", "Tasks enqueued"),
                consumed: count("messaging.client.consumed.messages", "Tasks reserved"),
                lock_wait: seconds(
                    "redislock.lock.wait.duration",
                    "Time from asking for a lock to having it or giving up",
                ),
                lock_hold: seconds(
                    "redislock.lock.hold.duration",
                    "Time a lock was held, from its acquire to its release",
                ),
            };
            Some((provider, instruments))
        });
        Telemetry {
            pid: process::id(),
            traces: ManuallyDrop::new(traces.flatten()),
            metrics: ManuallyDrop::new(metrics.flatten()),
        }
    }
}

/// This process's exporters: built at the first call, rebuilt in a fork's
/// child (the parent's are forgotten there, see `Drop for Telemetry`).
static CURRENT: Mutex<Option<Arc<Telemetry>>> = Mutex::new(None);

fn current() -> Option<Arc<Telemetry>> {
    if !on() {
        return None;
    }
    let mut slot = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(t) = slot.as_ref().filter(|t| t.pid == process::id()) {
        return Some(t.clone());
    }
    // Threads started while building hold every signal back for their
    // whole life: a signal meant for the script is never handled there.
    let built = Arc::new(crate::signals::held(Telemetry::build));
    if let Some(parents) = slot.replace(built.clone()) {
        std::mem::forget(parents);
    }
    Some(built)
}

/// Exports what is pending now and waits for it (at most the exporter
/// timeout); true when everything was exported (or telemetry is off).
pub fn flush() -> bool {
    let Some(t) = CURRENT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .filter(|t| t.pid == process::id())
    else {
        return true;
    };
    let traced = t
        .traces
        .as_ref()
        .is_none_or(|(p, _)| p.force_flush().is_ok());
    let measured = t
        .metrics
        .as_ref()
        .is_none_or(|(p, _)| p.force_flush().is_ok());
    traced && measured
}

/// Module shutdown: ends the spans still open (a task never settled, a lock
/// never released by this process) and flushes every exporter of this
/// process. Never panics (the caller catches), never waits longer than the
/// exporters' timeouts.
pub fn shutdown() {
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        for (_, mut op) in open.take_all() {
            op.set("redislock.outcome", "unsettled");
            op.end(None);
        }
    });
    let t = CURRENT.lock().unwrap_or_else(|p| p.into_inner()).take();
    drop(t);
}

thread_local! {
    /// The parent of the spans this process starts, as PHP code set it
    /// ([`set_parent`]) for the request under way.
    static PARENT: RefCell<Option<Context>> = const { RefCell::new(None) };
    /// The spans that outlive a call, under their lease tokens.
    static OPEN: RefCell<Open> = RefCell::new(Open::default());
}

/// The context of a W3C `traceparent` (and `tracestate`), if it is a valid
/// one (a context the caller's tracer sampled out is still a parent: its
/// flag says not to sample).
pub fn context_of(traceparent: &[u8], tracestate: Option<&[u8]>) -> Option<Context> {
    let mut carrier = HashMap::new();
    carrier.insert(
        "traceparent".to_owned(),
        std::str::from_utf8(traceparent).ok()?.trim().to_owned(),
    );
    if let Some(state) = tracestate.and_then(|s| std::str::from_utf8(s).ok()) {
        carrier.insert("tracestate".to_owned(), state.trim().to_owned());
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    cx.span().span_context().is_valid().then_some(cx)
}

/// The W3C `traceparent` of a span context.
fn traceparent_of(span: &SpanContext) -> Option<String> {
    let cx = Context::new().with_remote_span_context(span.clone());
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    carrier.remove("traceparent")
}

/// Sets the parent of the spans started from now on in this request
/// (None: none, each operation starts a trace of its own). False when
/// `traceparent` is not a valid W3C one (the parent is then unset).
pub fn set_parent(traceparent: Option<&[u8]>, tracestate: Option<&[u8]>) -> bool {
    let cx = traceparent.and_then(|tp| context_of(tp, tracestate));
    let valid = cx.is_some() || traceparent.is_none_or(<[u8]>::is_empty);
    PARENT.with(|p| *p.borrow_mut() = cx);
    valid
}

/// The parent PHP code set, as a `traceparent` (None: none).
pub fn parent() -> Option<String> {
    PARENT.with(|p| {
        let cx = p.borrow();
        traceparent_of(cx.as_ref()?.span().span_context())
    })
}

/// The request ends: the parent it set goes with it.
pub fn end_request() {
    PARENT.with(|p| p.borrow_mut().take());
}

fn ambient() -> Context {
    PARENT.with(|p| p.borrow().clone()).unwrap_or_default()
}

/// Which metric an operation's duration goes to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Metric {
    None,
    Operation,
    Process,
    LockWait,
    LockHold,
}

/// The attributes a metric point keeps of its span's (the others, ids and
/// names of locks, would make a series per value).
const METRIC_KEYS: [&str; 5] = [
    "messaging.system",
    "messaging.operation.name",
    "messaging.operation.type",
    "messaging.destination.name",
    "error.type",
];

/// What an operation starts with.
struct Start<'a> {
    name: String,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
    /// None: the request's parent (see [`set_parent`]).
    parent: Option<&'a Context>,
    links: Vec<Link>,
    metric: Metric,
}

/// One operation under way: its span and its start, for its metric. Empty
/// (and free) while telemetry is off.
#[derive(Default)]
pub struct Op(Option<Box<Live>>);

struct Live {
    telemetry: Arc<Telemetry>,
    span: Option<opentelemetry_sdk::trace::Span>,
    started: Instant,
    metric: Metric,
    attributes: Vec<KeyValue>,
}

impl Op {
    fn start(start: Start<'_>) -> Op {
        let Some(telemetry) = current() else {
            return Op(None);
        };
        let span = telemetry.traces.as_ref().map(|(_, tracer)| {
            let ambient;
            let parent = match start.parent {
                Some(parent) => parent,
                None => {
                    ambient = self::ambient();
                    &ambient
                }
            };
            tracer
                .span_builder(start.name)
                .with_kind(start.kind)
                .with_attributes(start.attributes.clone())
                .with_links(start.links)
                .start_with_context(tracer, parent)
        });
        Op(Some(Box::new(Live {
            telemetry,
            span,
            started: Instant::now(),
            metric: start.metric,
            attributes: start.attributes,
        })))
    }

    /// Whether this operation is recorded (telemetry on).
    pub fn live(&self) -> bool {
        self.0.is_some()
    }

    /// Sets an attribute of the span (and of the metric point, for the
    /// keys it keeps).
    pub fn set(&mut self, key: &'static str, value: impl Into<Value>) {
        let Some(live) = self.0.as_mut() else { return };
        let kv = KeyValue::new(key, value);
        if let Some(span) = live.span.as_mut() {
            span.set_attribute(kv.clone());
        }
        live.attributes.retain(|a| a.key.as_str() != key);
        live.attributes.push(kv);
    }

    /// Renames the span (a reserve over several queues is named for the
    /// queue its tasks came from).
    pub fn rename(&mut self, name: String) {
        if let Some(span) = self.0.as_mut().and_then(|l| l.span.as_mut()) {
            span.update_name(name);
        }
    }

    /// The span's context, for a child or a link (None: off or unsampled).
    fn context(&self) -> Option<Context> {
        let span = self.0.as_ref()?.span.as_ref()?;
        let sc = span.span_context();
        sc.is_valid()
            .then(|| Context::new().with_remote_span_context(sc.clone()))
    }

    /// The span's W3C `traceparent` (None: off or unsampled).
    pub fn traceparent(&self) -> Option<String> {
        let span = self.0.as_ref()?.span.as_ref()?;
        let sc = span.span_context();
        if sc.is_valid() {
            traceparent_of(sc)
        } else {
            None
        }
    }

    /// Ends the operation, failed with `error` (the error's type, a short
    /// fixed word: the message may hold what is not the collector's) when
    /// there is one; records its duration.
    pub fn end(mut self, error: Option<&'static str>) {
        let Some(mut live) = self.0.take() else {
            return;
        };
        if let Some(error) = error {
            live.attributes.push(KeyValue::new("error.type", error));
            if let Some(span) = live.span.as_mut() {
                span.set_attribute(KeyValue::new("error.type", error));
                span.set_status(Status::error(error));
            }
        }
        if let Some(mut span) = live.span.take() {
            span.end();
        }
        let Some((_, m)) = live.telemetry.metrics.as_ref() else {
            return;
        };
        let seconds = live.started.elapsed().as_secs_f64();
        let attributes: Vec<KeyValue> = live
            .attributes
            .into_iter()
            .filter(|a| METRIC_KEYS.contains(&a.key.as_str()))
            .collect();
        match live.metric {
            Metric::None => {}
            Metric::Operation => m.operation.record(seconds, &attributes),
            Metric::Process => m.process.record(seconds, &attributes),
            Metric::LockWait => m.lock_wait.record(seconds, &attributes),
            Metric::LockHold => m.lock_hold.record(seconds, &attributes),
        }
    }

    /// Adds `n` to a message counter (sent or consumed) with this
    /// operation's attributes.
    fn count(&self, sent: bool, n: u64) {
        let Some(live) = self.0.as_ref() else { return };
        let Some((_, m)) = live.telemetry.metrics.as_ref() else {
            return;
        };
        let attributes: Vec<KeyValue> = live
            .attributes
            .iter()
            .filter(|a| METRIC_KEYS.contains(&a.key.as_str()))
            .cloned()
            .collect();
        if sent { &m.sent } else { &m.consumed }.add(n, &attributes);
    }
}

/// The spans that outlive a call, under their lease tokens: a reserved
/// task's processing, a lock's hold. At most [`Open::MOST`]; past that the
/// oldest ends as "unsettled" (a task left to its lease, a lock to its
/// expiry). Kept per process: a fork's child forgets its parent's.
#[derive(Default)]
struct Open {
    pid: u32,
    spans: VecDeque<(String, Op)>,
}

impl Open {
    const MOST: usize = 1024;

    fn mine(&mut self) -> &mut VecDeque<(String, Op)> {
        let pid = process::id();
        if self.pid != pid {
            std::mem::forget(std::mem::take(&mut self.spans));
            self.pid = pid;
        }
        &mut self.spans
    }

    fn take_all(&mut self) -> Vec<(String, Op)> {
        self.mine().drain(..).collect()
    }
}

/// Keeps `op` open under `token` until [`close`].
fn keep(token: &str, op: Op) {
    if !op.live() {
        return;
    }
    let oldest = OPEN.with(|open| {
        let mut open = open.borrow_mut();
        let spans = open.mine();
        spans.push_back((token.to_owned(), op));
        (spans.len() > Open::MOST)
            .then(|| spans.pop_front())
            .flatten()
    });
    if let Some((_, mut op)) = oldest {
        op.set("redislock.outcome", "unsettled");
        op.end(None);
    }
}

/// The operation kept open under `token`, if there is one.
fn close(token: &str) -> Option<Op> {
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        let spans = open.mine();
        let at = spans.iter().position(|(t, _)| t == token)?;
        spans.remove(at).map(|(_, op)| op)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_round_trips_and_junk_is_no_context() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let cx = context_of(tp.as_bytes(), None).expect("valid");
        assert_eq!(
            traceparent_of(cx.span().span_context()).as_deref(),
            Some(tp)
        );
        for junk in [
            &b""[..],
            b"00-00000000000000000000000000000000-b7ad6b7169203331-01",
            b"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            b"zz-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            b"\0\xff",
        ] {
            assert!(context_of(junk, None).is_none(), "{junk:?}");
        }
    }
}
