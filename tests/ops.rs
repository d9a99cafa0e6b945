//! The operations endpoints of `serve_http`, as an orchestrator meets them: `GET /healthz` and
//! `GET /readyz` on the example server's MCP address or on an address of their own, with
//! readiness following a real task store (Redis) going away and coming back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::redis::RedisServer;
use serde_json::Value;

/// `GET path` on `host:port` over a plain connection: the status code and the JSON body.
fn get(address: &str, path: &str) -> (u16, Value) {
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
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
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
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let ops = format!("127.0.0.1:{port}");
    let server = HttpServer::start_bin("example_server", &["--ops-address", &ops]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&ops).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {ops}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(get(&ops, "/healthz").0, 200);
    assert_eq!(get(&ops, "/readyz").0, 200);
    let at = address(&server.url);
    assert_eq!(get(&at, "/healthz").0, 404);
    assert_eq!(get(&at, "/readyz").0, 404);
}
