//! One check for every shared store, over stdio: two `example_server --store SPEC` processes on
//! one store, each with its own client (B only reads); A is killed with SIGKILL while running a
//! task and started again on the same store. The task fails as stopped within A's lease plus a
//! sweep round, as it does over HTTP: the restarted A and B sweep though neither starts a task.
//! (Included with `#[path]` by the tests of each store.)

use std::time::{Duration, Instant};

use mcp_tasks_runtime::store::TaskRecord;
use mcp_tasks_tests::{StdioClient, example_bin, modern, poll_modern};
use serde_json::json;

/// The lease the processes take: short, so that the bound is a few seconds.
const LEASE: Duration = Duration::from_millis(1000);

/// Runs the check against the store `spec` (`postgres://...`, `redis://...`).
pub async fn a_killed_stdio_server_s_task_fails_within_its_lease(spec: &str) {
    let lease_ms = LEASE.as_millis().to_string();
    let args = ["--store", spec, "--lease-ms", lease_ms.as_str()];
    let filter = "info,mcp_tasks_runtime::task=debug";
    let bin = example_bin("example_server");
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let mut a = StdioClient::spawn_logging(&bin, &args, filter);
    let mut b = StdioClient::spawn_logging(&bin, &args, filter);

    let created = a
        .result(
            "tools/call",
            modern(
                json!({ "name": "countdown", "arguments": { "seconds": 600 } }),
                caps.clone(),
            ),
        )
        .await;
    let id = created["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    poll_modern(&mut b, &id, &caps, |t| {
        t["statusMessage"]
            .as_str()
            .is_some_and(|m| m.ends_with("s left"))
    })
    .await;

    a.kill().await;
    let killed = Instant::now();
    let mut restarted = StdioClient::spawn_logging(&bin, &args, filter);
    // The restarted process answers (it serves), and starts no task.
    restarted
        .result("tools/list", modern(json!({}), caps.clone()))
        .await;
    let failed = poll_modern(&mut restarted, &id, &caps, |t| t["status"] != "working").await;
    let took = killed.elapsed();
    eprintln!("{spec}: the killed process's task failed {took:?} after the kill");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["statusMessage"],
        TaskRecord::RUNNER_STOPPED_MESSAGE,
        "{failed}"
    );
    assert!(
        took <= LEASE + LEASE / 3 + Duration::from_secs(2),
        "{spec}: took {took:?}"
    );
    let seen = poll_modern(&mut b, &id, &caps, |_| true).await;
    assert_eq!(seen["status"], "failed", "{seen}");
}
