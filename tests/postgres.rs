//! The Postgres task store behind whole servers, against a real PostgreSQL 15
//! (`testkit/postgres`): example-server processes sharing tasks through one database, a server
//! killed with SIGKILL, and PostgreSQL itself stopped with `-m immediate` and restarted; over HTTP
//! and over stdio.
//! (The store contract and the store's own rules are tested in the runtime's unit tests.)

use std::time::{Duration, Instant};

use mcp_tasks_runtime::store::TaskRecord;
use mcp_tasks_tests::instances::*;
use mcp_tasks_tests::postgres::PostgresServer;
use serde_json::{Value, json};

/// A task through `url`'s `tools/call`; its id.
async fn start_task(c: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> String {
    let created = result(
        c,
        url,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

/// Modern era: a task created through A is read, answered and cancelled through B; the tool on A
/// gets the answer (it goes on to its next question: B's `tasks/update` woke it through
/// Postgres) and the cancellation (A's engine stops it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_task_created_on_a_is_answered_and_cancelled_through_b() {
    let db = PostgresServer::shared().create_database();
    let a = Instance::start("A", &db);
    let b = Instance::start("B", &db);
    let c = client();

    let id = start_task(&c, &a.url, "research", json!({ "topic": "tides" })).await;
    let asked = poll(&c, &b.url, &id, |t| t["status"] == "input_required").await;
    assert_eq!(asked["statusMessage"], "planning");
    let (key, request) = only_request(&asked);
    assert_eq!(request["method"], "elicitation/create");

    result(&c, &b.url, "tasks/update", json!({ "taskId": id, "inputResponses": { &key: { "action": "accept", "content": { "sources": 3 } } } })).await;
    let sampling = poll(&c, &a.url, &id, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    })
    .await;
    assert_eq!(
        sampling["statusMessage"], "reading 3 sources",
        "A's tool read B's answer"
    );

    let ack = modern(&c, &b.url, "tasks/cancel", json!({ "taskId": id })).await;
    assert!(ack.get("result").is_some(), "{ack}");
    a.wait_for_log(&[&id, "stopping the tool", "cancelled"])
        .await;
    assert!(!b.logged("stopping the tool"), "B runs no tool");
    let seen = poll(&c, &a.url, &id, |t| t["status"] == "cancelled").await;
    assert_eq!(seen["statusMessage"], "The task was cancelled by request.");
}

/// Crashes lose nothing that was acknowledged. Two servers on one Postgres (lease 1 s):
/// - A is killed with SIGKILL while running a countdown and a research task waiting on the user,
///   with ten finished tasks behind it: B fails A's two running tasks as stopped within the lease
///   plus one sweep round, and its own task runs on;
/// - then PostgreSQL is stopped with `-m immediate` (no checkpoint, the write-ahead log replays on
///   start) and started again: every finished task still reads with its result, A's failed tasks
///   stay failed, and B's research task, whose first answer was delivered before the crash and
///   which was waiting on its second question (a sampling request) across the restart, still waits
///   on it (Postgres stays down longer than a waiter's 5 s resync, so B's tool re-reads during the
///   outage); answered through a new instance C, it wakes on B (B's listener reconnected) and
///   completes with that answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_and_a_crashed_postgres_lose_nothing_acknowledged() {
    const LEASE: Duration = Duration::from_millis(1000);
    let lease_ms = LEASE.as_millis().to_string();
    let lease = ["--lease-ms", lease_ms.as_str()];
    let mut pg = PostgresServer::start();
    let db = pg.create_database();
    let mut a = Instance::start_with("A", &db, &lease);
    let b = Instance::start_with("B", &db, &lease);
    let c = client();

    let mut finished = Vec::new();
    for _ in 0..10 {
        finished.push(start_task(&c, &a.url, "countdown", json!({ "seconds": 0 })).await);
    }
    let working = start_task(&c, &a.url, "countdown", json!({ "seconds": 600 })).await;
    let asking = start_task(&c, &a.url, "research", json!({ "topic": "tides" })).await;
    let on_b = start_task(&c, &b.url, "research", json!({ "topic": "moons" })).await;
    for id in &finished {
        poll(&c, &b.url, id, |t| t["status"] == "completed").await;
    }
    poll(&c, &b.url, &asking, |t| t["status"] == "input_required").await;
    poll(&c, &b.url, &working, |t| {
        t["statusMessage"]
            .as_str()
            .is_some_and(|m| m.ends_with("s left"))
    })
    .await;
    let asked = poll(&c, &a.url, &on_b, |t| t["status"] == "input_required").await;
    let (key, _) = only_request(&asked);
    result(&c, &a.url, "tasks/update", json!({ "taskId": on_b, "inputResponses": { &key: { "action": "accept", "content": { "sources": 4 } } } })).await;
    let second = poll(&c, &b.url, &on_b, |t| {
        t["statusMessage"] == "reading 4 sources" && t["status"] == "input_required"
    })
    .await;
    let (sampling_key, sampling) = only_request(&second);
    assert_eq!(sampling["method"], "sampling/createMessage");

    a.kill();
    let killed = Instant::now();
    for id in [&asking, &working] {
        let failed = poll(&c, &b.url, id, |t| {
            t["status"] != "working" && t["status"] != "input_required"
        })
        .await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert_eq!(
            failed["statusMessage"],
            TaskRecord::RUNNER_STOPPED_MESSAGE,
            "{failed}"
        );
    }
    let took = killed.elapsed();
    eprintln!("A's tasks failed {took:?} after the kill");
    assert!(
        took <= LEASE + LEASE / 3 + Duration::from_secs(2),
        "took {took:?}"
    );

    pg.stop_immediate();
    // While Postgres is down, B answers with a JSON-RPC error, not a hang or a dropped request.
    let down = modern(&c, &b.url, "tasks/get", json!({ "taskId": on_b })).await;
    assert_eq!(down["error"]["code"], -32603, "{down}");
    assert!(
        down["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Postgres")),
        "{down}"
    );
    // Down for longer than a waiter's resync period (5 s): B's waiting tool re-reads while
    // Postgres is away, and must wait on rather than fail.
    tokio::time::sleep(Duration::from_secs(6)).await;
    pg.restart();

    for id in &finished {
        let got = poll(&c, &b.url, id, |_| true).await;
        assert_eq!(got["status"], "completed", "{got}");
        assert_eq!(got["result"]["content"][0]["text"], "liftoff", "{got}");
    }
    for id in [&asking, &working] {
        let got = result(&c, &b.url, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(got["status"], "failed", "{got}");
    }
    let kept = result(&c, &b.url, "tasks/get", json!({ "taskId": on_b })).await;
    assert_eq!(kept["status"], "input_required", "{kept}");
    assert_eq!(kept["statusMessage"], "reading 4 sources", "{kept}");
    assert_eq!(only_request(&kept).0, sampling_key);

    // B has renewed its lease once Postgres answers it again (its sweeper's probe is a
    // renewal), so C, which saw no outage, cannot judge it lapsed.
    b.wait_for_log(&["the task store answers again"]).await;
    tokio::time::sleep(LEASE / 4).await;
    let c_instance = Instance::start_with("C", &db, &lease);
    let summary = json!({ "role": "assistant", "model": "m", "content": { "type": "text", "text": "Moons orbit." } });
    result(
        &c,
        &c_instance.url,
        "tasks/update",
        json!({ "taskId": on_b, "inputResponses": { &sampling_key: summary } }),
    )
    .await;
    let done = poll(&c, &c_instance.url, &on_b, |t| t["status"] == "completed").await;
    let text = done["result"].to_string();
    assert!(text.contains("Moons orbit."), "{done}");
    assert!(text.contains("\"sources\":4"), "{done}");
    assert!(!c_instance.logged("stopping the tool"), "C ran nothing");
}

/// Over stdio the tasks belong to the server's anonymous owner, not to the process: two
/// `example_server --store postgres://...` processes over real pipes, each with its own client,
/// share tasks. A `research` task created through A is read through B, both its questions (the
/// elicitation, then the sampling request) are answered through B (`tasks/update`), A's tool
/// finishes it and B reads the result; a `countdown` task created through A is cancelled through
/// B, and A's tool stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stdio_servers_on_one_postgres_serve_each_others_tasks() {
    use mcp_tasks_tests::{StdioClient, example_bin, modern, poll_modern};
    let db = PostgresServer::shared().create_database();
    let args = ["--store", db.as_str()];
    let filter = "info,mcp_tasks_runtime::task=debug";
    let mut a = StdioClient::spawn_logging(&example_bin("example_server"), &args, filter);
    let mut b = StdioClient::spawn_logging(&example_bin("example_server"), &args, filter);
    let caps = json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });

    let created = a
        .result(
            "tools/call",
            modern(
                json!({ "name": "research", "arguments": { "topic": "tides" } }),
                caps.clone(),
            ),
        )
        .await;
    let id = created["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();

    let asked = poll_modern(&mut b, &id, &caps, |t| t["status"] == "input_required").await;
    let (key, request) = only_request(&asked);
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    let answer = json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "sources": 3 } } } });
    b.result("tasks/update", modern(answer, caps.clone())).await;

    let sampling = poll_modern(&mut b, &id, &caps, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    })
    .await;
    assert_eq!(
        sampling["statusMessage"], "reading 3 sources",
        "A's tool read B's answer"
    );
    let (key, _) = only_request(&sampling);
    let answer = json!({ "taskId": id, "inputResponses": { key: {
        "role": "assistant", "model": "test", "content": { "type": "text", "text": "Tides follow the moon." } } } });
    b.result("tasks/update", modern(answer, caps.clone())).await;
    let done = poll_modern(&mut b, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["summary"], "Tides follow the moon.",
        "{done}"
    );

    let counting = a
        .result(
            "tools/call",
            modern(
                json!({ "name": "countdown", "arguments": { "seconds": 600 } }),
                caps.clone(),
            ),
        )
        .await;
    let counting = counting["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {counting}"))
        .to_owned();
    let ack = b
        .result(
            "tasks/cancel",
            modern(json!({ "taskId": counting }), caps.clone()),
        )
        .await;
    assert!(ack.is_object(), "{ack}");
    let stopped = a.wait_for_log("stopping the tool").await;
    assert!(stopped.contains(&counting), "{stopped}");
    let seen = poll_modern(&mut a, &counting, &caps, |t| t["status"] == "cancelled").await;
    assert_eq!(seen["statusMessage"], "The task was cancelled by request.");
}

/// `--store postgres://...` that cannot be used stops the server at once with an error that says
/// why: nothing listening on the port, or a URL that does not parse.
#[test]
fn an_unusable_postgres_stops_the_server_with_a_reason() {
    // A port bound and not listening: connecting to it is refused, and nothing else can take it
    // while the test runs (a port found free and let go could be).
    let held = tokio::net::TcpSocket::new_v4().expect("a socket");
    held.bind("127.0.0.1:0".parse().unwrap())
        .expect("a free port");
    let free = held.local_addr().unwrap().port();
    let bin = mcp_tasks_tests::example_bin("example_server");
    let run = |spec: &str| {
        let started = Instant::now();
        let out = std::process::Command::new(&bin)
            .args(["--store", spec])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("example_server runs");
        assert!(!out.status.success(), "{spec}: {out:?}");
        assert!(started.elapsed() < Duration::from_secs(15), "{spec}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let unreachable = format!("postgres://postgres@127.0.0.1:{free}/nowhere");
    let err = run(&unreachable);
    assert!(
        err.contains(&unreachable) && err.contains("Postgres") && err.contains("refused"),
        "{err}"
    );
    let err = run("postgres://[::1");
    assert!(
        err.contains("is not valid") && err.contains("usage:"),
        "{err}"
    );
}

#[path = "support/stdio_kill.rs"]
mod stdio_kill;

/// Two stdio processes on one Postgres: the one killed with SIGKILL and started again has its
/// running task failed within its lease plus a sweep round, as over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stdio_servers_task_fails_within_its_lease() {
    let db = PostgresServer::shared().create_database();
    stdio_kill::a_killed_stdio_server_s_task_fails_within_its_lease(&db).await;
}
