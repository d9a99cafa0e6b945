//! Task stores behind whole servers: several instances sharing one store, and a durable store
//! across a `kill -9`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_tasks_runtime::server::HttpConfig;
use mcp_tasks_runtime::store::{MemoryTaskStore, TaskStore};
use mcp_tasks_runtime::{ElicitOutcome, Server, ToolContext, ToolError, tool};
use mcp_tasks_tests::modern_meta;
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
        let mut server = Server::new("instance", "0")
            .tool::<wait_for_cancel>()
            .tool::<ask_name>()
            .store(store);
        if let Some(secret) = secret {
            server = server.request_state_key(secret);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let stop = CancellationToken::new();
        let shutdown = stop.clone().cancelled_owned();
        let serving =
            tokio::spawn(server.serve_http_with(listener, HttpConfig::default(), shutdown));
        Instance { url, stop, serving }
    }

    async fn post(&self, method: &str, name: Option<&str>, mut params: Value) -> Value {
        params["_meta"] = modern_meta(caps());
        let mut b = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
            );
        if let Some(name) = name {
            b = b.header("mcp-name", name);
        }
        let response = b.send().await.expect("the instance answers");
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
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
