//! `RedisLock\Telemetry`: OpenTelemetry as PHP code sees it (the
//! `telemetry` engine): whether it is on, the parent of the spans a request
//! starts, and a flush.

use ext_php_rs::prelude::*;
use ext_php_rs::types::Zval;

use super::value::{Arg, NullableText};
use crate::telemetry;

/// OpenTelemetry spans and metrics of the extension's work, exported over
/// OTLP/HTTP: on when the environment names a collector
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`), see docs/operating.md.
#[php_class]
#[php(name = "RedisLock\\Telemetry")]
pub struct Telemetry;

#[php_impl]
impl Telemetry {
    /// Not for PHP code: the methods are static.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(super::errors::made_by(
            "RedisLock\\Telemetry",
            "its methods are static (RedisLock\\Telemetry::enabled())",
        ))
    }

    /// Whether spans and metrics are exported: the environment names an
    /// OTLP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the `_TRACES_` or
    /// `_METRICS_` one) and `OTEL_SDK_DISABLED` is not `true`.
    pub fn enabled() -> bool {
        telemetry::on()
    }

    /// Makes the span of W3C `traceparent` (and `tracestate`) the parent of
    /// the spans this request starts from now on: the request's own span, as
    /// an incoming `traceparent` header or an OpenTelemetry PHP SDK gives it.
    /// Null or "" unsets it. False, and unset, when `$traceparent` is not a
    /// valid one. The request's end unsets it.
    pub fn set_parent(
        traceparent: Arg<NullableText>,
        tracestate: Arg<NullableText>,
    ) -> PhpResult<bool> {
        let parent =
            traceparent.bytes("RedisLock\\Telemetry::setParent(): Argument #1 ($traceparent)")?;
        let state =
            tracestate.bytes("RedisLock\\Telemetry::setParent(): Argument #2 ($tracestate)")?;
        let state = (!state.is_empty()).then_some(state.as_slice());
        Ok(telemetry::set_parent(Some(&parent), state))
    }

    /// The parent `setParent()` set for this request, as a `traceparent`
    /// (null: none).
    pub fn parent() -> Option<String> {
        telemetry::parent()
    }

    /// Exports the spans and metrics not yet exported and waits for them
    /// (at most the exporter timeout, `OTEL_EXPORTER_OTLP_TIMEOUT`): true
    /// when all went, or telemetry is off. The end of the process flushes
    /// too; a long-running worker may flush between tasks.
    pub fn flush() -> bool {
        telemetry::flush()
    }
}
