//! Tracing: every request runs in a `request` span (id, method, era, owner, the tool or task it
//! names, and the client's trace context from `_meta`) and every task in a `task` span (task id, tool, era, owner), so one task can be followed
//! from its creation across its polls in a user's logs.

use mcp_tasks_runtime::{Server, ToolContext, tool};
use mcp_tasks_tests::{Log, in_memory_request};
use serde_json::{Value, json};

use std::time::Duration;
use tracing_subscriber::fmt::format::FmtSpan;

/// Works a little, as a task when the client supports tasks.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn work(ctx: ToolContext) -> String {
    ctx.status("working");
    tracing::info!("the tool is working");
    tokio::time::sleep(Duration::from_millis(30)).await;
    "done".into()
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// One thread: the subscriber set below sees the server's tasks too.
#[tokio::test(flavor = "current_thread")]
async fn requests_and_tasks_run_in_spans_that_name_the_task_tool_era_and_owner() {
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_span_events(FmtSpan::CLOSE)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = Server::builder("spans", "1.0.0")
        .tool::<work>()
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let mut next = 0;
    let mut call = async |c: &mut mcp_tasks_runtime::server::InMemoryConnection,
                          method: &str,
                          params: Value| {
        next += 1;
        in_memory_request(c, next, method, params, caps.clone()).await["result"].clone()
    };
    // The call names the client's span (W3C Trace Context in `_meta`, SEP-414).
    let mut params =
        mcp_tasks_tests::modern(json!({ "name": "work", "arguments": {} }), caps.clone());
    params["_meta"]["traceparent"] = json!(TRACEPARENT);
    params["_meta"]["tracestate"] = json!("congo=t61rcWkgMzE");
    c.send(json!({ "jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": params }));
    let created = loop {
        let m = c.recv().await.expect("the server is up");
        if m["id"] == 0 {
            break m["result"].clone();
        }
    };
    let task = created["taskId"].as_str().expect("a task").to_owned();
    loop {
        let got = call(&mut c, "tasks/get", json!({ "taskId": task })).await;
        if got["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(c);
    tokio::time::sleep(Duration::from_millis(50)).await;

    let text = log.text();
    let lines: Vec<&str> = text.lines().collect();
    let task_spans: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(&format!("task{{task={task} ")) && l.contains("close time"))
        .collect();
    assert_eq!(task_spans.len(), 1, "one task span closed:\n{text}");
    let span = task_spans[0];
    for field in ["tool=\"work\"", "era=Modern", "owner=anonymous"] {
        assert!(span.contains(field), "the task span has {field}: {span}");
    }
    // What the tool logs is attributed to its task.
    let logged = lines
        .iter()
        .find(|l| l.contains("the tool is working"))
        .unwrap_or_else(|| panic!("the tool's event:\n{text}"));
    assert!(
        logged.contains(&format!("task{{task={task} ")),
        "the tool's event is in its task's span: {logged}"
    );
    let call_span = lines
        .iter()
        .find(|l| l.contains("request{") && l.contains("method=tools/call") && !l.contains("task{"))
        .unwrap_or_else(|| panic!("a span for the call:\n{text}"));
    for field in [
        "tool=\"work\"",
        "era=\"modern\"",
        "owner=\"anonymous\"",
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
        "parent_span_id=00f067aa0ba902b7",
        "tracestate=\"congo=t61rcWkgMzE\"",
    ] {
        assert!(
            call_span.contains(field),
            "the call's span has {field}: {call_span}"
        );
    }
    let polls = lines
        .iter()
        .filter(|l| {
            l.contains(" request{")
                && l.contains("method=tasks/get")
                && l.contains(&format!("task=\"{task}\""))
        })
        .count();
    assert!(polls >= 1, "every poll's span names the task:\n{text}");
}
