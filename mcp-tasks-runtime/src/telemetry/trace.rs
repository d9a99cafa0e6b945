//! Trace context on the server's spans. A request that names the client's span (`traceparent`
//! and `tracestate` in its `_meta`, see `protocol/trace.rs`) has its trace id, the client's span
//! id and the `tracestate` recorded on its `request` span (fields `trace_id`, `parent_span_id`,
//! `tracestate`).

use crate::protocol::trace::TraceContext;
use tracing::Span;

/// Records `context` on a request's `span`. Call it before the span is first entered: once
/// entered, an OpenTelemetry span has started and its parent is fixed.
pub(crate) fn join(span: &Span, context: &TraceContext) {
    span.record("trace_id", tracing::field::display(context.trace_id_hex()));
    span.record(
        "parent_span_id",
        tracing::field::display(context.parent_id_hex()),
    );
    if let Some(state) = &context.state {
        span.record("tracestate", &**state);
    }
}
