//! The engine's tests: leases, the sweeper, and stopping.

use super::*;
use crate::protocol::task::TaskStatus;
use crate::store::{ManualClock, MemoryTaskStore, NewTask};

/// The sweeper asks the store what time it is: with a manual clock, a task reaches its
/// deadline when the clock says so, not when the system's does.
#[tokio::test]
async fn the_sweeper_expires_tasks_by_the_store_clock() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryTaskStore::with_clock(Arc::new(clock.clone())));
    let config = EngineConfig {
        default_ttl: Duration::from_secs(60),
        deadline: Some(Duration::from_secs(60)),
        lease: Duration::from_secs(10),
        default_poll_interval: Duration::from_secs(1),
        max_ttl: Duration::from_secs(3600),
        cancel_grace: Duration::from_secs(1),
        sweep_every: Duration::from_millis(5),
        max_tasks: 10,
        max_tasks_per_owner: 10,
        max_inputs_per_task: 8,
        max_outputs_per_task: 100,
        max_output_bytes_per_task: 1 << 20,
        store_patience: Duration::from_secs(1),
        durable_attempts: 3,
        checkpoint_bytes: 64 * 1024,
        runs_durable: true,
        executor: Arc::new(crate::task::executor::Placement::Here),
    };
    let engine = TaskEngine::new(store.clone(), config);
    let owner = Owner::new("a");
    let task = NewTask::new(owner.clone(), Era::Modern)
        .ttl(Some(Duration::from_secs(60)))
        .deadline(Some(Duration::from_secs(60)));
    let record = store.create(task).await.unwrap();
    engine.start_sweeper();

    tokio::time::sleep(Duration::from_millis(50)).await;
    let now = store.get(&record.id, &owner).await.unwrap().unwrap();
    assert_eq!(
        now.status,
        TaskStatus::Working,
        "the manual clock has not moved"
    );

    clock.advance(Duration::from_secs(61));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let now = store.get(&record.id, &owner).await.unwrap().unwrap();
        if now.status == TaskStatus::Failed {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not swept: {now:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// With a store that applies its writes in order (SQLite), a task's tool starts while its
/// creation commits, and the caller gets the task once the creation has committed.
#[cfg(feature = "sqlite")]
mod in_order {
    use super::*;
    use crate::store::SqliteTaskStore;
    use crate::tool::ToolContext;
    use std::sync::Mutex as StdMutex;
    use tokio::sync::Notify;

    /// Told when `signals_start` starts (one test uses it).
    fn started() -> &'static Notify {
        static STARTED: OnceLock<Notify> = OnceLock::new();
        STARTED.get_or_init(Notify::new)
    }

    /// Told when `waits_for_cancel` has seen its cancel (one test uses it).
    fn stopped() -> &'static Notify {
        static STOPPED: OnceLock<Notify> = OnceLock::new();
        STOPPED.get_or_init(Notify::new)
    }

    /// Says it started, and returns.
    #[crate::tool(task_support = "required")]
    async fn signals_start() -> String {
        started().notify_one();
        "done".into()
    }

    /// Returns at once.
    #[crate::tool(task_support = "required")]
    async fn finishes() -> String {
        "done".into()
    }

    /// Waits to be cancelled, and says so.
    #[crate::tool(task_support = "required")]
    async fn waits_for_cancel(ctx: ToolContext) -> String {
        ctx.cancelled().await;
        stopped().notify_one();
        "stopped".into()
    }

    fn config() -> EngineConfig {
        EngineConfig {
            default_ttl: Duration::from_secs(60),
            deadline: None,
            lease: Duration::from_secs(10),
            default_poll_interval: Duration::from_secs(1),
            max_ttl: Duration::from_secs(3600),
            cancel_grace: Duration::from_secs(5),
            sweep_every: Duration::from_secs(1),
            max_tasks: 1,
            max_tasks_per_owner: 1,
            max_inputs_per_task: 8,
            max_outputs_per_task: 100,
            max_output_bytes_per_task: 1 << 20,
            store_patience: Duration::from_secs(1),
            durable_attempts: 3,
            checkpoint_bytes: 64 * 1024,
            runs_durable: true,
            executor: Arc::new(crate::task::executor::Placement::Here),
        }
    }

    fn launch(tool: RegisteredTool) -> Launch {
        Launch {
            tool: Arc::new(tool),
            arguments: None,
            owner: Owner::new("a"),
            origin: Era::Modern,
            requested_ttl: None,
            capabilities: Arc::default(),
            channel: None,
            progress_token: None,
            start_after: None,
            log_level: None,
            request: Arc::default(),
            state: Arc::default(),
        }
    }

    fn open() -> (Arc<SqliteTaskStore>, Arc<StdMutex<rusqlite::Connection>>) {
        let path = std::env::temp_dir().join(format!(
            "mcp-tasks-engine-{}.db",
            TaskId::generate().as_str()
        ));
        let store = SqliteTaskStore::open(&path).expect("open");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let connection = store.connection();
        (Arc::new(store), connection)
    }

    async fn ended(store: &SqliteTaskStore, record: &TaskRecord) -> TaskRecord {
        let give_up = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let now = store.get(&record.id, &record.owner).await.unwrap().unwrap();
            if now.status.is_terminal() {
                return now;
            }
            assert!(std::time::Instant::now() < give_up, "never ended: {now:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the test holds the store's connection on purpose, so that nothing commits"
    )]
    async fn the_tool_starts_while_its_creation_commits() {
        let (store, connection) = open();
        let engine = TaskEngine::new(store.clone(), config());
        // The engine's first task takes its lease (a write of its own).
        let Ok(Launched::Task(first)) = engine
            .launch(launch(RegisteredTool::of::<finishes>()))
            .await
        else {
            panic!("the first task was not created");
        };
        ended(&store, &first).await;
        while !lock(&engine.running).is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // No transaction can commit while the test holds the connection.
        let held = lock(&connection);
        let launching = tokio::spawn({
            let engine = engine.clone();
            async move {
                engine
                    .launch(launch(RegisteredTool::of::<signals_start>()))
                    .await
            }
        });
        tokio::time::timeout(Duration::from_secs(5), started().notified())
            .await
            .expect("the tool started while its creation could not commit");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !launching.is_finished(),
            "the caller got the task before its creation committed"
        );
        drop(held);
        let Ok(Ok(Launched::Task(record))) = launching.await else {
            panic!("the task was not created");
        };
        assert_eq!(record.status, TaskStatus::Working);
        let now = ended(&store, &record).await;
        assert_eq!(now.status, TaskStatus::Completed);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_creation_is_the_callers_error_and_stops_the_tool() {
        let (store, connection) = open();
        let engine = TaskEngine::new(store.clone(), config());
        lock(&connection)
            .execute_batch(
                "CREATE TEMP TRIGGER refuse BEFORE INSERT ON tasks
                 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
            )
            .unwrap();
        let failed = engine
            .launch(launch(RegisteredTool::of::<waits_for_cancel>()))
            .await;
        let Err(error) = failed else {
            panic!("a creation the file refused made a task");
        };
        assert!(error.message.contains("refused by the test"), "{error:?}");
        tokio::time::timeout(Duration::from_secs(5), stopped().notified())
            .await
            .expect("the tool of the task that was never created was cancelled");

        // The engine goes on: its one running slot comes back, and the next task runs.
        lock(&connection)
            .execute_batch("DROP TRIGGER refuse")
            .unwrap();
        let give_up = std::time::Instant::now() + Duration::from_secs(5);
        let record = loop {
            match engine
                .launch(launch(RegisteredTool::of::<finishes>()))
                .await
            {
                Ok(Launched::Task(record)) => break record,
                Ok(Launched::Refused(_)) => panic!("refused"),
                Err(e) => {
                    assert!(std::time::Instant::now() < give_up, "{e:?}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        assert_eq!(ended(&store, &record).await.status, TaskStatus::Completed);
    }
}
