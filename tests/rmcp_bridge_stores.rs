//! The rmcp bridge behind every task store: `rmcp_bridge_server --store ...` over rmcp's
//! Streamable HTTP, on the in-memory store, a SQLite file, a real `redis-server` and a real
//! PostgreSQL 15 (`testkit/`), each running `research` to completion through its two questions
//! and cancelling a `countdown` task.
//!
//! On Redis and Postgres two server processes share the store: a task created on one is read,
//! answered and cancelled through the other, so the tasks can only be where the store keeps them.
//! On SQLite (one process per file) the server is restarted on the same file and still knows both
//! tasks.

use mcp_tasks_tests::instances::*;
use mcp_tasks_tests::postgres::PostgresServer;
use mcp_tasks_tests::redis::RedisServer;
use serde_json::{Value, json};

const BIN: &str = "rmcp_bridge_server";
const SUMMARY: &str = "Tides follow the moon.";

/// `rmcp_bridge_server --http 127.0.0.1:0 --store STORE --token ...=alice`.
fn bridge(name: &str, store: &str) -> Instance {
    Instance::start_bin(BIN, name, store, &[])
}

/// A task started through `url`'s `tools/call`; its id.
async fn start_task(c: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> String {
    let call = json!({ "name": tool, "arguments": arguments });
    let created = result(c, url, "tools/call", call).await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().expect("a task id").to_owned()
}

/// Answers the one outstanding question of task `id` through `url` once it is of `method`.
async fn answer(c: &reqwest::Client, url: &str, id: &str, method: &str, response: Value) {
    let asked = poll(c, url, id, |t| {
        (t["inputRequests"].as_object()).is_some_and(|r| r.values().any(|q| q["method"] == method))
    })
    .await;
    assert_eq!(asked["status"], "input_required", "{asked}");
    let (key, _) = only_request(&asked);
    let update = json!({ "taskId": id, "inputResponses": { key: response } });
    result(c, url, "tasks/update", update).await;
}

/// `research` created on `a`, its elicitation and sampling answered through `b`, its result read
/// on `a`; a `countdown` created on `b` and cancelled through `a`, where `b`'s engine, which runs
/// the tool, stops it. (`a` and `b` may be one server.) The two task ids.
async fn research_and_cancelled_countdown(a: &Instance, b: &Instance) -> (String, String) {
    let c = client();
    let research = start_task(&c, &a.url, "research", json!({ "topic": "tides" })).await;
    let sources = json!({ "action": "accept", "content": { "sources": 3 } });
    answer(&c, &b.url, &research, "elicitation/create", sources).await;
    let sampled = json!({ "model": "m", "role": "assistant", "content": { "type": "text", "text": SUMMARY } });
    answer(&c, &b.url, &research, "sampling/createMessage", sampled).await;
    let done = poll(&c, &a.url, &research, |t| {
        t["status"] != "input_required" && t["status"] != "working"
    })
    .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"],
        json!({ "topic": "tides", "sources": 3, "summary": SUMMARY }),
        "{done}"
    );

    let countdown = start_task(&c, &b.url, "countdown", json!({ "seconds": 30 })).await;
    poll(&c, &a.url, &countdown, |t| {
        t["statusMessage"]
            .as_str()
            .is_some_and(|m| m.ends_with("s left"))
    })
    .await;
    let ack = modern(&c, &a.url, "tasks/cancel", json!({ "taskId": countdown })).await;
    assert!(ack.get("result").is_some(), "{ack}");
    b.wait_for_log(&[&countdown, "the tool stopped"]).await;
    let ended = poll(&c, &b.url, &countdown, |t| t["status"] != "working").await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    (research, countdown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_on_the_memory_store() {
    let a = bridge("memory", "memory");
    research_and_cancelled_countdown(&a, &a).await;
}

/// SQLite: one server on the file, then another on the same file after it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("rmcp-bridge-stores-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    let mut a = bridge("sqlite-A", &store);
    let (research, countdown) = research_and_cancelled_countdown(&a, &a).await;
    a.terminate();
    let again = bridge("sqlite-A2", &store);
    let c = client();
    let done = result(&c, &again.url, "tasks/get", json!({ "taskId": research })).await;
    assert_eq!(
        done["result"]["structuredContent"]["summary"], SUMMARY,
        "{done}"
    );
    let ended = result(&c, &again.url, "tasks/get", json!({ "taskId": countdown })).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    drop(again);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Redis: two servers on one real `redis-server`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_on_redis_shared_by_two_servers() {
    let redis = RedisServer::start();
    let a = bridge("redis-A", &redis.url);
    let b = bridge("redis-B", &redis.url);
    research_and_cancelled_countdown(&a, &b).await;
}

/// Postgres: two servers on one database of a real PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_on_postgres_shared_by_two_servers() {
    let db = PostgresServer::shared().create_database();
    let a = bridge("postgres-A", &db);
    let b = bridge("postgres-B", &db);
    research_and_cancelled_countdown(&a, &b).await;
}
