//! The schema and its migrations, the settings, the indexes.

use super::*;

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
    let (ended, running) = crate::store::record::legacy_pair(&alice);
    let now = running.created_at;
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
    crate::store::record::reads_legacy_pair(&store, &alice, (&ended, &running)).await;
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
