//! Telemetry on for the `mcp-metrics` and `mcp-otel` servers (`--features telemetry`): what a
//! production deployment turns on, so that the bench can show what it costs against plain
//! mcp-tasks in the same run. And the OTLP/HTTP sink that `mcp-otel` exports to: it takes every
//! batch and answers 200, as a collector on the same machine would, at the least cost.

use mcp_tasks_runtime::server::Metrics;
use mcp_tasks_runtime::telemetry::Traces;
use std::io;
use std::sync::OnceLock;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The traces of this process, kept until it exits.
static TRACES: OnceLock<Traces> = OnceLock::new();

/// Turns telemetry on for this process, as `--telemetry SPEC` says: `metrics` installs the
/// Prometheus recorder (`Metrics::install`; nothing scrapes it); `otel=URL` exports every span by
/// OTLP/HTTP to the collector at `URL` (`Traces::otlp`, batched on the SDK's thread).
pub fn install(spec: &str) -> io::Result<()> {
    if spec == "metrics" {
        Metrics::install().map_err(io::Error::other)?;
        return Ok(());
    }
    let Some(url) = spec.strip_prefix("otel=") else {
        return Err(io::Error::other(format!(
            "--telemetry {spec}: expected `metrics` or `otel=URL`"
        )));
    };
    let traces = Traces::otlp(url, "bench-mcp-tasks").map_err(io::Error::other)?;
    tracing_subscriber::registry()
        .with(traces.layer())
        .try_init()
        .map_err(io::Error::other)?;
    let _ = TRACES.set(traces);
    Ok(())
}

/// Sends the spans still buffered (at the end of a server's run).
pub fn flush() {
    if let Some(traces) = TRACES.get() {
        let _ = traces.shutdown();
    }
}

/// Starts the OTLP/HTTP sink on a free loopback port, on the current runtime; its base URL.
pub async fn start_sink() -> io::Result<String> {
    use axum::routing::post;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().route("/v1/traces", post(|| async { "" }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}
