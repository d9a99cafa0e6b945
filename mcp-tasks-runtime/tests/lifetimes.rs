//! How long tasks run and how long they are kept, by the store's clock (a [`ManualClock`], so
//! nothing waits real minutes), and what happens to running tasks when serving ends. A whole
//! server over an in-process pipe, 2026-07-28 era with the tasks extension.

use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_runtime::protocol::task::{TaskId, TaskStatus};
use mcp_tasks_runtime::store::{ManualClock, MemoryTaskStore, TaskRecord, TaskStore};
use mcp_tasks_runtime::{Server, ServerConfig, ToolContext, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use tokio::sync::Notify;

static LONG_GATE: Notify = Notify::const_new();
static DEADLINE_GATE: Notify = Notify::const_new();

/// Works until the test says it is done.
#[tool(task_support = "required")]
async fn long_job(ctx: ToolContext) -> String {
    ctx.status("crunching");
    LONG_GATE.notified().await;
    "finished after a long time".into()
}

/// Works until the test says so (it never does: its deadline ends it).
#[tool(task_support = "required")]
async fn bounded_job() -> String {
    DEADLINE_GATE.notified().await;
    "never".into()
}

/// Works until cancelled.
#[tool(task_support = "required")]
async fn forever(ctx: ToolContext) -> String {
    ctx.cancelled().await;
    "cancelled".into()
}

/// Asks a person and waits for the answer.
#[tool(task_support = "required")]
async fn ask_person(ctx: ToolContext) -> String {
    match ctx
        .request(mcp_tasks_runtime::protocol::InputRequest::new(
            "elicitation/create",
            json!({"mode": "form", "message": "Go on?", "requestedSchema": {"type": "object"}}),
        ))
        .await
    {
        Ok(answer) => answer.to_string(),
        Err(e) => format!("no answer: {e}"),
    }
}

struct Client {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
    next: u64,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "lifetimes", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": caps(),
    });
    params
}

impl Client {
    fn serve(server: Server) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (their_read, their_write) = tokio::io::split(theirs);
        let serving = tokio::spawn(server.serve_io(their_read, their_write).into_future());
        let (read, writer) = tokio::io::split(ours);
        Client {
            lines: BufReader::new(read).lines(),
            writer,
            next: 0,
            serving,
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": modern(params)});
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("no answer from the server")
                .unwrap()
                .expect("the server closed the pipe");
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg["result"].clone();
            }
        }
    }

    async fn call_task(&mut self, tool: &str) -> String {
        let created = self
            .result("tools/call", json!({"name": tool, "arguments": {}}))
            .await;
        assert_eq!(created["resultType"], "task", "{created}");
        created["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&mut self, id: &str) -> Value {
        self.result("tasks/get", json!({"taskId": id})).await
    }

    /// Polls `tasks/get` until `done` holds (real time: the sweeper runs on a real timer).
    async fn poll(&mut self, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let task = self.get(id).await;
            if done(&task) {
                return task;
            }
            assert!(tokio::time::Instant::now() < until, "stuck at {task}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn server(store: Arc<dyn TaskStore>, config: ServerConfig) -> Server {
    Server::builder("lifetimes", "0")
        .tool::<long_job>()
        .tool::<bounded_job>()
        .tool::<forever>()
        .tool::<ask_person>()
        .store(store)
        .config(config)
        .build()
        .expect("set up")
}

/// Sweeps run every 10 ms here, so that the test waits little; everything else is the default.
fn defaults() -> ServerConfig {
    ServerConfig::default().sweep_every(Duration::from_millis(10))
}

/// With default settings, a task that runs far longer than the old default TTL (10 minutes)
/// finishes with its result, and so does a task waiting on a person; the record's `ttlMs` is the
/// default retention and the task is kept that long after it ended.
#[tokio::test]
async fn a_task_running_past_its_ttl_completes_with_defaults() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryTaskStore::with_clock(Arc::new(clock.clone())));
    let mut c = Client::serve(server(store.clone(), defaults()));
    let id = c.call_task("long_job").await;
    let waiting = c.call_task("ask_person").await;
    let created = c.poll(&id, |t| t["statusMessage"] == "crunching").await;
    assert_eq!(created["ttlMs"], 600_000, "{created}");
    c.poll(&waiting, |t| t["status"] == "input_required").await;

    // Two hours by the store's clock, with sweeps in between.
    for _ in 0..12 {
        clock.advance(Duration::from_secs(600));
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert_eq!(c.get(&id).await["status"], "working");
    assert_eq!(c.get(&waiting).await["status"], "input_required");

    LONG_GATE.notify_one();
    let done = c.poll(&id, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "finished after a long time"
    );

    // Kept for the TTL after it ended, then gone.
    clock.advance(Duration::from_secs(599));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(c.get(&id).await["status"], "completed");
    clock.advance(Duration::from_secs(1));
    let id = TaskId::new(id);
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while store.get_unchecked(&id).await.unwrap().is_some() {
        assert!(tokio::time::Instant::now() < until, "never deleted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A deadline, when set, ends a task still running at `created_at + deadline` (not before), with
/// a JSON-RPC error and a status message that say so.
#[tokio::test]
async fn a_deadline_ends_a_task_and_says_so() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryTaskStore::with_clock(Arc::new(clock.clone())));
    let config = defaults().task_deadline(Duration::from_secs(3600));
    let mut c = Client::serve(server(store, config));
    let id = c.call_task("bounded_job").await;

    clock.advance(Duration::from_secs(3599));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(c.get(&id).await["status"], "working");

    clock.advance(Duration::from_secs(1));
    let failed = c.poll(&id, |t| t["status"] != "working").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["statusMessage"], TaskRecord::DEADLINE_MESSAGE);
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(failed["error"]["message"], TaskRecord::DEADLINE_MESSAGE);
}

/// When serving ends (here: the input closes), the tasks still running in this process are
/// settled: none is left `working` or `input_required` in the store, each says the server
/// stopped, and a task that had finished keeps its result.
#[tokio::test]
async fn shutdown_with_tasks_running_leaves_none_working() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let mut c = Client::serve(server(store.clone(), defaults()));
    let running = [
        c.call_task("forever").await,
        c.call_task("forever").await,
        c.call_task("ask_person").await,
    ];
    c.poll(&running[2], |t| t["status"] == "input_required")
        .await;

    let Client {
        mut writer,
        serving,
        lines,
        ..
    } = c;
    writer.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("serving did not end")
        .unwrap()
        .unwrap();

    drop(lines);
    for id in running {
        let task = store
            .get_unchecked(&TaskId::new(id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(task.status, TaskStatus::Failed, "{task:?}");
        assert_eq!(
            task.status_message.as_deref(),
            Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
        );
    }
}

/// An instance that dies without stopping (its serve loop and engine simply vanish) stops
/// renewing its lease; another instance on the same store fails its tasks once the lease has
/// lapsed — by the store's clock — saying the server stopped. Until then they are left alone.
#[tokio::test]
async fn a_dead_instances_tasks_fail_once_its_lease_lapses() {
    let clock = ManualClock::new();
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::with_clock(Arc::new(clock.clone())));
    let lease = Duration::from_secs(15);
    let config = || defaults().lease(lease);
    let mut a = Client::serve(server(store.clone(), config()));
    let mut b = Client::serve(server(store.clone(), config()));
    let orphan = a.call_task("forever").await;
    // B runs a task of its own, so that B's engine sweeps.
    let own = b.call_task("forever").await;

    // A dies: its serve loop is aborted, nothing settles its task.
    a.serving.abort();
    let _ = a.serving.await;
    drop(a.lines);
    drop(a.writer);
    let id = TaskId::new(orphan);
    let status = || async { store.get_unchecked(&id).await.unwrap().unwrap() };

    clock.advance(lease - Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        status().await.status,
        TaskStatus::Working,
        "the lease is still live"
    );

    clock.advance(Duration::from_secs(1));
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    let failed = loop {
        let task = status().await;
        if task.status != TaskStatus::Working {
            break task;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "never failed: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(
        failed.status_message.as_deref(),
        Some(TaskRecord::RUNNER_STOPPED_MESSAGE)
    );
    assert_eq!(
        b.get(&own).await["status"],
        "working",
        "B renews its own lease"
    );
}
