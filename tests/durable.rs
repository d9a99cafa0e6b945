//! Durable tasks (`#[tool(durable = true)]`) over real processes: the example server's `ingest`
//! (one question, then `items` items of `item_ms` each, a checkpoint after each) on a real
//! `redis-server`, a real PostgreSQL and a SQLite file, its instances killed with SIGKILL,
//! drained with SIGTERM, split into a front and workers. What a client sees: the task keeps its
//! id, is never asked its question again, and completes, reporting which run finished it
//! (`attempt`) and from which item that run went on (`resumedFrom`).
//!
//! Each test starts its own redis-server (or database): instances of two tests on one store
//! would take over each other's tasks.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mcp_tasks_runtime::store::TaskRecord;
use mcp_tasks_tests::instances::*;
use mcp_tasks_tests::postgres::PostgresServer;
use mcp_tasks_tests::redis::RedisServer;
use serde_json::{Value, json};

/// The instances' lease (`--lease-ms`): a killed instance's durable tasks are taken over within
/// it plus one sweep round (a third of it).
const LEASE: Duration = Duration::from_millis(1000);
const LEASE_ARGS: [&str; 2] = ["--lease-ms", "1000"];

/// An `ingest` task started through `url`; its id.
async fn ingest(c: &reqwest::Client, url: &str, items: u32, item_ms: u64) -> String {
    start(
        c,
        url,
        "ingest",
        json!({ "items": items, "item_ms": item_ms }),
    )
    .await
}

/// A task of `tool` started through `url`; its id.
async fn start(c: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> String {
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

/// Answers `ingest`'s one question (`{"confirm": true}`) through `url` (2026-07-28
/// `tasks/update`) once the task asks it.
async fn confirm(c: &reqwest::Client, url: &str, id: &str) {
    let asked = poll(c, url, id, |t| t["status"] == "input_required").await;
    let (key, request) = only_request(&asked);
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    let answer = json!({ "action": "accept", "content": { "confirm": true } });
    result(
        c,
        url,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": { key: answer } }),
    )
    .await;
}

/// `n` `ingest` tasks started and confirmed through `url`, concurrently; their ids.
async fn confirmed(
    c: &reqwest::Client,
    url: &str,
    n: usize,
    items: u32,
    item_ms: u64,
) -> Vec<String> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..n {
        let (c, url) = (c.clone(), url.to_owned());
        set.spawn(async move {
            let id = ingest(&c, &url, items, item_ms).await;
            confirm(&c, &url, &id).await;
            (i, id)
        });
    }
    let mut ids = vec![String::new(); n];
    while let Some(done) = set.join_next().await {
        let (i, id) = done.expect("a task started and confirmed");
        ids[i] = id;
    }
    ids
}

/// How many items a working `ingest` task has done, from its status (`"K of N items"`).
fn items_done(task: &Value) -> Option<u32> {
    task["statusMessage"]
        .as_str()?
        .split_once(" of ")?
        .0
        .parse()
        .ok()
}

/// Waits until every task of `ids` has done (and checkpointed) at least one item.
async fn all_mid_work(c: &reqwest::Client, url: &str, ids: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut pending: Vec<&String> = ids.iter().collect();
    while !pending.is_empty() {
        let mut left = Vec::new();
        for id in pending {
            let task = result(c, url, "tasks/get", json!({ "taskId": id })).await;
            let status = &task["status"];
            assert!(
                status == "working" || status == "input_required",
                "ended before it was stopped: {task}"
            );
            if items_done(&task).is_none_or(|done| done == 0) {
                left.push(id);
            }
        }
        pending = left;
        let late = Instant::now() >= deadline;
        assert!(
            pending.is_empty() || !late,
            "{} tasks never began",
            pending.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls every task of `ids` through `url` until each has ended, at most `within`; the ended
/// tasks, by id. No task may ask for input on the way: its one answer is kept with it.
async fn all_ended(
    c: &reqwest::Client,
    url: &str,
    ids: &[String],
    within: Duration,
) -> BTreeMap<String, Value> {
    let deadline = Instant::now() + within;
    let mut ended = BTreeMap::new();
    loop {
        for id in ids {
            if ended.contains_key(id) {
                continue;
            }
            let task = result(c, url, "tasks/get", json!({ "taskId": id })).await;
            let requests = task["inputRequests"].as_object().map_or(0, |r| r.len());
            assert!(
                task["status"] != "input_required" && requests == 0,
                "asked again: {task}"
            );
            if task["status"] != "working" {
                ended.insert(id.clone(), task);
            }
        }
        if ended.len() == ids.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {} tasks still working after {within:?}",
            ids.len() - ended.len(),
            ids.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ended
}

/// A completed `ingest`'s structured content: (items, attempt, resumedFrom).
fn ingested(task: &Value) -> (u64, u64, u64) {
    assert_eq!(task["status"], "completed", "{task}");
    let out = &task["result"]["structuredContent"];
    let field = |name: &str| {
        out[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no {name}: {task}"))
    };
    (field("items"), field("attempt"), field("resumedFrom"))
}

/// How many times `instance` ran `id`'s body, with the attempt numbers it logged.
fn runs(instance: &Instance, id: &str) -> Vec<String> {
    instance
        .lines(&["ingest runs", id])
        .into_iter()
        .map(|line| {
            line.split("attempt=")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("?")
                .to_owned()
        })
        .collect()
}

/// A counter of `/metrics` at the instance's address (0 when absent).
async fn metric(c: &reqwest::Client, url: &str, name: &str) -> f64 {
    let at = url.trim_end_matches("/mcp");
    let text = c
        .get(format!("{at}/metrics"))
        .send()
        .await
        .expect("/metrics answers")
        .text()
        .await
        .expect("a body");
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `/readyz`'s status at the instance's address (`None`: nothing answers).
async fn readyz(c: &reqwest::Client, url: &str) -> Option<u16> {
    let at = url.trim_end_matches("/mcp");
    let r = c.get(format!("{at}/readyz")).send().await.ok()?;
    Some(r.status().as_u16())
}

/// Two instances on one store (lease 1 s): 30 `ingest` tasks (20 items of 200 ms) created and
/// answered on A; A killed with SIGKILL once each has done an item. Every task completes through
/// B within the lease, a sweep round and the work left (4 s at most) plus 3 s of slack, in its
/// second run, from the item its first run had checkpointed, and none asks again.
async fn a_killed_mid_work_b_finishes_every_task(store: &str) {
    const TASKS: usize = 30;
    const ITEMS: u32 = 20;
    const ITEM_MS: u64 = 200;
    let mut a = Instance::start_with("A", store, &LEASE_ARGS);
    let b = Instance::start_with("B", store, &LEASE_ARGS);
    let c = client();
    let ids = confirmed(&c, &a.url, TASKS, ITEMS, ITEM_MS).await;
    all_mid_work(&c, &b.url, &ids).await;

    a.kill();
    let killed = Instant::now();
    let work = Duration::from_millis(ITEM_MS * u64::from(ITEMS));
    let bound = LEASE + LEASE / 3 + work + Duration::from_secs(3);
    let ended = all_ended(&c, &b.url, &ids, bound).await;
    eprintln!(
        "all {TASKS} tasks completed {:?} after the kill",
        killed.elapsed()
    );
    for task in ended.values() {
        let (items, attempt, resumed_from) = ingested(task);
        assert_eq!((items, attempt), (u64::from(ITEMS), 2), "{task}");
        assert!(resumed_from >= 1, "went on from its checkpoint: {task}");
    }
    assert_eq!(
        metric(&c, &b.url, "mcp_tasks_durable_resumed_total").await,
        TASKS as f64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_a_killed_mid_work_b_finishes_every_task() {
    let redis = RedisServer::start();
    a_killed_mid_work_b_finishes_every_task(&redis.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_killed_mid_work_b_finishes_every_task() {
    let db = PostgresServer::shared().create_database();
    a_killed_mid_work_b_finishes_every_task(&db).await;
}

/// Three instances on one Redis; A runs 12 tasks and is killed. B and C race for them: each task
/// is taken by exactly one of them (its body runs once more, not once on each), and completes in
/// its second run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_race_and_each_task_runs_once_per_death() {
    const TASKS: usize = 12;
    let redis = RedisServer::start();
    let mut a = Instance::start_with("A", &redis.url, &LEASE_ARGS);
    let b = Instance::start_with("B", &redis.url, &LEASE_ARGS);
    let c3 = Instance::start_with("C", &redis.url, &LEASE_ARGS);
    let c = client();
    let ids = confirmed(&c, &a.url, TASKS, 10, 200).await;
    all_mid_work(&c, &b.url, &ids).await;
    for id in &ids {
        assert_eq!(runs(&a, id), ["1"], "A ran {id} once");
    }
    a.kill();
    let ended = all_ended(&c, &c3.url, &ids, Duration::from_secs(10)).await;
    let mut on_b = 0;
    for (id, task) in &ended {
        assert_eq!(ingested(task).1, 2, "{task}");
        let (b_runs, c_runs) = (runs(&b, id), runs(&c3, id));
        let all: Vec<&String> = b_runs.iter().chain(&c_runs).collect();
        assert_eq!(
            all,
            ["2"],
            "{id}: one run after the death (B {b_runs:?}, C {c_runs:?})"
        );
        on_b += b_runs.len();
    }
    eprintln!("B took {on_b} tasks, C {}", TASKS - on_b);
}

/// SIGTERM to an instance with a drain period (3 s) while it runs tasks: `/readyz` answers 503
/// at once, the tasks that end within the period end on it, the others are released at the end
/// of the period and taken over by B at once (A's lease is a minute, so only the release can hand
/// them over in time), A exits within the period plus 2 s, and no task fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_finishes_what_it_can_and_hands_over_the_rest() {
    const DRAIN: Duration = Duration::from_secs(3);
    let redis = RedisServer::start();
    let long_lease = ["--lease-ms", "60000"];
    let mut a = Instance::start_with(
        "A",
        &redis.url,
        &[&long_lease[..], &["--drain-ms", "3000"]].concat(),
    );
    let b = Instance::start_with("B", &redis.url, &long_lease);
    let c = client();
    // Short: 10 items of 200 ms (done within the drain). Long: 50 items of 200 ms.
    let short = confirmed(&c, &a.url, 6, 10, 200).await;
    let long = confirmed(&c, &a.url, 6, 50, 200).await;
    all_mid_work(&c, &b.url, &long).await;
    assert_eq!(readyz(&c, &a.url).await, Some(200));

    let a_url = a.url.clone();
    let sent = Instant::now();
    let stopping = std::thread::spawn(move || {
        let status = a.terminate();
        (status, sent.elapsed())
    });
    let mut not_ready = 0;
    while !stopping.is_finished() {
        match readyz(&c, &a_url).await {
            Some(503) => not_ready += 1,
            Some(other) => assert!(
                sent.elapsed() < Duration::from_millis(200),
                "/readyz {other} while draining"
            ),
            None => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, took) = stopping.join().expect("A stopped");
    eprintln!("A exited {took:?} after SIGTERM; /readyz said 503 {not_ready} times");
    assert!(status.success(), "{status}");
    assert!(took <= DRAIN + Duration::from_secs(2), "took {took:?}");
    assert!(not_ready >= 5, "/readyz 503 for the drain: {not_ready}");
    assert_eq!(readyz(&c, &b.url).await, Some(200));

    let all: Vec<String> = short.iter().chain(&long).cloned().collect();
    let ended = all_ended(&c, &b.url, &all, Duration::from_secs(15)).await;
    for id in &short {
        assert_eq!(
            ingested(&ended[id]),
            (10, 1, 0),
            "finished on A during the drain"
        );
    }
    for id in &long {
        let (items, attempt, resumed_from) = ingested(&ended[id]);
        assert_eq!((items, attempt), (50, 2), "{}", ended[id]);
        assert!(
            resumed_from >= 10,
            "went on from A's last item: {}",
            ended[id]
        );
    }
    assert_eq!(
        metric(&c, &b.url, "mcp_tasks_durable_resumed_total").await,
        6.0
    );
}

/// Over stdio on SQLite, as a host runs its server: two `ingest` tasks and a (not durable)
/// `countdown`; `kill -9`; the server started again on the same file. The `ingest` tasks go on
/// from their checkpoints and complete in their second run without asking again; the countdown
/// fails as before, its server having stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_over_stdio_a_restarted_server_finishes_its_durable_tasks() {
    use mcp_tasks_tests::{StdioClient, example_bin, modern, poll_modern};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("durable-{}.db", std::process::id()));
    let remove = || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
    };
    remove();
    let store = format!("sqlite:{}", file.display());
    let args = ["--store", store.as_str()];
    let caps = caps();
    let bin = example_bin("example_server");
    let filter = "info,mcp_tasks_runtime::task=debug";

    let mut first = StdioClient::spawn_logging(&bin, &args, filter);
    let call = |name: &str, arguments: Value| {
        modern(
            json!({ "name": name, "arguments": arguments }),
            caps.clone(),
        )
    };
    let mut ids = Vec::new();
    for _ in 0..2 {
        let created = first
            .result(
                "tools/call",
                call("ingest", json!({ "items": 20, "item_ms": 200 })),
            )
            .await;
        ids.push(
            created["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("a task: {created}"))
                .to_owned(),
        );
    }
    let created = first
        .result("tools/call", call("countdown", json!({ "seconds": 600 })))
        .await;
    let counting = created["taskId"].as_str().unwrap().to_owned();
    for id in &ids {
        let asked = poll_modern(&mut first, id, &caps, |t| t["status"] == "input_required").await;
        let (key, _) = only_request(&asked);
        let answer = json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "confirm": true } } } });
        first
            .result("tasks/update", modern(answer, caps.clone()))
            .await;
    }
    for id in &ids {
        poll_modern(&mut first, id, &caps, |t| {
            items_done(t).is_some_and(|n| n >= 1)
        })
        .await;
    }
    first.kill().await;

    let mut again = StdioClient::spawn_logging(&bin, &args, filter);
    for id in &ids {
        let done = poll_modern(&mut again, id, &caps, |t| {
            assert_ne!(t["status"], "input_required", "asked again: {t}");
            t["status"] != "working"
        })
        .await;
        let (items, attempt, resumed_from) = ingested(&done);
        assert_eq!((items, attempt), (20, 2), "{done}");
        assert!(resumed_from >= 1, "{done}");
    }
    let stopped = again
        .result(
            "tasks/get",
            modern(json!({ "taskId": counting }), caps.clone()),
        )
        .await;
    assert_eq!(stopped["status"], "failed", "{stopped}");
    assert_eq!(stopped["statusMessage"], TaskRecord::RUNNER_STOPPED_MESSAGE);
    again.close().await;
    remove();
}

/// `--role front` serving the clients and two `--role worker` processes running the durable
/// tasks, on one Redis: the front runs none of them, a worker serves no MCP request (only its
/// operations endpoints), every task completes; a worker killed mid-task has its tasks finished
/// by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_and_two_workers_finish_every_task_when_a_worker_dies() {
    const TASKS: usize = 8;
    let redis = RedisServer::start();
    let front = Instance::start_with(
        "F",
        &redis.url,
        &[&LEASE_ARGS[..], &["--role", "front"]].concat(),
    );
    let worker_args = [&LEASE_ARGS[..], &["--role", "worker"]].concat();
    let mut w1 = Instance::start_with("W1", &redis.url, &worker_args);
    let mut w2 = Instance::start_with("W2", &redis.url, &worker_args);
    let c = client();

    let mcp = c
        .post(&w2.url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string())
        .send()
        .await
        .expect("the worker answers");
    assert_eq!(mcp.status().as_u16(), 404, "a worker serves no MCP");
    let healthz = c
        .get(w2.url.replace("/mcp", "/healthz"))
        .send()
        .await
        .expect("/healthz");
    assert_eq!(healthz.status().as_u16(), 200);

    let ids = confirmed(&c, &front.url, TASKS, 15, 200).await;
    all_mid_work(&c, &front.url, &ids).await;
    let on_w1: Vec<&String> = ids.iter().filter(|id| !runs(&w1, id).is_empty()).collect();
    let on_w2 = ids.iter().filter(|id| !runs(&w2, id).is_empty()).count();
    eprintln!("W1 runs {} tasks, W2 {on_w2}", on_w1.len());
    assert_eq!(on_w1.len() + on_w2, TASKS, "each task runs on one worker");
    // Kill the worker that runs more of them (W1, or W2 under the other name).
    let (dying, other) = if on_w1.len() * 2 >= TASKS {
        (&mut w1, &w2)
    } else {
        (&mut w2, &w1)
    };
    let moved: Vec<String> = ids
        .iter()
        .filter(|id| !runs(dying, id).is_empty())
        .cloned()
        .collect();
    dying.kill();

    let ended = all_ended(&c, &front.url, &ids, Duration::from_secs(15)).await;
    for (id, task) in &ended {
        let (items, attempt, _) = ingested(task);
        let expected = if moved.contains(id) { 2 } else { 1 };
        assert_eq!((items, attempt), (15, expected), "{task}");
    }
    for id in &moved {
        assert_eq!(runs(other, id), ["2"], "the other worker took {id}");
    }
    assert!(
        !front.logged("ingest runs"),
        "the front runs no durable task"
    );
}

/// A durable task whose every run dies (default: 3 runs) fails saying so; a task of a tool that is
/// not durable fails on the first kill, as before. Four instances on one Redis (lease 1 s), each
/// killed in turn while it runs the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_every_run_dies_fails_with_the_count() {
    let redis = RedisServer::start();
    let c = client();
    let mut running = Instance::start_with("A", &redis.url, &LEASE_ARGS);
    let id = ingest(&c, &running.url, 1000, 100).await;
    confirm(&c, &running.url, &id).await;
    let not_durable = start(&c, &running.url, "countdown", json!({ "seconds": 600 })).await;
    for (attempt, next) in [(1, "B"), (2, "C"), (3, "D")] {
        running
            .wait_for_log(&["ingest runs", &id, &format!("attempt={attempt}")])
            .await;
        let successor = Instance::start_with(next, &redis.url, &LEASE_ARGS);
        running.kill();
        running = successor;
        if attempt == 1 {
            let failed = poll(&c, &running.url, &not_durable, |t| t["status"] != "working").await;
            assert_eq!(failed["status"], "failed", "{failed}");
            assert_eq!(failed["statusMessage"], TaskRecord::RUNNER_STOPPED_MESSAGE);
        }
    }
    let failed = poll(&c, &running.url, &id, |t| t["status"] != "working").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["statusMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("stopped during each of its 3 runs"),
        "{failed}"
    );
    assert!(!running.logged("ingest runs"), "D ran it no fourth time");
    assert_eq!(
        metric(&c, &running.url, "mcp_tasks_durable_exhausted_total").await,
        1.0
    );
}

/// A modern request's `result` through `url`, or why not: the instance does not answer (it
/// stopped) or answers with an error. What a load balancer's retry needs.
async fn try_result(
    c: &reqwest::Client,
    url: &str,
    method: &str,
    mut params: Value,
) -> Result<Value, String> {
    params["_meta"] = mcp_tasks_tests::modern_meta(caps());
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let name = (params.get("name").or_else(|| params.get("taskId")))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let response = c
        .post(url)
        .header("mcp-name", name)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| format!("{url}: {e}"))?;
    // Plain JSON, or the last `data:` of an SSE body that carries the response.
    let message = serde_json::from_str::<Value>(&text).ok().or_else(|| {
        let data = text.lines().filter_map(|l| l.strip_prefix("data:"));
        let mut messages = data.filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok());
        messages.rfind(|m| m.get("id").is_some())
    });
    match message.as_ref().and_then(|m| m.get("result")) {
        Some(result) => Ok(result.clone()),
        None => Err(format!("{url}: {status} {text}")),
    }
}

/// The instances a load balancer sends requests to (those it has not taken out), in turn.
#[derive(Clone, Default)]
struct Balancer(std::sync::Arc<std::sync::Mutex<(Vec<String>, usize)>>);

impl Balancer {
    fn add(&self, url: &str) {
        self.0.lock().unwrap().0.push(url.to_owned());
    }

    fn remove(&self, url: &str) {
        self.0.lock().unwrap().0.retain(|u| u != url);
    }

    fn pick(&self) -> String {
        let mut state = self.0.lock().unwrap();
        state.1 += 1;
        let at = state.1 % state.0.len();
        state.0[at].clone()
    }

    /// `method` through the instances in turn until one answers it (at most 10 s).
    async fn result(&self, c: &reqwest::Client, method: &str, params: Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let why = match try_result(c, &self.pick(), method, params.clone()).await {
                Ok(result) => return result,
                Err(why) => why,
            };
            assert!(
                Instant::now() < deadline,
                "no instance answered {method}: {why}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One `ingest` task (10 items of 200 ms) started and confirmed through the balancer.
async fn one_through(lb: &Balancer, c: &reqwest::Client) -> String {
    let call = json!({ "name": "ingest", "arguments": { "items": 10, "item_ms": 200 } });
    let created = lb.result(c, "tools/call", call).await;
    let id = created["taskId"].as_str().expect("a task").to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let task = lb.result(c, "tasks/get", json!({ "taskId": id })).await;
        if let Some((key, _)) = task["inputRequests"]
            .as_object()
            .and_then(|r| r.iter().next())
        {
            let answer = json!({ "action": "accept", "content": { "confirm": true } });
            let update = json!({ "taskId": id, "inputResponses": { key: answer } });
            lb.result(c, "tasks/update", update).await;
            return id;
        }
        assert!(Instant::now() < deadline, "never asked: {task}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Two instances on one Redis (drain 1 s, lease 1 s) behind a balancer, replaced in turn while a
/// client starts and confirms a task (2 s of work) every 100 ms or so: each instance is taken out
/// of the balancer, sent SIGTERM, and a new one put in its place. The tasks a drain does not see
/// to their end are taken over by the other instance. Every task completes: none fails, none asks
/// its question again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_fails_no_task_and_loses_no_answer() {
    let redis = RedisServer::start();
    let args = [&LEASE_ARGS[..], &["--drain-ms", "1000"]].concat();
    let c = client();
    let lb = Balancer::default();
    let mut instances = vec![
        Instance::start_with("A", &redis.url, &args),
        Instance::start_with("B", &redis.url, &args),
    ];
    for i in &instances {
        lb.add(&i.url);
    }
    let stop = tokio_util::sync::CancellationToken::new();
    let load = tokio::spawn({
        let (lb, c, stop) = (lb.clone(), c.clone(), stop.clone());
        async move {
            let mut ids = Vec::new();
            while !stop.is_cancelled() {
                ids.push(one_through(&lb, &c).await);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            ids
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    for (slot, name) in [(0, "A2"), (1, "B2")] {
        let old_url = instances[slot].url.clone();
        lb.remove(&old_url);
        let status = tokio::task::block_in_place(|| instances[slot].terminate());
        assert!(status.success(), "{name}'s predecessor: {status}");
        instances[slot] = Instance::start_with(name, &redis.url, &args);
        lb.add(&instances[slot].url);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    stop.cancel();
    let ids = load.await.expect("the load ran");
    let ended = all_ended(&c, &instances[0].url, &ids, Duration::from_secs(15)).await;
    let resumed = ended.values().filter(|t| ingested(t).1 > 1).count();
    eprintln!(
        "{} tasks completed through the restarts, {resumed} of them resumed",
        ids.len()
    );
    for task in ended.values() {
        assert_eq!(ingested(task).0, 10, "{task}");
    }
    assert!(ids.len() >= 10, "{} tasks", ids.len());
    assert!(resumed >= 1, "no task outlasted a drain");
}
