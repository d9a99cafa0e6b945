//! [`Traces`]: the process's `tracing` spans as OpenTelemetry spans, exported by OTLP/HTTP or by
//! an exporter of the application's choosing (feature `opentelemetry`).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::fmt;
use tracing::Subscriber;
use tracing_subscriber::Layer;
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
#[derive(Clone)]
pub struct Traces {
    provider: SdkTracerProvider,
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
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        Ok(Traces { provider })
    }

    /// Traces through a tracer provider of your own: another exporter, sampler or processor
    /// (an in-memory exporter in tests).
    pub fn from_provider(provider: SdkTracerProvider) -> Traces {
        Traces { provider }
    }

    /// The layer to add to the process's `tracing` subscriber. Its spans carry their fields as
    /// attributes, and entering one makes it OpenTelemetry's current context (so OpenTelemetry
    /// instrumentation inside a tool, an HTTP client's, joins the task's or request's trace).
    /// Left out, for what they cost against what they say (`bench/HISTORY.md` has the figures):
    /// where in the code a span was made (for the server's spans always the same lines of the
    /// runtime) and its `target` (the module that made it: for the server's spans always one of
    /// the runtime's, which the instrumentation scope, `mcp-tasks-runtime`, names already), how
    /// long it was busy and idle, and the thread (a task moves between a runtime's threads). For
    /// them, build a layer of your own on [`tracer`](Self::tracer).
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
    }

    /// The tracer the layer uses, for a `tracing_opentelemetry::layer()` of your own (other
    /// settings; the versions the type's documentation names).
    pub fn tracer(&self) -> SdkTracer {
        self.provider.tracer(env!("CARGO_PKG_NAME"))
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
