//! The Redis task store against a real `redis-server` (installed pinned by
//! `tests/redis/install.sh`, started on a free loopback port, stopped afterwards): the whole
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

    use mcp_tasks_runtime::protocol::InputRequest;
    use mcp_tasks_runtime::protocol::task::{Owner, TaskOrigin, TaskStatus};
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
            .create(NewTask::new(alice.clone(), TaskOrigin::Modern))
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
            .create(NewTask::new(alice.clone(), TaskOrigin::Modern))
            .await
            .unwrap();
        let asked = a
            .add_input_request(&task.id, "k".into(), question(0))
            .await
            .unwrap();
        let waiter = {
            let (a, id) = (a.clone(), task.id.clone());
            tokio::spawn(async move { a.changed(&id, asked.version).await })
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
        assert_eq!(woken, report.record);
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

    /// Redis goes away under a store: operations fail with a backend error (`-32603` on the wire)
    /// within the configured timeout instead of hanging or panicking; once Redis is back the
    /// store works again by itself, and a waiter that was waiting across the gap is woken by a
    /// change made after it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unreachable_redis_gives_backend_errors_and_the_store_reconnects() {
        let mut server = RedisServer::start();
        let prefix = super::fresh_prefix();
        let (a, b) = (instance(&server.url, &prefix), instance(&server.url, &prefix));
        let alice = Owner::new("alice");
        let before = a
            .create(NewTask::new(alice.clone(), TaskOrigin::Modern))
            .await
            .unwrap();
        assert!(b.get(&before.id, &alice).await.unwrap().is_some());

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
            .create(NewTask::new(alice.clone(), TaskOrigin::Modern))
            .await
            .expect_err("Redis is down");
        assert_eq!(error.to_rpc_error().code, -32603, "{error}");

        server.restart();
        // Nothing was persisted: the old task is gone, new ones work on both instances.
        let deadline = Instant::now() + Duration::from_secs(10);
        let task = loop {
            match a
                .create(NewTask::new(alice.clone(), TaskOrigin::Modern))
                .await
            {
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
    }
}
