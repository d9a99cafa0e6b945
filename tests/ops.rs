//! The operations endpoints of `serve_http`, as an orchestrator meets them: `GET /healthz` and
//! `GET /readyz` on the example server's MCP address or on an address of their own, with
//! readiness following a real task store (Redis) going away and coming back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::redis::RedisServer;
use serde_json::Value;

/// `GET path` on `host:port` over a plain connection: the status code and the body.
fn raw_get(address: &str, path: &str) -> (u16, String) {
    let mut stream =
        TcpStream::connect(address).unwrap_or_else(|e| panic!("connect {address}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, body.to_owned())
}

/// [`raw_get`], with the body read as JSON (`null` if it is not).
fn get(address: &str, path: &str) -> (u16, Value) {
    let (status, body) = raw_get(address, path);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// `host:port` of an endpoint URL `http://host:port/mcp`.
fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_owned()
}

/// Polls `/readyz` until its status is `want`, failing after 15 s.
fn ready_becomes(address: &str, want: u16) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = get(address, "/readyz");
        if status == want {
            return body;
        }
        assert!(Instant::now() < deadline, "/readyz stayed {status}: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Beside the MCP endpoint by default: alive, and ready on the memory store.
#[test]
fn healthz_and_readyz_answer_beside_the_mcp_endpoint() {
    let server = HttpServer::start_bin("example_server", &[]);
    let at = address(&server.url);
    assert_eq!(
        get(&at, "/healthz"),
        (200, serde_json::json!({ "status": "alive" }))
    );
    assert_eq!(
        get(&at, "/readyz"),
        (200, serde_json::json!({ "status": "ready" }))
    );
    assert_eq!(get(&at, "/nothing-here").0, 404);
}

/// Readiness is the store's: Redis killed, `/readyz` says `503 unavailable` with the store's
/// reason while `/healthz` stays `200`; Redis back (with its data), ready again.
#[test]
fn readyz_follows_the_task_store() {
    let mut redis = RedisServer::start();
    let server = HttpServer::start_bin("example_server", &["--store", &redis.url]);
    let at = address(&server.url);
    ready_becomes(&at, 200);
    redis.restart_keeping_data(|| {
        let body = ready_becomes(&at, 503);
        assert_eq!(body["status"], "unavailable", "{body}");
        let reason = body["reason"].as_str().unwrap_or_default();
        assert!(reason.starts_with("task store failure"), "{body}");
        assert_eq!(get(&at, "/healthz").0, 200, "alive while the store is away");
    });
    assert_eq!(ready_becomes(&at, 200)["status"], "ready");
}

/// `--ops-address` moves both to a listener of their own; the MCP address no longer has them.
#[test]
fn ops_address_serves_them_apart() {
    // The ops port is found free and let go before the server takes it: anything may take it
    // meanwhile (the server's own MCP listener, on port 0, once did), and the server then exits
    // with `AddrInUse`. Another port is tried then.
    let (server, ops) = (0..4)
        .find_map(|_| {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let ops = format!("127.0.0.1:{port}");
            let mut server = HttpServer::start_bin("example_server", &["--ops-address", &ops]);
            if address(&server.url) == ops {
                return None;
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while TcpStream::connect(&ops).is_err() {
                if server.exited() {
                    return None;
                }
                assert!(Instant::now() < deadline, "nothing listens on {ops}");
                std::thread::sleep(Duration::from_millis(20));
            }
            Some((server, ops))
        })
        .expect("the server took its ops address within four tries");
    assert_eq!(get(&ops, "/healthz").0, 200);
    assert_eq!(get(&ops, "/readyz").0, 200);
    let at = address(&server.url);
    assert_eq!(get(&at, "/healthz").0, 404);
    assert_eq!(get(&at, "/readyz").0, 404);
}

/// A modern request's reply (JSON or one SSE event).
async fn call(c: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let caps = serde_json::json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let text = mcp_tasks_tests::http::modern_post(c, url, method, params, caps)
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&text);
    serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The value of the sample of `name` whose labels include every one of `labels`.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        if !(rest.starts_with('{') || rest.starts_with(' ')) {
            return None;
        }
        let all = labels
            .iter()
            .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
        all.then(|| rest.rsplit(' ').next()?.parse().ok()).flatten()
    })
}

/// `GET /metrics` on the example server counts what happened: requests by method and outcome
/// (a method MCP does not define counts as `other`), an inline tool's duration, tasks created,
/// completed and cancelled by tool, store operations, open connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_tools_tasks_and_the_store() {
    use serde_json::json;
    let server = HttpServer::start_bin("example_server", &[]);
    let c = reqwest::Client::new();
    let greeted = call(
        &c,
        &server.url,
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "Ada" } }),
    )
    .await;
    assert!(greeted.get("result").is_some(), "{greeted}");
    let quick = call(
        &c,
        &server.url,
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": 0 } }),
    )
    .await;
    let quick = quick["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{quick}"))
        .to_owned();
    let slow = call(
        &c,
        &server.url,
        "tools/call",
        json!({ "name": "countdown", "arguments": { "seconds": 600 } }),
    )
    .await;
    let slow = slow["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{slow}"))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    while call(&c, &server.url, "tasks/get", json!({ "taskId": quick })).await["result"]["status"]
        != "completed"
    {
        assert!(Instant::now() < deadline, "never completed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled = call(&c, &server.url, "tasks/cancel", json!({ "taskId": slow })).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let unknown = call(&c, &server.url, "made/up", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    let at = address(&server.url);
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let (status, text) = raw_get(&at, "/metrics");
        assert_eq!(status, 200, "{text}");
        // The cancelled tool's run is counted once its driver has seen the cancellation.
        if sample(
            &text,
            "mcp_tasks_total",
            &[("tool", "countdown"), ("event", "cancelled")],
        ) == Some(1.0)
        {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "no cancelled task counted:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let expect = |name: &str, labels: &[(&str, &str)], at_least: f64| {
        let value =
            sample(&text, name, labels).unwrap_or_else(|| panic!("no {name} {labels:?}:\n{text}"));
        assert!(
            value >= at_least,
            "{name} {labels:?} = {value}, want at least {at_least}"
        );
    };
    expect(
        "mcp_requests_total",
        &[("method", "tools/call"), ("outcome", "ok")],
        3.0,
    );
    expect(
        "mcp_requests_total",
        &[("method", "tasks/get"), ("outcome", "ok")],
        1.0,
    );
    expect(
        "mcp_requests_total",
        &[("method", "other"), ("outcome", "error")],
        1.0,
    );
    assert!(!text.contains("made/up"), "a client cannot make labels up");
    expect(
        "mcp_tool_call_duration_seconds_count",
        &[("tool", "greet"), ("mode", "inline")],
        1.0,
    );
    expect(
        "mcp_tool_call_duration_seconds_count",
        &[("tool", "countdown"), ("mode", "task")],
        1.0,
    );
    expect(
        "mcp_tasks_total",
        &[("tool", "countdown"), ("event", "created")],
        2.0,
    );
    expect(
        "mcp_tasks_total",
        &[("tool", "countdown"), ("event", "completed")],
        1.0,
    );
    expect(
        "mcp_store_operation_duration_seconds_count",
        &[("operation", "create")],
        2.0,
    );
    expect(
        "mcp_store_operation_duration_seconds_count",
        &[("operation", "cancel")],
        1.0,
    );
    expect("mcp_http_connections", &[], 0.0);
    expect("mcp_tasks", &[("state", "running")], 0.0);
}
