//! The file: its versions and migrations, reopening it, its indexes, its lock.

use super::*;
use crate::store::sqlite::open::OPEN_WAIT;
use crate::store::sqlite::rows::{CANDIDATES, GET, GET_OWNED};
use crate::store::sqlite::schema::{SCHEMA, SCHEMA_VERSION, TASK_INDEXES};

/// A file as an earlier version of the store wrote it: `schema`, and `records` numbered by
/// SQLite.
fn old_file(path: &Path, schema: &str, records: &[TaskRecord]) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(schema).unwrap();
    for record in records {
        conn.execute(
            "INSERT INTO tasks (id, owner, record) VALUES (?1, ?2, ?3)",
            params![
                record.id.as_str(),
                record.owner.as_str(),
                record.to_legacy_text()
            ],
        )
        .unwrap();
    }
    conn
}

/// The creation numbers of `tasks`, in order, read from the file.
fn numbers(path: &Path) -> Vec<(i64, String)> {
    let conn = Connection::open(path).unwrap();
    let mut statement = conn
        .prepare("SELECT seq, id FROM tasks ORDER BY seq")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A file of version 0, whose tasks SQLite numbered (`AUTOINCREMENT`), is migrated when
/// opened: its tasks keep their numbers (so list cursors handed out before stay valid), the
/// indexes are there again, and a new task is numbered above every number SQLite gave, even
/// that of a task since removed. Opened again, it is left as it is.
#[tokio::test]
async fn a_file_numbered_by_sqlite_is_migrated_and_keeps_its_numbers() {
    let path = scratch_path();
    let alice = Owner::new("alice");
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let clock = ManualClock::starting_at(now);
    let tasks: Vec<TaskRecord> = (0..3)
        .map(|_| TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now))
        .collect();
    let conn = old_file(
        &path,
        "CREATE TABLE tasks (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            runner TEXT,
            due INTEGER,
            record TEXT NOT NULL,
            result TEXT
        );
        CREATE INDEX tasks_by_owner ON tasks (owner, seq);
        CREATE INDEX tasks_by_due ON tasks (due) WHERE due IS NOT NULL;
        CREATE INDEX tasks_by_runner ON tasks (runner) WHERE runner IS NOT NULL;
        CREATE TABLE leases (instance TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;",
        &tasks,
    );
    // The newest is removed: SQLite gave 3, the highest left is 2.
    conn.execute("DELETE FROM tasks WHERE seq = 3", []).unwrap();
    drop(conn);
    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
    let page = store.list(&alice, None, 1).await.unwrap();
    assert_eq!(page.tasks, [tasks[0].clone()]);
    let next = store
        .list(&alice, page.next_cursor.as_deref(), 5)
        .await
        .unwrap();
    assert_eq!(next.tasks, [tasks[1].clone()]);
    let created = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    drop(store);
    let expected = vec![
        (1, tasks[0].id.as_str().to_owned()),
        (2, tasks[1].id.as_str().to_owned()),
        (4, created.id.as_str().to_owned()),
    ];
    assert_eq!(numbers(&path), expected);
    {
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'tasks'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
        let indexes: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks'
                    AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name",
            )
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut named = TASK_INDEXES.map(str::to_owned).to_vec();
        named.sort();
        assert_eq!(indexes, named);
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'tasks_v0'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0);
    }
    // Opened again: nothing moves, and numbering goes on.
    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
    let later = store
        .create(NewTask::new(alice.clone(), Era::Modern))
        .await
        .unwrap();
    assert_eq!(store.list(&alice, None, 10).await.unwrap().tasks.len(), 4);
    drop(store);
    let mut expected = expected;
    expected.push((5, later.id.as_str().to_owned()));
    assert_eq!(numbers(&path), expected);
    remove(&path);
}

/// A list cursor names the last task of its page. The tasks after it removed (expired) and
/// the file closed, a task created on reopening comes after the cursor still: its number is
/// not one a removed task had.
#[tokio::test]
async fn a_cursor_past_removed_tasks_finds_the_tasks_created_after_a_restart() {
    let path = scratch_path();
    let alice = Owner::new("alice");
    let clock = ManualClock::new();
    let new = || NewTask::new(alice.clone(), Era::Modern).ttl(Some(Duration::from_secs(60)));
    let cursor = {
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        let kept = store.create(new().ttl(None)).await.unwrap();
        let mut ended = Vec::new();
        for _ in 0..2 {
            ended.push(store.create(new()).await.unwrap());
        }
        let page = store.list(&alice, None, 2).await.unwrap();
        assert_eq!(page.tasks[0].id, kept.id);
        let cursor = page.next_cursor.expect("a third task");
        for task in &ended {
            store
                .finish(&task.id, TaskOutcome::Result(serde_json::json!({})))
                .await
                .unwrap();
        }
        clock.advance(Duration::from_secs(61));
        let report = store.expire(clock.now()).await.unwrap();
        assert_eq!(report.removed.len(), 2, "{report:?}");
        cursor
    };
    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
    let created = store.create(new()).await.unwrap();
    let page = store.list(&alice, Some(&cursor), 10).await.unwrap();
    assert_eq!(page.tasks, [created]);
    drop(store);
    remove(&path);
}

/// A file written by a newer mcp-tasks (a later file format version) is refused, and left
/// as it is.
#[test]
fn a_file_of_a_later_version_is_refused() {
    let path = scratch_path();
    drop(SqliteTaskStore::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let refused = SqliteTaskStore::open(&path).expect_err("refused");
    let message = refused.to_string();
    assert!(
        message.contains("newer mcp-tasks")
            && message.contains(&format!("version {}", SCHEMA_VERSION + 1)),
        "{message}"
    );
    let version: i64 = Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1);
    remove(&path);
}

/// A version 1 file, whose records are in serde's own forms of times and durations: it
/// opens at version 2, its records read as they were, and a change writes its task's record
/// in the compact form.
#[tokio::test]
async fn a_version_1_file_reads_and_takes_compact_records() {
    let path = scratch_path();
    let alice = Owner::new("alice");
    let (ended, running) = crate::store::record::legacy_pair(&alice);
    let clock = ManualClock::starting_at(running.created_at);
    let conn = old_file(&path, SCHEMA, &[ended.clone(), running.clone()]);
    conn.pragma_update(None, "user_version", 1).unwrap();
    drop(conn);
    let stored = |id: &TaskId| -> String {
        Connection::open(&path)
            .unwrap()
            .query_row(
                "SELECT record FROM tasks WHERE id = ?1",
                [id.as_str()],
                |row| row.get(0),
            )
            .unwrap()
    };
    assert!(stored(&ended.id).contains("secs_since_epoch"));

    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
    let changed = crate::store::record::reads_legacy_pair(&store, &alice, (&ended, &running)).await;
    drop(store);

    let version: i64 = Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let text = stored(&running.id);
    assert!(
        !text.contains("secs_since_epoch") && !text.contains("null"),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), changed);
    assert!(
        stored(&ended.id).contains("secs_since_epoch"),
        "left as it was"
    );
    remove(&path);
}

/// A file written before results had a column of their own: its ended tasks keep their
/// results inside their records. It opens, reads as before, and takes new results in the
/// column.
#[tokio::test]
async fn a_file_from_before_the_result_column_reads_as_before() {
    let path = scratch_path();
    let alice = Owner::new("alice");
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let clock = ManualClock::starting_at(now);
    let result = serde_json::json!({"content": [{"type": "text", "text": "kept \"inline\""}]});
    let mut old = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
    old.finish(TaskOutcome::Result(result.clone()), now);
    let running = TaskRecord::new(NewTask::new(alice.clone(), Era::Modern), now);
    old_file(
        &path,
        "CREATE TABLE tasks (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            runner TEXT,
            due INTEGER,
            record TEXT NOT NULL
        );",
        &[old.clone(), running.clone()],
    );
    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
    assert_eq!(store.get(&old.id, &alice).await.unwrap(), Some(old.clone()));
    let mut rendered = None;
    let mut read = |view: TaskView<'_>| {
        rendered = Some(view.render(TaskShape::ModernGet).to_text().get().to_owned());
    };
    assert!(store.get_view(&old.id, &alice, &mut read).await.unwrap());
    assert!(rendered.unwrap().contains(r#""text":"kept \"inline\"""#));
    let finished = store
        .finish(&running.id, TaskOutcome::Result(result.clone()))
        .await
        .unwrap();
    assert_eq!(finished.outcome, Some(TaskOutcome::Result(result.clone())));
    // Read back from memory, it is the text kept.
    let mut text_kept = false;
    let mut read = |view: TaskView<'_>| {
        text_kept = matches!(view.outcome, Some(OutcomeView::ResultText(_)));
    };
    assert!(
        store
            .get_view(&running.id, &alice, &mut read)
            .await
            .unwrap()
    );
    assert!(text_kept);
    drop(store);

    // The new result is in its column, written once, and not in the record.
    let conn = Connection::open(&path).unwrap();
    let (record, text): (String, String) = conn
        .query_row(
            "SELECT record, result FROM tasks WHERE id = ?1",
            [running.id.as_str()],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    drop(conn);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), result);
    assert!(!record.contains("inline"), "{record}");

    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock)).unwrap();
    let page = store.list(&alice, None, 10).await.unwrap();
    assert_eq!(page.tasks, vec![old, finished]);
    drop(store);
    remove(&path);
}

/// Closing and reopening the file keeps every task as it was, except that a task that was
/// running (under an engine) fails as stopped; list cursors stay valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_tasks_and_fails_the_ones_left_running() {
    let path = scratch_path();
    let clock = ManualClock::new();
    let alice = Owner::new("alice");
    let new = || {
        NewTask::new(alice.clone(), Era::Modern)
            .ttl(Some(Duration::from_secs(60)))
            .runner("engine-1")
    };
    let (done, running, asked, page, answered) = {
        let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
        store
            .renew_lease("engine-1", Duration::from_secs(30))
            .await
            .unwrap();
        let done = store.create(new()).await.unwrap();
        let done = store
            .finish(
                &done.id,
                TaskOutcome::Result(serde_json::json!({"content": []})),
            )
            .await
            .unwrap();
        let running = store.create(new()).await.unwrap();
        let asked = store.create(new()).await.unwrap();
        store
            .add_input_request(
                &asked.id,
                "k".into(),
                InputRequest::new("elicitation/create", serde_json::json!({})),
            )
            .await
            .unwrap();
        let mut answer = Map::new();
        answer.insert("k".into(), serde_json::json!({"action": "accept"}));
        store
            .deliver_responses(&asked.id, &alice, answer)
            .await
            .unwrap();
        let page = store.list(&alice, None, 1).await.unwrap();
        // A task no engine runs, answered: the answer is committed with the delivery.
        let unowned = store
            .create(NewTask::new(alice.clone(), Era::Modern))
            .await
            .unwrap();
        store
            .add_input_request(
                &unowned.id,
                "q".into(),
                InputRequest::new("elicitation/create", serde_json::json!({})),
            )
            .await
            .unwrap();
        let mut answer = Map::new();
        answer.insert("q".into(), serde_json::json!({"action": "accept"}));
        store
            .deliver_responses(&unowned.id, &alice, answer)
            .await
            .unwrap();
        let answered = store.get_unchecked(&unowned.id).await.unwrap().unwrap();
        (done, running, asked, page, answered)
    };
    let store = SqliteTaskStore::open_with_clock(&path, Arc::new(clock.clone())).unwrap();
    assert_eq!(store.get(&done.id, &alice).await.unwrap(), Some(done));
    for id in [&running.id, &asked.id] {
        let task = store.get(id, &alice).await.unwrap().unwrap();
        assert_eq!(task.status, TaskStatus::Failed);
        assert_eq!(
            task.status_message.as_deref(),
            Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
        );
    }
    let kept = store.get(&answered.id, &alice).await.unwrap().unwrap();
    assert_eq!(kept, answered, "the delivered answer survived");
    assert_eq!(
        kept.input_responses["q"],
        serde_json::json!({"action": "accept"})
    );
    let next = store
        .list(&alice, page.next_cursor.as_deref(), 10)
        .await
        .unwrap();
    assert_eq!(next.tasks.len(), 3);
    assert_eq!(next.tasks[0].id, running.id);
    assert_eq!(
        store
            .get(&TaskId::new("never-created"), &alice)
            .await
            .unwrap(),
        None
    );
    drop(store);
    remove(&path);
}

/// Every query a client's request or a sweep runs finds its rows through an index: none reads
/// the whole table, so their cost does not grow with the number of stored tasks.
#[test]
fn every_query_uses_an_index() {
    let store = scratch(Arc::new(ManualClock::new()));
    let conn = lock(&store.db);
    for query in [GET, GET_OWNED, LIST, CANDIDATES] {
        let mut explain = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
            .unwrap();
        let unbound = std::iter::repeat_n(rusqlite::types::Null, explain.parameter_count());
        let plan: Vec<String> = explain
            .query_map(rusqlite::params_from_iter(unbound), |row| {
                row.get::<_, String>(3)
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for step in &plan {
            let full_scan = step.starts_with("SCAN tasks") && !step.contains(" INDEX ");
            assert!(!full_scan, "{query}\nreads the whole table: {plan:?}");
        }
        assert!(
            plan.iter().any(|step| step.contains("INDEX")),
            "{query}\nuses no index: {plan:?}"
        );
    }
}

/// A second store on a file another one holds is refused once the open's wait is over,
/// with an error that says why.
#[test]
fn a_file_in_use_is_refused() {
    let path = scratch_path();
    let first = SqliteTaskStore::open(&path).unwrap();
    let started = std::time::Instant::now();
    let second = SqliteTaskStore::open(&path).unwrap_err();
    assert!(
        second.to_string().contains("in use by another process"),
        "{second}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= OPEN_WAIT - Duration::from_millis(100) && waited < OPEN_WAIT * 3,
        "{waited:?}"
    );
    drop(first);
    SqliteTaskStore::open(&path).expect("free again once the first store is closed");
    remove(&path);
}

/// A store opened while another still holds the file gets it once the other lets go
/// within the open's wait: a server started again while the killed one is still exiting.
#[test]
fn a_file_let_go_of_during_the_open_is_taken() {
    let path = scratch_path();
    let first = SqliteTaskStore::open(&path).unwrap();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
    });
    let started = std::time::Instant::now();
    let second = SqliteTaskStore::open(&path).expect("the file once the first lets go");
    assert!(started.elapsed() >= Duration::from_millis(250));
    holder.join().unwrap();
    drop(second);
    remove(&path);
}
