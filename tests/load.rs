//! Load: 1,000 concurrent tasks, each waiting on its own input request, answered concurrently.
//! Every task must complete with its own answer (no cross-talk, none lost). Prints the time and
//! the server's peak memory.

use mcp_tasks_tests::{StdioClient, modern};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const TASKS: usize = 1000;

fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// Sends every request at once, then collects the responses by id.
async fn burst(c: &mut StdioClient, requests: Vec<(String, Value)>) -> Vec<Value> {
    let mut ids = Vec::with_capacity(requests.len());
    for (method, params) in requests {
        let id = c.id();
        c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        ids.push(id);
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in &ids {
        out.push(c.response(id).await);
    }
    out
}

/// Polls `tasks/get` for every task not yet done (in bursts) until `done` yields a value for each.
async fn poll_all<T>(
    c: &mut StdioClient,
    ids: &[String],
    deadline: Instant,
    done: impl Fn(&Value) -> Option<T>,
) -> HashMap<String, T> {
    let mut out = HashMap::new();
    while out.len() < ids.len() {
        assert!(
            Instant::now() < deadline,
            "only {} of {} tasks got there in time",
            out.len(),
            ids.len()
        );
        let pending: Vec<&String> = ids.iter().filter(|id| !out.contains_key(*id)).collect();
        let polled = burst(
            c,
            pending
                .iter()
                .map(|id| ("tasks/get".into(), modern(json!({ "taskId": id }), caps())))
                .collect(),
        )
        .await;
        for (id, r) in pending.into_iter().zip(polled) {
            if let Some(v) = done(&r["result"]) {
                out.insert(id.clone(), v);
            }
        }
    }
    out
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_waiting_for_input_all_get_their_own_answer() {
    let mut c = StdioClient::conformance();
    let start = Instant::now();
    let created = burst(
        &mut c,
        (0..TASKS)
            .map(|_| {
                (
                    "tools/call".into(),
                    modern(json!({ "name": "ask_name", "arguments": {} }), caps()),
                )
            })
            .collect(),
    )
    .await;
    let ids: Vec<String> = created
        .iter()
        .map(|r| {
            r["result"]["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("not a task: {r}"))
                .to_owned()
        })
        .collect();
    let created_in = start.elapsed();

    // Wait until every task shows its input request; remember each one's key.
    let deadline = Instant::now() + Duration::from_secs(60);
    let keys = poll_all(&mut c, &ids, deadline, |task| {
        (task["status"] == "input_required").then(|| {
            task["inputRequests"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .clone()
        })
    })
    .await;
    let waiting_in = start.elapsed();

    // Answer all at once, each with its own name.
    let acks = burst(
        &mut c,
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                let params = json!({ "taskId": id, "inputResponses": { &keys[id]: { "action": "accept", "content": { "name": format!("user-{i}") } } } });
                ("tasks/update".into(), modern(params, caps()))
            })
            .collect(),
    )
    .await;
    assert!(
        acks.iter().all(|a| a["result"]["resultType"] == "complete"),
        "every update acknowledged"
    );

    let done = poll_all(&mut c, &ids, deadline, |task| {
        assert_ne!(task["status"], "failed", "{task}");
        (task["status"] == "completed").then(|| {
            task["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
    })
    .await;
    let total = start.elapsed();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            done[id],
            format!("Hello, user-{i}!"),
            "task {i} got someone else's answer"
        );
    }
    let peak = peak_rss_kib(c.pid());
    println!(
        "load: {TASKS} tasks created in {created_in:?}, all waiting for input after {waiting_in:?}, all completed after {total:?}; server peak RSS {} KiB",
        peak.map_or("?".into(), |p| p.to_string())
    );
}
