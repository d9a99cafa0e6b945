//! The Streamable HTTP transport over real HTTP on 127.0.0.1 (reqwest against the conformance
//! fixture server binary): header validation, statuses, legacy sessions, owners, shutdown.

use mcp_tasks_tests::http::{HttpServer, SseEvents};
use mcp_tasks_tests::modern_meta;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn tasks_caps() -> Value {
    json!({ "elicitation": {}, "extensions": { TASKS: {} } })
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

/// A modern request: body with `_meta`, and the routing headers a conformant client sends
/// (`name`: the `Mcp-Name` value, when the method has one).
fn modern_post(
    c: &reqwest::Client,
    url: &str,
    method: &str,
    name: Option<&str>,
    params: Value,
    caps: Value,
) -> reqwest::RequestBuilder {
    modern_post_as(c, url, method, method, name, params, caps)
}

/// [`modern_post`] with `Mcp-Method: header_method`.
fn modern_post_as(
    c: &reqwest::Client,
    url: &str,
    method: &str,
    header_method: &str,
    name: Option<&str>,
    mut params: Value,
    caps: Value,
) -> reqwest::RequestBuilder {
    params["_meta"] = modern_meta(caps);
    let mut b = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", header_method)
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string());
    if let Some(name) = name {
        b = b.header("mcp-name", name);
    }
    b
}

async fn send(b: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let r = b.send().await.expect("the server answers");
    let status = r.status();
    let text = r.text().await.expect("a body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

fn error_code(body: &Value) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error, got {body}"))
}

fn greet() -> Value {
    json!({ "name": "greet", "arguments": { "name": "Ada" } })
}

#[tokio::test]
async fn modern_requests_are_answered_and_headers_that_disagree_with_the_body_are_400_32020() {
    let s = HttpServer::start(&[]);
    let c = client();
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "tools/call",
        Some("greet"),
        greet(),
        json!({}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "Hello, Ada!");

    // Whitespace around a value and a base64 sentinel are both fine.
    let ok = modern_post(&c, &s.url, "tools/call", None, greet(), json!({}))
        .header("mcp-name", "=?base64?Z3JlZXQ=?=");
    assert_eq!(send(ok).await.0, StatusCode::OK);
    let ok = modern_post(
        &c,
        &s.url,
        "tools/call",
        Some("  greet  "),
        greet(),
        json!({}),
    );
    assert_eq!(send(ok).await.0, StatusCode::OK);

    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        (
            "Mcp-Name differs from params.name",
            modern_post(&c, &s.url, "tools/call", Some("other"), greet(), json!({})),
        ),
        (
            "Mcp-Name missing on tools/call",
            modern_post(&c, &s.url, "tools/call", None, greet(), json!({})),
        ),
        (
            "Mcp-Name is broken base64",
            modern_post(&c, &s.url, "tools/call", None, greet(), json!({}))
                .header("mcp-name", "=?base64?!!!?="),
        ),
        (
            "Mcp-Method differs from the method",
            modern_post_as(
                &c,
                &s.url,
                "tools/call",
                "tasks/get",
                Some("greet"),
                greet(),
                json!({}),
            ),
        ),
        (
            "Mcp-Method sent twice",
            modern_post(&c, &s.url, "tools/call", Some("greet"), greet(), json!({}))
                .header("mcp-method", "tools/call"),
        ),
        (
            "Mcp-Method differs in case",
            modern_post_as(
                &c,
                &s.url,
                "tools/list",
                "TOOLS/LIST",
                None,
                json!({}),
                json!({}),
            ),
        ),
        (
            "MCP-Protocol-Version differs from _meta",
            c.post(&s.url)
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-method", "tools/list")
                .body(
                    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list",
                        "params": { "_meta": modern_meta(json!({})) } })
                    .to_string(),
                ),
        ),
        (
            "Mcp-Name differs from params.taskId",
            modern_post(
                &c,
                &s.url,
                "tasks/get",
                Some("another-task"),
                json!({ "taskId": "some-task" }),
                tasks_caps(),
            ),
        ),
    ];
    for (what, request) in cases {
        let (status, body) = send(request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {body}");
        assert_eq!(error_code(&body), -32020, "{what}: {body}");
    }

    // Missing headers entirely (a raw POST with a modern body).
    let bare = c
        .post(&s.url)
        .header("content-type", "application/json")
        .body(
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list",
                "params": { "_meta": modern_meta(json!({})) } })
            .to_string(),
        );
    let (status, body) = send(bare).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), -32020, "{body}");
}

#[tokio::test]
async fn statuses_unknown_method_404_bad_meta_400_get_delete_405_large_body_413_foreign_origin_403()
{
    // A small body limit, so the oversized body below fits in the socket buffers and the client
    // reads the 413 rather than a reset connection.
    let s = HttpServer::start(&["--max-body", "2048"]);
    let c = client();
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "no/such",
        None,
        json!({}),
        json!({}),
    ))
    .await;
    assert_eq!((status, error_code(&body)), (StatusCode::NOT_FOUND, -32601));
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "tasks/result",
        None,
        json!({ "taskId": "x" }),
        tasks_caps(),
    ))
    .await;
    assert_eq!((status, error_code(&body)), (StatusCode::NOT_FOUND, -32601));

    // Capability gate and version: 400 with their own codes.
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "tasks/get",
        Some("x"),
        json!({ "taskId": "x" }),
        json!({}),
    ))
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32021)
    );
    let mut unsupported = modern_meta(json!({}));
    unsupported["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let (status, body) = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "1900-01-01")
            .header("mcp-method", "tools/list")
            .body(
                json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list",
                "params": { "_meta": unsupported } })
                .to_string(),
            ),
    )
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32022),
        "{body}"
    );
    // Neither per-request _meta nor a session.
    let (status, body) = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .body(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" }).to_string()),
    )
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32602),
        "{body}"
    );
    // `_meta` without its required protocol version.
    let (status, body) = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .header("mcp-method", "tools/list")
            .body(
                json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/list",
                    "params": { "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } } })
                .to_string(),
            ),
    )
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32602),
        "{body}"
    );
    // Not JSON.
    let (status, body) = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32700),
        "{body}"
    );

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = c
            .request(method.clone(), &s.url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("answer");
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }

    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let (status, body) = send(
        c.post(&s.url)
            .header("content-type", "application/json")
            .body(huge),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    let foreign = modern_post(&c, &s.url, "tools/list", None, json!({}), json!({}))
        .header("origin", "https://evil.example");
    assert_eq!(send(foreign).await.0, StatusCode::FORBIDDEN);
    let rebinding = modern_post(&c, &s.url, "tools/list", None, json!({}), json!({}))
        .header("host", "evil.example");
    assert_eq!(send(rebinding).await.0, StatusCode::FORBIDDEN);
    let local = modern_post(&c, &s.url, "tools/list", None, json!({}), json!({}))
        .header("origin", "http://localhost:5173");
    assert_eq!(send(local).await.0, StatusCode::OK);

    let wrong_type = c
        .post(&s.url)
        .header("content-type", "text/plain")
        .body("{}");
    assert_eq!(send(wrong_type).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

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

async fn initialize(c: &reqwest::Client, url: &str) -> String {
    initialize_with(c, url, json!({})).await
}

/// Opens a legacy session for a client with these capabilities; returns its id.
async fn initialize_with(c: &reqwest::Client, url: &str, capabilities: Value) -> String {
    let r = legacy_post(
        c,
        url,
        None,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": { "name": "t", "version": "1" } } }),
    )
    .send()
    .await
    .expect("answer");
    assert_eq!(r.status(), StatusCode::OK);
    let id = r.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
    id
}

#[tokio::test]
async fn legacy_sessions_open_with_initialize_end_with_delete_and_expire_when_idle() {
    let s = HttpServer::start(&["--session-idle-ms", "400"]);
    let c = client();
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });

    let session = initialize(&c, &s.url).await;
    let (status, body) = send(legacy_post(&c, &s.url, Some(&session), list.clone())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["result"]["tools"][0]["execution"]["taskSupport"],
        "forbidden"
    );
    let ok = send(legacy_post(
        &c,
        &s.url,
        Some(&session),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    ))
    .await;
    assert_eq!(ok.0, StatusCode::ACCEPTED);

    let r = c
        .delete(&s.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("answer");
    assert_eq!(r.status(), StatusCode::OK);
    let (status, body) = send(legacy_post(&c, &s.url, Some(&session), list.clone())).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _) = send(legacy_post(
        &c,
        &s.url,
        Some("no-such-session"),
        list.clone(),
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Idle for longer than 400 ms: gone. Used within it: kept.
    let kept = initialize(&c, &s.url).await;
    let idle = initialize(&c, &s.url).await;
    let until = Instant::now() + Duration::from_millis(1200);
    while Instant::now() < until {
        let (status, _) = send(legacy_post(&c, &s.url, Some(&kept), list.clone())).await;
        assert_eq!(status, StatusCode::OK, "a session in use must not expire");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = send(legacy_post(&c, &s.url, Some(&idle), list.clone())).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an idle session expires");
}

/// How long a test waits for a message it expects.
const WAIT: Duration = Duration::from_secs(10);

/// In a session, a POST that reuses the id of a request in flight is refused (400, `-32600`)
/// and takes nothing from that request: its questions still come on its own stream, and it
/// completes there.
#[tokio::test]
async fn a_post_reusing_an_in_flight_id_is_refused_and_the_first_keeps_its_stream() {
    let s = HttpServer::start(&[]);
    let c = client();
    let session = initialize_with(&c, &s.url, json!({ "elicitation": {} })).await;
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "test_input_required_result_multi_round", "arguments": {} } });
    let mut first = SseEvents::open(legacy_post(&c, &s.url, Some(&session), call.clone())).await;
    let ask = first
        .next(WAIT)
        .await
        .expect("a message on the first stream");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");

    let (status, body) = send(legacy_post(&c, &s.url, Some(&session), call.clone())).await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::BAD_REQUEST, -32600),
        "{body}"
    );
    assert_eq!(body["id"], 7, "{body}");

    // Accepts an elicitation with this content: the answer POST is taken (202), nothing more.
    let accept = async |ask: &Value, content: Value| {
        let answer = json!({ "jsonrpc": "2.0", "id": ask["id"],
            "result": { "action": "accept", "content": content } });
        let (status, _) = send(legacy_post(&c, &s.url, Some(&session), answer)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    };
    accept(&ask, json!({ "name": "Ada" })).await;
    let ask = first
        .next(WAIT)
        .await
        .expect("a message on the first stream");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert!(
        ask["params"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Step 2")),
        "{ask}"
    );
    accept(&ask, json!({ "color": "green" })).await;
    let done = first
        .next(WAIT)
        .await
        .expect("a message on the first stream");
    assert_eq!(done["id"], 7, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Ada likes green");
}

async fn create_task(c: &reqwest::Client, url: &str, token: &str) -> String {
    let (status, body) = send(
        modern_post(
            c,
            url,
            "tools/call",
            Some("slow_compute"),
            json!({ "name": "slow_compute", "arguments": { "seconds": 60 } }),
            tasks_caps(),
        )
        .bearer_auth(token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["resultType"], "task", "{body}");
    body["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned()
}

#[tokio::test]
async fn tasks_are_bound_to_their_bearer_principal() {
    let s = HttpServer::start(&["--token", "alice-token=alice", "--token", "bob-token=bob"]);
    let c = client();
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "tools/list",
        None,
        json!({}),
        json!({}),
    ))
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, _) = send(
        modern_post(&c, &s.url, "tools/list", None, json!({}), json!({})).bearer_auth("wrong"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let task = create_task(&c, &s.url, "alice-token").await;
    let requests = |id: &str| {
        vec![
            ("tasks/get", json!({ "taskId": id })),
            (
                "tasks/update",
                json!({ "taskId": id, "inputResponses": {} }),
            ),
            ("tasks/cancel", json!({ "taskId": id })),
        ]
    };
    for (method, params) in requests(&task) {
        let (_, theirs) = send(
            modern_post(
                &c,
                &s.url,
                method,
                Some(&task),
                params.clone(),
                tasks_caps(),
            )
            .bearer_auth("bob-token"),
        )
        .await;
        let unknown_id = "no-such-task";
        let mut unknown_params = params.clone();
        unknown_params["taskId"] = json!(unknown_id);
        let (_, unknown) = send(
            modern_post(
                &c,
                &s.url,
                method,
                Some(unknown_id),
                unknown_params,
                tasks_caps(),
            )
            .bearer_auth("bob-token"),
        )
        .await;
        assert_eq!(error_code(&theirs), -32602, "{method}: {theirs}");
        assert_eq!(
            theirs["error"], unknown["error"],
            "{method}: someone else's task must look unknown"
        );
    }
    // Still Alice's, still running: Bob's cancel did nothing.
    let (_, mine) = send(
        modern_post(
            &c,
            &s.url,
            "tasks/get",
            Some(&task),
            json!({ "taskId": task }),
            tasks_caps(),
        )
        .bearer_auth("alice-token"),
    )
    .await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    let (_, cancelled) = send(
        modern_post(
            &c,
            &s.url,
            "tasks/cancel",
            Some(&task),
            json!({ "taskId": task }),
            tasks_caps(),
        )
        .bearer_auth("alice-token"),
    )
    .await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
}

#[tokio::test]
async fn a_modern_task_asks_for_input_and_completes_over_http() {
    let s = HttpServer::start(&[]);
    let c = client();
    let (_, created) = send(modern_post(
        &c,
        &s.url,
        "tools/call",
        Some("confirm_delete"),
        json!({ "name": "confirm_delete", "arguments": { "filename": "a.txt" } }),
        tasks_caps(),
    ))
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let get = || {
        modern_post(
            &c,
            &s.url,
            "tasks/get",
            Some(&task),
            json!({ "taskId": task }),
            tasks_caps(),
        )
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let key = loop {
        let (_, got) = send(get()).await;
        if got["result"]["status"] == "input_required" {
            let requests = got["result"]["inputRequests"]
                .as_object()
                .expect("inputRequests");
            let (key, request) = requests.iter().next().expect("one request");
            assert_eq!(request["method"], "elicitation/create");
            break key.clone();
        }
        assert!(Instant::now() < deadline, "never asked for input: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, ack) = send(modern_post(
        &c, &s.url, "tasks/update", Some(&task),
        json!({ "taskId": task, "inputResponses": { key: { "action": "accept", "content": { "confirm": true } } } }),
        tasks_caps(),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{ack}");
    loop {
        let (_, got) = send(get()).await;
        if got["result"]["status"] == "completed" {
            assert_eq!(
                got["result"]["result"]["content"][0]["text"],
                "Deleted a.txt"
            );
            break;
        }
        assert!(Instant::now() < deadline, "never completed: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn shutdown_finishes_the_response_in_flight() {
    let mut s = HttpServer::start(&[]);
    let c = client();
    // Inline (no tasks extension): the response comes after one second of work.
    let pending = tokio::spawn(send(modern_post(
        &c,
        &s.url,
        "tools/call",
        Some("slow_compute"),
        json!({ "name": "slow_compute", "arguments": { "seconds": 1 } }),
        json!({}),
    )));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let exited = tokio::task::spawn_blocking(move || s.terminate(Duration::from_secs(10)));
    let (status, body) = pending.await.expect("joined");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "result: computed after 1s"
    );
    let status = exited
        .await
        .expect("joined")
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn x_mcp_header_arguments_must_agree_with_their_mcp_param_headers() {
    let s = HttpServer::start(&[]);
    let c = client();
    let (_, tools) = send(modern_post(
        &c,
        &s.url,
        "tools/list",
        None,
        json!({}),
        json!({}),
    ))
    .await;
    let lookup = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "regional_lookup")
        .expect("regional_lookup is listed");
    assert_eq!(
        lookup["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    let call = |region: Option<&str>, header: Option<&str>| {
        let mut args = json!({ "query": "cafés" });
        if let Some(r) = region {
            args["region"] = json!(r);
        }
        let b = modern_post(
            &c,
            &s.url,
            "tools/call",
            Some("regional_lookup"),
            json!({ "name": "regional_lookup", "arguments": args }),
            json!({}),
        );
        match header {
            Some(h) => b.header("Mcp-Param-Region", h),
            None => b,
        }
    };
    let mismatch = |(status, body): (StatusCode, Value), needle: &str| {
        assert_eq!(
            (status, error_code(&body)),
            (StatusCode::BAD_REQUEST, -32020),
            "{body}"
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{needle:?} not in {message}");
    };

    // Agreeing, plainly or base64-encoded (the sentinel a client uses for non-ASCII values).
    let (status, body) = send(call(Some("eu-west"), Some("eu-west"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "cafés in eu-west: nothing found"
    );
    let (status, body) = send(call(Some("Zürich"), Some("=?base64?WsO8cmljaA==?="))).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Disagreeing, missing, stray, or broken: 400 / -32020, saying which.
    mismatch(
        send(call(Some("eu-west"), Some("us-east"))).await,
        "`us-east`",
    );
    mismatch(
        send(call(Some("eu-west"), None)).await,
        "Mcp-Param-Region header is required",
    );
    mismatch(
        send(call(None, Some("eu-west"))).await,
        "do not set `region`",
    );
    mismatch(
        send(call(Some("Hello"), Some("=?base64?SGVsbG8?="))).await,
        "invalid base64",
    );
    // Without the argument and the header, the tool's own argument check answers: a tool error
    // naming the argument, which the model can read.
    let (status, body) = send(call(None, None)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "invalid arguments: missing field `region`",
        "{body}"
    );
}

#[tokio::test]
async fn a_2026_initialize_is_404_32601_while_a_2025_initialize_opens_a_session() {
    let s = HttpServer::start(&[]);
    let c = client();
    let (status, body) = send(modern_post(
        &c,
        &s.url,
        "initialize",
        None,
        json!({ "protocolVersion": "2026-07-28", "capabilities": {} }),
        json!({}),
    ))
    .await;
    assert_eq!(
        (status, error_code(&body)),
        (StatusCode::NOT_FOUND, -32601),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server/discover"),
        "{body}"
    );
    assert_eq!(body["id"], 1);
    let session = initialize(&c, &s.url).await;
    assert!(!session.is_empty());
}
