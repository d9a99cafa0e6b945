//! The memory store's tests: the contract, then its own rules.

use super::*;
use crate::protocol::Era;
use crate::protocol::task::TaskOutcome;
use crate::store::ManualClock;
use crate::store::TaskStore;
use std::time::Instant;

crate::task_store_contract_tests!(MemoryTaskStore::with_clock);

#[tokio::test]
async fn fast_paths_agree_with_the_generic_paths() {
    assert!(MemoryTaskStore::new().fast_paths().is_some());
    crate::store::fast::checks::all(|| Arc::new(MemoryTaskStore::new())).await;
}

#[tokio::test]
async fn a_stored_result_is_read_back_exactly_however_deep() {
    let store = MemoryTaskStore::new();
    let alice = Owner::new("alice");
    let mut deep = serde_json::json!("bottom");
    for _ in 0..200 {
        deep = serde_json::json!([deep]);
    }
    let results = [
        serde_json::json!({"content": [{"type": "text", "text": "é\u{0}\"x"}], "isError": false,
            "structuredContent": {"big": u64::MAX, "neg": i64::MIN, "f": 0.1, "z": -0.0, "n": null}}),
        deep,
    ];
    for result in results {
        let task = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        let finished = store
            .finish(&task.id, TaskOutcome::Result(result.clone()))
            .await
            .unwrap();
        let want = Some(TaskOutcome::Result(result));
        assert_eq!(finished.outcome, want);
        let read = store.get(&task.id, &alice).await.unwrap().unwrap();
        assert_eq!(read.outcome, want);
        // A change to an ended task (none here) still sees the whole record.
        let again = store.cancel(&task.id, &alice).await.unwrap();
        assert_eq!(again.record().outcome, want);
        let listed = store.list(&alice, None, 100).await.unwrap();
        assert!(
            listed
                .tasks
                .iter()
                .any(|t| t.id == task.id && t.outcome == want)
        );
    }
}

#[tokio::test]
async fn a_listed_task_removed_before_its_record_is_read_is_skipped() {
    let clock = ManualClock::new();
    let store = MemoryTaskStore::with_clock(Arc::new(clock.clone()));
    let alice = Owner::new("alice");
    let new = || NewTask::new(alice.clone(), Era::Modern).ttl(Some(Duration::from_secs(1)));
    let first = store.create(new()).await.unwrap();
    store.create(new()).await.unwrap();
    // Simulate the race: the record disappears while the index still names it.
    store
        .stripe(&store.tasks, &first.id)
        .tasks
        .remove(&first.id);
    let page = store.list(&alice, None, 10).await.unwrap();
    assert_eq!(page.tasks.len(), 1);
    assert_ne!(page.tasks[0].id, first.id);
}

#[tokio::test]
async fn the_wake_up_channel_exists_only_while_someone_waits() {
    let store = Arc::new(MemoryTaskStore::new());
    let alice = Owner::new("alice");
    let task = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let has_channel = |store: &MemoryTaskStore| {
        store.stripe(&store.tasks, &task.id).tasks[&task.id]
            .waiters
            .is_some()
    };
    assert!(!has_channel(&store));
    let waiter = {
        let (store, id) = (store.clone(), task.id.clone());
        tokio::spawn(async move { store.changed(&id, 1).await })
    };
    while !has_channel(&store) {
        tokio::task::yield_now().await;
    }
    store
        .set_status_message(&task.id, Some("a".into()))
        .await
        .unwrap();
    assert_eq!(waiter.await.unwrap().unwrap().version, 2);
    // The next change finds no receiver and drops the channel.
    store
        .set_status_message(&task.id, Some("b".into()))
        .await
        .unwrap();
    assert!(!has_channel(&store));
}

/// 100,000 tasks, then 1,000 tasks each with a waiter; every waiter is woken by its own task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_many_tasks_and_many_waiters() {
    let store = Arc::new(MemoryTaskStore::new());
    let started = Instant::now();
    for i in 0..100_000 {
        let owner = Owner::new(format!("owner-{}", i % 100));
        store
            .create(NewTask::new(owner, Era::Modern).ttl(Some(Duration::from_secs(3600))))
            .await
            .unwrap();
    }
    let created = started.elapsed();
    assert_eq!(store.len(), 100_000);

    let started = Instant::now();
    let report = store.expire(SystemTime::now()).await.unwrap();
    assert_eq!(report, ExpiryReport::default());
    let swept = started.elapsed();

    let owner = Owner::new("waiting");
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        tasks.push(
            store
                .create(NewTask::new(owner.clone(), Era::Modern))
                .await
                .unwrap(),
        );
    }
    let started = Instant::now();
    let waiters: Vec<_> = tasks
        .iter()
        .map(|task| {
            let (store, id) = (store.clone(), task.id.clone());
            tokio::spawn(async move { store.changed(&id, 1).await })
        })
        .collect();
    for task in &tasks {
        store
            .set_status_message(&task.id, Some("go".into()))
            .await
            .unwrap();
    }
    for (task, waiter) in tasks.iter().zip(waiters) {
        let record = waiter.await.unwrap().unwrap();
        assert_eq!(record.id, task.id);
        assert_eq!(record.version, 2);
    }
    let woken = started.elapsed();
    eprintln!("100k creates: {created:?}; sweep of 101k: {swept:?}; 1000 waiters woken: {woken:?}");
}
