//! What the server measures and traces.
//!
//! **Traces.** Every request runs in a `request` span (`id`, `method`, `era`, `owner`, and the
//! `tool` or `task` it names) and every task in a `task` span (`task`, `tool`, `era`, `owner`). A
//! request whose `_meta` carries W3C Trace Context (`traceparent`, and `tracestate`: the keys
//! SEP-414 reserves, read in both protocol eras) has the trace id, the client's span id and the
//! `tracestate` recorded on its span (`trace_id`, `parent_span_id`, `tracestate`). A malformed
//! `traceparent` or `tracestate` is ignored, with a debug log: never an error to the client. With
//! the feature `opentelemetry`, `Traces` exports the spans by OTLP: the request span's parent is
//! then the client's span (its trace id, span id and trace state, which are then not repeated as
//! fields), so the server's spans join the client's trace, and a task's span,
//! which begins a trace of its own (a task outlives its request), carries a link to the request
//! span that created it.
//!
//! **Metrics** go through the [`metrics`](https://docs.rs/metrics) facade (feature `metrics`;
//! feature `prometheus` adds an exporter and `/metrics`, see `server::Metrics`). Without the
//! feature every function that records one is empty and compiles away. Names and labels:
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `mcp_requests_total` | counter | `method`, `outcome` (`ok`, `error`) |
//! | `mcp_request_duration_seconds` | histogram | `method` |
//! | `mcp_tool_call_duration_seconds` | histogram | `tool`, `mode` (`inline`, `task`) |
//! | `mcp_tasks_total` | counter | `tool`, `event` (`created`, `completed`, `failed`, `cancelled`) |
//! | `mcp_tasks` | gauge | `state` (`running`: in this instance; `waiting_for_input`) |
//! | `mcp_input_wait_seconds` | histogram | `method` (`elicitation/create`, ...) |
//! | `mcp_store_operation_duration_seconds` | histogram | `operation` |
//! | `mcp_store_errors_total` | counter | `operation` |
//! | `mcp_http_connections` | gauge | |
//! | `mcp_sessions` | gauge | (legacy sessions over HTTP) |
//!
//! A `method` label is one of the methods MCP defines, or `other`: a client cannot make labels up.

#[cfg(feature = "opentelemetry")]
mod export;
#[cfg(feature = "metrics")]
mod handles;
#[cfg(feature = "opentelemetry")]
mod sampling;

#[cfg(feature = "metrics")]
pub use handles::keep_metric_handles;
pub(crate) mod trace;

#[cfg(feature = "opentelemetry")]
pub use export::{Traces, TracesError};

#[cfg(feature = "metrics")]
use std::time::{Duration, Instant};

use crate::protocol::task::TaskStatus;

/// The methods a `method` label may name.
#[cfg(feature = "metrics")]
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/update",
    "tasks/cancel",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "elicitation/create",
    "sampling/createMessage",
    "roots/list",
];

/// `method` as a label: its index in [`METHODS`] if MCP defines it, else `METHODS.len()`
/// (`other`).
#[cfg(feature = "metrics")]
fn method_label(method: &str) -> usize {
    METHODS
        .iter()
        .position(|known| *known == method)
        .unwrap_or(METHODS.len())
}

/// The label of a [`method_label`].
#[cfg(feature = "metrics")]
fn method_name(i: usize) -> &'static str {
    METHODS.get(i).copied().unwrap_or("other")
}

/// Measures one request, from [`start`](Self::start) to [`done`](Self::done).
#[derive(Debug)]
pub(crate) struct RequestTimer {
    #[cfg(feature = "metrics")]
    method: usize,
    #[cfg(feature = "metrics")]
    start: Instant,
}

impl RequestTimer {
    pub(crate) fn start(method: &str) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = method;
        RequestTimer {
            #[cfg(feature = "metrics")]
            method: method_label(method),
            #[cfg(feature = "metrics")]
            start: Instant::now(),
        }
    }

    /// The request was answered (`ok`: with a result, which may be a tool's error).
    pub(crate) fn done(self, ok: bool) {
        #[cfg(feature = "metrics")]
        {
            let seconds = self.start.elapsed().as_secs_f64();
            if let Some(kept) = handles::kept() {
                return kept.request(self.method, ok, seconds);
            }
            let method = method_name(self.method);
            let outcome = if ok { "ok" } else { "error" };
            metrics::counter!("mcp_requests_total", "method" => method, "outcome" => outcome)
                .increment(1);
            metrics::histogram!("mcp_request_duration_seconds", "method" => method).record(seconds);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = ok;
    }
}

/// `run` (a tool's future), timed from its first poll to its end, inline or as a task.
#[cfg(feature = "metrics")]
pub(crate) async fn timed_tool<F: Future>(tool: &'static str, task: bool, run: F) -> F::Output {
    let start = Instant::now();
    let out = run.await;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(kept) = handles::kept() {
        kept.tool(tool).durations[usize::from(task)].record(seconds);
        return out;
    }
    let mode = if task { "task" } else { "inline" };
    metrics::histogram!("mcp_tool_call_duration_seconds", "tool" => tool, "mode" => mode)
        .record(seconds);
    out
}

/// `run` as it is: nothing is measured without the feature `metrics`.
#[cfg(not(feature = "metrics"))]
pub(crate) fn timed_tool<F>(_tool: &'static str, _task: bool, run: F) -> F {
    run
}

/// Measures how long a task's tool waits for an answer.
#[derive(Debug)]
pub(crate) struct InputTimer {
    #[cfg(feature = "metrics")]
    method: usize,
    #[cfg(feature = "metrics")]
    start: Instant,
}

impl InputTimer {
    pub(crate) fn start(method: &str) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = method;
        InputTimer {
            #[cfg(feature = "metrics")]
            method: method_label(method),
            #[cfg(feature = "metrics")]
            start: Instant::now(),
        }
    }

    /// The answer came.
    pub(crate) fn done(self) {
        #[cfg(feature = "metrics")]
        {
            let seconds = self.start.elapsed().as_secs_f64();
            match handles::kept() {
                Some(kept) => kept.input_wait(self.method, seconds),
                None => metrics::histogram!("mcp_input_wait_seconds", "method" => method_name(self.method))
                    .record(seconds),
            }
        }
    }
}

/// A task of `tool` was created.
pub(crate) fn task_created(tool: &'static str) {
    #[cfg(feature = "metrics")]
    match handles::kept() {
        Some(kept) => kept.tool(tool).events[0].increment(1),
        None => {
            metrics::counter!("mcp_tasks_total", "tool" => tool, "event" => "created").increment(1)
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = tool;
}

/// A durable task was claimed here and its body runs again.
pub(crate) fn durable_resumed() {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp_tasks_durable_resumed_total").increment(1);
}

/// A durable task running here was let go of, for another instance to claim.
pub(crate) fn durable_released() {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp_tasks_durable_released_total").increment(1);
}

/// A durable task failed: every run it was allowed died.
pub(crate) fn durable_exhausted() {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp_tasks_durable_exhausted_total").increment(1);
}

/// A task of `tool` ended with `status` (as this instance saw it).
pub(crate) fn task_ended(tool: &'static str, status: TaskStatus) {
    #[cfg(feature = "metrics")]
    {
        let (i, event) = match status {
            TaskStatus::Completed => (1, "completed"),
            TaskStatus::Failed => (2, "failed"),
            TaskStatus::Cancelled => (3, "cancelled"),
            _ => return,
        };
        match handles::kept() {
            Some(kept) => kept.tool(tool).events[i].increment(1),
            None => {
                metrics::counter!("mcp_tasks_total", "tool" => tool, "event" => event).increment(1)
            }
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (tool, status);
}

/// A store operation answered after `elapsed` (`ok`: not a backend failure).
#[cfg(feature = "metrics")]
pub(crate) fn store_operation(operation: &'static str, ok: bool, elapsed: Duration) {
    if let Some(kept) = handles::kept() {
        let handles = kept.operation(operation);
        handles.duration.record(elapsed.as_secs_f64());
        if !ok {
            handles.errors.increment(1);
        }
        return;
    }
    metrics::histogram!("mcp_store_operation_duration_seconds", "operation" => operation)
        .record(elapsed.as_secs_f64());
    if !ok {
        metrics::counter!("mcp_store_errors_total", "operation" => operation).increment(1);
    }
}

/// What a [`Held`] gauge counts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Gauge {
    /// Tasks running in this instance.
    RunningTasks,
    /// Tasks whose tool waits for an answer.
    WaitingForInput,
    /// Open HTTP connections.
    #[cfg(feature = "http")]
    Connections,
    /// Open legacy sessions over HTTP.
    #[cfg(feature = "http")]
    Sessions,
}

/// One unit of a gauge, for as long as it is held.
#[derive(Debug)]
pub(crate) struct Held(#[cfg_attr(not(feature = "metrics"), allow(dead_code))] Gauge);

impl Held {
    /// Adds one to `gauge` until dropped.
    pub(crate) fn new(gauge: Gauge) -> Held {
        #[cfg(feature = "metrics")]
        match handles::kept() {
            Some(kept) => kept.gauge(gauge).increment(1.0),
            None => gauge_handle(gauge).increment(1.0),
        }
        Held(gauge)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        match handles::kept() {
            Some(kept) => kept.gauge(self.0).decrement(1.0),
            None => gauge_handle(self.0).decrement(1.0),
        }
    }
}

#[cfg(feature = "metrics")]
fn gauge_handle(gauge: Gauge) -> metrics::Gauge {
    match gauge {
        Gauge::RunningTasks => metrics::gauge!("mcp_tasks", "state" => "running"),
        Gauge::WaitingForInput => metrics::gauge!("mcp_tasks", "state" => "waiting_for_input"),
        #[cfg(feature = "http")]
        Gauge::Connections => metrics::gauge!("mcp_http_connections"),
        #[cfg(feature = "http")]
        Gauge::Sessions => metrics::gauge!("mcp_sessions"),
    }
}
