//! [`Traces`]: the process's `tracing` spans as OpenTelemetry spans, exported by OTLP/HTTP or by
//! an exporter of the application's choosing (feature `opentelemetry`).

use super::sampling::{Sample, Sampling};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use std::fmt;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Filter;
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
        Sample::new(self.sampling)
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
    use super::*;

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
        let task = || drop(task_span(|_| tracing::info_span!("task")));
        let in_request = |context: Option<&crate::protocol::trace::TraceContext>| {
            request_span(context, |_| tracing::info_span!("request")).in_scope(task);
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
