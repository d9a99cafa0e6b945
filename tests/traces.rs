//! OpenTelemetry traces (feature `opentelemetry`), seen as an OpenTelemetry backend sees them: a
//! server in this process with `telemetry::Traces` over the SDK's in-memory exporter, and one
//! exporting by OTLP/HTTP to a receiver on 127.0.0.1. A request whose `_meta` carries W3C
//! `traceparent` and `tracestate` (SEP-414) joins the client's trace, in both eras and over the
//! in-process connection and real HTTP; a task's span links to the request that created it; a
//! malformed `traceparent` is ignored and the call still succeeds; a request without one starts a
//! trace of its own. Sampling: a trace left out (by the client's flag or the ratio) exports nothing,
//! its task and the spans made inside them included, and is still logged beside.

use mcp_tasks_runtime::server::InMemoryConnection;
use mcp_tasks_runtime::telemetry::Traces;
use mcp_tasks_runtime::{Server, ToolContext, tool};
use mcp_tasks_tests::{Log, in_memory_call as request, modern_meta};
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
const TRACESTATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
const WAIT: Duration = Duration::from_secs(10);

fn traceparent() -> String {
    format!("00-{TRACE_ID}-{PARENT_ID}-01")
}

/// Works a little, as a task when the client supports tasks.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn work(ctx: ToolContext) -> String {
    ctx.status("working");
    tokio::time::sleep(Duration::from_millis(20)).await;
    "done".into()
}

/// Works in a span of its own (`step`), with an event in it, as a task when the client supports
/// tasks.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn stepped(ctx: ToolContext) -> String {
    ctx.status("working");
    tracing::info_span!("step").in_scope(|| tracing::info!("stepping"));
    "done".into()
}

/// The server, with the in-memory exporter behind the process's spans on this thread (the tests
/// run on one thread each, so the server's own tasks see the same subscriber).
fn traced() -> (
    Server,
    InMemorySpanExporter,
    tracing::subscriber::DefaultGuard,
) {
    traced_with(|traces| traces)
}

/// [`traced`], with `Traces` set up by `set`.
fn traced_with(
    set: impl FnOnce(Traces) -> Traces,
) -> (
    Server,
    InMemorySpanExporter,
    tracing::subscriber::DefaultGuard,
) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let traces = set(Traces::from_provider(provider));
    let subscriber = tracing_subscriber::registry().with(traces.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("traces", "1.0.0")
        .tool::<work>()
        .tool::<stepped>()
        .build()
        .expect("set up");
    (server, exporter, guard)
}

/// A `_meta` with `traceparent` and `tracestate` added.
fn with_trace(mut meta: Value, traceparent: &str, tracestate: Option<&str>) -> Value {
    meta["traceparent"] = json!(traceparent);
    if let Some(state) = tracestate {
        meta["tracestate"] = json!(state);
    }
    meta
}

fn tasks_caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

fn finished(exporter: &InMemorySpanExporter) -> Vec<SpanData> {
    exporter.get_finished_spans().expect("the exporter's spans")
}

/// The `request` span of the request with this JSON-RPC id (as the span's `id` field), once it
/// has ended (just after its answer was sent).
async fn request_span(exporter: &InMemorySpanExporter, id: u64) -> SpanData {
    let id = id.to_string();
    wait_for_span(exporter, |s| {
        s.name == "request" && attribute(s, "id").as_deref() == Some(id.as_str())
    })
    .await
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

/// The span joined the client's trace: its trace id, its remote parent, the tracestate.
fn assert_joined(span: &SpanData) {
    assert_joined_with(span, TRACESTATE);
}

/// [`assert_joined`], for a client that sent `state` as its tracestate (`""`: none).
fn assert_joined_with(span: &SpanData, state: &str) {
    assert_eq!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE_ID).unwrap(),
        "{span:#?}"
    );
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT_ID).unwrap());
    assert!(
        span.parent_span_is_remote,
        "the parent is the client's span"
    );
    assert_eq!(span.span_context.trace_state().header(), state);
    assert!(span.span_context.is_sampled());
    // Said by the span itself, not repeated as attributes.
    for field in ["trace_id", "parent_span_id", "tracestate"] {
        assert_eq!(attribute(span, field), None, "{field}");
    }
}

/// The span began a trace of its own.
fn assert_new_trace(span: &SpanData) {
    assert_ne!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE_ID).unwrap()
    );
    assert_eq!(span.parent_span_id, SpanId::INVALID, "a root: {span:#?}");
    assert!(span.span_context.is_valid());
    assert_eq!(attribute(span, "trace_id"), None);
}

/// Waits until the exporter holds a span that `pred` picks.
async fn wait_for_span(
    exporter: &InMemorySpanExporter,
    pred: impl Fn(&SpanData) -> bool,
) -> SpanData {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(span) = finished(exporter).into_iter().find(&pred) {
            return span;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no such span: {:#?}",
            finished(exporter)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_modern_task_call_joins_the_clients_trace_and_its_task_links_to_the_request() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let meta = with_trace(modern_meta(tasks_caps()), &traceparent(), Some(TRACESTATE));
    let created = request(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "work", "arguments": {}, "_meta": meta }),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let call = request_span(&exporter, 1).await;
    assert_joined(&call);
    assert_eq!(attribute(&call, "method").as_deref(), Some("tools/call"));

    // The task's span: a trace of its own, linked to the request span that created it.
    let task_span = wait_for_span(&exporter, |s| {
        s.name == "task" && attribute(s, "task").as_deref() == Some(task.as_str())
    })
    .await;
    assert_new_trace(&task_span);
    let links: Vec<_> = task_span
        .links
        .iter()
        .map(|l| l.span_context.clone())
        .collect();
    assert_eq!(links.len(), 1, "one link: {task_span:#?}");
    assert_eq!(links[0].trace_id(), call.span_context.trace_id());
    assert_eq!(links[0].span_id(), call.span_context.span_id());

    // A poll without a traceparent begins its own trace.
    let got = request(
        &mut c,
        2,
        "tasks/get",
        json!({ "taskId": task, "_meta": modern_meta(tasks_caps()) }),
    )
    .await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert_new_trace(&request_span(&exporter, 2).await);
}

#[tokio::test(flavor = "current_thread")]
async fn a_legacy_call_joins_the_clients_trace() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let init = request(
        &mut c,
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "1" } }),
    )
    .await;
    assert!(init["result"].is_object(), "{init}");
    c.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let meta = with_trace(json!({}), &traceparent(), Some(TRACESTATE));
    let done = request(
        &mut c,
        2,
        "tools/call",
        json!({ "name": "work", "arguments": {}, "_meta": meta }),
    )
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    let call = request_span(&exporter, 2).await;
    assert_joined(&call);
    assert_eq!(attribute(&call, "era").as_deref(), Some("legacy"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_malformed_traceparent_is_ignored_and_the_call_succeeds() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let malformed = [
        json!("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
        json!(format!(
            "00-00000000000000000000000000000000-{PARENT_ID}-01"
        )),
        json!(format!("00-{TRACE_ID}-0000000000000000-01")),
        json!(format!("ff-{TRACE_ID}-{PARENT_ID}-01")),
        json!(format!("00-{TRACE_ID}-{PARENT_ID}")),
        json!("not a traceparent"),
        json!(42),
        json!({ "traceId": TRACE_ID }),
    ];
    for (n, bad) in malformed.iter().enumerate() {
        let id = n as u64 + 1;
        let mut meta = modern_meta(json!({}));
        meta["traceparent"] = bad.clone();
        meta["tracestate"] = json!(TRACESTATE);
        let done = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "work", "arguments": {}, "_meta": meta }),
        )
        .await;
        assert_eq!(
            done["result"]["content"][0]["text"], "done",
            "{bad}: {done}"
        );
        let span = request_span(&exporter, id).await;
        assert_new_trace(&span);
        assert_eq!(attribute(&span, "tracestate"), None, "{bad}");
    }
    // And the server keeps serving, joining a valid trace next.
    let meta = with_trace(modern_meta(json!({})), &traceparent(), Some(TRACESTATE));
    let id = malformed.len() as u64 + 1;
    let done = request(
        &mut c,
        id,
        "tools/call",
        json!({ "name": "work", "arguments": {}, "_meta": meta }),
    )
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    assert_joined(&request_span(&exporter, id).await);
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_without_a_traceparent_starts_a_new_trace() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let mut ids = Vec::new();
    for id in 1..=2 {
        let done = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "work", "arguments": {}, "_meta": modern_meta(json!({})) }),
        )
        .await;
        assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
        let span = request_span(&exporter, id).await;
        assert_new_trace(&span);
        ids.push(span.span_context.trace_id());
    }
    assert_ne!(ids[0], ids[1], "each request begins its own trace");
}

#[tokio::test(flavor = "current_thread")]
async fn over_http_a_call_joins_the_clients_trace() {
    let (server, exporter, _guard) = traced();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let serving = tokio::spawn(async move { server.serve_http(listener).await });
    let meta = with_trace(modern_meta(json!({})), &traceparent(), Some(TRACESTATE));
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": { "name": "work", "arguments": {}, "_meta": meta } });
    let answer: Value = reqwest::Client::new()
        .post(&url)
        .timeout(WAIT)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "work")
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
    assert_joined(&request_span(&exporter, 7).await);
    serving.abort();
}

/// `Traces::otlp` posts spans by OTLP/HTTP (protobuf) to `/v1/traces` of a receiver on
/// 127.0.0.1: the body that arrives carries the request span's trace id (16 raw bytes in the
/// protobuf) and the service name.
#[tokio::test(flavor = "current_thread")]
async fn otlp_exports_spans_to_a_receiver_over_http() {
    use axum::routing::post;
    let (got, mut bodies) = tokio::sync::mpsc::unbounded_channel::<(String, Vec<u8>)>();
    let receiver = axum::Router::new().route(
        "/v1/traces",
        post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let got = got.clone();
                async move {
                    let kind = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    let _ = got.send((kind, body.to_vec()));
                    ""
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
    // The receiver on a runtime of its own: this test's thread blocks while the exporter flushes.
    let receiver_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = listener.into_std().unwrap();
    receiver_rt.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        axum::serve(listener, receiver).await
    });

    let traces = Traces::otlp(&endpoint, "traces-test").expect("an exporter");
    let subscriber = tracing_subscriber::registry().with(traces.layer());
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("traces", "1.0.0")
        .tool::<work>()
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();
    let meta = with_trace(modern_meta(json!({})), &traceparent(), Some(TRACESTATE));
    let done = request(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "work", "arguments": {}, "_meta": meta }),
    )
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    drop(c);
    tokio::time::sleep(Duration::from_millis(20)).await;
    traces.flush().expect("flushed");

    let (kind, body) = tokio::time::timeout(WAIT, bodies.recv())
        .await
        .expect("a body in time")
        .expect("a body");
    assert_eq!(kind, "application/x-protobuf");
    let trace_id = TraceId::from_hex(TRACE_ID).unwrap().to_bytes();
    let contains = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    assert!(
        contains(&trace_id),
        "the request span's trace id was exported"
    );
    assert!(contains(b"traces-test"), "the service name was exported");
    assert!(contains(b"request"), "the span's name was exported");
    traces.shutdown().expect("shut down");
    receiver_rt.shutdown_background();
}

/// The client's sampling decision holds (the default sampler follows the parent): a request whose
/// `traceparent` says "not sampled" (flags `00`) exports no span, and the next one, sampled, does.
#[tokio::test(flavor = "current_thread")]
async fn a_request_its_client_did_not_sample_exports_no_span() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let unsampled = format!("00-{TRACE_ID}-{PARENT_ID}-00");
    for (id, traceparent) in [(1, unsampled), (2, traceparent())] {
        let meta = with_trace(modern_meta(json!({})), &traceparent, None);
        let got = request(
            &mut c,
            id,
            "tools/call",
            json!({ "name": "work", "arguments": {}, "_meta": meta }),
        )
        .await;
        assert_eq!(got["result"]["content"][0]["text"], "done", "{got}");
    }
    assert_joined_with(&request_span(&exporter, 2).await, "");
    let ids: Vec<_> = finished(&exporter)
        .iter()
        .filter(|s| s.name == "request")
        .filter_map(|s| attribute(s, "id"))
        .collect();
    assert_eq!(ids, ["2"], "only the sampled request's span");
}

/// Calls `stepped` as a task, with `meta` as the call's `_meta`, and polls it until it has
/// completed; its id.
async fn stepped_task(c: &mut InMemoryConnection, id: u64, meta: Value) -> String {
    let created = request(
        c,
        id,
        "tools/call",
        json!({ "name": "stepped", "arguments": {}, "_meta": meta }),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    for poll in 1.. {
        let got = request(
            c,
            id * 1000 + poll,
            "tasks/get",
            json!({ "taskId": task, "_meta": modern_meta(tasks_caps()) }),
        )
        .await;
        if got["result"]["status"] == "completed" {
            break;
        }
        assert!(poll < 500, "the task completes: {got}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    task
}

/// A trace the client did not sample is left out whole: the request, the task it creates
/// (whose trace is its own), and the span and event the tool makes inside the task, which do not
/// begin traces of their own for want of a parent (the tracer's only layer is the one that left
/// them out); a sampled client's call, next, exports all three, the tool's span a child of the
/// task's.
#[tokio::test(flavor = "current_thread")]
async fn a_trace_left_out_leaves_out_its_task_and_the_spans_made_inside_it() {
    let (server, exporter, _guard) = traced();
    let mut c = server.connect_in_memory();
    let unsampled = format!("00-{TRACE_ID}-{PARENT_ID}-00");
    let left_out = stepped_task(
        &mut c,
        1,
        with_trace(modern_meta(tasks_caps()), &unsampled, None),
    )
    .await;
    let kept = stepped_task(
        &mut c,
        2,
        with_trace(modern_meta(tasks_caps()), &traceparent(), None),
    )
    .await;
    let call = request_span(&exporter, 2).await;
    assert_joined_with(&call, "");
    let task = wait_for_span(&exporter, |s| {
        s.name == "task" && attribute(s, "task").as_deref() == Some(kept.as_str())
    })
    .await;
    let step = wait_for_span(&exporter, |s| s.name == "step").await;
    assert_eq!(step.span_context.trace_id(), task.span_context.trace_id());
    assert_eq!(step.parent_span_id, task.span_context.span_id());
    assert_eq!(step.events.len(), 1, "the tool's event: {step:#?}");
    // Every span has ended: the left-out task ended before the kept one began.
    let spans = finished(&exporter);
    let names: Vec<_> = spans.iter().map(|s| s.name.as_ref()).collect();
    let task_spans: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "task")
        .filter_map(|s| attribute(s, "task"))
        .collect();
    assert_eq!(task_spans, [kept], "not {left_out}: {names:?}");
    assert_eq!(
        names.iter().filter(|n| **n == "step").count(),
        1,
        "only the kept task's step: {names:?}"
    );
    // The polls, without a `traceparent`, began traces of their own.
    assert!(
        spans
            .iter()
            .filter(|s| s.name == "request")
            .all(|s| attribute(s, "id").as_deref() != Some("1")),
        "no span of the left-out call: {names:?}"
    );
}

/// `Traces::sample_ratio` keeps that share of the traces that begin here, chosen at random (at
/// 0.5, 60 to 140 of 200 requests: a binomial's 5.6 standard deviations), and a client's sampled
/// `traceparent` whatever the ratio; at 0, a task that begins here exports nothing at all.
#[tokio::test(flavor = "current_thread")]
async fn a_sample_ratio_keeps_that_share_of_the_traces_that_begin_here() {
    let (server, exporter, _guard) = traced_with(|traces| traces.sample_ratio(0.5));
    let mut c = server.connect_in_memory();
    for id in 1..=200 {
        let params = json!({ "_meta": modern_meta(json!({})) });
        let got = request(&mut c, id, "tools/list", params).await;
        assert!(got["result"]["tools"].is_array(), "{got}");
    }
    let kept = finished(&exporter)
        .iter()
        .filter(|s| s.name == "request")
        .count();
    assert!((60..=140).contains(&kept), "{kept} of 200 kept");

    let (server, exporter, _guard) = traced_with(|traces| traces.sample_ratio(0.0));
    let mut c = server.connect_in_memory();
    stepped_task(&mut c, 1, modern_meta(tasks_caps())).await;
    let meta = with_trace(modern_meta(json!({})), &traceparent(), None);
    let got = request(
        &mut c,
        2,
        "tools/call",
        json!({ "name": "work", "arguments": {}, "_meta": meta }),
    )
    .await;
    assert_eq!(got["result"]["content"][0]["text"], "done", "{got}");
    assert_joined_with(&request_span(&exporter, 2).await, "");
    let names: Vec<_> = finished(&exporter)
        .iter()
        .map(|s| format!("{} {:?}", s.name, attribute(s, "id")))
        .collect();
    assert_eq!(
        names,
        ["request Some(\"2\")"],
        "only the sampled client's call"
    );
}

/// Composed as the example servers compose it (a log at `info` beside the traces, each layer
/// behind a filter of its own): the log still shows a trace left out, spans and all, and the
/// traces keep only the sampled client's work, the tool's span inside its task.
#[tokio::test(flavor = "current_thread")]
async fn beside_a_log_a_trace_left_out_is_still_logged() {
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::LevelFilter;
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let traces = Traces::from_provider(provider).sample_ratio(0.0);
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .with_filter(LevelFilter::INFO),
        )
        .with(traces.layer().with_filter(LevelFilter::INFO));
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("traces", "1.0.0")
        .tool::<stepped>()
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();
    let left_out = stepped_task(&mut c, 1, modern_meta(tasks_caps())).await;
    let kept = stepped_task(
        &mut c,
        2,
        with_trace(modern_meta(tasks_caps()), &traceparent(), None),
    )
    .await;
    let task = wait_for_span(&exporter, |s| {
        s.name == "task" && attribute(s, "task").as_deref() == Some(kept.as_str())
    })
    .await;
    let step = wait_for_span(&exporter, |s| s.name == "step").await;
    assert_eq!(step.parent_span_id, task.span_context.span_id());
    let names: Vec<_> = finished(&exporter)
        .iter()
        .map(|s| format!("{} {:?}", s.name, attribute(s, "id")))
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("request")).count(),
        1,
        "the sampled call alone, not the polls: {names:?}"
    );
    assert_eq!(names.len(), 3, "{names:?}");
    let log = log.text();
    for task in [&left_out, &kept] {
        assert!(
            log.lines().any(|l| l.contains(task.as_str())
                && l.contains("step: ")
                && l.contains("stepping")),
            "{task} logged in its spans: {log}"
        );
    }
}
