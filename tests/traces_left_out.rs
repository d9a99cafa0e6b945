//! What a trace left out costs when the OpenTelemetry layer (`telemetry::Traces`) is the only
//! layer of the subscriber: no span at all. The request and task spans of a trace left out have
//! callsites of their own, which the layer's filter never wants, so with no log beside them
//! nothing is made, and a tool runs with no current span; a span the tool makes is still left out
//! of the traces instead of beginning one of its own. (In a process of its own: whether a
//! callsite is wanted is decided over every subscriber of the process, and a log elsewhere would
//! want these.)

use mcp_tasks_runtime::telemetry::Traces;
use mcp_tasks_runtime::{Server, ToolContext, tool};
use mcp_tasks_tests::{in_memory_call as request, modern_meta};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;

const WAIT: Duration = Duration::from_secs(10);

/// Whether each call of `look` ran in a span, by its label.
static SEEN: Mutex<Vec<(String, bool)>> = Mutex::new(Vec::new());

/// Notes whether it runs in a span, then works in a span of its own (`step`, named after the
/// label) with an event in it; as a task when the client supports tasks.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn look(ctx: ToolContext, label: String) -> String {
    ctx.status("looking");
    let in_span = !tracing::Span::current().is_none();
    SEEN.lock().unwrap().push((label.clone(), in_span));
    tracing::info_span!("step", label = %label).in_scope(|| tracing::info!("stepping"));
    "done".into()
}

/// Spawns a future in its current span (`in_current_span`) that makes a span named `spawned`,
/// and waits for it.
#[tool(task_support = "forbidden")]
async fn spawns(label: String) -> String {
    use tracing::Instrument;
    let spawned = async move {
        tracing::info_span!("spawned", label = %label).in_scope(|| tracing::info!("spawned"));
    };
    tokio::spawn(spawned.in_current_span()).await.unwrap();
    "done".into()
}

fn seen(label: &str) -> bool {
    let seen = SEEN.lock().unwrap();
    seen.iter()
        .find(|(l, _)| l == label)
        .unwrap_or_else(|| panic!("{label} ran: {seen:?}"))
        .1
}

/// One test at a time: a callsite's interest is cached over every subscriber of the process,
/// and a test's subscriber made or dropped while another test's span is first made could leave
/// that callsite unwanted (rarely, a span of a kept trace then went missing).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The server, with the in-memory exporter behind the process's spans on this thread, the
/// OpenTelemetry layer the subscriber's only one, every trace kept that its client did not leave
/// out; the turn of the test comes first, so that it is let go of after the subscriber.
async fn traced() -> (
    tokio::sync::MutexGuard<'static, ()>,
    Server,
    InMemorySpanExporter,
    tracing::subscriber::DefaultGuard,
) {
    let turn = SERIAL.lock().await;
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let traces = Traces::from_provider(provider);
    let subscriber = tracing_subscriber::registry().with(traces.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("traces", "1.0.0")
        .tool::<look>()
        .tool::<spawns>()
        .build()
        .expect("set up");
    (turn, server, exporter, guard)
}

fn with_traceparent(mut meta: Value, sampled: bool) -> Value {
    let flags = if sampled { "01" } else { "00" };
    meta["traceparent"] = json!(format!(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-{flags}"
    ));
    meta
}

fn finished(exporter: &InMemorySpanExporter) -> Vec<SpanData> {
    exporter.get_finished_spans().expect("the exporter's spans")
}

/// The spans exported, once one that `pred` picks is.
async fn until(exporter: &InMemorySpanExporter, pred: impl Fn(&SpanData) -> bool) -> Vec<SpanData> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let spans = finished(exporter);
        if spans.iter().any(&pred) {
            return spans;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no such span: {spans:#?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn label(span: &SpanData) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == "label")
        .map(|kv| kv.value.to_string())
}

/// The steps exported, by label, once the one labelled `last` is.
async fn steps_until(exporter: &InMemorySpanExporter, last: &str) -> Vec<String> {
    let is_step = |s: &SpanData| s.name == "step";
    until(exporter, |s| {
        is_step(s) && label(s).as_deref() == Some(last)
    })
    .await
    .iter()
    .filter(|s| is_step(s))
    .filter_map(label)
    .collect()
}

/// An inline call its client left out runs in no span, and its tool's span is not exported; a
/// sampled one runs in its request's span, and its tool's span is exported.
#[tokio::test(flavor = "current_thread")]
async fn an_inline_call_left_out_runs_in_no_span() {
    let (_turn, server, exporter, _guard) = traced().await;
    let mut c = server.connect_in_memory();
    for (id, label, sampled) in [(1, "inline-out", false), (2, "inline-kept", true)] {
        let meta = with_traceparent(modern_meta(json!({})), sampled);
        let got = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "look", "arguments": { "label": label }, "_meta": meta }),
        )
        .await;
        assert_eq!(got["result"]["content"][0]["text"], "done", "{got}");
    }
    assert!(!seen("inline-out"), "a trace left out makes no span");
    assert!(seen("inline-kept"));
    assert_eq!(steps_until(&exporter, "inline-kept").await, ["inline-kept"]);
    let requests: Vec<_> = finished(&exporter)
        .into_iter()
        .filter(|s| s.name == "request")
        .collect();
    assert_eq!(requests.len(), 1, "{requests:#?}");
}

/// A task created by a call its client left out runs in no span either (its trace is left out
/// with the request's), and its tool's span is not exported, though a span made outside any
/// other begins a trace at the ratio (here every one); a sampled call's task runs in its span.
#[tokio::test(flavor = "current_thread")]
async fn a_task_left_out_runs_in_no_span() {
    let (_turn, server, exporter, _guard) = traced().await;
    let mut c = server.connect_in_memory();
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    for (id, label, sampled) in [(1, "task-out", false), (2, "task-kept", true)] {
        let meta = with_traceparent(modern_meta(caps.clone()), sampled);
        let created = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "look", "arguments": { "label": label }, "_meta": meta }),
        )
        .await;
        let task = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        for poll in 1.. {
            let got = request(
                &mut c,
                id * 1000 + poll,
                "tasks/get",
                json!({ "taskId": task, "_meta": modern_meta(caps.clone()) }),
            )
            .await;
            if got["result"]["status"] == "completed" {
                break;
            }
            assert!(poll < 500, "the task completes: {got}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    assert!(!seen("task-out"), "a trace left out makes no span");
    assert!(seen("task-kept"));
    assert_eq!(steps_until(&exporter, "task-kept").await, ["task-kept"]);
    let tasks = finished(&exporter)
        .into_iter()
        .filter(|s| s.name == "task")
        .count();
    assert_eq!(tasks, 1);
}

/// Outside the runtime's requests and tasks, a span made outside any other still begins a trace
/// at the ratio: the mark of a trace left out lasts only while its request or task is polled.
#[tokio::test(flavor = "current_thread")]
async fn a_span_outside_any_request_begins_a_trace() {
    let (_turn, server, exporter, _guard) = traced().await;
    let mut c = server.connect_in_memory();
    let meta = with_traceparent(modern_meta(json!({})), false);
    let got = request(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "look", "arguments": { "label": "before" }, "_meta": meta }),
    )
    .await;
    assert_eq!(got["result"]["content"][0]["text"], "done", "{got}");
    tracing::info_span!("step", label = "outside").in_scope(|| tracing::info!("stepping"));
    assert_eq!(steps_until(&exporter, "outside").await, ["outside"]);
}

/// As the docs say: inside a trace left out, a future a tool spawns in its current span carries
/// no span (none was made), so a span made in it begins a trace at the ratio (here every one);
/// inside a kept trace it joins the request's.
#[tokio::test(flavor = "current_thread")]
async fn a_future_spawned_in_a_trace_left_out_carries_no_span() {
    let (_turn, server, exporter, _guard) = traced().await;
    let mut c = server.connect_in_memory();
    for (id, label, sampled) in [(1, "spawned-out", false), (2, "spawned-kept", true)] {
        let meta = with_traceparent(modern_meta(json!({})), sampled);
        let got = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "spawns", "arguments": { "label": label }, "_meta": meta }),
        )
        .await;
        assert_eq!(got["result"]["content"][0]["text"], "done", "{got}");
    }
    let spans = until(&exporter, |s| s.name == "request").await;
    let spawned = |label: &str| {
        spans
            .iter()
            .find(|s| s.name == "spawned" && self::label(s).as_deref() == Some(label))
            .unwrap_or_else(|| panic!("{label} exported: {spans:#?}"))
    };
    let request = spans
        .iter()
        .find(|s| s.name == "request")
        .expect("the kept request");
    let kept = spawned("spawned-kept");
    assert_eq!(kept.parent_span_id, request.span_context.span_id());
    let out = spawned("spawned-out");
    assert_eq!(
        out.parent_span_id,
        opentelemetry::trace::SpanId::INVALID,
        "a root"
    );
    assert_ne!(out.span_context.trace_id(), request.span_context.trace_id());
}
