//! The benchmark itself runs: every scenario, on every transport, for every server of the default
//! build (the memory, SQLite, Redis and Postgres stores, rmcp and the rmcp bridge; a real
//! redis-server and PostgreSQL, as the run starts them), in its quick form with small counts. A
//! debug build's figures mean nothing; what is checked is that each row is made, for each server
//! it names, with a rate, the round trips a task took, and the store rows' counts, so that a
//! scenario broken by a change shows here rather than when someone next measures.

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

const SERVERS: &str = "mcp-tasks,mcp-sqlite,mcp-redis,mcp-postgres,rmcp,rmcp-bridge";

/// `raw[key][server][field]`, a number, or the test fails saying which.
fn figure(raw: &Value, key: &str, server: &str, field: &str) -> f64 {
    raw[key][server][field]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} {server} {field}: {}", raw[key]))
}

#[test]
fn every_scenario_runs_for_every_server() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join("bench-smoke.json");
    let _ = std::fs::remove_file(&out);
    let (stdout_path, stderr_path) = (dir.join("bench-smoke.out"), dir.join("bench-smoke.err"));
    // Cargo built the bench's sibling binaries (the stdio servers) for this test, with the
    // features of this run: without `CARGO`, the bench does not build them again, which from
    // `cargo test --workspace` would rebuild the runtime with the bench's features alone (a
    // minute of a CI run) and leave binaries the next `cargo test` rebuilds.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-tasks-bench"))
        .env_remove("CARGO")
        .args(["--quick", "--stored", "1000", "--tasks", "100"])
        .args(["--stored-large", "20000", "--servers", SERVERS, "--out"])
        .arg(&out)
        .stdout(std::fs::File::create(&stdout_path).expect("a file for stdout"))
        .stderr(std::fs::File::create(&stderr_path).expect("a file for stderr"))
        .spawn()
        .expect("the bench starts");
    // About a minute in a debug build on 2 cores; a scenario that hangs fails here instead.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the bench's status") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status.is_some_and(|s| s.success()),
        "{status:?}\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("total run time"), "{stdout}");
    let results: Value = serde_json::from_slice(&std::fs::read(&out).expect("the results file"))
        .expect("the results are JSON");
    let raw = &results["raw"];

    // Inline calls: the floor and the three servers that serve them, on every transport.
    for transport in ["stdio", "pipes", "inproc"] {
        for c in ["c1", "c64"] {
            let key = format!("inline/{transport}/{c}");
            for server in ["floor", "mcp-tasks", "rmcp", "rmcp-bridge"] {
                assert!(figure(raw, &key, server, "per_sec") > 0.0, "{key} {server}");
            }
        }
    }

    // Tasks: every server a row names, with the round trips a task (a lifecycle: its creation
    // and at least one poll) or an elicitation (create, poll to input, answer, poll to done)
    // took, and no more than a broken poll loop would.
    let stdio = [
        "mcp-tasks",
        "mcp-redis",
        "mcp-postgres",
        "rmcp",
        "rmcp-bridge",
    ];
    let inproc = ["mcp-tasks", "rmcp", "rmcp-bridge"];
    for (key, servers, with_sqlite, trips, least) in [
        (
            "lifecycle/stdio/c64",
            &stdio[..],
            true,
            "trips_per_task",
            2.0,
        ),
        (
            "lifecycle/inproc/c64",
            &inproc[..],
            true,
            "trips_per_task",
            2.0,
        ),
        ("elicit/stdio/c1", &stdio[..], false, "trips", 4.0),
        ("elicit/stdio/c64", &stdio[..], false, "trips", 4.0),
        ("elicit/inproc/c1", &inproc[..], false, "trips", 4.0),
        ("elicit/inproc/c64", &inproc[..], false, "trips", 4.0),
    ] {
        let sqlite = with_sqlite.then_some("mcp-sqlite");
        for server in servers.iter().copied().chain(sqlite) {
            assert!(figure(raw, key, server, "per_sec") > 0.0, "{key} {server}");
            let took = figure(raw, key, server, trips);
            assert!(
                (least..least * 5.0).contains(&took),
                "{key} {server}: {took}"
            );
        }
        assert!(
            raw[format!("{key}/floor")]["per_sec"].as_f64() > Some(0.0),
            "{key}"
        );
    }

    // In process, what the whole process spent a task and how many cores it kept busy, for every
    // server of the row; a child process's row has no such figure (the bench's CPU is not the
    // server's).
    let machine = std::thread::available_parallelism().map_or(64, usize::from) as f64;
    for (key, sqlite) in [
        ("lifecycle/inproc/c64/process_cpu", Some("mcp-sqlite")),
        ("elicit/inproc/c64/process_cpu", None),
    ] {
        for server in inproc.iter().copied().chain(sqlite) {
            let cpu = figure(raw, key, server, "cpu_us_per_task");
            let cores = figure(raw, key, server, "cores");
            let switches = figure(raw, key, server, "switches_per_task");
            let shown = &raw[key];
            assert!(
                cpu > 0.0 && cores > 0.0 && switches >= 0.0,
                "{key} {server}: {shown}"
            );
            // The machine's cores bound it: more would be a figure of something else.
            assert!(cores <= machine * 1.05, "{key} {server}: {cores} cores");
        }
    }
    for key in [
        "lifecycle/stdio/c64/process_cpu",
        "elicit/stdio/c64/process_cpu",
    ] {
        assert!(raw[key].is_null(), "{key}: {}", raw[key]);
    }

    // Every other server ÷ the memory store, round by round, in the lifecycle and store rows.
    for (key, servers) in [
        ("lifecycle/stdio/c64/same_round", &stdio[1..]),
        ("lifecycle/inproc/c64/same_round", &inproc[1..]),
        ("store/same_round", &[][..]),
    ] {
        for server in servers.iter().copied().chain(["mcp-sqlite"]) {
            let ratio = &raw[key][server];
            let (median, lowest, highest) = (
                ratio["median"].as_f64(),
                ratio["lowest"].as_f64(),
                ratio["highest"].as_f64(),
            );
            assert!(lowest > Some(0.0), "{key} {server}: {ratio}");
            assert!(
                lowest <= median && median <= highest,
                "{key} {server}: {ratio}"
            );
        }
    }
    assert!(
        stdout.contains("; ÷ mcp-tasks, the one same-round ratio: mcp-sqlite "),
        "{stdout}"
    );

    // Durable against plain tasks, per store, in the same rounds.
    for store in ["mcp-tasks", "mcp-sqlite", "mcp-redis", "mcp-postgres"] {
        let durable = &raw["durable/stdio/c64"][store];
        for field in ["plain_per_sec", "durable_per_sec"] {
            assert!(
                durable[field].as_f64() > Some(0.0),
                "durable {store}: {durable}"
            );
        }
        assert!(
            durable["ratios"][0].as_f64() > Some(0.0),
            "durable {store}: {durable}"
        );
    }
    assert!(
        stdout.contains("durable ÷ plain task lifecycle"),
        "{stdout}"
    );

    // The stored tasks: each server filled, read and weighed, and the rows and notes printed.
    for server in SERVERS.split(',') {
        let key = format!("store/{server}");
        for field in ["fill_per_sec", "gets_per_sec", "bytes_per_task"] {
            let value = raw[&key][field].as_f64();
            assert!(value > Some(0.0), "{key} {field}: {}", raw[&key]);
        }
    }
    assert!(
        stdout.contains("creating those tasks, stdio, c=64"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    (÷ mcp-tasks, the one same-round ratio: mcp-sqlite "),
        "{stdout}"
    );

    // Scale: the memory store at 10,000 and at the larger count, in paired rounds.
    for stored in ["10000", "20000"] {
        let rounds = &raw[format!("scale/mcp-tasks/{stored}")]["gets_per_sec_rounds"];
        assert!(rounds[0].as_f64() > Some(0.0), "scale {stored}: {rounds}");
    }
    assert!(raw["scale/paired_ratio"]["median"].as_f64() > Some(0.0));

    // The store commands a task operation took, for the Redis and Postgres rows.
    let commands = results["redis_commands"]
        .as_object()
        .expect("store commands");
    for store in ["mcp-redis", "mcp-postgres"] {
        for row in ["task lifecycle, stdio, c=64", "creating 1000 tasks"] {
            let counted = commands
                .iter()
                .find(|(name, _)| name.starts_with(row) && name.ends_with(&format!("({store})")))
                .unwrap_or_else(|| panic!("{row} ({store}): {:?}", commands.keys()));
            assert!(
                counted.1["commands_per_op"].as_f64() > Some(0.0),
                "{}",
                counted.1
            );
        }
    }
}
