//! Which traces `Traces` keeps, and how: the sampling itself (`Sampling`, from the standard
//! variables or a ratio), the filter on the OpenTelemetry layer that applies it (`Sample`), and
//! what the runtime tells it as it makes the spans that begin traces (`Root`, see `trace.rs`).
//! A span of a trace left out that no layer wants is not made at all: its request or task runs
//! under a disabled marker span, and [`Traced`] says so while it is polled, so that a span made
//! inside does not begin a trace of its own.

use std::cell::Cell;
use std::pin::Pin;
use std::task::Poll;
use tracing::callsite::{Callsite, Identifier};
use tracing::field::FieldSet;
use tracing::instrument::Instrumented;
use tracing::metadata::Kind;
use tracing::subscriber::Interest;
use tracing::{Level, Metadata, Span, Subscriber};
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;

/// The field of the callsites of the runtime's spans for traces left out (see
/// `trace::root_span!`).
const LEFT_OUT_FIELD: &str = "trace_left_out";

/// Which traces are kept: those that begin here at `ratio`, and those that join a client's trace
/// as the client decided (`parent_based`) or at `ratio` too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::telemetry) struct Sampling {
    pub(in crate::telemetry) ratio: f64,
    pub(in crate::telemetry) parent_based: bool,
}

impl Sampling {
    /// Every trace that begins here, and the client's decision for the others: the default of
    /// OpenTelemetry's SDKs (`parentbased_always_on`).
    pub(in crate::telemetry) const DEFAULT: Sampling = Sampling {
        ratio: 1.0,
        parent_based: true,
    };

    /// The sampler that `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name (`sampler`,
    /// `arg`), as OpenTelemetry's SDK configuration defines them: `always_on`, `always_off`,
    /// `traceidratio`, and each as `parentbased_...`. An unknown sampler is the default, and a
    /// ratio that is missing or not in `[0, 1]` is 1 (with a warning, as the SDKs do).
    pub(in crate::telemetry) fn from_variables(
        sampler: Option<&str>,
        arg: Option<&str>,
    ) -> Sampling {
        let Some(sampler) = sampler.map(str::trim).filter(|s| !s.is_empty()) else {
            return Sampling::DEFAULT;
        };
        let (parent_based, root) = match sampler.strip_prefix("parentbased_") {
            Some(root) => (true, root),
            None => (false, sampler),
        };
        let ratio = match root {
            "always_on" => 1.0,
            "always_off" => 0.0,
            "traceidratio" => match arg.map(str::trim).map(str::parse::<f64>) {
                Some(Ok(ratio)) if (0.0..=1.0).contains(&ratio) => ratio,
                _ => {
                    tracing::warn!(
                        sampler,
                        arg,
                        "OTEL_TRACES_SAMPLER_ARG is not a ratio in [0, 1]: every trace is kept"
                    );
                    1.0
                }
            },
            _ => {
                tracing::warn!(
                    sampler,
                    "OTEL_TRACES_SAMPLER names a sampler this server does not have: \
                     `parentbased_always_on` instead"
                );
                return Sampling::DEFAULT;
            }
        };
        Sampling {
            ratio,
            parent_based,
        }
    }

    /// Whether to keep a trace that begins here, joining the client's span `remote` if any.
    pub(in crate::telemetry) fn keeps(&self, remote: Option<Remote>) -> bool {
        match remote {
            Some(remote) if self.parent_based => remote.sampled,
            // As OpenTelemetry's `TraceIdRatioBased` decides: on the trace id's last 8 bytes,
            // so that every service in the trace decides alike.
            Some(remote) => below_ratio(
                u64::from_be_bytes(remote.trace_id[8..].try_into().expect("8 bytes")) >> 1,
                self.ratio,
            ),
            // A trace id not made yet is as random as a draw.
            None => self.ratio >= 1.0 || below_ratio(rand::random::<u64>() >> 1, self.ratio),
        }
    }
}

/// Whether `draw`, uniform in `[0, 2^63)`, falls in the first `ratio` of that range.
fn below_ratio(draw: u64, ratio: f64) -> bool {
    draw < (ratio.max(0.0) * (1u64 << 63) as f64) as u64
}

thread_local! {
    /// The root of a trace the runtime is making on this thread: the span being made.
    static ROOT: Cell<Option<Root>> = const { Cell::new(None) };
    /// Whether this thread is polling a request or task whose trace is left out and whose
    /// span was not made (see [`Traced`]).
    static LEFT_OUT: Cell<bool> = const { Cell::new(false) };
}

/// A span of the runtime's that begins a trace, as it is made: what `Traces`'s sampling
/// decides it by.
#[derive(Debug, Clone, Copy)]
pub(in crate::telemetry) enum Root {
    /// A request's span, and the client's span it joins, if any.
    Request(Option<Remote>),
    /// A task's span, and whether the request that creates it is kept (`None`: it is made
    /// outside any span, so it begins a trace as any other root does).
    Task { request_kept: Option<bool> },
    /// A request's or task's span whose trace the runtime has decided to keep, or not.
    Decided(bool),
}

impl Sampling {
    /// Whether the trace `root` begins is kept.
    pub(in crate::telemetry) fn decide(&self, root: Root) -> bool {
        match root {
            Root::Request(remote) => self.keeps(remote),
            Root::Task {
                request_kept: Some(kept),
            }
            | Root::Decided(kept) => kept,
            Root::Task { request_kept: None } => self.keeps(None),
        }
    }
}

/// What sampling needs of a client's span: its trace and its sampled flag.
#[derive(Debug, Clone, Copy)]
pub(in crate::telemetry) struct Remote {
    pub(in crate::telemetry) trace_id: [u8; 16],
    pub(in crate::telemetry) sampled: bool,
}

/// Runs `make` with `root` as what the span it makes begins.
pub(in crate::telemetry) fn making(root: Root, make: impl FnOnce() -> Span) -> Span {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            ROOT.set(None);
        }
    }
    ROOT.set(Some(root));
    let _clear = Clear;
    make()
}

/// The root that the span being made on this thread begins, taken: a span made meanwhile
/// (by a layer) or next is not taken for it.
pub(in crate::telemetry) fn take_root() -> Option<Root> {
    ROOT.take()
}

/// Whether a span made now, outside any other, is in a trace left out (see [`Traced`]).
pub(in crate::telemetry) fn left_out() -> bool {
    LEFT_OUT.get()
}

/// Whether `metadata` is a callsite of the runtime's for spans of traces left out.
fn is_left_out(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("mcp_tasks_runtime")
        && metadata.fields().field(LEFT_OUT_FIELD).is_some()
}

/// The callsite of the marker span: never registered, so never seen by a subscriber.
struct Marker;

static MARKER: Marker = Marker;

pub(in crate::telemetry) static MARKER_METADATA: Metadata<'static> = Metadata::new(
    "left out",
    "mcp_tasks_runtime::telemetry",
    Level::TRACE,
    None,
    None,
    None,
    FieldSet::new(&[], Identifier(&MARKER)),
    Kind::SPAN,
);

impl Callsite for Marker {
    fn set_interest(&self, _: Interest) {}

    fn metadata(&self) -> &Metadata<'_> {
        &MARKER_METADATA
    }
}

/// The filter on the OpenTelemetry layer that samples: it shows the layer only the spans of the
/// traces `sampling` keeps, and the events inside them. Whether a trace is kept is decided as
/// its first span is made: for the runtime's request and task spans as `trace::Root` says (by
/// the runtime itself, which finds this filter in the subscriber), for a span made outside any
/// other at `sampling`'s ratio; a span made inside another is kept if that span, or its nearest
/// ancestor the layer is shown, is. A span left out stays hidden from the layer, which makes
/// nothing for it; the registry still keeps it if it is made (a span no layer's filter enables
/// is made all the same), so a span made inside it is left out too instead of beginning a trace
/// of its own (`tests/traces.rs` checks it). The runtime's spans of traces left out have
/// callsites of their own, which this filter never wants: with no other layer that wants them,
/// they are not made at all, and a span made while the runtime polls their request or task,
/// outside any other span, is left out ([`Traced`]).
pub(in crate::telemetry) struct Sample {
    sampling: Sampling,
}

impl Sample {
    pub(in crate::telemetry) fn new(sampling: Sampling) -> Sample {
        Sample { sampling }
    }

    pub(in crate::telemetry) fn sampling(&self) -> Sampling {
        self.sampling
    }
}

impl<S> Filter<S> for Sample
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    fn enabled(&self, metadata: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        if metadata.is_span() {
            if let Some(root) = take_root() {
                return self.sampling.decide(root);
            }
            if cx.current_span().id().is_none() {
                return !left_out() && self.sampling.keeps(None);
            }
        }
        // Inside a span the layer is shown (the current one, or the nearest of its ancestors
        // that is: a span hidden by another filter does not hide its descendants). An event
        // outside every span, which the layer has nowhere to put, is not shown either.
        cx.lookup_current().is_some()
    }

    fn callsite_enabled(&self, metadata: &'static Metadata<'static>) -> Interest {
        if is_left_out(metadata) {
            Interest::never()
        } else {
            Interest::sometimes()
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's or task's future in its span; while it is polled, [`left_out`] says
    /// whether its span is the marker of a trace left out.
    pub(crate) struct Traced<F> {
        #[pin]
        inner: Instrumented<F>,
    }
}

impl<F> Traced<F> {
    pub(in crate::telemetry) fn new(inner: Instrumented<F>) -> Self {
        Traced { inner }
    }
}

impl<F: Future> Future for Traced<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        /// Puts back what [`LEFT_OUT`] said, even if the poll panics.
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                LEFT_OUT.set(self.0);
            }
        }
        let inner = self.project().inner;
        let marked = inner
            .as_ref()
            .get_ref()
            .span()
            .metadata()
            .is_some_and(|metadata| std::ptr::eq(metadata, &MARKER_METADATA));
        let _restore = Restore(LEFT_OUT.replace(marked));
        inner.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(sampler: &str, arg: Option<&str>) -> Sampling {
        Sampling::from_variables(Some(sampler), arg)
    }

    #[test]
    fn the_sampler_variables_read_as_opentelemetry_defines_them() {
        let at = |ratio, parent_based| Sampling {
            ratio,
            parent_based,
        };
        assert_eq!(Sampling::from_variables(None, None), Sampling::DEFAULT);
        assert_eq!(Sampling::from_variables(Some(" "), None), Sampling::DEFAULT);
        assert_eq!(sampling("always_on", None), at(1.0, false));
        assert_eq!(sampling("always_off", None), at(0.0, false));
        assert_eq!(sampling("traceidratio", Some("0.25")), at(0.25, false));
        assert_eq!(sampling("parentbased_always_on", None), at(1.0, true));
        assert_eq!(sampling("parentbased_always_off", None), at(0.0, true));
        assert_eq!(
            sampling("parentbased_traceidratio", Some(" 0.1 ")),
            at(0.1, true)
        );
        // A ratio missing or out of bounds keeps everything; an unknown sampler is the default.
        for arg in [None, Some("1.5"), Some("-0.1"), Some("half"), Some("NaN")] {
            assert_eq!(sampling("parentbased_traceidratio", arg), at(1.0, true));
        }
        for unknown in ["jaeger_remote", "xray", "parentbased_sometimes"] {
            assert_eq!(sampling(unknown, Some("0.5")), Sampling::DEFAULT);
        }
    }

    #[test]
    fn a_client_decides_when_parent_based_and_its_trace_id_does_otherwise() {
        let remote = |low: u64, sampled| Remote {
            trace_id: {
                let mut id = [7u8; 16];
                id[8..].copy_from_slice(&low.to_be_bytes());
                id
            },
            sampled,
        };
        let parent_based = sampling("parentbased_traceidratio", Some("0.5"));
        assert!(parent_based.keeps(Some(remote(u64::MAX, true))));
        assert!(!parent_based.keeps(Some(remote(0, false))));
        // Not parent-based: the trace id's last 8 bytes against the ratio, whatever the flag
        // (as `TraceIdRatioBased` decides, so every service of the trace agrees).
        let by_id = sampling("traceidratio", Some("0.5"));
        assert!(by_id.keeps(Some(remote(0, false))));
        assert!(by_id.keeps(Some(remote((1 << 63) - 1, false))));
        assert!(!by_id.keeps(Some(remote(1 << 63, true))));
        assert!(!by_id.keeps(Some(remote(u64::MAX, true))));
        assert!(!sampling("always_off", None).keeps(Some(remote(0, true))));
        assert!(sampling("always_on", None).keeps(Some(remote(u64::MAX, false))));
    }

    #[test]
    fn a_trace_that_begins_here_is_kept_at_the_ratio() {
        let at = |ratio| Sampling {
            ratio,
            parent_based: true,
        };
        assert!((0..1000).all(|_| at(1.0).keeps(None)));
        assert!((0..1000).all(|_| !at(0.0).keeps(None)));
        // 10,000 draws at 0.3: 3,000 expected, 46 the standard deviation.
        let kept = (0..10_000).filter(|_| at(0.3).keeps(None)).count();
        assert!((2_700..=3_300).contains(&kept), "{kept}");
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    }

    /// The mark of a trace left out holds while its future is polled, not before, after, or
    /// while a future in a span of its own is, and not after a poll that panicked.
    #[test]
    fn the_mark_of_a_trace_left_out_lasts_while_its_future_is_polled() {
        let marker = || Span::new_disabled(&MARKER_METADATA);
        let rt = runtime();
        assert!(!left_out());
        rt.block_on(crate::telemetry::trace::instrument(
            async {
                assert!(left_out());
                tokio::task::yield_now().await;
                assert!(left_out());
                crate::telemetry::trace::instrument(async { assert!(!left_out()) }, Span::none())
                    .await;
                assert!(left_out());
            },
            marker(),
        ));
        assert!(!left_out());
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(crate::telemetry::trace::instrument(
                async { panic!("a tool that panics") },
                marker(),
            ))
        }));
        assert!(panicked.is_err());
        assert!(!left_out());
    }
}
