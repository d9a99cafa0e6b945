//! Slow and greedy clients over real TCP against the example server binary (`--http`): the
//! connection deadlines and the connection cap of `HttpConfig`. A client that stalls half-way
//! through its headers, or sits on an idle keep-alive connection, is closed at the header
//! deadline; a body that does not arrive in time gets 408; at the cap (or the open-file limit)
//! stalled connections make room for a new client, and when none can, a new connection is
//! answered 503 at once while the server goes on serving; a long SSE response is never cut by
//! the deadlines.

use mcp_tasks_tests::http::{HttpServer, modern_post};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The `HOST:PORT` of an `http://HOST:PORT/mcp` URL.
fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").trim_end_matches("/mcp")
}

/// A connection that sends half a request's headers and then nothing.
async fn stalled(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: appl")
        .await
        .expect("half a header");
    s
}

/// Reads until the server closes the connection (or `within` passes); what it sent, and whether
/// it closed.
async fn until_closed(s: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&seen).into(), true),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&seen).into(), false),
        }
    }
}

/// Reads until what the server sent contains `needle`, it closes, or `within` passes.
async fn read_until(s: &mut TcpStream, needle: &str, within: Duration) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    while !String::from_utf8_lossy(&seen).contains(needle) {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&seen).into()
}

/// Whether `tools/list` is answered over a fresh connection, in the modern era.
async fn serves(url: &str) -> bool {
    let client = reqwest::Client::new();
    let answer = match modern_post(&client, url, "tools/list", json!({}), json!({}))
        .timeout(Duration::from_secs(5))
        .send()
        .await
    {
        Ok(answer) => answer,
        Err(e) => {
            eprintln!("tools/list not answered: {e}");
            return false;
        }
    };
    let status = answer.status();
    match answer.json::<serde_json::Value>().await {
        Ok(answer) => answer["result"]["tools"].is_array(),
        Err(e) => {
            eprintln!("tools/list answered {status}, not JSON: {e}");
            false
        }
    }
}

/// The acceptance test: 1,000 connections that stall in their headers are all closed within the
/// header deadline, and a new client is served meanwhile.
#[tokio::test]
async fn stalled_connections_are_closed_at_the_header_deadline() {
    let s = HttpServer::start_bin("example_server", &["--header-timeout-ms", "1000"]);
    let addr = authority(&s.url).to_owned();
    // Each connection is watched from the moment it is open: closed within the deadline of its
    // own start (with room for a loaded machine), not counting how long opening the rest took.
    let mut watchers = Vec::new();
    for _ in 0..1_000 {
        let mut c = stalled(&addr).await;
        let opened = Instant::now();
        watchers.push(tokio::spawn(async move {
            let (_, closed) = until_closed(&mut c, Duration::from_secs(10)).await;
            closed.then(|| opened.elapsed())
        }));
    }
    assert!(serves(&s.url).await, "a new client is served");
    let mut longest = Duration::ZERO;
    for w in watchers {
        let lived = w
            .await
            .unwrap()
            .expect("a stalled connection was still open after 10 s");
        longest = longest.max(lived);
    }
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(3)).contains(&longest),
        "the longest-lived stalled connection lasted {longest:?} (deadline 1 s)"
    );
}

/// A keep-alive connection left idle after its response is closed at the same deadline.
#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let s = HttpServer::start_bin("example_server", &["--header-timeout-ms", "500"]);
    let mut c = TcpStream::connect(authority(&s.url)).await.unwrap();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
        "_meta": mcp_tasks_tests::modern_meta(json!({})) } })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/list\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(request.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (seen, closed) = until_closed(&mut c, Duration::from_secs(5)).await;
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(closed, "the idle connection stayed open");
    let took = started.elapsed();
    assert!(
        (Duration::from_millis(400)..Duration::from_secs(3)).contains(&took),
        "closed after {took:?}; the deadline is 500 ms"
    );
}

/// Headers in time, body too slow: 408 at the body deadline, and the connection closes.
#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_408() {
    let s = HttpServer::start_bin("example_server", &["--body-timeout-ms", "500"]);
    let mut c = TcpStream::connect(authority(&s.url)).await.unwrap();
    c.write_all(
        b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
          accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
          mcp-method: tools/list\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let (seen, closed) = until_closed(&mut c, Duration::from_secs(5)).await;
    assert!(seen.starts_with("HTTP/1.1 408"), "{seen}");
    assert!(seen.contains("did not arrive within 500 ms"), "{seen}");
    assert!(closed, "the connection stayed open after 408");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The server goes on.
    assert!(serves(&s.url).await);
}

/// A connection that has sent a whole `tools/call` of `sleep` for `ms`, and waits for its answer.
async fn busy(addr: &str, ms: u64) -> TcpStream {
    let mut c = TcpStream::connect(addr).await.expect("connect");
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sleep", "arguments": { "ms": ms },
        "_meta": mcp_tasks_tests::modern_meta(json!({})) } })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: sleep\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(request.as_bytes()).await.expect("a request");
    c
}

/// At the cap, the oldest connection that has not sent a request is closed to make room: a
/// crowd of stalled clients cannot keep a real one out.
#[tokio::test]
async fn at_the_cap_stalled_connections_make_room_for_a_new_client() {
    let s = HttpServer::start_bin(
        "example_server",
        &["--max-connections", "20", "--header-timeout-ms", "30000"],
    );
    let addr = authority(&s.url).to_owned();
    let mut stalled_ones = Vec::new();
    for _ in 0..25 {
        stalled_ones.push(stalled(&addr).await);
    }
    let started = Instant::now();
    assert!(serves(&s.url).await, "a new client is served");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    // The oldest stalled connection was closed to make room (without an answer).
    let (seen, closed) = until_closed(&mut stalled_ones[0], Duration::from_secs(2)).await;
    assert!(closed && seen.is_empty(), "{seen:?}");
}

/// At the cap with every connection busy with a request, a new one is answered 503 at once and
/// closed; the busy ones are answered, and once they close a new client is served.
#[tokio::test]
async fn at_the_cap_with_every_connection_busy_a_new_one_gets_503_at_once() {
    let s = HttpServer::start_bin("example_server", &["--max-connections", "5"]);
    let addr = authority(&s.url).to_owned();
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(busy(&addr, 4_000).await);
    }
    // Let the server read their requests before the one over the cap (a connection that has
    // not sent a request yet would be closed to make room instead). A second is ample on a
    // loaded machine, and the calls last 4.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut over = TcpStream::connect(&addr).await.unwrap();
    let started = Instant::now();
    let (seen, closed) = until_closed(&mut over, Duration::from_secs(5)).await;
    assert!(seen.starts_with("HTTP/1.1 503"), "{seen:?}");
    assert!(closed);
    // At once: well before the busy calls end.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // A whole response: its body is as long as it says.
    let (head, body) = seen.split_once("\r\n\r\n").expect("a head and a body");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a content-length");
    assert_eq!(length.parse::<usize>().unwrap(), body.len(), "{seen:?}");
    assert!(head.contains("retry-after: 1"), "{seen:?}");
    for mut c in held {
        let seen = read_until(&mut c, "slept 4000 ms", Duration::from_secs(8)).await;
        assert!(
            seen.contains("slept 4000 ms"),
            "a busy connection was answered: {seen:?}"
        );
    }
    // Once the server has seen them close (each was dropped after its answer).
    let deadline = Instant::now() + Duration::from_secs(5);
    while !serves(&s.url).await {
        assert!(
            Instant::now() < deadline,
            "no new client served once the busy ones closed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The acceptance test with a file limit: a server with `RLIMIT_NOFILE` 1,024 (and the default
/// cap of 10,000, so the limit comes first) and 1,100 stalled connections serves a new client
/// within a second.
#[tokio::test]
async fn with_1024_files_1100_stalled_connections_do_not_keep_a_new_client_out() {
    let prlimit = std::path::Path::new("/usr/bin/prlimit");
    assert!(
        prlimit.exists(),
        "this test runs the server under prlimit (Debian package util-linux)"
    );
    let mut command = std::process::Command::new(prlimit);
    command
        .arg("--nofile=1024:1024")
        .arg(mcp_tasks_tests::example_bin("example_server"))
        .args(["--http", "127.0.0.1:0", "--header-timeout-ms", "30000"])
        .env("RUST_LOG", "warn");
    let s = HttpServer::start_command(command);
    let addr = authority(&s.url).to_owned();
    let mut held = Vec::new();
    for _ in 0..1_100 {
        held.push(stalled(&addr).await);
    }
    let started = Instant::now();
    assert!(serves(&s.url).await, "a new client is served");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "served after {took:?}");
}

/// A long call streamed as SSE (a progress token, keepalive every 200 ms) outlives the header
/// deadline many times over: a connection busy with a response is never idle.
#[tokio::test]
async fn a_long_sse_response_is_not_cut_by_the_deadlines() {
    let s = HttpServer::start_bin(
        "example_server",
        &[
            "--header-timeout-ms",
            "300",
            "--body-timeout-ms",
            "300",
            "--keepalive-ms",
            "200",
        ],
    );
    let client = reqwest::Client::new();
    let mut meta = mcp_tasks_tests::modern_meta(json!({}));
    meta["progressToken"] = json!("p");
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sleep", "arguments": { "ms": 2000 }, "_meta": meta } });
    let started = Instant::now();
    let text = client
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "sleep")
        .body(body.to_string())
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("answered")
        .text()
        .await
        .expect("the whole stream");
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert!(text.contains("notifications/progress"), "{text}");
    assert!(text.contains("slept 2000 ms"), "{text}");
}
