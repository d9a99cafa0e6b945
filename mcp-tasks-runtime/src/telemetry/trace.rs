//! Trace context on the server's spans. A request that names the client's span (`traceparent`
//! and `tracestate` in its `_meta`, see `protocol/trace.rs`) has its trace id, the client's span
//! id and the `tracestate` recorded on its `request` span (fields `trace_id`, `parent_span_id`,
//! `tracestate`); with the feature `opentelemetry` and an OpenTelemetry layer, the client's span
//! becomes the request span's remote parent instead, so the server's spans join the client's
//! trace. A task's span starts a trace of its own and links to the request span that created it:
//! a task outlives its request, often by far, and a trace is best kept to work that ends with its
//! root. `Traces`'s sampling (see `sampling.rs`) decides whether a trace is kept as its first span
//! is made: the request and task spans are made here, through [`request_span`] and
//! [`task_span`], which tell it what each begins, or decide it themselves when they can reach it
//! (through the subscriber). A span of a trace left out is then made at a callsite of its own
//! that the OpenTelemetry layer's filter never wants: when no other layer wants it either (no
//! log), no span is made at all, and the request or task runs under a disabled marker span that
//! [`instrument`] reads on every poll, so that a span made inside it does not begin a trace of
//! its own.

use crate::protocol::trace::TraceContext;
use tracing::Span;

/// An `info` span of the runtime's that may begin a trace, as [`request_span`] and [`task_span`]
/// ask `make` for it: `root_span!(left_out, "name", fields...)` makes it at a callsite of its
/// own for a trace left out (with the field `trace_left_out`, never recorded, which
/// `sampling.rs` knows it by), at another for every other.
macro_rules! root_span {
    ($left_out:expr, $name:literal, $($fields:tt)*) => {
        if $left_out {
            tracing::info_span!($name, trace_left_out = tracing::field::Empty, $($fields)*)
        } else {
            tracing::info_span!($name, $($fields)*)
        }
    };
}
pub(crate) use root_span;

/// Makes a request's span with `make`, and records the client's trace `context` on it. With the
/// feature `opentelemetry`, whether the span's trace is kept is decided as it is made (by
/// `Traces`'s sampling, from the `traceparent`'s flag and trace id), before the OpenTelemetry
/// layer builds anything for it. `make(true)` makes the span of a trace left out, at its own
/// callsite, which has the field `trace_left_out` (never recorded) for the layer's filter to
/// know it by; `make(false)` every other.
pub(crate) fn request_span(
    context: Option<&TraceContext>,
    make: impl FnOnce(bool) -> Span,
) -> Span {
    #[cfg(feature = "opentelemetry")]
    let span = otel::request(context, make);
    #[cfg(not(feature = "opentelemetry"))]
    let span = make(false);
    if let Some(context) = context
        && !span.is_disabled()
    {
        join(&span, context);
    }
    span
}

/// Records `context` on a request's `span`. Call it before the span is first entered: once
/// entered, an OpenTelemetry span has started and its parent is fixed. When an OpenTelemetry layer
/// takes the client's span as the parent, the span's own trace id, parent and trace state say it
/// all, and the fields are not recorded again (they would repeat what the span's context holds).
fn join(span: &Span, context: &TraceContext) {
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

/// Makes a task's span with `make` (inside the request that creates the task). With the feature
/// `opentelemetry` it starts a trace of its own, linked to the request's span, and is kept when
/// that request is. Without it the task's span stays a child of the request's in `tracing`,
/// which is all a log shows. `make` as for [`request_span`].
pub(crate) fn task_span(make: impl FnOnce(bool) -> Span) -> Span {
    #[cfg(feature = "opentelemetry")]
    return otel::task(make);
    #[cfg(not(feature = "opentelemetry"))]
    make(false)
}

/// Runs `fut` in `span` (a request's or a task's, from [`request_span`] or [`task_span`]).
#[cfg(not(feature = "opentelemetry"))]
pub(crate) fn instrument<F: Future>(fut: F, span: Span) -> tracing::instrument::Instrumented<F> {
    tracing::Instrument::instrument(fut, span)
}

/// Runs `fut` in `span` (a request's or a task's, from [`request_span`] or [`task_span`]); while
/// it is polled, a span of a trace left out that was not made (no layer wanted it) still keeps
/// the spans made inside out of the traces.
#[cfg(feature = "opentelemetry")]
pub(crate) fn instrument<F: Future>(fut: F, span: Span) -> super::sampling::Traced<F> {
    super::sampling::Traced::new(tracing::Instrument::instrument(fut, span))
}

#[cfg(feature = "opentelemetry")]
pub(super) mod otel {
    use super::super::sampling::{MARKER_METADATA, Remote, Root, Sample, left_out, making};
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

    /// Makes the span of a trace that begins at `root`: decided here when the subscriber has
    /// `Traces`'s sampling filter (found by downcasting it), else by the filter as the span is
    /// made. A span of a trace left out that no layer wanted is the disabled marker span.
    fn begin(root: Root, make: impl FnOnce(bool) -> Span) -> Span {
        let sampling = tracing::dispatcher::get_default(|dispatch| {
            dispatch.downcast_ref::<Sample>().map(Sample::sampling)
        });
        let Some(sampling) = sampling else {
            return making(root, || make(false));
        };
        let kept = sampling.decide(root);
        let span = making(Root::Decided(kept), || make(!kept));
        if !kept && span.is_disabled() {
            return Span::new_disabled(&MARKER_METADATA);
        }
        span
    }

    /// A request's span, made by `make`, joining the client's span `context`.
    pub(super) fn request(context: Option<&TraceContext>, make: impl FnOnce(bool) -> Span) -> Span {
        let remote = context.map(|context| Remote {
            trace_id: context.trace_id,
            sampled: context.flags & 1 == 1,
        });
        begin(Root::Request(remote), make)
    }

    /// A task's span, made by `make`: the root of a trace of its own, linked to the current
    /// span (the request that creates the task), and kept when that request is. A task made
    /// outside any span (by an rmcp server's handler, say) is kept as a trace that begins here.
    pub(super) fn task(make: impl FnOnce(bool) -> Span) -> Span {
        let current = Span::current();
        let request = current.context().span().span_context().clone();
        let request_kept = if left_out() {
            Some(false)
        } else {
            (!current.is_none()).then(|| request.is_sampled())
        };
        let task = begin(Root::Task { request_kept }, make);
        if request.is_valid() && !task.is_disabled() {
            let _ = task.set_parent(Context::new());
            task.add_link(request);
        }
        task
    }
}
