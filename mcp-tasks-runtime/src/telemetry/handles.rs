//! The server's metric handles, kept once the process's recorder is known for good.
//!
//! A `metrics::counter!` with a label that is not a constant builds its key anew on every call (a
//! vector of labels, allocated, hashed and compared in the recorder's registry) before it counts.
//! A process's global recorder never changes once installed, so after
//! [`Metrics::install`](crate::server::Metrics::install) the handles the registry hands out are
//! kept here and used directly: by index for the labels known in advance (methods, outcomes, the
//! gauges), by the address of the `&'static str` for a tool's name or a store operation. Before
//! that (or with a recorder the application installed itself and did not tell of through
//! [`keep_metric_handles`]) every call goes through the macros.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use metrics::{Counter, Gauge as GaugeHandle, Histogram};

use super::{Gauge, METHODS, method_name};

static HANDLES: OnceLock<Handles> = OnceLock::new();

/// Tells the server that the process's global `metrics` recorder is installed, so that its
/// metrics keep the handles the recorder gives them instead of building a key (a vector of
/// labels, hashed and looked up in the recorder's registry) for every count. Call it once, after
/// `metrics::set_global_recorder` (`server::Metrics::install` calls it): a global recorder never
/// changes once set. Not for a recorder set with `metrics::with_local_recorder`, which counts
/// only inside its closure: after this call the server's metrics no longer see one.
pub fn keep_metric_handles() {
    HANDLES.get_or_init(Handles::new);
}

/// The kept handles, once [`keep_metric_handles`] was called.
pub(super) fn kept() -> Option<&'static Handles> {
    HANDLES.get()
}

/// A `&'static str` by its address and length: two labels with the same text at two addresses
/// are two keys for the same handle, which costs a slot, never a wrong count.
type StaticKey = (usize, usize);

fn key(s: &'static str) -> StaticKey {
    (s.as_ptr() as usize, s.len())
}

pub(super) struct Handles {
    /// By method index (`METHODS`, then `other`), made on the method's first request (so that
    /// `/metrics` shows the methods used, not a zero for each of two dozen):
    /// `mcp_requests_total` `[ok, error]` and `mcp_request_duration_seconds`.
    requests: Box<[OnceLock<MethodHandles>]>,
    /// `mcp_input_wait_seconds` by method index, made on first use.
    input_waits: Box<[OnceLock<Histogram>]>,
    running: GaugeHandle,
    waiting: GaugeHandle,
    #[cfg(feature = "http")]
    connections: GaugeHandle,
    #[cfg(feature = "http")]
    sessions: GaugeHandle,
    tools: RwLock<HashMap<StaticKey, &'static ToolHandles>>,
    operations: RwLock<HashMap<StaticKey, &'static OperationHandles>>,
}

/// The handles of one method's requests.
struct MethodHandles {
    /// `mcp_requests_total`, `[ok, error]`.
    counts: [Counter; 2],
    /// `mcp_request_duration_seconds`.
    durations: Histogram,
}

/// The handles labelled with one tool.
pub(super) struct ToolHandles {
    /// `mcp_tool_call_duration_seconds`, `[inline, task]`.
    pub(super) durations: [Histogram; 2],
    /// `mcp_tasks_total`, `[created, completed, failed, cancelled]`.
    pub(super) events: [Counter; 4],
}

/// The handles labelled with one store operation.
pub(super) struct OperationHandles {
    pub(super) duration: Histogram,
    pub(super) errors: Counter,
}

impl Handles {
    fn new() -> Handles {
        Handles {
            requests: (0..=METHODS.len()).map(|_| OnceLock::new()).collect(),
            input_waits: (0..=METHODS.len()).map(|_| OnceLock::new()).collect(),
            running: metrics::gauge!("mcp_tasks", "state" => "running"),
            waiting: metrics::gauge!("mcp_tasks", "state" => "waiting_for_input"),
            #[cfg(feature = "http")]
            connections: metrics::gauge!("mcp_http_connections"),
            #[cfg(feature = "http")]
            sessions: metrics::gauge!("mcp_sessions"),
            tools: RwLock::default(),
            operations: RwLock::default(),
        }
    }

    /// A request to method index `method` was answered.
    pub(super) fn request(&self, method: usize, ok: bool, seconds: f64) {
        let Some(slot) = self.requests.get(method) else {
            return;
        };
        let handles = slot.get_or_init(|| {
            let m = method_name(method);
            MethodHandles {
                counts: [
                    metrics::counter!("mcp_requests_total", "method" => m, "outcome" => "ok"),
                    metrics::counter!("mcp_requests_total", "method" => m, "outcome" => "error"),
                ],
                durations: metrics::histogram!("mcp_request_duration_seconds", "method" => m),
            }
        });
        handles.counts[usize::from(!ok)].increment(1);
        handles.durations.record(seconds);
    }

    /// A task's tool waited `seconds` for the answer to a request to method index `method`.
    pub(super) fn input_wait(&self, method: usize, seconds: f64) {
        if let Some(slot) = self.input_waits.get(method) {
            slot.get_or_init(
                || metrics::histogram!("mcp_input_wait_seconds", "method" => method_name(method)),
            )
            .record(seconds);
        }
    }

    pub(super) fn gauge(&self, gauge: Gauge) -> &GaugeHandle {
        match gauge {
            Gauge::RunningTasks => &self.running,
            Gauge::WaitingForInput => &self.waiting,
            #[cfg(feature = "http")]
            Gauge::Connections => &self.connections,
            #[cfg(feature = "http")]
            Gauge::Sessions => &self.sessions,
        }
    }

    /// The handles of `tool`, made on its first use. A server has a fixed set of tools, so the
    /// handles live as long as the process (leaked once per tool name).
    pub(super) fn tool(&self, tool: &'static str) -> &'static ToolHandles {
        kept_for(&self.tools, tool, || {
            ToolHandles {
            durations: ["inline", "task"].map(
                |mode| metrics::histogram!("mcp_tool_call_duration_seconds", "tool" => tool, "mode" => mode),
            ),
            events: ["created", "completed", "failed", "cancelled"]
                .map(|event| metrics::counter!("mcp_tasks_total", "tool" => tool, "event" => event)),
        }
        })
    }

    /// The handles of a store operation, made on its first use.
    pub(super) fn operation(&self, operation: &'static str) -> &'static OperationHandles {
        kept_for(&self.operations, operation, || OperationHandles {
            duration: metrics::histogram!(
                "mcp_store_operation_duration_seconds", "operation" => operation
            ),
            errors: metrics::counter!("mcp_store_errors_total", "operation" => operation),
        })
    }
}

/// `map`'s entry for `label`, made by `make` and leaked (once per label text and address) on the
/// first use.
fn kept_for<T: Send + Sync>(
    map: &RwLock<HashMap<StaticKey, &'static T>>,
    label: &'static str,
    make: impl FnOnce() -> T,
) -> &'static T {
    let k = key(label);
    if let Some(found) = map.read().unwrap_or_else(|e| e.into_inner()).get(&k) {
        return found;
    }
    let mut map = map.write().unwrap_or_else(|e| e.into_inner());
    map.entry(k).or_insert_with(|| Box::leak(Box::new(make())))
}
