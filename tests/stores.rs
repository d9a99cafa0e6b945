//! Task stores behind whole servers: several instances sharing one store, and a durable store
//! across a `kill -9`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_tasks_runtime::store::{MemoryTaskStore, TaskStore};
use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{example_bin, modern_meta};
use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { TASKS: {} } })
}

/// Set when a `wait_for_cancel` tool saw its task cancelled.
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// Runs until cancelled.
#[tool(task_support = "required")]
async fn wait_for_cancel(ctx: ToolContext) -> String {
    ctx.cancelled().await;
    SAW_CANCEL.store(true, Ordering::SeqCst);
    "cancelled".into()
}

/// Runs until cancelled, and says nothing about it.
#[tool(task_support = "required")]
async fn forever(ctx: ToolContext) -> String {
    ctx.cancelled().await;
    "cancelled".into()
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Asks for a name, inline (MRTR in the modern era).
#[tool]
async fn ask_name(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("Your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Err(ToolError::new("no name")),
    }
}

/// One server instance on a free loopback port, stopped when dropped.
struct Instance {
    url: String,
    stop: CancellationToken,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Instance {
    async fn start(store: Arc<dyn TaskStore>, secret: Option<&[u8]>) -> Instance {
        let mut server = Server::builder("instance", "0")
            .tool::<wait_for_cancel>()
            .tool::<forever>()
            .tool::<ask_name>()
            .store(store);
        if let Some(secret) = secret {
            server = server.request_state_key(secret);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let stop = CancellationToken::new();
        let shutdown = stop.clone().cancelled_owned();
        let serving = tokio::spawn(
            server
                .build()
                .expect("set up")
                .serve_http(listener)
                .with_graceful_shutdown(shutdown)
                .into_future(),
        );
        Instance { url, stop, serving }
    }

    async fn post(&self, method: &str, name: Option<&str>, params: Value) -> Value {
        post(&self.url, method, name, params).await
    }

    async fn stop(self) {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.serving)
            .await
            .expect("the instance stops")
            .unwrap()
            .unwrap();
    }
}

/// A modern request to `url`; the JSON-RPC response.
async fn post(url: &str, method: &str, name: Option<&str>, mut params: Value) -> Value {
    params["_meta"] = modern_meta(caps());
    let mut b = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    if let Some(name) = name {
        b = b.header("mcp-name", name);
    }
    let response = b.send().await.expect("the server answers");
    assert!(
        matches!(response.status(), StatusCode::OK | StatusCode::BAD_REQUEST),
        "{response:?}"
    );
    response.json().await.unwrap()
}

/// Two instances on one store and one `requestState` secret, no authenticator: a task created
/// through A is read and cancelled through B (the anonymous owner is the same everywhere, and the
/// tool on A sees the cancellation), and an inline MRTR call started on A is finished on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_store_and_secret_serve_each_others_requests() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let a = Instance::start(store.clone(), Some(b"one secret for all")).await;
    let b = Instance::start(store.clone(), Some(b"one secret for all")).await;

    let created = a
        .post(
            "tools/call",
            Some("wait_for_cancel"),
            json!({"name": "wait_for_cancel", "arguments": {}}),
        )
        .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let got = b.post("tasks/get", None, json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = b.post("tasks/cancel", None, json!({"taskId": id})).await;
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while !SAW_CANCEL.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < until,
            "the tool on A never saw the cancel"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let got = a.post("tasks/get", None, json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "cancelled");

    let call = json!({"name": "ask_name", "arguments": {}});
    let first = a.post("tools/call", Some("ask_name"), call.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let (key, _) = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let mut retry = call.clone();
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({ key: {"action": "accept", "content": {"name": "Alice"}} });
    let done = b.post("tools/call", Some("ask_name"), retry.clone()).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice!",
        "{done}"
    );

    // Without the shared secret (each instance's own random one), B refuses A's state.
    let c = Instance::start(store.clone(), None).await;
    let refused = c.post("tools/call", Some("ask_name"), retry).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    a.stop().await;
    b.stop().await;
    c.stop().await;
}

/// `example_server --store sqlite:PATH` over HTTP, killed with SIGKILL while 25 of 50 tasks are
/// done and 25 still running, then started again on the same file: every completed task is
/// readable with its result, every running one is `failed` saying the server stopped, and ids
/// that never existed stay unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_tasks_survive_a_kill_9_and_running_ones_fail_as_stopped() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("kill9-{}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let store = format!("sqlite:{}", file.display());
    let args = ["--store", store.as_str()];

    let server = HttpServer::start_bin("example_server", &args);
    let mut quick = Vec::new();
    let mut slow = Vec::new();
    for i in 0..50 {
        let seconds = if i % 2 == 0 { 0 } else { 600 };
        let created = post(
            &server.url,
            "tools/call",
            Some("countdown"),
            json!({"name": "countdown", "arguments": {"seconds": seconds}}),
        )
        .await;
        let id = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        if seconds == 0 {
            quick.push(id)
        } else {
            slow.push(id)
        }
    }
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    for id in &quick {
        loop {
            let got = post(&server.url, "tasks/get", None, json!({"taskId": id})).await;
            if got["result"]["status"] == "completed" {
                break;
            }
            assert!(
                tokio::time::Instant::now() < until,
                "never completed: {got}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    for id in &slow {
        let got = post(&server.url, "tasks/get", None, json!({"taskId": id})).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
    }
    // Dropping the server kills it with SIGKILL (`Child::kill`): no shutdown code runs.
    drop(server);

    let server = HttpServer::start_bin("example_server", &args);
    for id in &quick {
        let got = post(&server.url, "tasks/get", None, json!({"taskId": id})).await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(
            got["result"]["result"]["content"][0]["text"], "liftoff",
            "{got}"
        );
    }
    for id in &slow {
        let got = post(&server.url, "tasks/get", None, json!({"taskId": id})).await;
        assert_eq!(got["result"]["status"], "failed", "{got}");
        assert_eq!(
            got["result"]["statusMessage"],
            "the server running this task stopped before the task finished",
            "{got}"
        );
        assert_eq!(got["result"]["error"]["code"], -32603, "{got}");
    }
    for unknown in ["never-created", "0123456789abcdef0123456789abcdef"] {
        let got = post(&server.url, "tasks/get", None, json!({"taskId": unknown})).await;
        assert_eq!(got["error"]["code"], -32602, "{got}");
    }
    drop(server);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// `--store` takes `memory`, `sqlite:PATH` or `redis://…`; anything else, or a SQLite file another
/// server process holds, stops the server at once with an error that says why.
#[test]
fn bad_or_busy_stores_are_refused_with_a_reason() {
    let run = |spec: &str| {
        let out = std::process::Command::new(example_bin("example_server"))
            .args(["--store", spec])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("example_server runs");
        assert!(!out.status.success(), "{spec}: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (spec, reason) in [
        ("nope", "unknown task store `nope`"),
        ("sqlite:", "`sqlite:` needs a file"),
    ] {
        let err = run(spec);
        assert!(
            err.contains(reason) && err.contains("usage:"),
            "{spec}: {err}"
        );
    }

    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("busy-{}.db", std::process::id()));
    let spec = format!("sqlite:{}", file.display());
    let holder = HttpServer::start_bin("example_server", &["--store", &spec]);
    let err = run(&spec);
    assert!(err.contains("in use by another process"), "{err}");
    drop(holder);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// When an HTTP server's shutdown future resolves, the tasks running in it are settled: the store
/// holds none `working`, each says the server stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_shutdown_settles_the_tasks_running_in_the_instance() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let instance = Instance::start(store.clone(), None).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let created = instance
            .post(
                "tools/call",
                Some("forever"),
                json!({"name": "forever", "arguments": {}}),
            )
            .await;
        ids.push(
            created["result"]["taskId"]
                .as_str()
                .expect("a task")
                .to_owned(),
        );
    }
    instance.stop().await;
    for id in ids {
        let task = store
            .get_unchecked(&mcp_tasks_runtime::protocol::task::TaskId::new(id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(task.status.as_str(), "failed", "{task:?}");
        assert_eq!(
            task.status_message.as_deref(),
            Some(mcp_tasks_runtime::store::TaskRecord::RUNNER_STOPPED_MESSAGE)
        );
    }
}

/// `example_server --store sqlite:PATH` over real stdio pipes, as a host runs it: tasks created by
/// a modern and a legacy client, `kill -9`, the server started again on the same file, and new
/// clients (a host restarting its server) read every completed task with its result, in both
/// eras, while the tasks that were running read as failed because the server stopped. Over
/// stdio the tasks belong to the server's anonymous owner, not to the process that created them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tasks_on_sqlite_survive_a_kill_9() {
    use mcp_tasks_tests::{StdioClient, modern, poll_modern};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("stdio-kill9-{}.db", std::process::id()));
    let remove = || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
    };
    remove();
    let store = format!("sqlite:{}", file.display());
    let args = ["--store", store.as_str()];
    let caps = caps();
    let countdown =
        |seconds: u32| json!({ "name": "countdown", "arguments": { "seconds": seconds } });

    let mut modern_client = StdioClient::spawn_with(&example_bin("example_server"), &args);
    let (mut quick, mut slow) = (Vec::new(), Vec::new());
    for i in 0..10 {
        let seconds = if i % 2 == 0 { 0 } else { 600 };
        let created = modern_client
            .result("tools/call", modern(countdown(seconds), caps.clone()))
            .await;
        let id = created["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        if seconds == 0 { &mut quick } else { &mut slow }.push(id);
    }
    for id in &quick {
        poll_modern(&mut modern_client, id, &caps, |t| {
            t["status"] == "completed"
        })
        .await;
    }
    // The same server process, a 2025-11-25 session on the same pipe after the modern requests.
    modern_client
        .initialize(json!({ "extensions": { TASKS: {} } }))
        .await;
    let mut legacy_ids = Vec::new();
    for seconds in [0, 600] {
        let mut params = countdown(seconds);
        params["task"] = json!({ "ttl": 600_000 });
        let created = modern_client.result("tools/call", params).await;
        legacy_ids.push(
            created["task"]["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("a legacy task: {created}"))
                .to_owned(),
        );
    }
    mcp_tasks_tests::poll_legacy(&mut modern_client, &legacy_ids[0], |t| {
        t["status"] == "completed"
    })
    .await;

    // SIGKILL, and wait until the process is gone: its exclusive lock on the file goes with it,
    // and only then can the next server open the file.
    let killed = modern_client.kill().await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed),
        Some(9),
        "{killed:?}"
    );

    let mut again = StdioClient::spawn_with(&example_bin("example_server"), &args);
    for id in quick.iter().chain(&legacy_ids[..1]) {
        let got = again
            .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
            .await;
        assert_eq!(got["status"], "completed", "{got}");
        assert_eq!(got["result"]["content"][0]["text"], "liftoff", "{got}");
    }
    for id in slow.iter().chain(&legacy_ids[1..]) {
        let got = again
            .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
            .await;
        assert_eq!(got["status"], "failed", "{got}");
        assert_eq!(
            got["statusMessage"], "the server running this task stopped before the task finished",
            "{got}"
        );
    }
    // A 2025-11-25 client of the restarted server reads them as well, and its result.
    again.close().await;
    let mut legacy = StdioClient::spawn_with(&example_bin("example_server"), &args);
    legacy
        .initialize(json!({ "extensions": { TASKS: {} } }))
        .await;
    let listed = legacy.result("tasks/list", json!({})).await;
    assert_eq!(
        listed["tasks"].as_array().map(Vec::len),
        Some(12),
        "{listed}"
    );
    let result = legacy
        .result("tasks/result", json!({ "taskId": quick[0] }))
        .await;
    assert_eq!(result["content"][0]["text"], "liftoff", "{result}");
    let unknown = legacy
        .error(
            "tasks/get",
            json!({ "taskId": "0123456789abcdef0123456789abcdef" }),
        )
        .await;
    assert_eq!(unknown["code"], -32602, "{unknown}");
    drop(legacy);
    remove();
}

/// A client that polls at once after creating a task whose tool returns at once sees it ended on
/// its first `tasks/get`: the poll waits for the outcome the server is committing to SQLite
/// (a commit takes longer than a round trip over pipes), instead of answering `working` and
/// getting polled again. Before, one first poll in two saw `working`. (A poll that arrives
/// before the tool has returned still sees `working`; those are few.)
#[tokio::test]
async fn a_poll_right_after_the_tool_returned_sees_the_task_ended_on_sqlite() {
    use mcp_tasks_tests::{StdioClient, modern};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("settle-{}.db", std::process::id()));
    let store = format!("sqlite:{}", file.display());
    let mut c = StdioClient::spawn_with(&example_bin("example_server"), &["--store", &store]);
    let caps = caps();
    const TASKS_RUN: u32 = 200;
    let (mut first_polls_working, mut polls) = (0, 0);
    for _ in 0..TASKS_RUN {
        let created = c
            .result(
                "tools/call",
                modern(
                    json!({ "name": "countdown", "arguments": { "seconds": 0 } }),
                    caps.clone(),
                ),
            )
            .await;
        let id = created["taskId"].as_str().expect("a task").to_owned();
        let mut first = true;
        loop {
            let got = c
                .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
                .await;
            polls += 1;
            if got["status"] == "completed" {
                break;
            }
            assert_eq!(got["status"], "working", "{got}");
            first_polls_working += u32::from(first);
            first = false;
        }
    }
    drop(c);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    eprintln!("{first_polls_working} of {TASKS_RUN} first polls saw `working`; {polls} polls");
    // Here none do; a loaded machine can make a commit outlast the poll's wait for it (100 ms)
    // now and then. Without the wait, one first poll in two saw `working`.
    assert!(
        first_polls_working <= TASKS_RUN / 5,
        "{first_polls_working} of {TASKS_RUN} first polls saw the task unfinished"
    );
}

/// On SQLite a task's tool starts while its creation commits, so the example's `research` tool
/// sets its status and asks its question (two writes) right behind the creation, before the
/// client has the task. Over real stdio pipes, twenty such tasks created back to back each read
/// as asking with that status, take the answer, ask for a sample, and complete with both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_that_ask_at_once_on_sqlite_over_stdio_ask_answer_and_complete() {
    use mcp_tasks_tests::{StdioClient, modern, poll_modern};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("ask-at-once-{}.db", std::process::id()));
    let store = format!("sqlite:{}", file.display());
    let mut c = StdioClient::spawn_with(&example_bin("example_server"), &["--store", &store]);
    let caps = json!({ "elicitation": {}, "sampling": {}, "extensions": { TASKS: {} } });
    let only = |task: &Value| {
        let requests = task["inputRequests"].as_object().expect("inputRequests");
        assert_eq!(requests.len(), 1, "{task}");
        let (key, request) = requests.iter().next().unwrap();
        (key.clone(), request.clone())
    };
    let mut ids = Vec::new();
    for i in 0..20 {
        let created = c
            .result(
                "tools/call",
                modern(
                    json!({ "name": "research", "arguments": { "topic": format!("topic {i}") } }),
                    caps.clone(),
                ),
            )
            .await;
        ids.push(created["taskId"].as_str().expect("a task").to_owned());
    }
    for (i, id) in ids.iter().enumerate() {
        let asked = poll_modern(&mut c, id, &caps, |t| t["status"] == "input_required").await;
        assert_eq!(asked["statusMessage"], "planning", "{asked}");
        let (key, request) = only(&asked);
        assert_eq!(request["method"], "elicitation/create", "{asked}");
        let sources = i + 1;
        c.result("tasks/update", modern(json!({ "taskId": id, "inputResponses": { &key: { "action": "accept", "content": { "sources": sources } } } }), caps.clone())).await;
        let sampling = poll_modern(&mut c, id, &caps, |t| {
            t["inputRequests"]
                .as_object()
                .is_some_and(|r| r.values().any(|v| v["method"] == "sampling/createMessage"))
        })
        .await;
        assert_eq!(
            sampling["statusMessage"],
            format!("reading {sources} sources")
        );
        let (key, _) = only(&sampling);
        c.result(
            "tasks/update",
            modern(json!({ "taskId": id, "inputResponses": { &key: {
                "role": "assistant", "content": { "type": "text", "text": format!("summary {i}") }, "model": "test-model" } } }), caps.clone()),
        )
        .await;
        let done = poll_modern(&mut c, id, &caps, |t| t["status"] == "completed").await;
        assert_eq!(
            done["result"]["structuredContent"],
            json!({ "topic": format!("topic {i}"), "sources": sources, "summary": format!("summary {i}") })
        );
    }
    drop(c);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
