//! Tools inside an application, over real HTTP on 127.0.0.1 (servers run in this process): shared
//! state, who is calling, errors on the wire, what an MRTR retry runs again, status and progress in
//! one task, and the inventory example service with two bearer tokens.

use mcp_tasks_examples::inventory::{self, Inventory, Staff};
use mcp_tasks_runtime::protocol::RpcError;
use mcp_tasks_runtime::server::{BearerTokens, HttpConfig};
use mcp_tasks_runtime::{
    ElicitOutcome, Server, ServerBuilder, State, ToolContext, ToolError, tool,
};
use mcp_tasks_tests::modern_meta;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A server serving HTTP on a free loopback port until dropped.
struct Running {
    url: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(server: ServerBuilder, config: HttpConfig) -> Running {
    let server = server.build().expect("set up");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async move {
            let _ = stopped.await;
        };
        server
            .serve_http(listener)
            .config(config)
            .with_graceful_shutdown(shutdown)
            .await
            .expect("the server serves");
    });
    Running {
        url,
        stop: Some(stop),
    }
}

/// One modern (2026-07-28) request as `token`'s holder (`None`: no `Authorization`).
async fn call(
    url: &str,
    token: Option<&str>,
    method: &str,
    mut params: Value,
    caps: Value,
) -> Value {
    params["_meta"] = modern_meta(caps);
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut b = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string());
    if let Some(name) = name {
        b = b.header("mcp-name", name);
    }
    if let Some(token) = token {
        b = b.bearer_auth(token);
    }
    let text = b
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({ "name": name, "arguments": arguments })
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// The inventory example: two principals, shared state, a task that keeps its principal.

fn inventory_server() -> ServerBuilder {
    inventory::server(
        Inventory::new([("widget", 12), ("gadget", 3)], Duration::from_millis(5)),
        Staff::with_managers(["alice"]),
    )
}

fn two_tokens() -> HttpConfig {
    HttpConfig::default().authenticator(
        BearerTokens::new()
            .token("alice-token", "alice")
            .token("bob-token", "bob"),
    )
}

#[tokio::test]
async fn two_tools_share_state_each_caller_is_seen_and_a_clerk_is_refused() {
    let s = start(inventory_server(), two_tokens()).await;
    let added = call(
        &s.url,
        Some("alice-token"),
        "tools/call",
        tool_call("restock", json!({ "item": "widget", "units": 5 })),
        json!({}),
    )
    .await;
    assert_eq!(
        text(&added["result"]),
        "widget: 17 in stock (restocked by alice)",
        "{added}"
    );

    // Another tool, another caller, the same inventory.
    let seen = call(
        &s.url,
        Some("bob-token"),
        "tools/call",
        tool_call("stock", json!({})),
        json!({}),
    )
    .await;
    let report = &seen["result"]["structuredContent"];
    assert_eq!(report["items"]["widget"], 17, "{seen}");
    assert_eq!(report["seen_by"], "bob");

    let refused = call(
        &s.url,
        Some("bob-token"),
        "tools/call",
        tool_call("restock", json!({ "item": "widget", "units": 1 })),
        json!({}),
    )
    .await;
    let result = &refused["result"];
    assert_eq!(result["isError"], true, "{refused}");
    assert_eq!(
        text(result),
        "Forbidden: `bob` may not restock; only managers may"
    );
    assert_eq!(result["structuredContent"]["error"], "forbidden");
    // Refused means nothing changed.
    let again = call(
        &s.url,
        Some("alice-token"),
        "tools/call",
        tool_call("stock", json!({})),
        json!({}),
    )
    .await;
    assert_eq!(again["result"]["structuredContent"]["items"]["widget"], 17);
}

/// Polls `tasks/get` as `token` until `done` holds for the task.
async fn poll(url: &str, token: &str, task: &str, done: impl Fn(&Value) -> bool) -> Value {
    let caps = json!({ "elicitation": {}, "extensions": { TASKS: {} } });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = call(
            url,
            Some(token),
            "tasks/get",
            json!({ "taskId": task }),
            caps.clone(),
        )
        .await;
        if done(&got["result"]) {
            return got["result"].clone();
        }
        let status = got["result"]["status"].as_str().unwrap_or("");
        assert!(
            !["completed", "failed", "cancelled"].contains(&status),
            "the task ended elsewhere: {got}"
        );
        assert!(Instant::now() < deadline, "the task never got there: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The task tool runs after the `tools/call` that created it has been answered, asks a question,
/// and finishes after `tasks/update`: it sees alice throughout. Its status message carries both
/// the status the tool set and its progress.
#[tokio::test]
async fn a_task_sees_the_principal_that_created_it_and_reports_status_with_progress() {
    let s = start(inventory_server(), two_tokens()).await;
    let caps = json!({ "elicitation": {}, "extensions": { TASKS: {} } });
    let created = call(
        &s.url,
        Some("alice-token"),
        "tools/call",
        tool_call("ship_order", json!({ "item": "gadget", "units": 2 })),
        caps.clone(),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();

    let asking = poll(&s.url, "alice-token", &task, |r| {
        r["status"] == "input_required"
    })
    .await;
    // `ctx.status(..)` then `ctx.progress(2, 2)`: both are in the message, status first.
    assert_eq!(
        asking["statusMessage"], "picking 2 x gadget for alice (2/2)",
        "{asking}"
    );
    let (key, request) = asking["inputRequests"]
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("one input request");
    assert_eq!(
        request["params"]["message"], "Ship 2 x gadget for alice?",
        "{request}"
    );

    // bob cannot see alice's task at all.
    let foreign = call(
        &s.url,
        Some("bob-token"),
        "tasks/get",
        json!({ "taskId": task }),
        caps.clone(),
    )
    .await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");

    let ack = call(
        &s.url,
        Some("alice-token"),
        "tasks/update",
        json!({ "taskId": task, "inputResponses": { key.clone(): { "action": "accept", "content": { "ship": true } } } }),
        caps.clone(),
    )
    .await;
    assert!(ack.get("result").is_some(), "{ack}");
    let done = poll(&s.url, "alice-token", &task, |r| r["status"] == "completed").await;
    let shipment = &done["result"]["structuredContent"];
    assert_eq!(shipment["requested_by"], "alice", "{done}");
    assert_eq!(shipment["left"], 1);
}

/// One 2025-11-25 request on a legacy session (`None`: `initialize`, which opens one); the
/// response's JSON-RPC message (the body, or the message of an SSE stream) and the session id.
async fn legacy(
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (Value, Option<String>) {
    let mut b = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        b = b
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = b.send().await.expect("the server answers");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.expect("a body");
    let message = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no response in {text}"))
    });
    (message, session)
}

#[tokio::test]
async fn a_legacy_session_over_http_sees_the_principal_that_opened_it() {
    let s = start(inventory_server(), two_tokens()).await;
    let (_, session) = legacy(
        &s.url,
        "bob-token",
        None,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "legacy-client", "version": "1" } } }),
    )
    .await;
    let session = session.expect("a session id");
    let (reply, _) = legacy(
        &s.url,
        "bob-token",
        Some(&session),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "restock", "arguments": { "item": "widget", "units": 1 } } }),
    )
    .await;
    assert_eq!(
        text(&reply["result"]),
        "Forbidden: `bob` may not restock; only managers may",
        "{reply}"
    );
}

#[tokio::test]
async fn a_tool_taking_unregistered_state_stops_start_up_naming_the_tool_and_the_type() {
    // `restock` takes `State<Staff>`, which nobody registered.
    let server = Server::builder("inventory", "1.0.0")
        .state(Inventory::new([], Duration::ZERO))
        .tool::<inventory::stock>()
        .tool::<inventory::restock>();
    let err = server.build().expect_err("Staff is missing");
    let message = err.to_string();
    assert!(
        message.contains("tool `restock` takes `State<mcp_tasks_examples::inventory::Staff>`"),
        "{message}"
    );
    assert!(!message.contains("`stock`"), "{message}");

    // `?` in a `main() -> std::io::Result<()>` turns it into an `InvalidInput` error.
    let served = std::io::Error::from(err.clone());
    assert_eq!(served.kind(), std::io::ErrorKind::InvalidInput);
    assert!(served.to_string().contains("restock"), "{served}");
}

// ---------------------------------------------------------------------------------------------
// Who is calling, without an authenticator and over stdio.

/// Says who is calling.
#[tool]
async fn whoami(ctx: ToolContext) -> Value {
    json!({
        "principal": ctx.principal().map(|p| p.as_str()),
        "client": ctx.client_info().map(|c| c.name.clone()),
        "era": format!("{:?}", ctx.era()),
        "version": ctx.protocol_version(),
        "trace": ctx.meta().get("example.com/trace"),
        "elicitation": ctx.client_capabilities().has("elicitation"),
    })
}

#[tokio::test]
async fn a_tool_sees_the_client_the_era_and_the_meta_and_no_principal_without_authentication() {
    let s = start(
        Server::builder("t", "0").tool::<whoami>(),
        HttpConfig::default(),
    )
    .await;
    let mut params = tool_call("whoami", json!({}));
    params["_meta"] = json!({});
    let got = call(
        &s.url,
        None,
        "tools/call",
        params,
        json!({ "elicitation": {} }),
    )
    .await;
    let seen: Value = serde_json::from_str(text(&got["result"])).expect("JSON text");
    assert_eq!(
        seen,
        json!({
            "principal": null,
            "client": "mcp-tasks-tests",
            "era": "Modern",
            "version": "2026-07-28",
            "trace": null,
            "elicitation": true,
        })
    );
}

#[tokio::test]
async fn over_stdio_a_legacy_call_has_no_principal_and_the_client_of_initialize() {
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let server = Server::builder("t", "0")
        .tool::<whoami>()
        .build()
        .expect("set up");
    tokio::spawn(server.serve_io(read, write).into_future());
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(client_read));
    let mut send = async |msg: Value| {
        use tokio::io::AsyncWriteExt;
        client_write
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .expect("write");
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "legacy-client", "version": "1.2" } } }),
    )
    .await;
    send(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": { "example.com/trace": "t-1" } } }),
    )
    .await;
    let reply = loop {
        let line = lines.next_line().await.expect("read").expect("a line");
        let msg: Value = serde_json::from_str(&line).expect("JSON");
        if msg["id"] == 2 {
            break msg;
        }
    };
    let seen: Value = serde_json::from_str(text(&reply["result"])).expect("JSON text");
    assert_eq!(
        seen,
        json!({
            "principal": null,
            "client": "legacy-client",
            "era": "Legacy",
            "version": "2025-11-25",
            "trace": "t-1",
            "elicitation": false,
        })
    );
    // The server reads a `_meta` sent again once, and makes its tree only when a tool asks:
    // each call still sees its own, whether the text changed (a trace id per request) or not.
    for (id, trace) in [(3, "t-2"), (4, "t-1"), (5, "t-1"), (6, "t-3")] {
        send(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "whoami", "arguments": {}, "_meta": { "example.com/trace": trace } } }),
        )
        .await;
        let reply = loop {
            let line = lines.next_line().await.expect("read").expect("a line");
            let msg: Value = serde_json::from_str(&line).expect("JSON");
            if msg["id"] == id {
                break msg;
            }
        };
        let seen: Value = serde_json::from_str(text(&reply["result"])).expect("JSON text");
        assert_eq!(seen["trace"], trace, "call {id}");
    }
}

// ---------------------------------------------------------------------------------------------
// Errors on the wire.

/// Fails with whatever `how` says, through `?`.
#[tool]
async fn fail(how: String) -> Result<String, ToolError> {
    match how.as_str() {
        "rpc" => Err(RpcError::new(-32042, "not today").with_data(json!({ "retry": false })))?,
        "anyhow" => Err(anyhow::anyhow!("disk on fire").context("saving the report"))?,
        "boxed" => Err(Box::<dyn std::error::Error + Send + Sync>::from("boxed up"))?,
        "io" => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file",
        ))?,
        _ => {
            Err(ToolError::new("quota exceeded")
                .with_structured(json!({ "limit": 10, "used": 10 })))
        }
    }
}

#[tokio::test]
async fn question_mark_on_an_rpc_error_answers_that_json_rpc_error_and_others_are_tool_errors() {
    let s = start(
        Server::builder("t", "0").tool::<fail>(),
        HttpConfig::default(),
    )
    .await;
    let failing = async |how: &str| {
        call(
            &s.url,
            None,
            "tools/call",
            tool_call("fail", json!({ "how": how })),
            json!({}),
        )
        .await
    };
    let rpc = failing("rpc").await;
    assert_eq!(
        rpc["error"],
        json!({ "code": -32042, "message": "not today", "data": { "retry": false } }),
        "{rpc}"
    );
    assert!(rpc.get("result").is_none());

    for (how, expected) in [
        ("anyhow", "saving the report: disk on fire"),
        ("boxed", "boxed up"),
        ("io", "no such file"),
    ] {
        let got = failing(how).await;
        assert_eq!(got["result"]["isError"], true, "{how}: {got}");
        assert_eq!(text(&got["result"]), expected, "{how}");
    }

    let structured = failing("quota").await;
    assert_eq!(structured["result"]["isError"], true);
    assert_eq!(text(&structured["result"]), "quota exceeded");
    assert_eq!(
        structured["result"]["structuredContent"],
        json!({ "limit": 10, "used": 10 })
    );
}

// ---------------------------------------------------------------------------------------------
// MRTR: what runs again when an inline 2026-07-28 call asks for input.

/// What the tool did, in order, across every run of the call.
#[derive(Default)]
struct Trace(Mutex<Vec<String>>);

impl Trace {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Asks two questions inline and notes each step.
#[tool]
async fn two_questions(ctx: ToolContext, trace: State<Arc<Trace>>) -> Result<String, ToolError> {
    trace.push(format!("start (replay: {})", ctx.is_replay()));
    let ElicitOutcome::Accept(first) = ctx.elicit::<Name>("First name?").await? else {
        return Err(ToolError::new("declined"));
    };
    trace.push(format!("got first: {}", first.name));
    let ElicitOutcome::Accept(last) = ctx.elicit::<Name>("Last name?").await? else {
        return Err(ToolError::new("declined"));
    };
    trace.push(format!("got last: {}", last.name));
    Ok(format!("{} {}", first.name, last.name))
}

/// The call runs three times (two questions, two retries). Each run starts from the top; the
/// answers gathered so far come back at once, so everything before the newest question runs
/// again, and only the last run gets past the last question.
#[tokio::test]
async fn an_inline_modern_call_that_asks_twice_is_replayed_from_the_top_on_each_retry() {
    // The test keeps a handle on the registered value: register an `Arc` and take `State<Arc<_>>`.
    let traced = Arc::new(Trace::default());
    let server = Server::builder("t", "0")
        .state(traced.clone())
        .tool::<two_questions>();
    let s = start(server, HttpConfig::default()).await;
    let caps = json!({ "elicitation": {} });
    let answer = |name: &str| json!({ "action": "accept", "content": { "name": name } });

    let round1 = call(
        &s.url,
        None,
        "tools/call",
        tool_call("two_questions", json!({})),
        caps.clone(),
    )
    .await;
    assert_eq!(round1["result"]["resultType"], "input_required", "{round1}");
    assert_eq!(traced.take(), ["start (replay: false)"]);

    let mut retry = tool_call("two_questions", json!({}));
    retry["requestState"] = round1["result"]["requestState"].clone();
    retry["inputResponses"] = json!({ "elicit-0": answer("Ada") });
    let round2 = call(&s.url, None, "tools/call", retry, caps.clone()).await;
    assert_eq!(round2["result"]["resultType"], "input_required", "{round2}");
    assert_eq!(traced.take(), ["start (replay: true)", "got first: Ada"]);

    let mut retry = tool_call("two_questions", json!({}));
    retry["requestState"] = round2["result"]["requestState"].clone();
    retry["inputResponses"] = json!({ "elicit-1": answer("Lovelace") });
    let round3 = call(&s.url, None, "tools/call", retry, caps).await;
    assert_eq!(text(&round3["result"]), "Ada Lovelace", "{round3}");
    assert_eq!(
        traced.take(),
        [
            "start (replay: true)",
            "got first: Ada",
            "got last: Lovelace"
        ]
    );
}
