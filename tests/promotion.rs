//! Promotion of a long inline call into a task (2026-07-28, tasks extension declared, tool
//! `optional`): past its threshold the client gets a `CreateTaskResult` and the same run goes on
//! as the task; a call that finishes sooner answers inline. In process, over
//! `Server::connect_in_memory`.

use mcp_tasks_runtime::server::InMemoryConnection;
use mcp_tasks_runtime::{Server, ServerBuilder, ServerConfig, ToolContext, tool};
use mcp_tasks_tests::in_memory_request;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Works for `ms` milliseconds, in steps, and says how far it got; counts its runs.
#[tool(task_support = "optional", poll_interval = "10ms")]
async fn work(ctx: ToolContext, ms: u64) -> String {
    let run = RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    let mut done = 0;
    while done < ms {
        tokio::time::sleep(Duration::from_millis(10)).await;
        done += 10;
        ctx.status(format!("{done} ms of {ms}"));
    }
    format!("run {run}: worked {done} ms")
}

/// Sleeps `ms` milliseconds (counts nothing: the test above owns `RUNS`).
#[tool(task_support = "optional")]
async fn sleepy(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "slept".into()
}

/// Never a task.
#[tool]
async fn plain() -> String {
    "plain".into()
}

fn caps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

async fn call(c: &mut InMemoryConnection, id: u64, method: &str, params: Value) -> Value {
    let m = in_memory_request(c, id, method, params, caps()).await;
    m.get("result").cloned().unwrap_or_else(|| panic!("{m}"))
}

#[tokio::test]
async fn a_long_call_becomes_a_task_and_completes_once_and_a_fast_one_stays_inline() {
    let server = Server::builder("promotion", "1.0.0")
        .tool::<work>()
        .promote_after::<work>(Duration::from_millis(150))
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();

    // Fast: finishes before the threshold, answered inline.
    let fast = call(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "work", "arguments": { "ms": 20 } }),
    )
    .await;
    assert_eq!(fast["resultType"], "complete", "{fast}");
    assert_eq!(fast["content"][0]["text"], "run 1: worked 20 ms");

    // Long: the client gets a task at the threshold, not at the end.
    let started = Instant::now();
    let created = call(
        &mut c,
        2,
        "tools/call",
        json!({ "name": "work", "arguments": { "ms": 2000 } }),
    )
    .await;
    let waited = started.elapsed();
    assert_eq!(created["resultType"], "task", "{created}");
    // Long before the work ends (with room for a loaded machine).
    assert!(
        waited >= Duration::from_millis(140) && waited < Duration::from_millis(1500),
        "promoted at the threshold, after {waited:?}"
    );
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    assert_eq!(created["status"], "working");

    // The same run goes on: it completes once, with the work done before and after the boundary.
    let mut n = 3;
    let done = loop {
        let task = call(&mut c, n, "tasks/get", json!({ "taskId": id })).await;
        n += 1;
        if task["status"] == "completed" {
            break task;
        }
        assert_eq!(task["status"], "working", "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        done["result"]["content"][0]["text"], "run 2: worked 2000 ms",
        "{done}"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), 2, "nothing ran twice");
}

#[tokio::test]
async fn promoting_a_tool_that_is_not_optional_is_a_setup_error() {
    let err = Server::builder("promotion", "1.0.0")
        .tool::<plain>()
        .promote_after::<plain>(Duration::from_secs(1))
        .build()
        .expect_err("plain is not optional");
    assert!(err.to_string().contains("optional"), "{err}");
    let err = Server::builder("promotion", "1.0.0")
        .promote_after::<plain>(Duration::from_secs(1))
        .build()
        .expect_err("plain is not registered");
    assert!(err.to_string().contains("not registered"), "{err}");
}

#[tokio::test]
async fn a_server_wide_threshold_applies_to_every_optional_tool() {
    let server = Server::builder("promotion", "1.0.0")
        .config(ServerConfig::default().promote_after(Duration::from_millis(100)))
        .tool::<sleepy>()
        .tool::<plain>()
        .build()
        .expect("set up");
    let mut c = server.connect_in_memory();
    let inline = call(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "sleepy", "arguments": { "ms": 10 } }),
    )
    .await;
    assert_eq!(inline["resultType"], "complete", "{inline}");
    let task = call(
        &mut c,
        2,
        "tools/call",
        json!({ "name": "sleepy", "arguments": { "ms": 400 } }),
    )
    .await;
    assert_eq!(task["resultType"], "task", "{task}");
    let plain = call(
        &mut c,
        3,
        "tools/call",
        json!({ "name": "plain", "arguments": {} }),
    )
    .await;
    assert_eq!(plain["content"][0]["text"], "plain", "{plain}");
}

/// Sleeps `ms` milliseconds; promoted by its own attribute after 100 ms.
#[tool(task_support = "optional", promote_after = "100ms")]
async fn declared(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "slept".into()
}

/// How a 400 ms call of `declared` is answered on `server`: `"task"` or `"complete"`.
async fn long_call(server: ServerBuilder) -> Value {
    let server = server.tool::<declared>().build().expect("set up");
    let mut c = server.connect_in_memory();
    let answer = call(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "declared", "arguments": { "ms": 400 } }),
    )
    .await;
    answer["resultType"].clone()
}

#[tokio::test]
async fn the_builder_wins_over_the_attribute_and_the_attribute_over_the_server_wide_default() {
    let server = || Server::builder("promotion", "1.0.0");
    let slow = Duration::from_secs(10);
    // The attribute alone promotes a long call, and leaves a fast one inline.
    assert_eq!(long_call(server()).await, "task");
    let built = server().tool::<declared>().build().expect("set up");
    let mut c = built.connect_in_memory();
    let fast = call(
        &mut c,
        1,
        "tools/call",
        json!({ "name": "declared", "arguments": { "ms": 5 } }),
    )
    .await;
    assert_eq!(fast["resultType"], "complete", "{fast}");
    // Over a server-wide default that would not promote it in time: the attribute applies.
    let config = ServerConfig::default().promote_after(slow);
    assert_eq!(long_call(server().config(config)).await, "task");
    // Under a per-tool builder setting that would not promote it in time: the builder applies.
    assert_eq!(
        long_call(server().promote_after::<declared>(slow)).await,
        "complete"
    );
}
