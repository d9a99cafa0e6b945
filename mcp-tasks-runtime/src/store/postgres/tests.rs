//! The Postgres store against a real PostgreSQL (`mcp_tasks_testkit::postgres`, one server per
//! test process; each store gets a schema of its own).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_tasks_testkit::postgres::PostgresServer;
use serde_json::{Map, json};

use super::*;
use crate::protocol::Era;
use crate::protocol::task::TaskStatus;
use crate::store::ManualClock;

/// The shared server's database for these tests (made once).
fn database() -> &'static str {
    static URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    URL.get_or_init(|| PostgresServer::shared().create_database())
}

/// A schema no other store of this process uses.
fn fresh_schema() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "s_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn scratch(clock: Arc<dyn Clock>) -> PostgresTaskStore {
    PostgresTaskStore::builder(database())
        .schema(fresh_schema())
        .clock(clock)
        .open()
        .expect("a Postgres store")
}

crate::task_store_contract_tests!(scratch);

fn instance(url: &str, schema: &str) -> Arc<PostgresTaskStore> {
    Arc::new(
        PostgresTaskStore::builder(url)
            .schema(schema)
            .timeout(Duration::from_secs(2))
            .open()
            .expect("a Postgres store"),
    )
}

fn question(i: usize) -> InputRequest {
    InputRequest::new("elicitation/create", json!({ "message": format!("q{i}") }))
}

/// Takes the store's creators' lock in a transaction of another connection, which holds it
/// until it commits: a writer that takes a creation waits for it.
async fn hold_creators_lock(store: &PostgresTaskStore) -> tokio_postgres::Client {
    let (other, connection) = tokio_postgres::connect(database(), NoTls).await.unwrap();
    tokio::spawn(connection);
    other.batch_execute("BEGIN").await.unwrap();
    other
        .execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&store.shared.turn_key],
        )
        .await
        .unwrap();
    other
}

fn schema_versions(schema: &str) -> String {
    let db = database().rsplit('/').next().unwrap();
    PostgresServer::shared().sql(
        db,
        &format!("SELECT string_agg(version::text, ',' ORDER BY version) FROM \"{schema}\".schema_version"),
    )
}

/// A fresh schema is created at the latest version; a second store (and a third, started at
/// the same moment) finds it migrated and changes nothing; the tasks of the first are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_run_once_whoever_starts_first() {
    let schema = fresh_schema();
    let builder = || PostgresTaskStore::builder(database()).schema(&schema);
    let (a, b) = tokio::join!(builder().connect(), builder().connect());
    let (a, _b) = (a.expect("first"), b.expect("second, racing"));
    let all: Vec<String> = (1..=schema::LATEST).map(|v| v.to_string()).collect();
    assert_eq!(schema_versions(&schema), all.join(","));
    let alice = Owner::new("alice");
    let task = a
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let c = builder().connect().await.expect("already migrated");
    assert_eq!(c.get(&task.id, &alice).await.unwrap(), Some(task));
    assert_eq!(schema_versions(&schema), all.join(","), "nothing ran again");
}

/// A schema at version 1, whose records are in serde's own forms of times and durations (as
/// mcp-tasks wrote them before the compact form): it is migrated to the latest version, its
/// records read as they were, and a change writes its task's record compact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_schema_is_migrated_and_its_records_read() {
    let schema = fresh_schema();
    let db = database().rsplit('/').next().unwrap();
    let server = PostgresServer::shared();
    server.sql(
        db,
        &format!(
            "CREATE SCHEMA \"{schema}\";
             CREATE TABLE \"{schema}\".schema_version (
                 version integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );
             {}
             INSERT INTO \"{schema}\".schema_version (version) VALUES (1);",
            schema::MIGRATIONS[0].replace("{s}", &format!("\"{schema}\""))
        ),
    );
    let alice = Owner::new("alice");
    let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
    let mut ended = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
    ended.finish(TaskOutcome::Result(json!({"content": []})), now);
    let running = TaskRecord::new(NewTask::new(alice.clone(), Era::Legacy), now);
    for task in [&ended, &running] {
        server.sql(
            db,
            &format!(
                "INSERT INTO \"{schema}\".tasks (id, owner, version, record) VALUES ('{}', 'alice', {}, '{}')",
                task.id, task.version, task.to_legacy_text()
            ),
        );
    }
    let store = PostgresTaskStore::builder(database())
        .schema(&schema)
        .clock(Arc::new(ManualClock::starting_at(now)))
        .connect()
        .await
        .expect("migrated");
    let all: Vec<String> = (1..=schema::LATEST).map(|v| v.to_string()).collect();
    assert_eq!(schema_versions(&schema), all.join(","));
    assert_eq!(
        store.get(&ended.id, &alice).await.unwrap(),
        Some(ended.clone())
    );
    assert_eq!(
        store.get(&running.id, &alice).await.unwrap(),
        Some(running.clone())
    );
    let changed = store
        .set_status_message(&running.id, Some("halfway".into()))
        .await
        .unwrap();
    assert_eq!(
        store.get(&running.id, &alice).await.unwrap(),
        Some(changed.clone())
    );
    let stored = |id: &TaskId| {
        server.sql(
            db,
            &format!("SELECT record FROM \"{schema}\".tasks WHERE id = '{id}'"),
        )
    };
    let text = stored(&running.id);
    assert!(
        !text.contains("secs_since_epoch") && !text.contains("null"),
        "{text}"
    );
    assert!(
        stored(&ended.id).contains("secs_since_epoch"),
        "left as it was"
    );
}

/// A schema a newer mcp-tasks migrated further is refused with an error that says so, and
/// left as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_newer_than_the_code_is_refused() {
    let schema = fresh_schema();
    PostgresTaskStore::builder(database())
        .schema(&schema)
        .connect()
        .await
        .unwrap();
    let db = database().rsplit('/').next().unwrap();
    let newer = schema::LATEST + 1;
    PostgresServer::shared().sql(
        db,
        &format!("INSERT INTO \"{schema}\".schema_version (version) VALUES ({newer})"),
    );
    let error = PostgresTaskStore::builder(database())
        .schema(&schema)
        .connect()
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains(&format!("at version {newer}, newer than this build")),
        "{text}"
    );
    // And a store opened lazily fails its operations the same way.
    let lazy = instance(database(), &schema);
    let error = lazy.get_unchecked(&TaskId::new("x")).await.unwrap_err();
    assert!(
        error.to_string().contains("newer than this build"),
        "{error}"
    );
}

/// Bad settings are errors, not panics.
#[tokio::test]
async fn bad_urls_and_schema_names_are_refused() {
    let error = PostgresTaskStore::open("postgres://[::1").unwrap_err();
    assert!(error.to_string().contains("not valid"), "{error}");
    let error = PostgresTaskStore::builder(database())
        .schema("Robert'); DROP TABLE tasks;--")
        .open()
        .unwrap_err();
    assert!(error.to_string().contains("cannot name"), "{error}");
}

/// Two stores (as two server instances would have) on one schema: a tool waiting on A is woken
/// by an answer delivered through B, and by a cancel through B; A's subscribers see B's changes
/// (creation included) and B's see A's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_instance_wakes_a_waiter_and_reaches_subscribers_on_the_other() {
    let schema = fresh_schema();
    let (a, b) = (instance(database(), &schema), instance(database(), &schema));
    a.shared.ready().await.unwrap();
    a.shared.listening().await.unwrap();
    b.shared.listening().await.unwrap();
    let mut a_events = a.subscribe();
    let mut b_events = b.subscribe();
    let alice = Owner::new("alice");
    let task = a
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    let seen_by_b = tokio::time::timeout(Duration::from_secs(5), b_events.recv())
        .await
        .expect("B hears of A's task")
        .unwrap();
    assert_eq!(seen_by_b, TaskEvent::Updated(Arc::new(task.clone())));
    let asked = a
        .add_input_request(&task.id, "k".into(), question(0))
        .await
        .unwrap();
    let waiter = {
        let (a, id) = (a.clone(), task.id.clone());
        tokio::spawn(async move { a.changed(&id, asked).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
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
    // A's own events: creation, question (its own changes, told directly), then B's answer.
    let mut kinds = Vec::new();
    while let Ok(Ok(TaskEvent::Updated(record))) =
        tokio::time::timeout(Duration::from_secs(1), a_events.recv()).await
    {
        kinds.push((record.version, record.status));
        if record.version == report.version {
            break;
        }
    }
    assert_eq!(
        kinds,
        [
            (1, TaskStatus::Working),
            (2, TaskStatus::InputRequired),
            (report.version, TaskStatus::Working)
        ]
    );

    let seen = a.get_unchecked(&task.id).await.unwrap().unwrap().version;
    let waiter = {
        let (a, id) = (a.clone(), task.id.clone());
        tokio::spawn(async move { a.changed(&id, seen).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let cancelled = b.cancel(&task.id, &alice).await.unwrap().into_record();
    let woken = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("A's waiter is woken by B's cancel")
        .unwrap()
        .unwrap();
    assert_eq!(woken.status, TaskStatus::Cancelled);
    assert_eq!(woken, cancelled);
}

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

/// Every query a request or a sweep runs finds its rows through an index, never by reading the
/// whole table: on a new table that was never analysed, with the generic plans a prepared
/// statement settles on (a store's first minutes: autovacuum has not analysed the table yet, and
/// a plan made then is kept), and on a table of 2,000 tasks with the statistics up to date.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_query_uses_an_index() {
    let schema = fresh_schema();
    let store = instance(database(), &schema);
    store.shared.ready().await.unwrap();
    let db = database().rsplit('/').next().unwrap();
    let server = PostgresServer::shared();
    let sql = &store.shared.sql;
    let queries = [
        (&sql.get, "('t5')"),
        (&sql.get_owned, "('t5', 'o5')"),
        (&sql.list, "('o5', 0::bigint, 11::bigint)"),
        (&sql.lock, "(ARRAY['t5', 't6'])"),
        (
            &sql.update,
            "(ARRAY['t5', 't6'], ARRAY[NULL, 'r1'], ARRAY[5, NULL]::int8[], ARRAY[2, 2]::int8[], ARRAY['{}', '{}'])",
        ),
        (&sql.candidates, "(100::bigint, 1000::bigint)"),
    ];
    let check = |generic: &str| {
        for (query, args) in queries {
            let plan = server.sql(
                db,
                &format!("{generic} PREPARE q AS {query}; EXPLAIN EXECUTE q{args}; DEALLOCATE q;"),
            );
            assert!(
                !plan.contains("Seq Scan on tasks"),
                "{query}\nreads the whole table:\n{plan}"
            );
            assert!(plan.contains("Index"), "{query}\nuses no index:\n{plan}");
        }
    };
    check("SET plan_cache_mode = force_generic_plan;");
    server.sql(
        db,
        &format!(
            "INSERT INTO \"{schema}\".tasks (id, owner, runner, due, version, record)
             SELECT 't' || g, 'o' || (g % 100), CASE WHEN g % 10 = 0 THEN 'r' || (g % 3) END,
                 CASE WHEN g % 7 = 0 THEN g END, 1, '{{}}'
             FROM generate_series(1, 2000) AS g;
             ANALYZE \"{schema}\".tasks;"
        ),
    );
    check("");
}

/// Postgres stops (`-m immediate`) and starts again under two stores. While it is down,
/// operations fail with a backend error that names Postgres, in bounded time. Right after it is
/// back, B delivers an answer before A's listener has reconnected (its notification is lost to
/// A): A's waiter is still woken, by its periodic re-read or by the listener, which wakes every
/// waiter to re-read when it reconnects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_a_change_made_while_its_listener_was_away() {
    let mut server = PostgresServer::start();
    let url = server.create_database();
    let schema = fresh_schema();
    // A's listener pauses up to 8 s between attempts, so it is still away after the restart.
    let a = Arc::new(
        PostgresTaskStore::builder(&url)
            .schema(&schema)
            .timeout(Duration::from_secs(2))
            .reconnect_max(Duration::from_secs(8))
            .open()
            .unwrap(),
    );
    let b = instance(&url, &schema);
    a.shared.listening().await.unwrap();
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
    tokio::time::sleep(Duration::from_millis(100)).await;

    tokio::task::block_in_place(|| server.stop_immediate());
    let started = std::time::Instant::now();
    let error = b.get(&task.id, &alice).await.unwrap_err();
    assert!(matches!(error, StoreError::Backend(_)), "{error}");
    assert!(error.to_string().contains("Postgres"), "{error}");
    let error = b.cancel(&task.id, &alice).await.unwrap_err();
    assert!(error.to_string().contains("Postgres"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Long enough for A's listener to back off to a pause of several seconds.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(!waiter.is_finished());

    tokio::task::block_in_place(|| server.restart());
    let mut answers = Map::new();
    answers.insert("k".into(), json!({ "action": "accept" }));
    let report = b
        .deliver_responses(&task.id, &alice, answers)
        .await
        .expect("B works again once Postgres is back");
    assert!(
        !a.shared.online.load(Ordering::Relaxed),
        "A's listener must still be away for this test to mean anything"
    );
    let woken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("A's waiter is woken once its listener is back")
        .unwrap()
        .unwrap();
    assert_eq!(woken.version, report.version);
    assert_eq!(woken.status, TaskStatus::Working);
}

/// Tasks created while someone pages through the list appear on a later page: a page is read
/// only when no creating transaction is between its insert and its end (creators hold a lock
/// shared, `list` takes it exclusively), so a page read never passes a number whose task has
/// yet to commit. Two instances create 3,000 tasks between
/// them (in group commits on several writers) while a reader follows the list page by page: its
/// pages hold every one.
///
/// The race it guards is a matter of timing: one round of this misses tasks about one time in
/// three without the lock, so it runs three rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_read_while_tasks_are_created_miss_none() {
    for _ in 0..3 {
        follow_the_list_while_two_instances_create().await;
    }
}

async fn follow_the_list_while_two_instances_create() {
    let schema = fresh_schema();
    let builder = |writers| {
        Arc::new(
            PostgresTaskStore::builder(database())
                .schema(&schema)
                .writers(writers)
                .open()
                .unwrap(),
        )
    };
    let (a, b) = (builder(8), builder(8));
    a.shared.ready().await.unwrap();
    let alice = Owner::new("alice");
    let creators: Vec<_> = (0..3000)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let alice = alice.clone();
            tokio::spawn(async move {
                store
                    .create(NewTask::new(alice, Era::Modern))
                    .await
                    .unwrap()
                    .id
            })
        })
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (a, alice, done) = (a.clone(), alice.clone(), done.clone());
        tokio::spawn(async move {
            // Follow the list: take the next page while there is one; at the end, read the last
            // page again (from its own cursor), until every creation has returned and the end
            // has been read once more after that.
            let mut seen = std::collections::BTreeSet::new();
            let mut cursor: Option<String> = None;
            loop {
                let finished = done.load(Ordering::SeqCst);
                let page = a.list(&alice, cursor.as_deref(), 2).await.unwrap();
                seen.extend(page.tasks.iter().map(|t| t.id.clone()));
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None if finished => break,
                    None => tokio::time::sleep(Duration::from_millis(1)).await,
                }
            }
            seen
        })
    };
    let mut created = std::collections::BTreeSet::new();
    for creator in creators {
        created.insert(creator.await.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    let seen = reader.await.unwrap();
    let missed: Vec<_> = created.difference(&seen).collect();
    assert!(missed.is_empty(), "never listed: {missed:?}");
}

/// The race `pages_read_while_tasks_are_created_miss_none` leaves to timing, made to happen: a
/// creating transaction (of another instance, played here by a plain connection doing what a
/// writer does) holds the creators' lock and has inserted its task, which took a creation
/// number, but has not committed; the store creates and commits a task after it, with a higher
/// number. A `list` then must not hand out a page that ends past the first task's number: it
/// waits for that transaction to end, and the two tasks are on its page. (Without the lock in
/// `list`, the page holds the second task only and its cursor passes the first for good.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_waits_for_a_creation_under_way() {
    let schema = fresh_schema();
    let store = instance(database(), &schema);
    store.shared.ready().await.unwrap();
    let alice = Owner::new("alice");
    let (other, connection) = tokio_postgres::connect(database(), NoTls).await.unwrap();
    tokio::spawn(connection);
    let first = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), store.now());
    other.batch_execute("BEGIN").await.unwrap();
    other
        .execute(
            "SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))",
            &[&store.shared.turn_key],
        )
        .await
        .unwrap();
    other
        .execute(
            &store.shared.sql.insert,
            &[
                &vec![first.id.as_str()],
                &vec![first.owner.as_str()],
                &vec![runner_column(&first)],
                &vec![due_column(&first)],
                &vec![1_i64],
                &vec![encode(&first).unwrap()],
            ],
        )
        .await
        .unwrap();
    let second = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .expect("creating transactions do not wait for each other");
    let page = tokio::spawn({
        let (store, alice) = (store.clone(), alice.clone());
        async move { store.list(&alice, None, 10).await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !page.is_finished(),
        "a page was read while a creation was under way"
    );
    other.batch_execute("COMMIT").await.unwrap();
    let page = page.await.unwrap();
    let ids: Vec<&TaskId> = page.tasks.iter().map(|t| &t.id).collect();
    assert_eq!(ids, [&first.id, &second.id]);
}

/// A builder's `Debug` output does not show the password.
#[test]
fn passwords_stay_out_of_debug_output() {
    for (url, shown) in [
        (
            "postgres://app:s3cret@db:5432/tasks",
            "postgres://app:***@db:5432/tasks",
        ),
        ("postgres://app@db/tasks", "postgres://app@db/tasks"),
        (
            "host=db user=app password=s3cret dbname=tasks",
            "host=db user=app password=*** dbname=tasks",
        ),
    ] {
        let text = format!("{:?}", PostgresTaskStore::builder(url));
        assert!(text.contains(shown), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }
}

/// The store's fast paths are its generic ones, and it says it creates in order: held to the
/// same checks as every store's (among them, a task's write asked for right after `create`,
/// before the creation is awaited, is applied after it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_paths_agree_with_the_generic_paths() {
    crate::store::fast::checks::all(|| Arc::new(scratch(Arc::new(SystemClock)))).await;
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
