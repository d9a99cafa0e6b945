//! Group commit: batches, their failures, and writes on a task being created.

use super::*;

/// Two instances change one task at the same time, 100 changes in all: every change lands (row
/// locks), none is lost; and the changes that arrive together share transactions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_instances_lose_no_update_and_share_transactions() {
    let schema = fresh_schema();
    let (a, b) = (instance(database(), &schema), instance(database(), &schema));
    let alice = Owner::new("alice");
    let task = a
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let before = a.shared.transactions.load(Ordering::Relaxed)
        + b.shared.transactions.load(Ordering::Relaxed);
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
    let transactions = a.shared.transactions.load(Ordering::Relaxed)
        + b.shared.transactions.load(Ordering::Relaxed)
        - before;
    assert!(
        transactions < 100,
        "100 changes arriving together took {transactions} transactions"
    );
}

/// In one group commit, a change's own error (a reused key, an unknown task, someone else's
/// task) fails that change only; the others commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_fails_its_rules_does_not_fail_its_batch() {
    let store = instance(database(), &fresh_schema());
    let alice = Owner::new("alice");
    let task = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    // Sixty changes at once, every third one doomed.
    let jobs = (0..60).map(|i| {
        let store = store.clone();
        let (id, alice) = (task.id.clone(), alice.clone());
        async move {
            match i % 3 {
                0 => store
                    .add_input_request(&id, format!("k{}", i % 2), question(i))
                    .await
                    .map(|_| ()),
                1 => store
                    .add_input_request(&id, format!("u{i}"), question(i))
                    .await
                    .map(|_| ()),
                _ => store
                    .cancel(&TaskId::new(format!("nope{i}")), &alice)
                    .await
                    .map(|_| ()),
            }
        }
    });
    let results = futures_util::future::join_all(jobs).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    // k0 and k1 each succeed once; the twenty u-keys all succeed.
    assert_eq!(ok, 22, "{results:?}");
    for result in &results {
        if let Err(error) = result {
            assert!(
                matches!(error, StoreError::InputKeyReused(_) | StoreError::NotFound),
                "{error}"
            );
        }
    }
    let record = store.get(&task.id, &alice).await.unwrap().unwrap();
    assert_eq!(record.input_requests.len(), 22);
}

/// A store of one writer, in a schema of its own.
fn one_writer() -> Arc<PostgresTaskStore> {
    Arc::new(
        PostgresTaskStore::builder(database())
            .schema(fresh_schema())
            .writers(1)
            .timeout(Duration::from_secs(2))
            .open()
            .expect("a Postgres store"),
    )
}

/// A change that panics fails alone, as one that errs: the changes in its batch commit, and
/// the one writer goes on (it used to unwind and end, and every later change failed: "the
/// writers have stopped").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_panics_fails_alone_and_the_writer_goes_on() {
    let store = one_writer();
    let alice = Owner::new("alice");
    let task = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let panicking = {
        let (store, id) = (store.clone(), task.id.clone());
        async move {
            store
                .shared
                .update(&id, None, true, |record, _| -> Result<(), StoreError> {
                    record.status_message = Some("half-changed".into());
                    panic!("a change that panics (on purpose)")
                })
                .await
        }
    };
    let asks = (0..8).map(|i| {
        let (store, id) = (store.clone(), task.id.clone());
        async move {
            store
                .add_input_request(&id, format!("k{i}"), question(i))
                .await
        }
    });
    let (panicked, asked) = tokio::join!(panicking, futures_util::future::join_all(asks));
    let error = panicked.unwrap_err();
    assert!(error.to_string().contains("panicked"), "{error}");
    assert!(asked.iter().all(Result::is_ok), "{asked:?}");
    // The writer goes on.
    let after = tokio::time::timeout(
        Duration::from_secs(5),
        store.set_status_message(&task.id, Some("after".into())),
    )
    .await
    .expect("the writer answers")
    .unwrap();
    assert_eq!(after.status_message.as_deref(), Some("after"));
    let record = store.get(&task.id, &alice).await.unwrap().unwrap();
    assert_eq!(record.input_requests.len(), 8);
    assert_eq!(record.version, task.version + 9);
}

/// A writer that panics inside its transaction (a bug, injected here after its insert) fails
/// its batch and goes on: the connection it held is closed, not handed back to the pool inside
/// the open transaction, so the insert is never committed by the next batch on it; a write held
/// for the creation is answered; later changes are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_panics_in_its_transaction_commits_none_of_it_and_goes_on() {
    let store = one_writer();
    let alice = Owner::new("alice");
    store.shared.ready().await.unwrap();
    store
        .shared
        .panic_in_transaction
        .store(true, Ordering::Relaxed);
    let lost = NewTask::new(alice.clone(), Era::Modern);
    let lost_id = lost.id.clone();
    let within = Duration::from_secs(5);
    let (created, message) = tokio::join!(
        store.create(lost),
        tokio::time::timeout(
            within,
            store.set_status_message(&lost_id, Some("held".into()))
        ),
    );
    assert!(created.is_err(), "{created:?}");
    assert!(message.expect("answered").is_err());
    // The writer goes on, on a connection of its own.
    for _ in 0..3 {
        let task = tokio::time::timeout(
            within,
            store.create(NewTask::new(alice.clone(), Era::Modern)),
        )
        .await
        .expect("the writer answers")
        .unwrap();
        store
            .set_status_message(&task.id, Some("after".into()))
            .await
            .unwrap();
    }
    // Nothing of the panicked transaction was committed, then or later.
    assert!(store.get(&lost_id, &alice).await.unwrap().is_none());
    let (other, connection) = tokio_postgres::connect(database(), NoTls).await.unwrap();
    tokio::spawn(connection);
    let schema = store.shared.schema.clone();
    let rows = other
        .query(
            &format!("SELECT 1 FROM \"{schema}\".tasks WHERE id = $1"),
            &[&lost_id.as_str()],
        )
        .await
        .unwrap();
    assert!(rows.is_empty());
}

/// An error of the database in a group commit (here a trigger that refuses one record) rolls
/// the batch back; its changes then run one by one, and only the refused one fails, with the
/// database's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_error_in_a_batch_fails_only_its_own_change() {
    let schema = fresh_schema();
    let store = instance(database(), &schema);
    store.shared.ready().await.unwrap();
    let db = database().rsplit('/').next().unwrap();
    PostgresServer::shared().sql(
        db,
        &format!(
            "CREATE FUNCTION \"{schema}\".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
                 IF NEW.record LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned record'; END IF;
                 RETURN NEW;
             END $$;
             CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON \"{schema}\".tasks
                 FOR EACH ROW EXECUTE FUNCTION \"{schema}\".refuse();"
        ),
    );
    let alice = Owner::new("alice");
    let mut tasks = Vec::new();
    for _ in 0..40 {
        tasks.push(
            store
                .create(NewTask::new(alice.clone(), Era::Modern))
                .await
                .unwrap(),
        );
    }
    let before = store.shared.transactions.load(Ordering::Relaxed);
    let jobs = tasks.iter().enumerate().map(|(i, task)| {
        let store = store.clone();
        let message = if i == 7 { "poison" } else { "fine" };
        async move {
            store
                .set_status_message(&task.id, Some(message.to_owned()))
                .await
        }
    });
    let results = futures_util::future::join_all(jobs).await;
    for (i, result) in results.iter().enumerate() {
        if i == 7 {
            let error = result.as_ref().unwrap_err();
            assert!(error.to_string().contains("poisoned record"), "{error}");
        } else {
            let record = result.as_ref().expect("the others commit");
            assert_eq!(record.status_message.as_deref(), Some("fine"));
        }
    }
    for (i, task) in tasks.iter().enumerate() {
        let stored = store.get(&task.id, &alice).await.unwrap().unwrap();
        let expected = if i == 7 { None } else { Some("fine") };
        assert_eq!(stored.status_message.as_deref(), expected);
    }
    assert!(store.shared.transactions.load(Ordering::Relaxed) > before);
}

/// A task's write that a writer takes while another writer commits the task's creation waits
/// for that commit: the store says it creates in order (so the engine starts a tool while its
/// task is being created), and one writer's insert is invisible to another until it commits.
/// Another connection holds the creators' lock, so the writer that took the creation waits in
/// its transaction; the other writer takes the task's outcome meanwhile. (Without the hold, the
/// outcome fails at once with "not found".)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waits_for_its_task_being_created_by_another_writer() {
    // A timeout far past the test's waits: the held creation must not give up first.
    let store = Arc::new(
        PostgresTaskStore::builder(database())
            .schema(fresh_schema())
            .timeout(Duration::from_secs(30))
            .open()
            .expect("a Postgres store"),
    );
    assert!((&*store as &dyn TaskStore).creates_in_order());
    store.shared.ready().await.unwrap();
    let other = hold_creators_lock(&store).await;
    let new = NewTask::new(Owner::new("alice"), Era::Modern);
    let id = new.id.clone();
    let creating = tokio::spawn({
        let store = store.clone();
        async move { store.create(new).await }
    });
    // One writer has taken the creation and waits for the creators' lock.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let finishing = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move {
            let done = json!({"content": [], "isError": false});
            store.finish(&id, TaskOutcome::Result(done)).await
        }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !finishing.is_finished(),
        "the outcome was answered before its task's creation committed: {:?}",
        finishing.await
    );
    assert!(!creating.is_finished());
    other.batch_execute("COMMIT").await.unwrap();
    let created = creating.await.unwrap().expect("created");
    assert_eq!((created.status, created.version), (TaskStatus::Working, 1));
    let finished = finishing
        .await
        .unwrap()
        .expect("the outcome is written after the creation");
    assert_eq!(finished.status, TaskStatus::Completed);
    let stored = store.get_unchecked(&id).await.unwrap().expect("stored");
    assert_eq!(stored.status, TaskStatus::Completed);
}

/// A change of a task created earlier in the same batch is applied to the new record and the
/// task inserted as it leaves it: no row is updated, and both versions are announced in order.
/// A change of a task whose creation fails in the batch (its id taken) is for the task that
/// has the id, and a change by someone else's owner fails alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_in_its_tasks_creation_batch_is_inserted_with_it() {
    let schema = fresh_schema();
    let store = Arc::new(
        PostgresTaskStore::builder(database())
            .schema(schema.clone())
            .writers(1)
            .timeout(Duration::from_secs(30))
            .open()
            .expect("a Postgres store"),
    );
    let alice = Owner::new("alice");
    let existing = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let db = database().rsplit('/').next().unwrap();
    PostgresServer::shared().sql(
        db,
        &format!(
            "CREATE TABLE \"{schema}\".updates (id text);
             CREATE FUNCTION \"{schema}\".count() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN INSERT INTO \"{schema}\".updates VALUES (NEW.id); RETURN NEW; END $$;
             CREATE TRIGGER counted AFTER UPDATE ON \"{schema}\".tasks
                 FOR EACH ROW EXECUTE FUNCTION \"{schema}\".count();"
        ),
    );
    let mut events = store.subscribe();
    // The one writer takes a creation and waits for the creators' lock, held here; what is
    // queued meanwhile makes its next batch.
    let other = hold_creators_lock(&store).await;
    let first = tokio::spawn({
        let store = store.clone();
        let new = NewTask::new(alice.clone(), Era::Modern);
        async move { store.create(new).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let done = || TaskOutcome::Result(json!({"content": [], "isError": false}));
    let new = NewTask::new(alice.clone(), Era::Modern);
    let id = new.id.clone();
    let creating = tokio::spawn({
        let store = store.clone();
        async move { store.create(new).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let foreign = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move { store.cancel(&id, &Owner::new("mallory")).await }
    });
    let finishing = tokio::spawn({
        let (store, id) = (store.clone(), id.clone());
        async move { store.finish(&id, done()).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    other.batch_execute("COMMIT").await.unwrap();

    first.await.unwrap().expect("the first creation");
    let created = creating.await.unwrap().expect("created");
    assert!(matches!(foreign.await.unwrap(), Err(StoreError::NotFound)));
    let finished = finishing.await.unwrap().expect("finished");
    assert_eq!((created.status, created.version), (TaskStatus::Working, 1));
    assert_eq!(
        (finished.status, finished.version),
        (TaskStatus::Completed, 2)
    );
    let stored = store.get_unchecked(&id).await.unwrap().expect("stored");
    assert_eq!((stored.status, stored.version), (TaskStatus::Completed, 2));
    let updates = || {
        PostgresServer::shared().sql(
            db,
            &format!("SELECT coalesce(string_agg(id, ','), '') FROM \"{schema}\".updates"),
        )
    };
    assert_eq!(updates().trim(), "", "rows updated");
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let TaskEvent::Updated(record) = event
            && record.id == id
        {
            seen.push((record.version, record.status));
        }
    }
    assert_eq!(seen, [(1, TaskStatus::Working), (2, TaskStatus::Completed)]);

    // A creation whose id is taken, and an end of that id, in one batch.
    let other = hold_creators_lock(&store).await;
    let first = tokio::spawn({
        let store = store.clone();
        let new = NewTask::new(alice.clone(), Era::Modern);
        async move { store.create(new).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let taken = tokio::spawn({
        let store = store.clone();
        let new = NewTask::new(alice.clone(), Era::Modern).id(existing.id.clone());
        async move { store.create(new).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let taken_finish = tokio::spawn({
        let (store, id) = (store.clone(), existing.id.clone());
        async move { store.finish(&id, done()).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    other.batch_execute("COMMIT").await.unwrap();
    first.await.unwrap().expect("the first creation");
    assert!(matches!(
        taken.await.unwrap(),
        Err(StoreError::DuplicateId(_))
    ));
    let existing_end = taken_finish
        .await
        .unwrap()
        .expect("the task that has the id ends");
    assert_eq!(
        (existing_end.status, existing_end.version),
        (TaskStatus::Completed, 2)
    );
    let ended = store.get_unchecked(&existing.id).await.unwrap().unwrap();
    assert_eq!((ended.status, ended.version), (TaskStatus::Completed, 2));
    assert_eq!(updates().trim(), existing.id.as_str(), "rows updated");
}
