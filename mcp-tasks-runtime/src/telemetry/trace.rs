//! Trace context on the server's spans. A request that names the client's span (`traceparent`
//! and `tracestate` in its `_meta`, see `protocol/trace.rs`) has its trace id, the client's span
//! id and the `tracestate` recorded on its `request` span (fields `trace_id`, `parent_span_id`,
//! `tracestate`); with the feature `opentelemetry` and an OpenTelemetry layer, the client's span
//! becomes the request span's remote parent instead, so the server's spans join the client's
//! trace. A task's span starts a trace of its own and links to the request span that created it:
//! a task outlives its request, often by far, and a trace is best kept to work that ends with its
//! root.

use crate::protocol::trace::TraceContext;
use tracing::Span;

/// Records `context` on a request's `span`. Call it before the span is first entered: once
/// entered, an OpenTelemetry span has started and its parent is fixed. When an OpenTelemetry layer
/// takes the client's span as the parent, the span's own trace id, parent and trace state say it
/// all, and the fields are not recorded again (a tenth of a traced request's instructions).
pub(crate) fn join(span: &Span, context: &TraceContext) {
    #[cfg(feature = "opentelemetry")]
    if otel::set_remote_parent(span, context) {
        return;
    }
    span.record("trace_id", tracing::field::display(context.trace_id_hex()));
    span.record(
        "parent_span_id",
        tracing::field::display(context.parent_id_hex()),
    );
    if let Some(state) = &context.state {
        span.record("tracestate", &**state);
    }
}

/// Makes a new task's span (not yet entered) start its own trace, linked to the current span
/// (the request that creates the task). Without the feature `opentelemetry` the task's span stays
/// a child of the request's in `tracing`, which is all a log shows.
pub(crate) fn link_to_request(task: &Span) {
    #[cfg(feature = "opentelemetry")]
    otel::link_to_current(task);
    #[cfg(not(feature = "opentelemetry"))]
    let _ = task;
}

#[cfg(feature = "opentelemetry")]
mod otel {
    use crate::protocol::trace::TraceContext;
    use opentelemetry::Context;
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use std::str::FromStr;
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// The client's span as the remote parent of `span`; `false` when no OpenTelemetry layer in
    /// the subscriber took it.
    pub(super) fn set_remote_parent(span: &Span, context: &TraceContext) -> bool {
        let state = match context.state.as_deref().map(TraceState::from_str) {
            Some(Ok(state)) => state,
            Some(Err(error)) => {
                tracing::debug!(%error, "`_meta.tracestate` is not a W3C tracestate; ignored");
                TraceState::default()
            }
            None => TraceState::default(),
        };
        let remote = SpanContext::new(
            TraceId::from_bytes(context.trace_id),
            SpanId::from_bytes(context.parent_id),
            TraceFlags::new(context.flags),
            true,
            state,
        );
        span.set_parent(Context::new().with_remote_span_context(remote))
            .is_ok()
    }

    /// `task` as the root of a trace of its own, linked to the current span.
    pub(super) fn link_to_current(task: &Span) {
        let request = Span::current().context().span().span_context().clone();
        if request.is_valid() {
            let _ = task.set_parent(Context::new());
            task.add_link(request);
        }
    }
}
