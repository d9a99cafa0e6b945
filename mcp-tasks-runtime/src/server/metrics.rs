//! A Prometheus recorder for the server's metrics (feature `prometheus`), and what `/metrics`
//! renders. The metrics themselves are listed in the book's "Serving over HTTP" chapter.

use std::fmt;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// The histograms' buckets, in seconds: from half a millisecond (a store read) to ten minutes (a
/// person answering an elicitation).
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0, 600.0,
];

/// How often the recorder's buffers are tidied.
const UPKEEP: Duration = Duration::from_secs(5);

/// This process's Prometheus recorder: every metric the server records (and any other code of
/// the process records through the `metrics` facade) is rendered by [`render`](Self::render),
/// which [`HttpConfig::metrics`](super::HttpConfig::metrics) serves at `GET /metrics`.
///
/// ```no_run
/// use mcp_tasks_runtime::server::{HttpConfig, Metrics};
/// # async fn run(server: mcp_tasks_runtime::Server) -> Result<(), Box<dyn std::error::Error>> {
/// let metrics = Metrics::install()?;
/// server.serve_http("0.0.0.0:8080").config(HttpConfig::default().metrics(metrics)).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

impl Metrics {
    /// Installs a Prometheus recorder as the process's `metrics` recorder (histograms with
    /// buckets from 0.5 ms to 10 minutes). A process has one recorder: this fails if another
    /// was installed first (then serve that one's output yourself).
    pub fn install() -> Result<Metrics, MetricsError> {
        let handle = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .map_err(|e| MetricsError(e.to_string()))?
            .install_recorder()
            .map_err(|e| MetricsError(e.to_string()))?;
        let upkeep = handle.clone();
        std::thread::Builder::new()
            .name("mcp-tasks-metrics".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP);
                    upkeep.run_upkeep();
                }
            })
            .map_err(|e| MetricsError(e.to_string()))?;
        // The recorder is the process's for good: the server's metrics may keep their handles.
        crate::telemetry::keep_metric_handles();
        Ok(Metrics { handle })
    }

    /// Every metric, in Prometheus's text exposition format.
    pub fn render(&self) -> String {
        self.handle.render()
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// Why [`Metrics::install`] failed (another recorder was installed first, most often).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsError(String);

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "installing the Prometheus recorder failed: {}", self.0)
    }
}

impl std::error::Error for MetricsError {}
