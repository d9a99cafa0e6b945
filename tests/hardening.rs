//! Hostile and careless input: every answer exact, every session and question left intact, and
//! the embedding API that stops a server from its host program. In-process servers run over an
//! in-memory pipe ([`Pipe`]); the HTTP ones are the conformance fixture binary.

use mcp_tasks_runtime::{
    ElicitOutcome, Principal, Server, ServerBuilder, ToolContext, ToolError, tool,
};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{StdioClient, modern, poll_modern};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::oneshot;

const WAIT: Duration = Duration::from_secs(10);

/// A server in this process over an in-memory pipe, read and written as raw lines.
struct Pipe {
    tx: WriteHalf<DuplexStream>,
    rx: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Pipe {
    fn start(server: Server) -> Pipe {
        Pipe::start_as(server, None)
    }

    /// A client that the server runs as `principal` (`None`: anonymous).
    fn start_as(server: Server, principal: Option<&str>) -> Pipe {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (r, w) = tokio::io::split(theirs);
        let (stop, stopped) = oneshot::channel::<()>();
        let mut serve = server.serve_io(r, w);
        if let Some(principal) = principal {
            serve = serve.principal(Principal::new(principal));
        }
        let served = tokio::spawn(
            serve
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .into_future(),
        );
        let (or, ow) = tokio::io::split(ours);
        Pipe {
            tx: ow,
            rx: BufReader::new(or).lines(),
            stop: Some(stop),
            served,
        }
    }

    async fn send_raw(&mut self, line: &str) {
        self.tx.write_all(line.as_bytes()).await.expect("write");
        self.tx.write_all(b"\n").await.expect("write");
    }

    async fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string()).await;
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(WAIT, self.rx.next_line())
            .await
            .expect("the server wrote in time")
            .expect("read")
            .expect("the server's output is open")
    }

    /// The next message that is not a notification.
    async fn next(&mut self) -> Value {
        loop {
            let v: Value = serde_json::from_str(&self.line().await).expect("JSON");
            if v.get("id").is_some() {
                return v;
            }
        }
    }

    async fn initialize(&mut self, capabilities: Value) -> Value {
        self.send(
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": { "name": "t", "version": "1" } } }),
        )
        .await;
        self.next().await
    }
}

/// A name.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// The name.
    name: String,
}

/// Asks the client for a name (inline: a server-to-client request in a legacy session).
#[tool]
async fn ask(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("Your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello!".into()),
    }
}

/// Greets.
#[tool]
async fn hello() -> String {
    "hello".into()
}

fn builder() -> ServerBuilder {
    Server::builder("hardening", "0")
        .tool::<ask>()
        .tool::<hello>()
}

fn server() -> Server {
    builder().build().expect("set up")
}

// ---- ids ---------------------------------------------------------------------------------------

/// The id must come back as sent, digit for digit, whatever its size; a double cannot hold
/// 2^64+7, and 2^64-1 does not fit an i64.
#[tokio::test]
async fn ids_beyond_64_bits_come_back_byte_for_byte_over_stdio() {
    let mut p = Pipe::start(server());
    p.initialize(json!({})).await;
    // The last two are beyond what even a double holds (1.8e308): 400 digits.
    let (nines, minus_ones) = ("9".repeat(400), format!("-{}", "1".repeat(400)));
    for id in [
        "18446744073709551623",
        "18446744073709551615",
        "-9223372036854775809",
        "123456789012345678901234567890",
        &nines,
        &minus_ones,
    ] {
        p.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let line = p.line().await;
        assert!(line.contains(&format!(r#""id":{id}"#)), "{id}: {line}");
        assert!(line.contains(r#""result":{}"#), "{line}");
        // Errors echo it too.
        p.send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such"}}"#
        ))
        .await;
        let line = p.line().await;
        assert!(line.contains(&format!(r#""id":{id}"#)), "{id}: {line}");
        assert!(line.contains("-32601"), "{line}");
    }
    // A fraction is not an integer id.
    p.send_raw(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#)
        .await;
    let v: Value = serde_json::from_str(&p.line().await).unwrap();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], Value::Null);
}

/// Set when [`block`]'s call ends (a cancelled inline call is dropped).
static BLOCK_CANCELLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct SetOnDrop;

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        BLOCK_CANCELLED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Waits until its call is cancelled.
#[tool]
async fn block() -> String {
    let _ended = SetOnDrop;
    std::future::pending::<()>().await;
    unreachable!()
}

/// `notifications/cancelled` finds a request by an id beyond 64 bits too.
#[tokio::test]
async fn a_request_with_an_id_beyond_64_bits_can_be_cancelled() {
    let mut p = Pipe::start(builder().tool::<block>().build().expect("set up"));
    p.initialize(json!({})).await;
    let id = "18446744073709551623";
    p.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"block","arguments":{{}}}}}}"#
    ))
    .await;
    // Cancelling a neighbour (what a double would round the id to) does nothing.
    p.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":18446744073709551616}}"#)
        .await;
    p.send_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(p.next().await["id"], 1);
    assert!(!BLOCK_CANCELLED.load(std::sync::atomic::Ordering::SeqCst));
    p.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
    ))
    .await;
    let deadline = std::time::Instant::now() + WAIT;
    while !BLOCK_CANCELLED.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(std::time::Instant::now() < deadline, "not cancelled");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn ids_beyond_64_bits_come_back_byte_for_byte_over_http() {
    let s = HttpServer::start(&[]);
    for id in ["18446744073709551623".to_owned(), "7".repeat(400)] {
        id_comes_back_over_http(&s, &id).await;
    }
}

async fn id_comes_back_over_http(s: &HttpServer, id: &str) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{"_meta":{}}}}}"#,
        mcp_tasks_tests::modern_meta(json!({}))
    );
    let r = reqwest::Client::new()
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(body)
        .send()
        .await
        .expect("answer");
    assert_eq!(r.status(), StatusCode::OK);
    let text = r.text().await.unwrap();
    assert!(text.contains(&format!(r#""id":{id}"#)), "{text}");
    assert!(text.contains("supportedVersions"), "{text}");
}

// ---- legacy sessions over HTTP -----------------------------------------------------------------

fn legacy_post(
    c: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> reqwest::RequestBuilder {
    let mut b = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        b = b
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    b
}

async fn send(b: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let r = b.send().await.expect("the server answers");
    let status = r.status();
    let text = r.text().await.expect("a body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn initialize_body(capabilities: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": { "name": "t", "version": "1" } } })
}

/// Opens a session; its id and the `initialize` result.
async fn open_session(c: &reqwest::Client, url: &str, token: Option<&str>) -> (String, Value) {
    let mut b = legacy_post(c, url, None, initialize_body(json!({})));
    if let Some(t) = token {
        b = b.bearer_auth(t);
    }
    let r = b.send().await.expect("answer");
    assert_eq!(r.status(), StatusCode::OK);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let body: Value = r.json().await.unwrap();
    (id, body["result"].clone())
}

fn call(id: u64, name: &str, task: bool) -> Value {
    let mut params = json!({ "name": name, "arguments": {} });
    if task {
        params["task"] = json!({});
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// A 404 tells a 2025-11-25 client its session is gone: only an unknown session may get one.
/// Errors inside a live session are JSON-RPC errors with HTTP 200, and the session goes on.
#[tokio::test]
async fn a_legacy_http_session_answers_32601_and_32021_with_200_and_lives_on() {
    let s = HttpServer::start(&[]);
    let c = reqwest::Client::new();
    let (session, _) = open_session(&c, &s.url, None).await;
    let post = |body: Value| legacy_post(&c, &s.url, Some(&session), body);

    // A `required` tool without `task`: -32601, HTTP 200.
    let (status, body) = send(post(call(2, "failing_job", false))).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::OK, Some(-32601)),
        "{body}"
    );
    // An unknown method too.
    let (status, body) = send(post(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "no/such" }),
    ))
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::OK, Some(-32601)),
        "{body}"
    );
    // Input the client did not declare it can give: -32021, HTTP 200.
    let (status, body) = send(post(call(4, "ask_name", false))).await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::OK, Some(-32021)),
        "{body}"
    );
    // The session still works.
    let (status, body) = send(post(
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list" }),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["tools"].is_array(), "{body}");
    // An unknown session is the one 404.
    let (status, _) = send(legacy_post(
        &c,
        &s.url,
        Some("no-such-session"),
        json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/list" }),
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// `initialize` on a live session is refused; the session, and its tasks, stay as they were.
#[tokio::test]
async fn a_second_initialize_on_a_live_http_session_is_refused_and_the_session_is_intact() {
    let s = HttpServer::start(&[]);
    let c = reqwest::Client::new();
    let (session, _) = open_session(&c, &s.url, None).await;
    let post = |body: Value| legacy_post(&c, &s.url, Some(&session), body);
    let mut slow = call(2, "slow_compute", true);
    slow["params"]["arguments"] = json!({ "seconds": 60 });
    let (_, created) = send(post(slow)).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();

    let (status, body) = send(post(initialize_body(json!({})))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized"),
        "{body}"
    );

    let (status, body) = send(post(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": { "taskId": task } }),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["taskId"], task.as_str(), "{body}");
}

#[tokio::test]
async fn a_second_initialize_over_stdio_is_refused_and_the_session_is_intact() {
    let mut c = StdioClient::conformance();
    c.initialize(json!({})).await;
    let created = c
        .result(
            "tools/call",
            json!({ "name": "slow_compute", "arguments": { "seconds": 60 }, "task": {} }),
        )
        .await;
    let task = created["task"]["taskId"].as_str().unwrap().to_owned();
    let err = c
        .error(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "again", "version": "2" } }),
        )
        .await;
    assert_eq!(err["code"], -32600, "{err}");
    // Same session: its task is still its own, and its version is still 2025-11-25.
    let got = c.result("tasks/get", json!({ "taskId": task })).await;
    assert_eq!(got["taskId"], task.as_str());
    let tools = c.result("tools/list", json!({})).await;
    assert!(tools["tools"][0]["execution"].is_object(), "{tools}");
}

/// A legacy task belongs to its session: another session of the same server gets the same
/// `-32602` as for an id that never existed, and an empty list.
#[tokio::test]
async fn another_session_cannot_see_read_or_cancel_a_task() {
    let s = HttpServer::start(&[]);
    let c = reqwest::Client::new();
    let (a, _) = open_session(&c, &s.url, None).await;
    let (b, _) = open_session(&c, &s.url, None).await;
    let mut slow = call(2, "slow_compute", true);
    slow["params"]["arguments"] = json!({ "seconds": 30 });
    let (_, created) = send(legacy_post(&c, &s.url, Some(&a), slow)).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    for method in ["tasks/get", "tasks/cancel", "tasks/result"] {
        let (status, body) = send(legacy_post(
            &c,
            &s.url,
            Some(&b),
            json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": { "taskId": task } }),
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        assert_eq!(body["error"]["code"], -32602, "{method}: {body}");
    }
    let (_, list) = send(legacy_post(
        &c,
        &s.url,
        Some(&b),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tasks/list" }),
    ))
    .await;
    assert_eq!(list["result"]["tasks"], json!([]), "{list}");
    let (_, mine) = send(legacy_post(
        &c,
        &s.url,
        Some(&a),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": { "taskId": task } }),
    ))
    .await;
    assert_eq!(mine["result"]["taskId"], task.as_str(), "{mine}");
}

/// 2025-11-25: a server that cannot tell requestors apart SHOULD NOT declare `tasks.list`.
#[tokio::test]
async fn tasks_list_is_advertised_only_where_requestors_are_known() {
    let anonymous = HttpServer::start(&[]);
    let c = reqwest::Client::new();
    let (_, result) = open_session(&c, &anonymous.url, None).await;
    let tasks = &result["capabilities"]["tasks"];
    assert!(tasks["requests"]["tools"]["call"].is_object(), "{result}");
    assert!(tasks.get("list").is_none(), "{result}");

    let authenticated = HttpServer::start(&["--token", "t=alice"]);
    let (_, result) = open_session(&c, &authenticated.url, Some("t")).await;
    assert!(
        result["capabilities"]["tasks"]["list"].is_object(),
        "{result}"
    );
}

// ---- answers -----------------------------------------------------------------------------------

fn tasks_caps() -> Value {
    json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// Starts the fixture's `confirm_delete` as a modern task and waits until it asks: its id, and the
/// key of its question.
async fn confirm_delete_asking(c: &mut StdioClient, caps: &Value) -> (String, String) {
    let created = c
        .result(
            "tools/call",
            modern(
                json!({ "name": "confirm_delete", "arguments": { "filename": "a.txt" } }),
                caps.clone(),
            ),
        )
        .await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = poll_modern(c, &id, caps, |t| t["status"] == "input_required").await;
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    (id, key)
}

/// `tasks/update` with answers that cannot be what was asked: `-32602` naming the key, nothing
/// used up; the right answer afterwards completes the task.
#[tokio::test]
async fn a_wrong_answer_in_tasks_update_is_32602_and_the_question_stays_open() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let (id, key) = confirm_delete_asking(&mut c, &caps).await;
    for wrong in [
        json!("yes"),
        json!({ "confirm": true }),
        json!({ "action": "maybe" }),
        json!({ "action": "accept", "content": [1] }),
    ] {
        let err = c
            .error(
                "tasks/update",
                modern(
                    json!({ "taskId": id, "inputResponses": { key.clone(): wrong.clone() } }),
                    caps.clone(),
                ),
            )
            .await;
        assert_eq!(err["code"], -32602, "{wrong}: {err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains(&format!("inputResponses.{key}")),
            "{wrong}: {err}"
        );
        let still = c
            .result("tasks/get", modern(json!({ "taskId": id }), caps.clone()))
            .await;
        assert_eq!(still["status"], "input_required", "{still}");
        assert!(still["inputRequests"].get(&key).is_some(), "{still}");
    }
    c.result(
        "tasks/update",
        modern(
            json!({ "taskId": id, "inputResponses": {
                key: { "action": "accept", "content": { "confirm": true } } } }),
            caps.clone(),
        ),
    )
    .await;
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
}

/// The server's peak resident memory so far (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("procfs");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kb * 1024
}

/// What one request costs in memory stays within a small multiple of its size: a 4 MB
/// `tasks/update` whose 60,000 answers are under keys nobody asked is counted, not built into
/// trees (it raised the server's peak memory by 55 MB, 14 times its size); the one answer to the
/// outstanding question in it is taken, and the task completes.
#[tokio::test]
async fn a_tasks_update_with_60000_unknown_keys_costs_about_its_own_size() {
    let caps = tasks_caps();
    let mut c = StdioClient::conformance();
    let (id, key) = confirm_delete_asking(&mut c, &caps).await;
    let mut responses = serde_json::Map::new();
    for i in 0..60_000 {
        responses.insert(
            format!("unknown-key-{i:06}"),
            json!({ "action": "decline", "x": "yyyyyyyyyyyy" }),
        );
    }
    responses.insert(
        key,
        json!({ "action": "accept", "content": { "confirm": true } }),
    );
    let params = json!({ "taskId": id, "inputResponses": responses });
    let size = params.to_string().len() as u64;
    assert!(size > 3_500_000, "{size}");
    let before = peak_rss(c.pid());
    c.result("tasks/update", modern(params, caps.clone())).await;
    let grew = peak_rss(c.pid()).saturating_sub(before);
    assert!(
        grew < 4 * size,
        "one {size}-byte tasks/update raised the server's peak memory by {grew} bytes"
    );
    let done = poll_modern(&mut c, &id, &caps, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
}

/// The same check on an MRTR retry: `-32602` naming the key, and the same `requestState` with a
/// fitting answer goes on.
#[tokio::test]
async fn a_wrong_answer_in_an_mrtr_retry_is_32602_and_the_state_still_works() {
    let caps = json!({ "elicitation": {} });
    let mut p = Pipe::start(server());
    let ask = |id: u64, extra: Value| {
        let mut params = json!({ "name": "ask", "arguments": {} });
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": modern(params, caps.clone()) })
    };
    p.send(&ask(1, json!({}))).await;
    let first = p.next().await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let (key, _) = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let state = first["result"]["requestState"].clone();
    for (n, wrong) in [json!({ "action": "maybe" }), json!({ "content": {} })]
        .into_iter()
        .enumerate()
    {
        p.send(&ask(
            2 + n as u64,
            json!({ "requestState": state, "inputResponses": { key.clone(): wrong } }),
        ))
        .await;
        let err = p.next().await;
        assert_eq!(err["error"]["code"], -32602, "{err}");
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("inputResponses.{key}")),
            "{err}"
        );
    }
    p.send(&ask(
        9,
        json!({ "requestState": state, "inputResponses": {
            key.clone(): { "action": "accept", "content": { "name": "Ada" } } } }),
    ))
    .await;
    let done = p.next().await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}

/// A client that answers a server-to-client request with something that is not a response (here
/// an `error` that is not an error object) fails that request at once; the tool does not hang.
#[tokio::test]
async fn a_malformed_response_to_a_server_request_fails_the_waiting_tool() {
    let mut p = Pipe::start(server());
    p.initialize(json!({ "elicitation": {} })).await;
    p.send(&call(1, "ask", false)).await;
    let asked = p.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    p.send(&json!({ "jsonrpc": "2.0", "id": asked["id"], "error": "nope" }))
        .await;
    // The client is told its message was invalid, and the call ends with the reason.
    let mut got_call = None;
    for _ in 0..2 {
        let m = p.next().await;
        if m["id"] == 1 {
            got_call = Some(m);
        } else {
            assert_eq!(m["error"]["code"], -32600, "{m}");
        }
    }
    let reply = got_call.expect("the call was answered");
    let text = reply.to_string();
    assert!(text.contains("malformed"), "{reply}");
    // The connection goes on.
    p.send(&call(2, "hello", false)).await;
    assert_eq!(p.next().await["result"]["content"][0]["text"], "hello");
}

// ---- embedding ---------------------------------------------------------------------------------

/// `serve_io(..).with_graceful_shutdown(..)` returns once the host's future resolves, input still
/// open.
#[tokio::test]
async fn a_host_stops_the_server_with_its_own_future() {
    let mut p = Pipe::start(server());
    p.initialize(json!({})).await;
    p.stop.take().unwrap().send(()).unwrap();
    let served = tokio::time::timeout(WAIT, &mut p.served)
        .await
        .expect("the server stopped")
        .expect("no panic");
    assert!(served.is_ok(), "{served:?}");
}

// ---- limits ------------------------------------------------------------------------------------

use mcp_tasks_runtime::server::{HttpConfig, Limits};

/// Runs as a task until cancelled.
#[tool(task_support = "required")]
async fn wait(ctx: ToolContext) -> Result<String, ToolError> {
    ctx.cancelled().await;
    Ok("stopped".into())
}

/// Asks two questions at once, as a task.
#[tool(task_support = "required")]
async fn ask_two(ctx: ToolContext) -> Result<String, ToolError> {
    use std::future::IntoFuture;
    let (a, b) = tokio::try_join!(
        ctx.elicit::<Name>("First?").key("a").into_future(),
        ctx.elicit::<Name>("Second?").key("b").into_future()
    )?;
    Ok(format!("{a:?} {b:?}"))
}

/// Asks one question, as a task.
#[tool(task_support = "required")]
async fn ask_task(ctx: ToolContext) -> Result<String, ToolError> {
    match ctx.elicit::<Name>("Your name?").await? {
        ElicitOutcome::Accept(Name { name }) => Ok(name),
        _ => Ok(String::new()),
    }
}

fn limited(limits: Limits) -> Server {
    Server::builder("limits", "0")
        .tool::<ask>()
        .tool::<hello>()
        .tool::<wait>()
        .tool::<ask_two>()
        .tool::<ask_task>()
        .limits(limits)
        .build()
        .expect("set up")
}

fn assert_limit(error: &Value, limit: &str, max: u64) {
    assert_eq!(error["code"], -32010, "{error}");
    assert_eq!(error["data"]["limit"], limit, "{error}");
    assert_eq!(error["data"]["max"], max, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("Limit reached: "),
        "{error}"
    );
}

async fn legacy_task(p: &mut Pipe, id: u64, name: &str) -> Value {
    p.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": name, "arguments": {}, "task": {} } }))
        .await;
    p.next().await
}

/// Tasks per owner and in total: the task over the limit is refused, its owner's others and
/// other owners go on, and a place that frees up can be taken again.
#[tokio::test]
async fn tasks_per_owner_and_in_total_are_limited() {
    let server = limited(Limits::default().tasks_per_owner(2).tasks(3));
    let mut a = Pipe::start_as(server.clone(), Some("a"));
    let mut b = Pipe::start_as(server, Some("b"));
    a.initialize(json!({})).await;
    b.initialize(json!({})).await;
    let first = legacy_task(&mut a, 1, "wait").await;
    let first = first["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned();
    assert!(legacy_task(&mut a, 2, "wait").await["result"].is_object());
    let over = legacy_task(&mut a, 3, "wait").await;
    assert_limit(&over["error"], "tasks_per_owner", 2);
    // Another owner is not affected by a's limit, but all together there may be three.
    assert!(legacy_task(&mut b, 1, "wait").await["result"].is_object());
    let over = legacy_task(&mut b, 2, "wait").await;
    assert_limit(&over["error"], "tasks", 3);
    // Inline calls go on.
    b.send(&call(3, "hello", false)).await;
    assert_eq!(b.next().await["result"]["content"][0]["text"], "hello");
    // Cancelling one of a's tasks frees its place.
    a.send(
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "tasks/cancel",
        "params": { "taskId": first } }),
    )
    .await;
    assert_eq!(a.next().await["result"]["status"], "cancelled");
    let deadline = std::time::Instant::now() + WAIT;
    let mut n = 5;
    loop {
        let again = legacy_task(&mut a, n, "wait").await;
        if again["result"].is_object() {
            break;
        }
        assert_limit(&again["error"], "tasks_per_owner", 2);
        assert!(
            std::time::Instant::now() < deadline,
            "the place was not freed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        n += 1;
    }
}

/// Outstanding input requests per task: the one over the limit fails at once with `-32010`
/// (here the tool returns it with `?`, so its task fails with it).
#[tokio::test]
async fn input_requests_per_task_are_limited() {
    let caps = json!({ "elicitation": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let mut p = Pipe::start(limited(Limits::default().inputs_per_task(1)));
    p.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": modern(json!({ "name": "ask_two", "arguments": {} }), caps.clone()) }))
        .await;
    let created = p.next().await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let deadline = std::time::Instant::now() + WAIT;
    let mut n = 2;
    let failed = loop {
        p.send(&json!({ "jsonrpc": "2.0", "id": n, "method": "tasks/get",
            "params": modern(json!({ "taskId": id }), caps.clone()) }))
            .await;
        let got = p.next().await;
        if got["result"]["status"] == "failed" {
            break got;
        }
        assert!(std::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
        n += 1;
    };
    assert_limit(&failed["result"]["error"], "inputs_per_task", 1);
    p.send(
        &json!({ "jsonrpc": "2.0", "id": 1000, "method": "tools/call",
        "params": modern(json!({ "name": "hello", "arguments": {} }), caps) }),
    )
    .await;
    assert_eq!(p.next().await["result"]["content"][0]["text"], "hello");
}

/// Server-to-client requests waiting per session: the one over the limit is refused at once and
/// its call answers `-32010`; the one waiting is still answered.
#[tokio::test]
async fn input_requests_per_session_are_limited() {
    let mut p = Pipe::start(limited(Limits::default().inputs_per_session(1)));
    p.initialize(json!({ "elicitation": {} })).await;
    p.send(&call(1, "ask", false)).await;
    let asked = p.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    p.send(&call(2, "ask", false)).await;
    let over = p.next().await;
    assert_eq!(over["id"], 2, "{over}");
    assert_limit(&over["error"], "inputs_per_session", 1);
    p.send(&json!({ "jsonrpc": "2.0", "id": asked["id"],
        "result": { "action": "accept", "content": { "name": "Ada" } } }))
        .await;
    let done = p.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

/// A message over the stdio limit is skipped unread and answered `-32700`; the next one is
/// served.
#[tokio::test]
async fn messages_over_the_stdio_limit_are_refused() {
    let mut p = Pipe::start(limited(Limits::default().max_message(200)));
    p.initialize(json!({})).await;
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(300)
    );
    p.send_raw(&long).await;
    let err = p.next().await;
    assert_eq!(err["error"]["code"], -32700, "{err}");
    assert_eq!(
        err["error"]["message"],
        "Parse error: message longer than 200 bytes"
    );
    p.send_raw(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(p.next().await["id"], 2);
}

/// A server over Streamable HTTP in this process; stopped when dropped.
struct LocalHttp {
    url: String,
    _stop: oneshot::Sender<()>,
}

async fn local_http(server: Server, config: HttpConfig) -> LocalHttp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(
        server
            .serve_http(listener)
            .config(config)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    LocalHttp { url, _stop: stop }
}

/// Legacy sessions: the one over the limit is not opened (`-32010`); the open ones go on, and
/// ending one makes room.
#[tokio::test]
async fn legacy_sessions_are_limited() {
    let s = local_http(
        limited(Limits::default()),
        HttpConfig::default().max_sessions(2),
    )
    .await;
    let c = reqwest::Client::new();
    let (one, _) = open_session(&c, &s.url, None).await;
    let (two, _) = open_session(&c, &s.url, None).await;
    let (status, body) = send(legacy_post(&c, &s.url, None, initialize_body(json!({})))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_limit(&body["error"], "sessions", 2);
    for session in [&one, &two] {
        let (status, body) = send(legacy_post(
            &c,
            &s.url,
            Some(session),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }),
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let r = c
        .delete(&s.url)
        .header("mcp-session-id", &one)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    open_session(&c, &s.url, None).await;
}

/// A legacy session's backlog (requests waiting for the client to open a stream): the request
/// over it is refused at once, so its tool fails with `-32010` instead of waiting forever, and
/// the request already waiting is not dropped.
#[tokio::test]
async fn a_full_session_backlog_refuses_new_requests_and_drops_none() {
    let s = local_http(
        limited(Limits::default()),
        HttpConfig::default().session_backlog(1),
    )
    .await;
    let c = reqwest::Client::new();
    let mut b = legacy_post(
        &c,
        &s.url,
        None,
        initialize_body(json!({ "elicitation": {} })),
    );
    b = b.header("accept", "application/json");
    let r = b.send().await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let post = |body: Value| legacy_post(&c, &s.url, Some(&session), body);
    let task = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "ask_task", "arguments": {}, "task": {} } })
    };
    let get = |id: u64, task: &str| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tasks/get",
        "params": { "taskId": task } })
    };
    let (_, first) = send(post(task(1))).await;
    let first = first["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Wait until the first task's question is in the backlog.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (_, got) = send(post(get(2, &first))).await;
        if got["result"]["status"] == "input_required" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, second) = send(post(task(3))).await;
    let second = second["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = loop {
        let (_, got) = send(post(get(4, &second))).await;
        if got["result"]["status"] == "failed" {
            break got;
        }
        assert!(std::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        failed["result"]["statusMessage"]
            .as_str()
            .unwrap()
            .contains("Limit reached"),
        "{failed}"
    );
    let (_, result) = send(post(
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tasks/result", "params": { "taskId": second } }),
    ))
    .await;
    assert_limit(&result["error"], "session_backlog", 1);
    // The first task's question waited: a GET stream gets it.
    let mut stream = c
        .get(&s.url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    // (After the stream's priming event.)
    let mut text = String::new();
    while !text.contains("elicitation/create") {
        let chunk = tokio::time::timeout(WAIT, stream.chunk())
            .await
            .expect("in time")
            .unwrap()
            .unwrap_or_else(|| panic!("the stream ended: {text}"));
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.starts_with("id: 0-0\nretry: "), "{text}");
    assert!(text.contains(first.as_str()), "{text}");
}

/// `serve_http(..).with_graceful_shutdown(..)` serves until the host's future resolves, then
/// returns.
#[tokio::test]
async fn a_host_stops_the_http_server_with_its_own_future() {
    // Bound here and handed over: a port found free and released could be taken by a test
    // running beside this one before the server binds it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(
        server()
            .serve_http(listener)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .into_future(),
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let c = reqwest::Client::new();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let r = legacy_post(&c, &url, None, initialize_body(json!({})))
            .send()
            .await;
        if r.is_ok_and(|r| r.status() == StatusCode::OK) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.send(()).unwrap();
    let served = tokio::time::timeout(WAIT, serving)
        .await
        .expect("the server stopped")
        .expect("no panic");
    assert!(served.is_ok(), "{served:?}");
    assert!(
        legacy_post(&c, &url, None, initialize_body(json!({})))
            .send()
            .await
            .is_err()
    );
}
