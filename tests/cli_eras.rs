//! The `mcp-tasks` command's era probe against servers of each era, over stdio: what it sends at
//! first contact, what it remembers (`eras.json`), and how a remembered era that is wrong is
//! noticed and replaced.

use mcp_tasks_tests::cli::{CliRun, fresh_cache, run_cli};
use mcp_tasks_tests::example_bin;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The methods of the requests the command sent (`--wire` lines `--> {...}`), in order.
fn sent_methods(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("--> "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

fn remembered(cache: &Path, key: &str) -> Value {
    let text = std::fs::read_to_string(cache.join("eras.json")).expect("eras.json");
    serde_json::from_str::<Value>(&text).expect("JSON")[key].clone()
}

/// `research` of `rmcp_bridge_server` (a task only: it asks, then samples), answered from
/// `--answers`, headless.
fn research(server: &str, cache: &Path) -> CliRun {
    run_cli(
        &[
            "call",
            "research",
            "--args",
            "topic=tides",
            "--answers",
            r#"{"sources": 3, "@sampling": "Tides follow the moon."}"#,
            "--wire",
            "--",
            server,
        ],
        cache,
        Duration::from_secs(60),
    )
}

/// An rmcp 3.11 server (`rmcp_bridge_server`) speaks both eras and answers `ping` before
/// anything else with `{}`, as a 2025-11-25 server does: the probe decides by `server/discover`,
/// which a 2026-07-28 server must answer (and a 2025-11-25 one cannot), so a tool that runs only
/// as a task runs as one, with nothing remembered, and the era remembered is 2026-07-28. A
/// remembered 2025-11-25 (written by an earlier version of the command) is noticed when the
/// server refuses the call for want of the tasks extension (`-32021`, an error only 2026-07-28
/// has): it is forgotten, the probe runs, the call is made again and runs as a task, and the
/// right era is remembered.
#[test]
fn a_dual_era_rmcp_server_runs_a_required_tool_as_a_task() {
    let server = example_bin("rmcp_bridge_server").display().to_string();
    let key = Value::from(vec![server.clone()]).to_string();
    let cache = fresh_cache("dual-era");

    let run = research(&server, &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("Tides follow the moon."),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains(" started; "), "a task: {}", run.stderr);
    let sent = sent_methods(&run.stderr);
    assert!(sent.iter().any(|m| m == "server/discover"), "{sent:?}");
    assert!(!sent.iter().any(|m| m == "initialize"), "{sent:?}");
    assert_eq!(remembered(&cache, &key), "modern");

    // A wrong era remembered.
    std::fs::write(
        cache.join("eras.json"),
        serde_json::json!({ key.clone(): "legacy" }).to_string(),
    )
    .unwrap();
    let run = research(&server, &cache);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("Tides follow the moon."),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains(" started; "), "a task: {}", run.stderr);
    assert_eq!(remembered(&cache, &key), "modern");
    let _ = std::fs::remove_dir_all(&cache);
}
