//! [`Traces`]: the process's `tracing` spans as OpenTelemetry spans, exported by OTLP/HTTP or by
//! an exporter of the application's choosing (feature `opentelemetry`).

use super::trace::otel::Root;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use std::fmt;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;

/// OpenTelemetry traces of the server: a [`tracing_subscriber`] layer that turns the process's
/// `tracing` spans (the server's `request` and `task` spans among them) into OpenTelemetry spans,
/// and the tracer provider that exports them.
///
/// A request whose `_meta` carries a W3C `traceparent` (and `tracestate`), as SEP-414 describes,
/// joins the client's trace: its span's parent is the client's span. A task's span begins a trace
/// of its own and links to the request span that created it (a task outlives its request).
///
/// ```no_run
/// use mcp_tasks_runtime::telemetry::Traces;
/// use tracing_subscriber::layer::SubscriberExt;
/// use tracing_subscriber::util::SubscriberInitExt;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // An OpenTelemetry collector's OTLP/HTTP receiver (spans go to `/v1/traces`).
/// let traces = Traces::otlp("http://127.0.0.1:4318", "my-mcp-server")?;
/// tracing_subscriber::registry().with(traces.layer()).init();
/// // ... serve ...
/// traces.shutdown()?; // sends what is still buffered
/// # Ok(()) }
/// ```
///
/// The layer is [`tracing-opentelemetry`](https://docs.rs/tracing-opentelemetry) 0.34 on
/// `opentelemetry` 0.33: an application that builds its own layer must use those versions for
/// the server's spans to join their clients' traces.
///
/// **Sampling.** Which traces are kept is decided once, where a trace begins in this process (a
/// request span, or a span of the application's own made outside any other), before the
/// OpenTelemetry layer builds anything for it: a span of a trace not kept, and every span made
/// inside it (a request's task among them), costs the layer nothing. A request whose client
/// sent a `traceparent` keeps its client's decision (the flag `01`); the other traces are kept
/// at the ratio [`sample_ratio`](Self::sample_ratio) sets. [`otlp`](Self::otlp) reads it from
/// `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, as OpenTelemetry's SDKs do.
#[derive(Clone)]
pub struct Traces {
    provider: SdkTracerProvider,
    sampling: Sampling,
}

/// Which traces are kept: those that begin here at `ratio`, and those that join a client's trace
/// as the client decided (`parent_based`) or at `ratio` too.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sampling {
    ratio: f64,
    parent_based: bool,
}

impl Sampling {
    /// Every trace that begins here, and the client's decision for the others: the default of
    /// OpenTelemetry's SDKs (`parentbased_always_on`).
    const DEFAULT: Sampling = Sampling {
        ratio: 1.0,
        parent_based: true,
    };

    /// The sampler that `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name (`sampler`,
    /// `arg`), as OpenTelemetry's SDK configuration defines them: `always_on`, `always_off`,
    /// `traceidratio`, and each as `parentbased_...`. An unknown sampler is the default, and a
    /// ratio that is missing or not in `[0, 1]` is 1 (with a warning, as the SDKs do).
    fn from_variables(sampler: Option<&str>, arg: Option<&str>) -> Sampling {
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
    fn keeps(&self, remote: Option<super::trace::otel::Remote>) -> bool {
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

impl Traces {
    /// Exports spans by OTLP/HTTP (protobuf) to `endpoint`, the base URL of a collector's OTLP
    /// receiver (`http://127.0.0.1:4318`), as `OTEL_EXPORTER_OTLP_ENDPOINT` names it: spans are
    /// posted to `endpoint/v1/traces` (an endpoint that already ends with `/v1/traces` is used
    /// as it is). Spans are sent in batches from a thread of their own; `service_name` is the
    /// resource's `service.name`. The URL is `http://` (this client has no TLS: for `https://`
    /// build an exporter of your own and use [`from_provider`](Self::from_provider)).
    pub fn otlp(endpoint: &str, service_name: impl Into<String>) -> Result<Traces, TracesError> {
        let url = if endpoint.ends_with("/v1/traces") {
            endpoint.to_owned()
        } else {
            format!("{}/v1/traces", endpoint.trim_end_matches('/'))
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .build()
            .map_err(|e| TracesError(e.to_string()))?;
        let resource = Resource::builder()
            .with_service_name(service_name.into())
            .build();
        // The layer samples (`Sampling`): what reaches the provider is kept.
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .with_sampler(Sampler::AlwaysOn)
            .build();
        let variable = |name| std::env::var(name).ok();
        let sampling = Sampling::from_variables(
            variable("OTEL_TRACES_SAMPLER").as_deref(),
            variable("OTEL_TRACES_SAMPLER_ARG").as_deref(),
        );
        Ok(Traces { provider, sampling })
    }

    /// Traces through a tracer provider of your own: another exporter, sampler or processor
    /// (an in-memory exporter in tests). The layer keeps every trace that begins here and
    /// follows a client's `traceparent`; the provider's sampler then decides as it would
    /// alone. For sampling that costs nothing on the traces left out, set
    /// [`sample_ratio`](Self::sample_ratio), and leave the provider's default sampler (or
    /// `AlwaysOn`): a ratio sampler there too would keep the product of the two ratios.
    pub fn from_provider(provider: SdkTracerProvider) -> Traces {
        Traces {
            provider,
            sampling: Sampling::DEFAULT,
        }
    }

    /// Keeps `ratio` (0 to 1, clamped) of the traces that begin in this process, chosen at
    /// random; a request whose client sent a `traceparent` still keeps its client's decision.
    /// It replaces what `OTEL_TRACES_SAMPLER` said. A trace left out costs the layer nothing.
    pub fn sample_ratio(mut self, ratio: f64) -> Traces {
        self.sampling = Sampling {
            ratio: if ratio.is_nan() {
                1.0
            } else {
                ratio.clamp(0.0, 1.0)
            },
            parent_based: true,
        };
        self
    }

    /// The layer to add to the process's `tracing` subscriber. Its spans carry their fields as
    /// attributes, and entering one makes it OpenTelemetry's current context (so OpenTelemetry
    /// instrumentation inside a tool, an HTTP client's, joins the task's or request's trace).
    /// Left out, for what they cost against what they say (`bench/HISTORY.md` has the figures):
    /// where in the code a span was made (for the server's spans always the same lines of the
    /// runtime) and its `target` (the module that made it: for the server's spans always one of
    /// the runtime's, which the instrumentation scope, `mcp-tasks-runtime`, names already), how
    /// long it was busy and idle, and the thread (a task moves between a runtime's threads). For
    /// them, build a layer of your own on [`tracer`](Self::tracer). The layer samples where
    /// traces begin (see the type's documentation), through the filter
    /// [`sampling`](Self::sampling) gives.
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer())
            .with_threads(false)
            .with_location(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(self.sampling())
    }

    /// The tracer the layer uses, for a `tracing_opentelemetry::layer()` of your own (other
    /// settings; the versions the type's documentation names). [`otlp`](Self::otlp)'s provider
    /// keeps every span it is given, so give your layer the filter [`sampling`](Self::sampling)
    /// (`.with_filter(traces.sampling())`) to sample as [`layer`](Self::layer) does.
    pub fn tracer(&self) -> SdkTracer {
        self.provider.tracer(env!("CARGO_PKG_NAME"))
    }

    /// The per-layer filter that samples (the type's documentation says how), for an
    /// OpenTelemetry layer of your own on [`tracer`](Self::tracer).
    pub fn sampling<S>(&self) -> impl Filter<S> + use<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        Sample {
            sampling: self.sampling,
        }
    }

    /// Sends every span not yet exported, waiting for the exporter.
    pub fn flush(&self) -> Result<(), TracesError> {
        self.provider
            .force_flush()
            .map_err(|e| TracesError(e.to_string()))
    }

    /// Sends every span not yet exported and stops exporting. Call it once, at exit.
    pub fn shutdown(&self) -> Result<(), TracesError> {
        self.provider
            .shutdown()
            .map_err(|e| TracesError(e.to_string()))
    }
}

/// The filter on the OpenTelemetry layer that samples: it shows the layer only the spans of the
/// traces `sampling` keeps, and the events inside them. Whether a trace is kept is decided as
/// its first span is made: for the runtime's request and task spans as `trace::Root` says, for
/// a span made outside any other at `sampling`'s ratio; a span made inside another is kept if
/// that span, or its nearest ancestor the layer is shown, is. A span left out stays hidden from
/// the layer, which makes nothing for it; the registry still keeps it (a span no layer's filter
/// enables is made all the same), so a span made inside it is left out too instead of beginning
/// a trace of its own (`tests/traces.rs` checks it).
struct Sample {
    sampling: Sampling,
}

impl<S> Filter<S> for Sample
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    fn enabled(&self, metadata: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        if metadata.is_span() {
            match super::trace::otel::take_root() {
                Some(Root::Request(remote)) => return self.sampling.keeps(remote),
                Some(Root::Task {
                    request_kept: Some(kept),
                }) => return kept,
                Some(Root::Task { request_kept: None }) => return self.sampling.keeps(None),
                None => {}
            }
            if cx.current_span().id().is_none() {
                return self.sampling.keeps(None);
            }
        }
        // Inside a span the layer is shown (the current one, or the nearest of its ancestors
        // that is: a span hidden by another filter does not hide its descendants). An event
        // outside every span, which the layer has nowhere to put, is not shown either.
        cx.lookup_current().is_some()
    }
}

impl fmt::Debug for Traces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Traces").finish_non_exhaustive()
    }
}

/// Why setting up, flushing or shutting down [`Traces`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracesError(String);

impl fmt::Display for TracesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenTelemetry traces: {}", self.0)
    }
}

impl std::error::Error for TracesError {}

#[cfg(test)]
mod tests {
    use super::super::trace::otel::Remote;
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

    #[test]
    fn a_sample_ratio_is_clamped_and_parent_based() {
        let traces = || Traces::from_provider(SdkTracerProvider::builder().build());
        for (ratio, kept) in [(0.5, 0.5), (-1.0, 0.0), (2.0, 1.0), (f64::NAN, 1.0)] {
            assert_eq!(
                traces().sample_ratio(ratio).sampling,
                Sampling {
                    ratio: kept,
                    parent_based: true
                }
            );
        }
    }

    /// The names of the spans exported, kept for the test to read.
    #[derive(Debug, Clone, Default)]
    struct Names(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl opentelemetry_sdk::trace::SpanExporter for Names {
        async fn export(
            &self,
            batch: Vec<opentelemetry_sdk::trace::SpanData>,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            let mut names = self.0.lock().unwrap();
            names.extend(batch.into_iter().map(|span| span.name.into_owned()));
            Ok(())
        }
    }

    /// A task's span made outside any span (an rmcp handler's call has no request span) begins
    /// a trace as any other root does; inside a request left out it is left out.
    #[test]
    fn a_task_made_outside_any_span_is_sampled_as_a_root() {
        use super::super::trace::{request_span, task_span};
        use tracing_subscriber::layer::SubscriberExt;
        // The names of the spans `run` exports through `Traces` at `ratio`.
        let exported = |ratio: f64, run: &dyn Fn()| {
            let names = Names::default();
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(names.clone())
                .build();
            let traces = Traces::from_provider(provider).sample_ratio(ratio);
            let subscriber = tracing_subscriber::registry().with(traces.layer());
            tracing::subscriber::with_default(subscriber, run);
            names.0.lock().unwrap().clone()
        };
        let task = || drop(task_span(|| tracing::info_span!("task")));
        let in_request = |context: Option<&crate::protocol::trace::TraceContext>| {
            request_span(context, || tracing::info_span!("request")).in_scope(task);
        };
        assert_eq!(exported(1.0, &task), ["task"]);
        assert!(exported(0.0, &task).is_empty());
        assert_eq!(exported(1.0, &|| in_request(None)), ["task", "request"]);
        // Inside a request its client left out, at a ratio that keeps every root: left out.
        let unsampled = crate::protocol::trace::TraceContext {
            trace_id: [1; 16],
            parent_id: [2; 8],
            flags: 0,
            state: None,
        };
        assert!(exported(1.0, &|| in_request(Some(&unsampled))).is_empty());
    }
}
