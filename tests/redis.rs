//! The Redis task store against a real `redis-server` (installed pinned by
//! `testkit/redis/install.sh`, started on a free loopback port, stopped afterwards): the whole
//! store contract, and example-server processes that share their tasks through one Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tasks_runtime::store::{Clock, RedisTaskStore};
use mcp_tasks_tests::redis::RedisServer;

/// A key prefix no other test of this process uses, so every store starts empty.
fn fresh_prefix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn contract_store(clock: Arc<dyn Clock>) -> RedisTaskStore {
    RedisTaskStore::builder(&RedisServer::shared().url)
        .prefix(fresh_prefix())
        .clock(clock)
        .open()
        .expect("a Redis store")
}

mod contract {
    mcp_tasks_runtime::task_store_contract_tests!(super::contract_store);
}

mod store {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use mcp_tasks_runtime::Era;
    use mcp_tasks_runtime::protocol::InputRequest;
    use mcp_tasks_runtime::protocol::task::{Owner, TaskStatus};
    use mcp_tasks_runtime::store::{NewTask, RedisTaskStore, StoreError, TaskStore};
    use mcp_tasks_tests::redis::RedisServer;
    use serde_json::{Map, json};

    fn instance(url: &str, prefix: &str) -> Arc<RedisTaskStore> {
        Arc::new(
            RedisTaskStore::builder(url)
                .prefix(prefix)
                .timeout(Duration::from_millis(500))
                .open()
                .expect("a Redis store"),
        )
    }

    fn question(i: usize) -> InputRequest {
        InputRequest::new("elicitation/create", json!({ "message": format!("q{i}") }))
    }

    /// Two instances change one task at the same time, 50 changes each: every change lands
    /// (optimistic writes retried on conflict), none is lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_instances_racing_on_one_task_lose_no_update() {
        let prefix = super::fresh_prefix();
        let url = &RedisServer::shared().url;
        let (a, b) = (instance(url, &prefix), instance(url, &prefix));
        let alice = Owner::new("alice");
        let task = a
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let mut writers = Vec::new();
        for i in 0..100 {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let id = task.id.clone();
            writers.push(tokio::spawn(async move {
                store
                    .add_input_request(&id, format!("k{i}"), question(i))
                    .await
            }));
        }
        for writer in writers {
            writer.await.unwrap().expect("every change lands");
        }
        let record = b.get(&task.id, &alice).await.unwrap().unwrap();
        assert_eq!(record.input_requests.len(), 100);
        assert_eq!(record.version, 101);
        assert_eq!(record.status, TaskStatus::InputRequired);
    }

    /// A tool waiting on instance A is woken by an answer delivered through instance B, and a
    /// cancel through B ends the wait on A with the cancelled record.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_through_one_instance_wakes_a_waiter_on_the_other() {
        let prefix = super::fresh_prefix();
        let url = &RedisServer::shared().url;
        let (a, b) = (instance(url, &prefix), instance(url, &prefix));
        let alice = Owner::new("alice");
        let task = a
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let asked = a
            .add_input_request(&task.id, "k".into(), question(0))
            .await
            .unwrap();
        let waiter = {
            let (a, id) = (a.clone(), task.id.clone());
            tokio::spawn(async move { a.changed(&id, asked).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "nothing changed yet");
        let mut answers = Map::new();
        answers.insert("k".into(), json!({ "action": "accept" }));
        let report = b
            .deliver_responses(&task.id, &alice, answers)
            .await
            .unwrap();
        assert_eq!(report.accepted, ["k"]);
        let woken = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("A's waiter is woken by B's answer")
            .unwrap()
            .unwrap();
        assert_eq!(
            (woken.version, woken.status),
            (report.version, report.status)
        );
        assert_eq!(
            a.take_response(&task.id, "k").await.unwrap(),
            Some(json!({ "action": "accept" }))
        );

        let seen = a.get_unchecked(&task.id).await.unwrap().unwrap().version;
        let waiter = {
            let (a, id) = (a.clone(), task.id.clone());
            tokio::spawn(async move { a.changed(&id, seen).await })
        };
        let cancelled = b.cancel(&task.id, &alice).await.unwrap().into_record();
        let woken = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("A's waiter is woken by B's cancel")
            .unwrap()
            .unwrap();
        assert_eq!(woken.status, TaskStatus::Cancelled);
        assert_eq!(woken, cancelled);
    }

    /// What Redis ran for one operation, by command (its own `INFO commandstats`).
    fn commands(server: &RedisServer) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = server
            .info("commandstats")
            .lines()
            .filter_map(|line| {
                let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
                (name != "info" && !name.starts_with("config"))
                    .then(|| (name.to_owned(), calls.parse().unwrap()))
            })
            .collect();
        out.sort();
        server.command(&["CONFIG", "RESETSTAT"]).unwrap();
        out
    }

    /// The round trips the docs promise: a `get` is one `HGET`; a state change is one `HGET` and
    /// one script (`EVALSHA`, whose inner commands run inside Redis); `create` is one script.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn round_trips_per_operation() {
        let server = RedisServer::start();
        let store = instance(&server.url, "rt");
        let alice = Owner::new("alice");
        // Load the scripts first (a fresh Redis answers NOSCRIPT once per script).
        let warm = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        store
            .set_status_message(&warm.id, Some("warm".into()))
            .await
            .unwrap();
        commands(&server);
        let n = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };

        let task = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let created = commands(&server);
        assert_eq!(created.iter().filter(|(c, _)| c == "evalsha").count(), 1);
        assert_eq!(
            created.iter().find(|(c, _)| c == "evalsha").unwrap().1,
            1,
            "{created:?}"
        );
        assert!(!created.iter().any(|(c, _)| c == "hget"), "{created:?}");

        store.get(&task.id, &alice).await.unwrap().unwrap();
        assert_eq!(commands(&server), n(&[("hget", 1)]), "tasks/get: one HGET");

        store
            .set_status_message(&task.id, Some("go".into()))
            .await
            .unwrap();
        // Top level: HGET (read) + EVALSHA (write); inside the script: HGET v, HSET, PUBLISH.
        assert_eq!(
            commands(&server),
            n(&[("evalsha", 1), ("hget", 2), ("hset", 1), ("publish", 1)]),
            "a state change: HGET + one script"
        );
    }

    /// Redis goes away under a store: operations fail with a backend error (`-32603` on the wire)
    /// within the configured timeout instead of hanging or panicking; once Redis is back the
    /// store works again by itself, and a waiter that was waiting across the gap is woken by a
    /// change made after it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unreachable_redis_gives_backend_errors_and_the_store_reconnects() {
        let mut server = RedisServer::start();
        let prefix = super::fresh_prefix();
        let (a, b) = (
            instance(&server.url, &prefix),
            instance(&server.url, &prefix),
        );
        let alice = Owner::new("alice");
        let before = a
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        assert!(b.get(&before.id, &alice).await.unwrap().is_some());
        // A waiter across the gap: the change feed's reconnect must wake it to re-read.
        let across = {
            let (b, id) = (b.clone(), before.id.clone());
            tokio::spawn(async move { b.changed(&id, 1).await })
        };
        // Time for the waiter to read its task and start waiting, on a loaded machine.
        tokio::time::sleep(Duration::from_millis(500)).await;

        server.kill();
        let started = Instant::now();
        let error = a.get(&before.id, &alice).await.expect_err("Redis is down");
        assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
        assert_eq!(error.to_rpc_error().code, -32603);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "failing took {:?}",
            started.elapsed()
        );
        let error = b
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .expect_err("Redis is down");
        assert_eq!(error.to_rpc_error().code, -32603, "{error}");

        server.restart();
        // Nothing was persisted: the old task is gone, new ones work on both instances.
        let deadline = Instant::now() + Duration::from_secs(10);
        let task = loop {
            match a.create(NewTask::new(alice.clone(), Era::Modern)).await {
                Ok(task) => break task,
                Err(e) => {
                    assert!(Instant::now() < deadline, "the store never came back: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let waiter = {
            let (a, id) = (a.clone(), task.id.clone());
            tokio::spawn(async move { a.changed(&id, 1).await })
        };
        // B's change feed may still be reconnecting: retry its write until it lands.
        let deadline = Instant::now() + Duration::from_secs(10);
        let changed = loop {
            match b.set_status_message(&task.id, Some("back".into())).await {
                Ok(record) => break record,
                Err(e) => {
                    assert!(Instant::now() < deadline, "B never came back: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let woken = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the waiter on A is woken after the reconnect")
            .unwrap()
            .unwrap();
        assert_eq!(woken.version, changed.version);
        assert_eq!(a.get(&before.id, &alice).await.unwrap(), None);
        // The waiter from before the gap re-read its task after the reconnect: gone with the
        // unpersisted Redis.
        let across = tokio::time::timeout(Duration::from_secs(10), across)
            .await
            .expect("the waiter across the gap is woken after the reconnect")
            .unwrap();
        assert!(matches!(across, Err(StoreError::NotFound)), "{across:?}");
    }
}

/// Example-server processes over HTTP sharing one Redis.
mod instances {
    pub use mcp_tasks_tests::instances::*;
    use mcp_tasks_tests::redis::RedisServer;

    pub fn redis() -> RedisServer {
        RedisServer::start()
    }
}

/// Modern era: a task created through A is read, answered and cancelled through B; the tool on A
/// gets the answer (it goes on to its next question) and the cancellation (A's engine stops it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_task_created_on_a_is_answered_and_cancelled_through_b() {
    use instances::*;
    use serde_json::json;
    let redis = redis();
    let a = Instance::start("A", &redis.url);
    let b = Instance::start("B", &redis.url);
    let c = client();

    let created = result(
        &c,
        &a.url,
        "tools/call",
        json!({ "name": "research", "arguments": { "topic": "tides" } }),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();

    // B sees A's task, waiting on the user.
    let asked = poll(&c, &b.url, &id, |t| t["status"] == "input_required").await;
    assert_eq!(asked["statusMessage"], "planning");
    let (key, request) = only_request(&asked);
    assert_eq!(request["method"], "elicitation/create");

    // Answered through B: the tool on A takes the answer and asks its next question.
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

    // Cancelled through B: A's engine sees it and stops the tool.
    let ack = modern(&c, &b.url, "tasks/cancel", json!({ "taskId": id })).await;
    assert!(ack.get("result").is_some(), "{ack}");
    a.wait_for_log(&[&id, "stopping the tool", "cancelled"])
        .await;
    assert!(!b.logged("stopping the tool"), "B runs no tool");
    let seen = poll(&c, &a.url, &id, |t| t["status"] == "cancelled").await;
    assert_eq!(seen["statusMessage"], "The task was cancelled by request.");
}

/// Legacy era across instances. A legacy task belongs to the session that created it, and a
/// session lives in the process that opened it (a load balancer keeps a legacy session on one
/// instance by its `Mcp-Session-Id`; its input requests travel on that session). So what is
/// shared is the store: the task lives in Redis, owned by the session; another instance neither
/// knows the session nor lets a session of the same principal see the task; and the session's
/// own cancel reaches the tool through the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_tasks_live_in_redis_owned_by_their_session() {
    use instances::*;
    use mcp_tasks_runtime::protocol::task::{TaskId, TaskStatus};
    use mcp_tasks_runtime::store::{RedisTaskStore, TaskStore};
    use serde_json::json;
    let redis = redis();
    let a = Instance::start("A", &redis.url);
    let b = Instance::start("B", &redis.url);
    let c = client();
    let mut on_a = Session::open(&c, &a.url).await;
    let mut on_b = Session::open(&c, &b.url).await;

    let created = on_a
        .result(&c, "tools/call", json!({ "name": "countdown", "arguments": { "seconds": 30 }, "task": { "ttl": 60000 } }))
        .await;
    let id = created["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();

    let shared = RedisTaskStore::connect(&redis.url).await.unwrap();
    let stored = shared
        .get_unchecked(&TaskId::new(&id))
        .await
        .unwrap()
        .expect("the task is in Redis");
    assert_eq!(stored.owner.as_str(), format!("session:{}", on_a.id));

    // Another session (same principal, on B) cannot see or cancel it.
    let listed = on_b.result(&c, "tasks/list", json!({})).await;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    let foreign = on_b.request(&c, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let foreign = on_b
        .request(&c, "tasks/cancel", json!({ "taskId": id }))
        .await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    // B does not know A's session.
    let unknown = c
        .post(&b.url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &on_a.id)
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            json!({ "jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": { "taskId": id } })
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), reqwest::StatusCode::NOT_FOUND);

    // The owning session cancels; A's engine hears it from Redis and stops the tool.
    let cancelled = on_a
        .result(&c, "tasks/cancel", json!({ "taskId": id }))
        .await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    a.wait_for_log(&[&id, "stopping the tool", "cancelled"])
        .await;
    let stored = shared
        .get_unchecked(&TaskId::new(&id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, TaskStatus::Cancelled);
}

/// Redis goes away under two running servers: requests during the gap get a JSON-RPC `-32603`
/// (not a hang, not a dropped connection), the servers keep running, and once Redis is back
/// (empty: it persists nothing here) they serve tasks again by themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restarted_under_running_servers() {
    use instances::*;
    use serde_json::json;
    use std::time::{Duration, Instant};
    let mut redis = redis();
    let mut a = Instance::start("A", &redis.url);
    let mut b = Instance::start("B", &redis.url);
    let c = client();
    let research = json!({ "name": "research", "arguments": { "topic": "tides" } });
    let before = result(&c, &a.url, "tools/call", research.clone()).await;
    let before = before["taskId"].as_str().unwrap().to_owned();
    poll(&c, &b.url, &before, |t| t["status"] == "input_required").await;

    redis.kill();
    for (instance, method, params) in [
        (&a, "tasks/get", json!({ "taskId": before })),
        (&b, "tasks/get", json!({ "taskId": before })),
        (&b, "tools/call", research.clone()),
        (
            &a,
            "tasks/update",
            json!({ "taskId": before, "inputResponses": { "x": {} } }),
        ),
        (&b, "tasks/cancel", json!({ "taskId": before })),
    ] {
        let started = Instant::now();
        let reply = modern(&c, &instance.url, method, params).await;
        assert_eq!(
            reply["error"]["code"], -32603,
            "{method} during the gap: {reply}"
        );
        assert!(
            reply["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Redis")),
            "the message names the cause: {reply}"
        );
        eprintln!("{method} during the gap: {:?}", started.elapsed());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{method} took {:?}",
            started.elapsed()
        );
    }

    redis.restart();
    let restarted = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(15);
    let after = loop {
        let reply = modern(&c, &b.url, "tools/call", research.clone()).await;
        if let Some(id) = reply["result"]["taskId"].as_str() {
            eprintln!("B serves again {:?} after the restart", restarted.elapsed());
            break id.to_owned();
        }
        eprintln!("{:?}: {reply}", restarted.elapsed());
        assert!(Instant::now() < deadline, "B never came back: {reply}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The new task is served by both instances, and runs to its first question.
    let asked = poll(&c, &a.url, &after, |t| t["status"] == "input_required").await;
    eprintln!("asked {:?} after the restart", restarted.elapsed());
    let (key, _) = only_request(&asked);
    result(&c, &a.url, "tasks/update", json!({ "taskId": after, "inputResponses": { &key: { "action": "accept", "content": { "sources": 2 } } } })).await;
    let sampling = poll(&c, &b.url, &after, |t| {
        t["inputRequests"]
            .as_object()
            .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
    })
    .await;
    assert_eq!(sampling["statusMessage"], "reading 2 sources");
    // The old task went with the unpersisted Redis: unknown now, on both.
    let gone = modern(&c, &a.url, "tasks/get", json!({ "taskId": before })).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert!(a.alive() && b.alive(), "both servers are still running");
    assert!(!a.logged("panicked") && !b.logged("panicked"));
}

/// Load: two instances, 500 tasks created through each, all waiting on input at once, every
/// question answered through the other instance (an elicitation, then a sampling request, each
/// with an answer unique to the task). Every task completes with exactly its own answers: none
/// lost, none crossed; an answer sent again after it was taken changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_500_waiting_tasks_each_answered_through_the_other() {
    use instances::*;
    use serde_json::{Value, json};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tokio::sync::Semaphore;
    use tokio::task::JoinSet;

    const PER_INSTANCE: usize = 500;
    const CONCURRENCY: usize = 64;
    let redis = redis();
    let a = Instance::start("A", &redis.url);
    let b = Instance::start("B", &redis.url);
    let urls = [a.url.clone(), b.url.clone()];
    let c = client();
    let gate = Arc::new(Semaphore::new(CONCURRENCY));
    let started = Instant::now();

    /// Runs `job(i)` for every task index, at most CONCURRENCY at a time; results in order.
    async fn each<T: Send + 'static, F>(
        gate: &Arc<Semaphore>,
        n: usize,
        job: impl Fn(usize) -> F,
    ) -> Vec<T>
    where
        F: Future<Output = T> + Send + 'static,
    {
        let mut set = JoinSet::new();
        for i in 0..n {
            let permit = gate.clone().acquire_owned();
            let fut = job(i);
            set.spawn(async move {
                let _permit = permit.await.unwrap();
                (i, fut.await)
            });
        }
        let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
        while let Some(done) = set.join_next().await {
            let (i, value) = done.unwrap();
            out[i] = Some(value);
        }
        out.into_iter().map(Option::unwrap).collect()
    }

    // Task i is created through instance i % 2 and answered through the other one.
    let total = 2 * PER_INSTANCE;
    let ids: Vec<String> = each(&gate, total, |i| {
        let (c, url) = (c.clone(), urls[i % 2].clone());
        async move {
            let created = result(
                &c,
                &url,
                "tools/call",
                json!({ "name": "research", "arguments": { "topic": format!("topic-{i}") } }),
            )
            .await;
            created["taskId"].as_str().unwrap().to_owned()
        }
    })
    .await;
    let ids = Arc::new(ids);
    eprintln!("{total} tasks created in {:?}", started.elapsed());

    // Wait (through the other instance) until every task asks `method`; returns the keys.
    let wait_all = |method: &'static str| {
        let (c, ids, urls) = (c.clone(), ids.clone(), urls.clone());
        each(&gate, total, move |i| {
            let (c, id, url) = (c.clone(), ids[i].clone(), urls[(i + 1) % 2].clone());
            async move {
                let task = poll(&c, &url, &id, |t| {
                    t["inputRequests"]
                        .as_object()
                        .is_some_and(|r| r.values().any(|v| v["method"] == method))
                })
                .await;
                assert_eq!(task["status"], "input_required");
                only_request(&task).0
            }
        })
    };
    let answer_all = |keys: Vec<String>, answer: fn(usize) -> Value| {
        let (c, ids, urls) = (c.clone(), ids.clone(), urls.clone());
        let keys = Arc::new(keys);
        each(&gate, total, move |i| {
            let (c, id, url) = (c.clone(), ids[i].clone(), urls[(i + 1) % 2].clone());
            let key = keys[i].clone();
            async move {
                result(
                    &c,
                    &url,
                    "tasks/update",
                    json!({ "taskId": id, "inputResponses": { key: answer(i) } }),
                )
                .await;
            }
        })
    };

    let asked = wait_all("elicitation/create").await;
    eprintln!(
        "all {total} waiting on the user after {:?}",
        started.elapsed()
    );
    // Every task is waiting on input at this moment: check them all at once, through the other
    // instance.
    let waiting: Vec<Value> = each(&gate, total, |i| {
        let (c, id, url) = (c.clone(), ids[i].clone(), urls[(i + 1) % 2].clone());
        async move { result(&c, &url, "tasks/get", json!({ "taskId": id })).await }
    })
    .await;
    assert!(waiting.iter().all(|t| t["status"] == "input_required"));
    answer_all(
        asked.clone(),
        |i| json!({ "action": "accept", "content": { "sources": i } }),
    )
    .await;

    let sampled = wait_all("sampling/createMessage").await;
    eprintln!(
        "all {total} waiting on the model after {:?}",
        started.elapsed()
    );
    // The first answers again: already taken, so ignored.
    answer_all(
        asked,
        |_| json!({ "action": "accept", "content": { "sources": 99999 } }),
    )
    .await;
    answer_all(sampled, |i| json!({ "role": "assistant", "model": "m", "content": { "type": "text", "text": format!("summary-{i}") } })).await;

    let done: Vec<Value> = each(&gate, total, |i| {
        let (c, id, url) = (c.clone(), ids[i].clone(), urls[i % 2].clone());
        async move {
            poll(&c, &url, &id, |t| {
                t["status"] != "working" && t["status"] != "input_required"
            })
            .await
        }
    })
    .await;
    for (i, task) in done.iter().enumerate() {
        assert_eq!(task["status"], "completed", "task {i}: {task}");
        assert_eq!(
            task["result"]["structuredContent"],
            json!({ "topic": format!("topic-{i}"), "sources": i, "summary": format!("summary-{i}") }),
            "task {i} got exactly its own answers"
        );
    }
    eprintln!("all {total} completed after {:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(120));
}

/// Instance A is killed with SIGKILL while running two tasks (one waiting on the user, one
/// working). B fails both with "the server running this task stopped" within A's lease plus one
/// sweep round (lease 1 s here via `--lease-ms`; the round is a third of the lease), while B's
/// own task runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_task_has_its_tasks_failed_within_the_lease() {
    use instances::*;
    use mcp_tasks_runtime::store::TaskRecord;
    use serde_json::json;
    use std::time::{Duration, Instant};
    const LEASE: Duration = Duration::from_millis(1000);
    let lease_ms = LEASE.as_millis().to_string();
    let redis = redis();
    let mut a = Instance::start_with("A", &redis.url, &["--lease-ms", &lease_ms]);
    let b = Instance::start_with("B", &redis.url, &["--lease-ms", &lease_ms]);
    let c = client();
    let start = |url: String, tool: &'static str, args| {
        let c = c.clone();
        async move {
            let created = result(
                &c,
                &url,
                "tools/call",
                json!({ "name": tool, "arguments": args }),
            )
            .await;
            created["taskId"].as_str().unwrap().to_owned()
        }
    };
    let asking = start(a.url.clone(), "research", json!({ "topic": "tides" })).await;
    let working = start(a.url.clone(), "countdown", json!({ "seconds": 60 })).await;
    let on_b = start(b.url.clone(), "countdown", json!({ "seconds": 60 })).await;
    poll(&c, &b.url, &asking, |t| t["status"] == "input_required").await;
    for id in [&working, &on_b] {
        poll(&c, &b.url, id, |t| {
            t["statusMessage"]
                .as_str()
                .is_some_and(|m| m.ends_with("s left"))
        })
        .await;
    }

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
    // Documented bound: lease + one sweep round (lease / 3); 2 s of slack for polling and a
    // loaded CI machine (two debug servers and the store on 2 cores).
    assert!(
        took <= LEASE + LEASE / 3 + Duration::from_secs(2),
        "took {took:?}"
    );
    let still = result(&c, &b.url, "tasks/get", json!({ "taskId": on_b })).await;
    assert_eq!(still["status"], "working", "B's own task runs on: {still}");
}

/// SIGTERM to an instance running tasks: before it exits it settles them in Redis (failed, "the
/// server running this task stopped"), so another instance reports them ended at once, long
/// before any lease would lapse; nothing is left `working`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_instance_leaves_no_task_working_in_redis() {
    use instances::*;
    use mcp_tasks_runtime::store::TaskRecord;
    use serde_json::json;
    let redis = redis();
    // A lease far longer than the test: only the shutdown itself can end these tasks in time.
    let mut a = Instance::start_with("A", &redis.url, &["--lease-ms", "600000"]);
    let b = Instance::start("B", &redis.url);
    let c = client();
    let mut ids = Vec::new();
    for (tool, args) in [
        ("research", json!({ "topic": "tides" })),
        ("countdown", json!({ "seconds": 60 })),
    ] {
        let created = result(
            &c,
            &a.url,
            "tools/call",
            json!({ "name": tool, "arguments": args }),
        )
        .await;
        ids.push(created["taskId"].as_str().unwrap().to_owned());
    }
    poll(&c, &b.url, &ids[0], |t| t["status"] == "input_required").await;
    // No idle keep-alive connection to wait for at shutdown.
    drop(c);
    let c = client();
    let started = std::time::Instant::now();
    let status = a.terminate();
    eprintln!("A stopped {:?} after SIGTERM", started.elapsed());
    assert!(status.success(), "A exits cleanly: {status}");
    for id in &ids {
        let task = result(&c, &b.url, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(task["status"], "failed", "{task}");
        assert_eq!(task["statusMessage"], TaskRecord::RUNNER_STOPPED_MESSAGE);
    }
}

/// A task whose tool ends while Redis is down: the engine keeps the result and records it once
/// Redis is back (retrying with backoff), instead of logging the failure and leaving the task
/// `working` with its answer lost.
mod outage {
    use mcp_tasks_runtime::server::InMemoryConnection;
    use mcp_tasks_runtime::store::RedisTaskStore;
    use mcp_tasks_runtime::{Server, tool};
    use mcp_tasks_tests::in_memory_request;
    use mcp_tasks_tests::redis::RedisServer;
    use serde_json::{Value, json};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    static GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

    /// Ends when the test opens the gate.
    #[tool(task_support = "required")]
    async fn gated() -> String {
        GATE.notified().await;
        "made it through the outage".into()
    }

    async fn call(c: &mut InMemoryConnection, id: u64, method: &str, params: Value) -> Value {
        let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
        in_memory_request(c, id, method, params, caps).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_result_that_comes_while_redis_is_down_is_recorded_once_it_is_back() {
        let mut redis = RedisServer::start();
        let store = RedisTaskStore::builder(&redis.url)
            .prefix(super::fresh_prefix())
            .timeout(Duration::from_millis(300))
            .open()
            .expect("a Redis store");
        let server = Server::builder("outage", "1.0.0")
            .store(Arc::new(store))
            .tool::<gated>()
            .build()
            .expect("set up");
        let mut c = server.connect_in_memory();
        let created = call(&mut c, 1, "tools/call", json!({ "name": "gated" })).await;
        let id = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{created}"))
            .to_owned();

        // Redis goes down with the task stored as working; the tool ends during the outage, and
        // the first attempts to record its result fail.
        redis.restart_keeping_data(|| {
            GATE.notify_one();
            std::thread::sleep(Duration::from_millis(1500));
        });

        // Back: the result is recorded without anyone asking again.
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut n = 2;
        let done = loop {
            let reply = call(&mut c, n, "tasks/get", json!({ "taskId": id })).await;
            n += 1;
            if reply["result"]["status"] == "completed" {
                break reply;
            }
            assert!(
                Instant::now() < deadline,
                "the result was not recorded after Redis came back: {reply}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "made it through the outage",
            "{done}"
        );
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        name: String,
    }

    static SECOND_GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();
    static AT_GATE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Asks for a first name, waits for the test's gate, says so in its status and asks for a
    /// last name: store calls of its own (status, input request, waiting, taking the answer).
    #[tool(task_support = "required")]
    async fn two_names(
        ctx: mcp_tasks_runtime::ToolContext,
    ) -> Result<String, mcp_tasks_runtime::ToolError> {
        use mcp_tasks_runtime::{ElicitOutcome, ToolError};
        let ElicitOutcome::Accept(Name { name: first }) = ctx.elicit::<Name>("First name?").await?
        else {
            return Err(ToolError::new("no first name"));
        };
        let gate = SECOND_GATE.notified();
        AT_GATE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        gate.await;
        ctx.status("asking for the last name");
        let ElicitOutcome::Accept(Name { name: last }) = ctx.elicit::<Name>("Last name?").await?
        else {
            return Err(ToolError::new("no last name"));
        };
        Ok(format!("Hello, {first} {last}!"))
    }

    /// Issue 29's short outage: tools that go on while Redis restarts (3 s, data kept). 300
    /// tasks' tools, answered once, pass a gate the test opens right after Redis went down, so
    /// each says its status, asks its second question and waits for the answer while the store
    /// cannot be reached. Their store calls ride the outage out (`ServerConfig::store_patience`):
    /// after the restart every task asks its second question, and completes with both answers;
    /// none ends with the store's error.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tools_asking_while_redis_restarts_ride_it_out() {
        let caps =
            json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
        let mut redis = RedisServer::start();
        let store = RedisTaskStore::builder(&redis.url)
            .prefix(super::fresh_prefix())
            .timeout(Duration::from_millis(300))
            .open()
            .expect("a Redis store");
        let server = Server::builder("outage", "1.0.0")
            .store(Arc::new(store))
            .tool::<two_names>()
            .build()
            .expect("set up");
        let mut c = server.connect_in_memory();
        let mut n = 0;
        let mut request = async |c: &mut InMemoryConnection, method: &str, params: Value| {
            n += 1;
            in_memory_request(c, n, method, params, caps.clone()).await
        };
        /// Polls until the task asks `question`, or fails the test; `None` if it ended first.
        async fn asked(
            request: &mut impl AsyncFnMut(&mut InMemoryConnection, &str, Value) -> Value,
            c: &mut InMemoryConnection,
            id: &str,
            question: &str,
        ) -> String {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let task = request(c, "tasks/get", json!({ "taskId": id })).await;
                let asking = task["result"]["inputRequests"].as_object().and_then(|r| {
                    r.iter()
                        .find(|(_, v)| v["params"]["message"] == question)
                        .map(|(k, _)| k.clone())
                });
                if let Some(key) = asking {
                    return key;
                }
                let status = &task["result"]["status"];
                assert!(
                    status == "working"
                        || status == "input_required"
                        || task.get("error").is_some(),
                    "the task ended before asking {question:?}: {task}"
                );
                assert!(
                    Instant::now() < deadline,
                    "never asked {question:?}: {task}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let answer = |id: &str, key: &str, name: &str| json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "name": name } } } });
        let mut ids = Vec::new();
        for _ in 0..300 {
            let created = request(&mut c, "tools/call", json!({ "name": "two_names" })).await;
            let id = created["result"]["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("{created}"))
                .to_owned();
            ids.push(id);
        }
        for (i, id) in ids.iter().enumerate() {
            let key = asked(&mut request, &mut c, id, "First name?").await;
            let done = request(&mut c, "tasks/update", answer(id, &key, &format!("Ada{i}"))).await;
            assert!(done.get("result").is_some(), "{done}");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while AT_GATE.load(std::sync::atomic::Ordering::SeqCst) < ids.len() {
            assert!(
                Instant::now() < deadline,
                "the tools never reached the gate"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        redis.restart_keeping_data(|| {
            SECOND_GATE.notify_waiters();
            std::thread::sleep(Duration::from_secs(3));
        });
        for (i, id) in ids.iter().enumerate() {
            let key = asked(&mut request, &mut c, id, "Last name?").await;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let done = request(
                    &mut c,
                    "tasks/update",
                    answer(id, &key, &format!("Lovelace{i}")),
                )
                .await;
                if done.get("result").is_some() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "tasks/update never went through: {done}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        for (i, id) in ids.iter().enumerate() {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let task = request(&mut c, "tasks/get", json!({ "taskId": id })).await;
                if task["result"]["status"] == "completed" {
                    assert_eq!(
                        task["result"]["result"]["content"][0]["text"],
                        format!("Hello, Ada{i} Lovelace{i}!"),
                        "{task}"
                    );
                    break;
                }
                assert_ne!(task["result"]["status"], "failed", "{task}");
                assert!(
                    Instant::now() < deadline,
                    "task {i} never completed: {task}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Over stdio the tasks belong to the server's anonymous owner, not to the process: two
/// `example_server --store REDIS` processes over real pipes, each with its own client, share
/// tasks. A `research` task created through A is read through B, both its questions (the
/// elicitation, then the sampling request) are answered through B, A's tool finishes it, and B
/// reads the result; a `countdown` task created through A is cancelled through B and A's tool
/// stops. A legacy (2025-11-25) client on B reads the modern client's task as well: over stdio
/// no session owns a task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stdio_servers_on_one_redis_serve_each_others_tasks() {
    use mcp_tasks_tests::{StdioClient, example_bin, modern, poll_modern};
    use serde_json::{Value, json};
    let redis = RedisServer::start();
    let args = ["--store", redis.url.as_str()];
    // A logs when its engine stops a tool (at debug).
    let filter = "info,mcp_tasks_runtime::task=debug";
    let mut a = StdioClient::spawn_logging(&example_bin("example_server"), &args, filter);
    let mut b = StdioClient::spawn_logging(&example_bin("example_server"), &args, filter);
    let caps = json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let only_request = |task: &Value| {
        let requests = task["inputRequests"].as_object().expect("inputRequests");
        assert_eq!(requests.len(), 1, "{task}");
        let (key, request) = requests.iter().next().unwrap();
        (key.clone(), request.clone())
    };

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

    // A legacy client on B reads it too: the stdio client, not a session, owns it.
    let mut legacy = StdioClient::spawn_with(&example_bin("example_server"), &args);
    legacy.initialize(json!({ "elicitation": {} })).await;
    let seen = legacy.result("tasks/get", json!({ "taskId": id })).await;
    assert_eq!(seen["status"], "completed", "{seen}");

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

/// Issue 29's outage longer than the lease, with every instance alive: two example servers with
/// a 1 s lease on one Redis, each running tasks; Redis is down for 3 s (data kept), so every
/// lease lapses while nobody can renew. When Redis is back, each sweeper first gives every lease
/// a full period (renewing its own), so no live instance's task is failed as stopped; an
/// instance that then dies (SIGKILL) has its tasks failed within two lease periods, and the
/// survivor's go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_longer_than_the_lease_fails_no_live_instances_tasks() {
    use instances::*;
    use serde_json::json;
    use std::time::{Duration, Instant};
    let mut redis = RedisServer::start();
    let lease = ["--lease-ms", "1000"];
    let a = Instance::start_with("A", &redis.url, &lease);
    let mut b = Instance::start_with("B", &redis.url, &lease);
    let c = client();
    let countdown = json!({ "name": "countdown", "arguments": { "seconds": 600 } });
    let mut tasks = Vec::new();
    for (name, url) in [("A", &a.url), ("B", &b.url), ("A", &a.url), ("B", &b.url)] {
        let created = result(&c, url, "tools/call", countdown.clone()).await;
        let id = created["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        tasks.push((name, id));
    }

    redis.restart_keeping_data(|| std::thread::sleep(Duration::from_secs(3)));
    a.wait_for_log(&["the task store answers again"]).await;
    b.wait_for_log(&["the task store answers again"]).await;
    // Well past the lease, and past a sweep, after the return.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for (name, id) in &tasks {
        let task = result(&c, &a.url, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(
            task["status"], "working",
            "{name}'s task after the outage: {task}"
        );
    }

    b.kill();
    let deadline = Instant::now() + Duration::from_secs(10);
    for (name, id) in &tasks {
        if *name != "B" {
            continue;
        }
        loop {
            let task = result(&c, &a.url, "tasks/get", json!({ "taskId": id })).await;
            if task["status"] == "failed" {
                assert_eq!(
                    task["statusMessage"],
                    "the server running this task stopped before the task finished"
                );
                break;
            }
            assert!(Instant::now() < deadline, "B's task never failed: {task}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for (name, id) in &tasks {
        if *name == "A" {
            let task = result(&c, &a.url, "tasks/get", json!({ "taskId": id })).await;
            assert_eq!(task["status"], "working", "A's task: {task}");
        }
    }
}

#[path = "support/stdio_kill.rs"]
mod stdio_kill;

/// Two stdio processes on one Redis: the one killed with SIGKILL and started again has its
/// running task failed within its lease plus a sweep round, as over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stdio_servers_task_fails_within_its_lease() {
    let redis = RedisServer::start();
    stdio_kill::a_killed_stdio_server_s_task_fails_within_its_lease(&redis.url).await;
}
