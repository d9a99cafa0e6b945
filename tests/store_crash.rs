//! Answers and store crashes (issue 56, scope 1): an `example_server` over HTTP on a real
//! `redis-server` (SIGKILLed, restarted with the data of a `SAVE` just before) and on a real
//! PostgreSQL (`pg_ctl stop -m immediate`, started again), the store crashing while
//! [`TASKS`] `research` tasks take the answers to their one question (2026-07-28
//! `tasks/update`). Whatever the store loses, each task either completes with exactly the
//! answer it was given, or asks its question again (visible in `tasks/get`) and completes with
//! the answer given then, or (the store forgot both the first answer and the outcome of the tool
//! that took it) with the first answer; 30 s after the store is back no task is `working`.
//!
//! `an_outcome_redis_forgot_is_recorded_again` makes the one loss that leaves no tool behind
//! happen on purpose: an outcome Redis took, then forgot.
//!
//! `research` asks how many sources to read (`{"sources": N}`) and reports `sources` in its
//! result; each task gets its own N. The client declares no `sampling`, so the tool asks nothing
//! more.

use std::time::{Duration, Instant};

use mcp_tasks_tests::instances::{Instance, TOKEN, client, only_request};
use mcp_tasks_tests::modern_meta;
use mcp_tasks_tests::postgres::PostgresServer;
use mcp_tasks_tests::redis::RedisServer;
use serde_json::{Value, json};

/// Tasks per run, and runs per store.
const TASKS: usize = 100;
const RUNS: usize = 5;
/// The deliveries of one run are spread over this long; the store is killed `KILL_AT` into it
/// and is down for `DOWN` (plus however long its restart takes), so answers land before, during
/// and after the outage, and tools are taking theirs when it comes.
const SPREAD: Duration = Duration::from_millis(1200);
const KILL_AT: Duration = Duration::from_millis(300);
const DOWN: Duration = Duration::from_millis(400);
/// How long after the store is back every task has left `working`.
const SETTLE: Duration = Duration::from_secs(30);

/// Elicitation and tasks, no sampling: `research` asks one question and no more.
fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// A modern request through `url`: its `result`, or `Err` with the error (or the transport
/// failure) while the store is away.
async fn attempt(
    c: &reqwest::Client,
    url: &str,
    method: &str,
    mut params: Value,
) -> Result<Value, String> {
    params["_meta"] = modern_meta(caps());
    let mut b = c
        .post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    for name in ["name", "taskId"] {
        if let Some(v) = params.get(name).and_then(Value::as_str) {
            b = b.header("mcp-name", v);
        }
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let response = b.body(body.to_string()).send().await;
    let text = match response {
        Ok(r) => r.text().await.map_err(|e| e.to_string())?,
        Err(e) => return Err(e.to_string()),
    };
    let message: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    match message.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(message.to_string()),
    }
}

/// The answer task `i` of run `run` is given: a number no other task gets.
fn sources(run: usize, i: usize) -> u64 {
    (run * 1000 + i + 1) as u64
}

fn topic(run: usize, i: usize) -> String {
    format!("run {run} task {i}")
}

/// Answers the task's one outstanding question with `sources`; whether the server took it.
async fn answer(c: &reqwest::Client, url: &str, task: &Value, sources: u64) -> Result<(), String> {
    let (key, request) = only_request(task);
    assert_eq!(request["method"], "elicitation/create", "{task}");
    let answer = json!({ "action": "accept", "content": { "sources": sources } });
    let id = task["taskId"].as_str().expect("taskId");
    let params = json!({ "taskId": id, "inputResponses": { key: answer } });
    attempt(c, url, "tasks/update", params).await.map(drop)
}

/// `tasks/get` of `id` until `done` holds (errors while the store is away are waited out).
async fn until(c: &reqwest::Client, url: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + SETTLE;
    let mut last = Err(String::new());
    while Instant::now() < deadline {
        last = attempt(c, url, "tasks/get", json!({ "taskId": id })).await;
        if let Ok(task) = &last
            && done(task)
        {
            return task.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never got there; last: {last:?}");
}

/// One run on the instance at `url`: [`TASKS`] tasks asking, their answers delivered while
/// `crash` stops and restarts the store. Returns the server, and how many answers were
/// acknowledged, how many tasks completed with them, how many asked again.
async fn run<S: Send + 'static>(
    c: &reqwest::Client,
    url: &str,
    run: usize,
    mut server: S,
    crash: fn(&mut S),
) -> (S, [usize; 3]) {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..TASKS {
        let (c, url) = (c.clone(), url.to_owned());
        set.spawn(async move {
            let call = json!({ "name": "research", "arguments": { "topic": topic(run, i) } });
            let created = attempt(&c, &url, "tools/call", call).await.unwrap();
            assert_eq!(created["resultType"], "task", "{created}");
            let id = created["taskId"].as_str().unwrap().to_owned();
            let asked = until(&c, &url, &id, |t| t["status"] == "input_required").await;
            (i, asked)
        });
    }
    let mut asked = vec![Value::Null; TASKS];
    while let Some(done) = set.join_next().await {
        let (i, task) = done.expect("a task started and asking");
        asked[i] = task;
    }
    let ids: Vec<String> = asked
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect();

    // The deliveries, spread over SPREAD; the crash in their midst.
    let started = Instant::now();
    let mut deliveries = tokio::task::JoinSet::new();
    for (i, task) in asked.into_iter().enumerate() {
        let (c, url) = (c.clone(), url.to_owned());
        let at = started + SPREAD * i as u32 / TASKS as u32;
        deliveries.spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            answer(&c, &url, &task, sources(run, i)).await.is_ok()
        });
    }
    tokio::time::sleep_until((started + KILL_AT).into()).await;
    let server = tokio::task::spawn_blocking(move || {
        crash(&mut server);
        server
    })
    .await
    .expect("the store crashed and came back");
    let back = Instant::now();
    let mut acknowledged = 0;
    while let Some(done) = deliveries.join_next().await {
        acknowledged += usize::from(done.expect("a delivery"));
    }

    // Within SETTLE of the store's return, no task is working: each completed or asks again.
    let mut tasks = vec![Value::Null; TASKS];
    loop {
        for (i, id) in ids.iter().enumerate() {
            if let Ok(task) = attempt(c, url, "tasks/get", json!({ "taskId": id })).await {
                tasks[i] = task;
            }
        }
        let working: Vec<&Value> = tasks
            .iter()
            .filter(|t| t["status"] != "completed" && t["status"] != "input_required")
            .collect();
        if working.is_empty() {
            break;
        }
        assert!(
            back.elapsed() < SETTLE,
            "run {run}: {} tasks not settled {SETTLE:?} after the store came back: {:?}",
            working.len(),
            working
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Each has exactly its own answer, or asks its own question again and takes the answer.
    let (mut completed, mut again, mut restored) = (0, 0, 0);
    for (i, task) in tasks.iter().enumerate() {
        if task["status"] == "completed" {
            completed += 1;
            let got = &task["result"]["structuredContent"];
            assert_eq!(got["sources"], sources(run, i), "{task}");
            assert_eq!(got["topic"], topic(run, i), "{task}");
            continue;
        }
        again += 1;
        let (_, request) = only_request(task);
        let question = request["params"]["message"].as_str().unwrap_or_default();
        assert!(question.contains(&topic(run, i)), "{task}");
        // The store may have forgotten, with the first answer, the outcome of the tool that
        // took it: the engine then writes that outcome again (`task/recorded.rs`), before or
        // after this second answer, and the task completes with the first one. An answer is
        // refused only because the task has ended so.
        let answered = sources(run, i) + 500;
        let taken = answer(c, url, task, answered).await;
        let done = until(c, url, &ids[i], |t| t["status"] != "working").await;
        assert_eq!(
            done["status"], "completed",
            "{done} (second answer: {taken:?})"
        );
        let got = &done["result"]["structuredContent"]["sources"];
        if *got == sources(run, i) {
            restored += 1;
            continue;
        }
        assert!(taken.is_ok(), "answer again: {taken:?}");
        assert_eq!(*got, answered, "{done}");
    }
    eprintln!(
        "run {run}: {acknowledged} of {TASKS} answers acknowledged, {completed} tasks completed \
         with theirs, {again} asked again ({restored} of them completed with the first answer \
         after all); {:?} from first delivery to settled",
        started.elapsed()
    );
    (server, [acknowledged, completed, again])
}

async fn runs<S: Send + 'static>(store: &str, mut server: S, crash: fn(&mut S)) -> S {
    let instance = Instance::start("A", store);
    let c = client();
    let mut totals = [0; 3];
    for r in 0..RUNS {
        let (back, counts) = run(&c, &instance.url, r, server, crash).await;
        server = back;
        for (total, n) in totals.iter_mut().zip(counts) {
            *total += n;
        }
    }
    eprintln!(
        "{RUNS} runs of {TASKS}: {} answers acknowledged, {} completed with them, {} asked again",
        totals[0], totals[1], totals[2]
    );
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_while_tools_take_answers_loses_no_task() {
    let redis = RedisServer::start();
    let url = redis.url.clone();
    runs(&url, redis, |redis| {
        redis.restart_keeping_data(|| std::thread::sleep(DOWN));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_while_tools_take_answers_loses_no_task() {
    let pg = PostgresServer::start();
    let db = pg.create_database();
    runs(&db, pg, |pg| {
        pg.stop_immediate();
        std::thread::sleep(DOWN);
        pg.restart();
    })
    .await;
}

/// An outcome Redis acknowledged and then forgot is written again. After a task completed, its
/// hash is set back to what it was while the task asked (as a restart from an older snapshot
/// leaves it), and the store's feed connection is broken (as a restart breaks it): the task,
/// whose tool has returned, completes again with the answer it was given instead of asking a
/// question no tool waits for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outcome_redis_forgot_is_recorded_again() {
    let redis = RedisServer::start();
    let instance = Instance::start("A", &redis.url);
    let (c, url) = (client(), instance.url.as_str());
    let call = json!({ "name": "research", "arguments": { "topic": topic(9, 0) } });
    let created = attempt(&c, url, "tools/call", call).await.unwrap();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let asked = until(&c, url, &id, |t| t["status"] == "input_required").await;
    let key = format!("mcp-tasks:task:{id}");
    let field = |name: &str| {
        redis
            .bulk(&["HGET", &key, name])
            .unwrap_or_else(|| panic!("{key} has field {name}"))
    };
    let (record, version) = (field("r"), field("v"));

    answer(&c, url, &asked, sources(9, 0)).await.unwrap();
    until(&c, url, &id, |t| t["status"] == "completed").await;
    let reply = redis.command(&["HSET", &key, "r", &record, "v", &version]);
    assert_eq!(reply.as_deref(), Some(":0"), "the hash set back");
    let forgot = until(&c, url, &id, |t| t["status"] != "completed").await;
    assert_eq!(forgot["status"], "input_required", "{forgot}");

    let killed = redis.command(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    assert_eq!(killed.as_deref(), Some(":1"), "the store's feed connection");
    let done = until(&c, url, &id, |t| t["status"] == "completed").await;
    let got = &done["result"]["structuredContent"];
    assert_eq!(got["sources"], sources(9, 0), "{done}");
    assert_eq!(got["topic"], topic(9, 0), "{done}");
}
