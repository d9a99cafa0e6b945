//! Ended tasks read from memory.

use super::*;
use crate::store::postgres::ended::{ENDED_SIZE, small};

/// An ended task changes no more until its retention is over, so a store reads the ones it saw
/// end from what it committed, not from Postgres (a row deleted under it still reads); once the
/// retention is over by its clock it reads the table again. Another instance's deletion (its
/// sweep, by a clock that ran ahead) reaches it as a notification and drops its copy at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_task_is_read_from_memory_until_its_retention_is_over() {
    let schema = fresh_schema();
    let open = |clock: &ManualClock| {
        Arc::new(
            PostgresTaskStore::builder(database())
                .schema(&schema)
                .clock(Arc::new(clock.clone()))
                .open()
                .expect("a Postgres store"),
        )
    };
    let (a_clock, b_clock) = (ManualClock::new(), ManualClock::new());
    let (a, b) = (open(&a_clock), open(&b_clock));
    a.shared.ready().await.unwrap();
    a.shared.listening().await.unwrap();
    b.shared.listening().await.unwrap();
    let alice = Owner::new("alice");
    let ended = |store: Arc<PostgresTaskStore>| {
        let alice = alice.clone();
        async move {
            let new = NewTask::new(alice, Era::Modern).ttl(Some(Duration::from_secs(60)));
            let task = store.create(new).await.unwrap();
            let done = TaskOutcome::Result(json!({ "content": [] }));
            store.finish(&task.id, done).await.unwrap()
        }
    };

    let first = ended(a.clone()).await;
    let db = database().rsplit('/').next().unwrap();
    PostgresServer::shared().sql(
        db,
        &format!(
            "DELETE FROM \"{schema}\".tasks WHERE id = '{}'",
            first.id.as_str()
        ),
    );
    assert_eq!(a.get(&first.id, &alice).await.unwrap(), Some(first.clone()));
    assert_eq!(a.get(&first.id, &Owner::new("bob")).await.unwrap(), None);
    assert_eq!(
        b.get(&first.id, &alice).await.unwrap(),
        None,
        "gone from the table"
    );
    a_clock.advance(Duration::from_secs(60));
    assert_eq!(
        a.get(&first.id, &alice).await.unwrap(),
        None,
        "retention over"
    );

    let second = ended(a.clone()).await;
    assert_eq!(
        a.get(&second.id, &alice).await.unwrap(),
        Some(second.clone())
    );
    b_clock.advance(Duration::from_secs(120));
    let swept = b.expire(b.now()).await.unwrap();
    assert_eq!(swept.removed, std::slice::from_ref(&second.id));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while a.get(&second.id, &alice).await.unwrap().is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "A drops the task B deleted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Only small ended tasks are kept for reads: a large result, or outputs, is read from the table.
#[test]
fn only_small_ended_tasks_are_kept() {
    let done = |result: Value| {
        let mut record = TaskRecord::new(
            NewTask::new(Owner::new("alice"), Era::Modern),
            SystemTime::UNIX_EPOCH,
        );
        record.finish(TaskOutcome::Result(result), SystemTime::UNIX_EPOCH);
        record
    };
    let text = |len: usize| json!({ "content": [{ "type": "text", "text": "x".repeat(len) }] });
    assert!(small(&done(text(1000))));
    assert!(!small(&done(text(ENDED_SIZE))));
    let many: Vec<_> = (0..ENDED_SIZE / 4).map(|i| json!(i)).collect();
    assert!(!small(&done(
        json!({ "content": [], "structuredContent": many })
    )));
    let mut with_output = done(text(10));
    with_output.outputs.insert(
        "report".into(),
        ResourceContents::text("task://x/report", "text/plain", "ok"),
    );
    assert!(!small(&with_output));
    let error = crate::protocol::RpcError::internal("x".repeat(ENDED_SIZE));
    let mut failed = done(text(0));
    failed.outcome = Some(TaskOutcome::Error(error));
    assert!(!small(&failed));
}
