//! The writer: group commit, and changes joined to their task's creation.

use super::*;
use crate::store::sqlite::join::encode_ahead;

/// Counts the `UPDATE`s of the tasks table from now on, in a table of its own.
fn count_updates(conn: &Connection) {
    conn.execute_batch(
        "CREATE TABLE updates (n INTEGER);
         CREATE TRIGGER counted AFTER UPDATE ON tasks BEGIN INSERT INTO updates VALUES (1); END",
    )
    .unwrap();
}

fn updates(store: &SqliteTaskStore) -> i64 {
    lock(&store.db)
        .query_row("SELECT count(*) FROM updates", [], |row| row.get(0))
        .unwrap()
}

/// A task's end computed while its creation is still queued joins the creation: the task is
/// inserted ended, with no update, both callers are answered once it has committed, and
/// subscribers hear of both versions in order. A change queued between them keeps the end
/// out (it is applied after that change), and an end that joined a creation that inserts
/// nothing (its id taken) is applied to the task that has the id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn a_change_computed_while_its_creation_is_queued_joins_it() {
    let path = scratch_path();
    let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
    let alice = Owner::new("alice");
    let existing = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    count_updates(&lock(&store.db));
    let mut events = store.subscribe();
    let end = || TaskOutcome::Result(serde_json::json!({"content": []}));
    let held = lock(&store.db);
    let create = |new: NewTask| {
        let store = store.clone();
        tokio::spawn(async move { store.create(new).await })
    };
    let finish = |id: TaskId| {
        let store = store.clone();
        tokio::spawn(async move { store.finish(&id, end()).await })
    };
    // Joins.
    let joined_new = NewTask::new(alice.clone(), Era::Modern);
    let joined_id = joined_new.id.clone();
    let joined_create = create(joined_new);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let joined_end = finish(joined_id.clone());
    // Kept out by a change queued between.
    let apart_new = NewTask::new(alice.clone(), Era::Modern);
    let apart_id = apart_new.id.clone();
    let apart_create = create(apart_new);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let asked = {
        let (store, id) = (store.clone(), apart_id.clone());
        let ask = InputRequest::new("elicitation/create", serde_json::json!({}));
        tokio::spawn(async move { store.add_input_request(&id, "k".into(), ask).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let apart_end = finish(apart_id.clone());
    // Joins a creation that fails (a duplicate id).
    let failing_create = create(NewTask::new(alice.clone(), Era::Modern).id(existing.id.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let failing_end = finish(existing.id.clone());
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(held);

    let created = joined_create.await.unwrap().unwrap();
    let ended = joined_end.await.unwrap().unwrap();
    assert_eq!(created.status, TaskStatus::Working);
    assert_eq!(ended.status, TaskStatus::Completed);
    assert_eq!(ended.version, created.version + 1);
    let stored = store.get(&joined_id, &alice).await.unwrap().unwrap();
    assert_eq!(
        (stored.status, stored.version),
        (TaskStatus::Completed, ended.version)
    );

    let apart = apart_create.await.unwrap().unwrap();
    assert_eq!(asked.await.unwrap().unwrap(), apart.version + 1);
    let apart_ended = apart_end.await.unwrap().unwrap();
    assert_eq!(apart_ended.version, apart.version + 2);

    assert!(matches!(
        failing_create.await.unwrap(),
        Err(StoreError::DuplicateId(_))
    ));
    // The end joined a creation that inserted nothing: it is for the task that has the id.
    let existing_end = failing_end.await.unwrap().unwrap();
    assert_eq!(existing_end.status, TaskStatus::Completed);
    let ended = store.get(&existing.id, &alice).await.unwrap().unwrap();
    assert_eq!((ended.status, ended.version), (TaskStatus::Completed, 2));

    // The joined task was inserted ended; the other had its input request and its end
    // written as updates, and the task that had the taken id its end.
    assert_eq!(updates(&store), 3);
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let TaskEvent::Updated(record) = event
            && record.id == joined_id
        {
            seen.push((record.version, record.status));
        }
    }
    assert_eq!(
        seen,
        [
            (created.version, TaskStatus::Working),
            (ended.version, TaskStatus::Completed)
        ]
    );
    // What was answered is what the file holds.
    drop(store);
    let reopened = SqliteTaskStore::open(&path).unwrap();
    let stored = reopened.get(&joined_id, &alice).await.unwrap().unwrap();
    assert_eq!(
        (stored.status, stored.version),
        (TaskStatus::Completed, ended.version)
    );
    drop(reopened);
    remove(&path);
}

/// Waits until `done` holds (5 s at most): what a test waits for, not a guess of how long
/// it takes on a loaded machine.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until the writer has taken every queued write (and waits for the connection, when a
/// test holds it).
async fn taken_by_the_writer(store: &SqliteTaskStore) {
    eventually("the writer takes the writes", || {
        store.writes.waiting() == 0
    })
    .await;
}

/// A change that joined a creation whose write is never applied (a write before it in the
/// batch panicked) is told so, instead of waiting forever; the store goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn a_change_joined_to_a_creation_never_written_is_answered() {
    let store = Arc::new(scratch(Arc::new(SystemClock)));
    let alice = Owner::new("alice");
    let held = lock(&store.db);
    // The writer takes this one alone and waits for the connection; the writes queued
    // meanwhile join its transaction once it has applied it.
    let first = store.write(|_, _, _| Ok(()));
    taken_by_the_writer(&store).await;
    let panicking = store
        .write(|_, _, _| -> Result<(), StoreError> { panic!("a write that panics (on purpose)") });
    let new = NewTask::new(alice.clone(), Era::Modern);
    let id = new.id.clone();
    let creating = {
        let store = store.clone();
        tokio::spawn(async move { store.create(new).await })
    };
    eventually("the creation is queued", || {
        lock(&store.shared.creating).contains_key(&id)
    })
    .await;
    let finishing = {
        let (store, id) = (store.clone(), id.clone());
        let done = TaskOutcome::Result(serde_json::json!({"content": []}));
        tokio::spawn(async move { store.finish(&id, done).await })
    };
    eventually("the end joins the creation", || {
        lock(&store.shared.creating)
            .get(&id)
            .is_some_and(|creation| !lock(creation).waiting.is_empty())
    })
    .await;
    drop(held);
    let within = Duration::from_secs(5);
    assert!(first.await.is_err(), "its transaction failed");
    assert!(panicking.await.is_err());
    let created = tokio::time::timeout(within, creating)
        .await
        .expect("answered");
    assert!(created.unwrap().is_err());
    let finished = tokio::time::timeout(within, finishing)
        .await
        .expect("the joined change is answered");
    assert!(finished.unwrap().is_err());
    assert!(lock(&store.shared.creating).is_empty());
    // The store goes on.
    let task = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    assert!(store.get(&task.id, &alice).await.unwrap().is_some());
    assert!(store.get(&id, &alice).await.unwrap().is_none());
}

/// The changes that joined a creation whose id turns out taken in the file only (the store
/// has not written that task lately, so the creation was joinable) are applied by the
/// creation's write to the task that has the id: in the order they joined, in the same
/// transaction, each as a write of its own would be (a client's change checks that task's
/// owner). They used to be told "not found" and retried each on its own, concurrently, so
/// that the later one could land first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn changes_joined_to_a_creation_whose_id_is_taken_keep_their_order() {
    let path = scratch_path();
    let (alice, bob) = (Owner::new("alice"), Owner::new("bob"));
    let old = {
        let store = SqliteTaskStore::open(&path).unwrap();
        store
            .create(NewTask::new(bob.clone(), Era::Modern))
            .await
            .unwrap()
    };
    // Reopened: bob's task is in the file only.
    let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
    let mut events = store.subscribe();
    let commits = || store.writes.commits.load(Ordering::Relaxed);
    let before = commits();
    let id = old.id.clone();
    let joined = |n: usize| {
        let store = store.clone();
        let id = id.clone();
        move || {
            lock(&store.shared.creating)
                .get(&id)
                .is_some_and(|creation| lock(creation).waiting.len() == n)
        }
    };
    let held = lock(&store.db);
    let creating = {
        let (store, new) = (
            store.clone(),
            NewTask::new(alice.clone(), Era::Modern).id(id.clone()),
        );
        tokio::spawn(async move { store.create(new).await })
    };
    eventually("the creation is queued", || {
        lock(&store.shared.creating).contains_key(&id)
    })
    .await;
    let message = |text: &str| {
        let (store, id, text) = (store.clone(), id.clone(), text.to_owned());
        tokio::spawn(async move { store.set_status_message(&id, Some(text)).await })
    };
    let first = message("first");
    eventually("the first message joins the creation", joined(1)).await;
    let second = message("second");
    eventually("the second message joins it", joined(2)).await;
    let cancelling = {
        let (store, id, alice) = (store.clone(), id.clone(), alice.clone());
        tokio::spawn(async move { store.cancel(&id, &alice).await })
    };
    eventually("alice's cancel joins it", joined(3)).await;
    drop(held);

    assert!(matches!(
        creating.await.unwrap(),
        Err(StoreError::DuplicateId(taken)) if taken == id
    ));
    let first = first.await.unwrap().unwrap();
    let second = second.await.unwrap().unwrap();
    assert_eq!(first.owner, bob);
    assert_eq!(
        (first.version, first.status_message.as_deref()),
        (old.version + 1, Some("first"))
    );
    assert_eq!(
        (second.version, second.status_message.as_deref()),
        (old.version + 2, Some("second"))
    );
    // Alice's cancel is for bob's task: not found, as on its own.
    assert!(matches!(
        cancelling.await.unwrap(),
        Err(StoreError::NotFound)
    ));
    // One transaction: the failed creation and the changes applied instead.
    assert_eq!(commits(), before + 1);
    let stored = store.get(&id, &bob).await.unwrap().unwrap();
    assert_eq!(
        (
            stored.status,
            stored.version,
            stored.status_message.as_deref()
        ),
        (TaskStatus::Working, old.version + 2, Some("second"))
    );
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let TaskEvent::Updated(record) = event {
            seen.push((record.owner.clone(), record.version));
        }
    }
    assert_eq!(
        seen,
        [
            (bob.clone(), old.version + 1),
            (bob.clone(), old.version + 2)
        ]
    );
    drop(store);
    remove(&path);
}

/// What a creation inserts is encoded once: beside its caller when it first waits (unless
/// a change joined before, whose text is the one inserted), else by the writer's thread. A
/// creation whose future is never polled is written all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn a_creation_is_encoded_once_by_whoever_comes_first() {
    let store = Arc::new(scratch(Arc::new(SystemClock)));
    let alice = Owner::new("alice");
    let creation = |new: &NewTask| lock(&store.shared.creating).get(&new.id).cloned().unwrap();
    let text = |creation: &Mutex<Creation>| lock(creation).text.clone();

    let held = lock(&store.db);
    // Waited for: encoded by the caller.
    let waited = NewTask::new(alice.clone(), Era::Modern);
    let waited_id = waited.id.clone();
    let mut waited_future = store.create(waited.clone());
    let waited_creation = creation(&waited);
    assert_eq!(text(&waited_creation), None, "not encoded when queued");
    let once = Duration::from_millis(1);
    assert!(
        tokio::time::timeout(once, &mut waited_future)
            .await
            .is_err()
    );
    let own = text(&waited_creation).unwrap();
    let own_at = lock(&waited_creation)
        .text
        .as_ref()
        .map(|text| text.as_ptr());
    assert_eq!(
        serde_json::from_str::<TaskRecord>(&own).unwrap().version,
        lock(&waited_creation).latest.record.version
    );
    // An end joined first: its text is the one inserted, and the caller encodes nothing.
    let ended = NewTask::new(alice.clone(), Era::Modern);
    let ended_id = ended.id.clone();
    let ended_future = store.create(ended.clone());
    let ended_creation = creation(&ended);
    let finishing = {
        let (store, id) = (store.clone(), ended_id.clone());
        let done = TaskOutcome::Result(serde_json::json!({"content": []}));
        tokio::spawn(async move { store.finish(&id, done).await })
    };
    eventually("the end joins", || {
        !lock(&ended_creation).waiting.is_empty()
    })
    .await;
    // The same text, not one encoded again.
    let joined_text = || {
        lock(&ended_creation)
            .text
            .as_ref()
            .map(|text| text.as_ptr())
    };
    let before = joined_text();
    encode_ahead(&ended_creation);
    assert!(before.is_some());
    assert_eq!(joined_text(), before, "kept the end's text");
    // Never polled: the writer's thread encodes it.
    let unpolled = NewTask::new(alice.clone(), Era::Modern);
    let unpolled_id = unpolled.id.clone();
    let unpolled_future = store.create(unpolled.clone());
    assert_eq!(text(&creation(&unpolled)), None);
    drop(held);

    assert_eq!(waited_future.await.unwrap().id, waited_id);
    assert_eq!(ended_future.await.unwrap().id, ended_id);
    assert_eq!(
        finishing.await.unwrap().unwrap().status,
        TaskStatus::Completed
    );
    // Taken by the writer's thread: a caller that waits only now encodes nothing. The text
    // inserted, the caller's, was handed back to it, to be freed by it.
    encode_ahead(&waited_creation);
    assert!(lock(&waited_creation).taken);
    assert_eq!(text(&waited_creation), Some(own));
    assert_eq!(
        lock(&waited_creation)
            .text
            .as_ref()
            .map(|text| text.as_ptr()),
        own_at
    );
    drop(unpolled_future);
    eventually("the unpolled creation is written", || {
        lock(&store.shared.creating).is_empty()
    })
    .await;
    // Read from the file, not from what the store keeps: each was stored as encoded.
    *lock(&store.shared.recent) = Recent::default();
    let stored = |id: TaskId| {
        let store = store.clone();
        let alice = alice.clone();
        async move { store.get(&id, &alice).await.unwrap().unwrap() }
    };
    assert_eq!(stored(waited_id).await.status, TaskStatus::Working);
    assert_eq!(stored(ended_id).await.status, TaskStatus::Completed);
    assert_eq!(stored(unpolled_id).await.status, TaskStatus::Working);
}

/// A write that panics fails its transaction as an error would: what it wrote is rolled
/// back, and a write queued while the writer waited is applied and answered as usual (it
/// used to be dropped when it was queued while the writer unwound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn a_write_queued_after_a_panicking_batch_is_applied() {
    let store = Arc::new(scratch(Arc::new(SystemClock)));
    let alice = Owner::new("alice");
    let held = lock(&store.db);
    let panicking = store.write(|conn, _, _| -> Result<(), StoreError> {
        conn.execute(
            "INSERT INTO leases (instance, until) VALUES ('ghost', 1)",
            [],
        )
        .map_err(backend)?;
        panic!("a write that panics (on purpose)")
    });
    // The writer has taken it and waits for the connection.
    taken_by_the_writer(&store).await;
    let after = {
        let store = store.clone();
        let new = NewTask::new(alice.clone(), Era::Modern);
        tokio::spawn(async move { store.create(new).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(held);
    assert!(panicking.await.is_err());
    let after = tokio::time::timeout(Duration::from_secs(5), after)
        .await
        .expect("answered")
        .unwrap()
        .expect("the write after the batch is applied");
    assert!(store.get(&after.id, &alice).await.unwrap().is_some());
    let ghosts: i64 = lock(&store.db)
        .query_row(
            "SELECT count(*) FROM leases WHERE instance = 'ghost'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(ghosts, 0, "the panicking write's statement is rolled back");
}

/// The writer is a thread of the store's own, not a task of a Tokio runtime: a write commits
/// with no runtime about (its answer awaited on a runtime of its own, started after the write
/// was queued). Dropping the store ends the thread.
#[test]
fn the_writer_is_the_stores_own_thread_and_ends_with_it() {
    let store = scratch(Arc::new(SystemClock));
    let writes = Arc::downgrade(&store.writes);
    let wrote = store.write(|_, _, _| Ok(std::thread::current().name().map(str::to_owned)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let on = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(5), wrote).await });
    let on = on.expect("committed without a runtime").expect("committed");
    assert_eq!(on.as_deref(), Some("sqlite-writer"));
    drop(store);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while writes.strong_count() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer still runs after its store was dropped"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A write queued while a transaction applies its writes joins that transaction, after
/// them, and is answered after the same commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_queued_while_a_transaction_applies_joins_it() {
    use std::sync::atomic::Ordering;
    let store = scratch(Arc::new(SystemClock));
    let order = Arc::new(Mutex::new(Vec::new()));
    let late = Arc::new(Mutex::new(None));
    let commits = store.writes.commits.load(Ordering::Relaxed);
    let first = {
        let writes = store.writes.clone();
        let (order, late) = (order.clone(), late.clone());
        store.write(move |_, _, _| {
            lock(&order).push("first");
            // Queued while this transaction applies its writes.
            let order = order.clone();
            let second = writes.write(move |_, _, _| {
                lock(&order).push("second");
                Ok(())
            });
            *lock(&late) = Some(second);
            Ok(())
        })
    };
    first.await.unwrap();
    let second = lock(&late).take().expect("queued by the first write");
    second.await.unwrap();
    assert_eq!(*lock(&order), ["first", "second"]);
    assert_eq!(store.writes.commits.load(Ordering::Relaxed) - commits, 1);
}

/// A change computed ahead from a queued change that then fails is computed again from what
/// the transaction holds: a change queued between them, from the same version, is not lost,
/// and the failed one is not written after all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn a_change_computed_from_a_failed_queued_one_starts_again() {
    let path = scratch_path();
    let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
    let alice = Owner::new("alice");
    let task = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let held = lock(&store.db);
    // Any write of the message "refused" fails, alone.
    held.execute_batch(
        "CREATE TRIGGER refuse BEFORE UPDATE ON tasks
         WHEN NEW.record LIKE '%refused%' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    .unwrap();
    let spawn_write = |write: fn(Arc<SqliteTaskStore>, TaskId) -> StoreFuture<'static, u64>| {
        let handle = tokio::spawn(write(store.clone(), task.id.clone()));
        async move { handle.await.unwrap() }
    };
    // In this order: a message computed ahead (version 2), a plain change (version 2, from
    // the stored version), and the task's end computed ahead from the message.
    let message = spawn_write(|store, id| {
        Box::pin(async move {
            let record = store
                .set_status_message(&id, Some("refused".into()))
                .await?;
            Ok(record.version)
        })
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let asked = spawn_write(|store, id| {
        Box::pin(async move {
            let ask = InputRequest::new("elicitation/create", serde_json::json!({}));
            store.add_input_request(&id, "k".into(), ask).await
        })
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let finished = spawn_write(|store, id| {
        Box::pin(async move {
            let outcome = TaskOutcome::Result(serde_json::json!({"content": []}));
            Ok(store.finish(&id, outcome).await?.version)
        })
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(held);
    assert!(message.await.is_err(), "the trigger refuses the message");
    assert_eq!(asked.await.unwrap(), task.version + 1);
    assert_eq!(finished.await.unwrap(), task.version + 2);
    let stored = store.get(&task.id, &alice).await.unwrap().unwrap();
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(stored.status_message, None, "{stored:?}");
    assert_eq!(stored.version, task.version + 2);
    drop(store);
    let stored = SqliteTaskStore::open(&path)
        .unwrap()
        .get(&task.id, &alice)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status_message, None, "{stored:?}");
    assert_eq!(stored.version, task.version + 2);
    remove(&path);
}

/// Writes that arrive while the connection is busy share one transaction, and each gets its
/// own answer: a duplicate id, an unknown task and someone else's task fail alone, the
/// others are kept; waiters hear of the changes, and a change to a running task made in
/// the same transaction as its creation starts from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the test holds the connection while writes queue; the writer waits for it on its thread"
)]
async fn writes_queued_together_share_a_transaction_and_fail_alone() {
    use std::sync::atomic::Ordering;
    let path = scratch_path();
    let store = Arc::new(SqliteTaskStore::open(&path).unwrap());
    let alice = Owner::new("alice");
    let taken = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let commits = store.writes.commits.load(Ordering::Relaxed);
    // Hold the connection: every write below queues behind it.
    let held = lock(&store.db);
    let mut writes = tokio::task::JoinSet::new();
    for i in 0..100 {
        let (store, alice) = (store.clone(), alice.clone());
        let id = TaskId::new(format!("batched-{i}"));
        writes.spawn(async move {
            let created = store.create(NewTask::new(alice, Era::Modern).id(id)).await;
            (i, created.map(|record| record.id))
        });
    }
    let duplicate = {
        let store = store.clone();
        let new = NewTask::new(alice.clone(), Era::Modern).id(taken.id.clone());
        tokio::spawn(async move { store.create(new).await })
    };
    let unknown = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .set_status_message(&TaskId::new("never-created"), Some("x".into()))
                .await
        })
    };
    let foreign = {
        let store = store.clone();
        let id = taken.id.clone();
        tokio::spawn(async move { store.cancel(&id, &Owner::new("mallory")).await })
    };
    // Two changes computed ahead from the same version of one task, queued in this order:
    // the second must start again from the first's record, not overwrite it.
    let ahead = store
        .get(&taken.id, &alice)
        .await
        .unwrap()
        .expect("read from the records written lately while the connection is held");
    let message = {
        let store = store.clone();
        let id = taken.id.clone();
        tokio::spawn(async move { store.set_status_message(&id, Some("a".into())).await })
    };
    // The message is computed (and its write queued, in the same poll) before the end is:
    // a fixed sleep was not always enough on a loaded machine.
    eventually("the message is queued", || {
        store
            .shared
            .latest(&taken.id)
            .is_some_and(|task| task.record.version > ahead.version)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let finished = {
        let store = store.clone();
        let id = taken.id.clone();
        let result = TaskOutcome::Result(serde_json::json!({"content": []}));
        tokio::spawn(async move { store.finish(&id, result).await })
    };
    // Everything is queued (or about to be) while the writer waits for the connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(held);
    message.await.unwrap().unwrap();
    let finished = finished.await.unwrap().unwrap();
    assert_eq!(finished.status, TaskStatus::Completed);
    assert_eq!(
        finished.status_message.as_deref(),
        Some("a"),
        "{finished:?}"
    );
    assert_eq!(finished.version, ahead.version + 2);
    let mut ids = Vec::new();
    while let Some(joined) = writes.join_next().await {
        let (i, created) = joined.unwrap();
        let id = created.unwrap_or_else(|e| panic!("create {i}: {e}"));
        ids.push(id);
    }
    assert!(matches!(
        duplicate.await.unwrap(),
        Err(StoreError::DuplicateId(_))
    ));
    assert!(matches!(unknown.await.unwrap(), Err(StoreError::NotFound)));
    assert!(matches!(foreign.await.unwrap(), Err(StoreError::NotFound)));
    let commits = store.writes.commits.load(Ordering::Relaxed) - commits;
    assert!(
        commits <= 2,
        "105 writes queued together took {commits} transactions"
    );
    for id in &ids {
        let record = store.get(id, &alice).await.unwrap().expect("kept");
        assert_eq!(record.status, TaskStatus::Working);
    }
    // A change that starts from the kept record, then the file read afresh: what was
    // answered is what is stored.
    let changed = store
        .set_status_message(&ids[0], Some("after".into()))
        .await
        .unwrap();
    assert_eq!(changed.version, 2);
    drop(store);
    let store = SqliteTaskStore::open(&path).unwrap();
    for id in &ids {
        store.get(id, &alice).await.unwrap().expect("kept");
    }
    let reread = store.get(&ids[0], &alice).await.unwrap().unwrap();
    assert_eq!(reread.status_message.as_deref(), Some("after"));
    assert_eq!(reread.version, 2);
    drop(store);
    remove(&path);
}
