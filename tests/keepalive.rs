//! Keepalive (`ServerConfig::keepalive_interval`, here 300 ms through `--keepalive-ms`): a long
//! `tools/call` whose request carried `_meta.progressToken` gets `notifications/progress` for that
//! token at the configured pace, with values that increase and the tool's status as the message;
//! the same call without a token gets nothing but its result. Over real stdio pipes and real
//! HTTP, both eras, for inline calls and for the wait before a promotion; over HTTP, a silent SSE
//! stream gets `: keep-alive` comment lines at the same pace.

use mcp_tasks_tests::http::{HttpServer, SseEvents, SsePart as Part};
use mcp_tasks_tests::{StdioClient, example_bin, modern};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The interval the servers run with.
const EVERY: Duration = Duration::from_millis(300);

/// Progress notifications seen while a call ran: when (since the request was sent) and params.
type Seen = Vec<(Duration, Value)>;

/// Checks the pace and shape of keepalive progress for `token`: at least `min` notifications,
/// never much more than one interval apart (nor before the first), no more of them than intervals
/// passed (nothing else was sent: keepalives only), values strictly increasing. (Times are when the
/// test read them: a busy machine may bunch two together, so the floor is on the count, not on
/// each gap.)
fn check_pace(seen: &Seen, token: &Value, min: usize, every: Duration) {
    let shown = || format!("{seen:#?}");
    assert!(
        seen.len() >= min,
        "{} progress notifications, expected at least {min}: {}",
        seen.len(),
        shown()
    );
    assert!(
        seen.iter().all(|(_, p)| &p["progressToken"] == token),
        "{}",
        shown()
    );
    let values: Vec<f64> = seen
        .iter()
        .map(|(_, p)| p["progress"].as_f64().expect("progress is a number"))
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "values do not increase: {values:?}"
    );
    let mut before = Duration::ZERO;
    for (at, _) in seen {
        let gap = *at - before;
        // At short intervals a loaded machine's stalls are several intervals long.
        assert!(
            gap <= (every * 4).max(Duration::from_secs(1)),
            "{gap:?} passed without a keepalive: {}",
            shown()
        );
        before = *at;
    }
    let intervals = (before.as_secs_f64() / every.as_secs_f64()).floor() as usize;
    assert!(
        seen.len() <= intervals.max(1),
        "{} keepalives in {before:?}, at most one per {every:?}: {}",
        seen.len(),
        shown()
    );
}

/// The `tools/call` params of `name` with `args`, a progress token when `token` is given, and the
/// modern `_meta` (no capabilities) when `modern_era`.
fn call_params(name: &str, args: Value, token: Option<&Value>, modern_era: bool) -> Value {
    let mut params = json!({ "name": name, "arguments": args });
    if modern_era {
        params = modern(params, json!({}));
    }
    if let Some(token) = token {
        params["_meta"]["progressToken"] = token.clone();
    }
    params
}

/// Sends a `tools/call` and reads until its response: the progress notifications on the way (with
/// when they came), everything else that came, and the response.
async fn call_watching(c: &mut StdioClient, params: Value) -> (Seen, Vec<Value>, Value) {
    let id = c.id();
    let sent = Instant::now();
    c.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
        .await;
    let (mut progress, mut other) = (Vec::new(), Vec::new());
    loop {
        let m = c.recv().await;
        if m.get("id") == Some(&id) && m.get("method").is_none() {
            return (progress, other, m);
        }
        if m["method"] == "notifications/progress" {
            progress.push((sent.elapsed(), m["params"].clone()));
        } else {
            other.push(m);
        }
    }
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text result: {response}"))
}

/// One era on one stdio connection: `sleep` with a token is kept alive (no status: no message),
/// without one it gets only its result; `countdown` (inline here) carries its status.
async fn inline_calls_over_stdio(c: &mut StdioClient, modern_era: bool) {
    let token = json!(format!("sleep-{modern_era}"));
    let params = call_params("sleep", json!({ "ms": 1500 }), Some(&token), modern_era);
    let (seen, other, response) = call_watching(c, params).await;
    assert_eq!(text(&response), "slept 1500 ms");
    assert_eq!(other, Vec::<Value>::new());
    check_pace(&seen, &token, 3, EVERY);
    assert!(
        seen.iter().all(|(_, p)| p.get("message").is_none()),
        "{seen:#?}"
    );

    let params = call_params("sleep", json!({ "ms": 1000 }), None, modern_era);
    let (seen, other, response) = call_watching(c, params).await;
    assert_eq!(text(&response), "slept 1000 ms");
    assert_eq!(
        (seen, other),
        (Vec::new(), Vec::new()),
        "a call without a token gets nothing else"
    );

    // A numeric token, and a tool that sets its status ("2s left", then "1s left").
    let token = json!(if modern_era { 7 } else { 8 });
    let params = call_params(
        "countdown",
        json!({ "seconds": 2 }),
        Some(&token),
        modern_era,
    );
    let (seen, _, response) = call_watching(c, params).await;
    assert_eq!(text(&response), "liftoff");
    check_pace(&seen, &token, 4, EVERY);
    let messages: Vec<&str> = seen
        .iter()
        .map(|(_, p)| p["message"].as_str().expect("the status"))
        .collect();
    assert_eq!(messages.first(), Some(&"2s left"), "{messages:?}");
    assert_eq!(messages.last(), Some(&"1s left"), "{messages:?}");
}

#[tokio::test]
async fn inline_calls_with_a_token_are_kept_alive_over_stdio_in_both_eras() {
    let mut c = StdioClient::spawn_with(&example_bin("example_server"), &["--keepalive-ms", "300"]);
    c.initialize(json!({})).await;
    inline_calls_over_stdio(&mut c, false).await;
    inline_calls_over_stdio(&mut c, true).await;
}

#[tokio::test]
async fn with_keepalive_off_a_call_with_a_token_gets_only_its_result() {
    let mut c = StdioClient::spawn_with(&example_bin("example_server"), &["--keepalive-ms", "off"]);
    c.initialize(json!({})).await;
    for modern_era in [false, true] {
        let params = call_params("sleep", json!({ "ms": 700 }), Some(&json!("t")), modern_era);
        let (seen, other, response) = call_watching(&mut c, params).await;
        assert_eq!(text(&response), "slept 700 ms");
        assert_eq!((seen, other), (Vec::new(), Vec::new()));
    }
}

#[tokio::test]
async fn a_keepalive_under_100_ms_stops_the_server_at_setup() {
    let out = tokio::process::Command::new(example_bin("example_server"))
        .args(["--keepalive-ms", "5"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("keepalive_interval")
            && stderr.contains("is 5ms; it must be at least 100ms"),
        "{stderr}"
    );
}

/// The wait before a promotion: `tally {to: 100}` (1 s, its status "counted to N") on
/// `fallback_server --task-fallback`, promoted after 300 ms into a fallback task for a client
/// without tasks; keepalive every 100 ms here. Progress comes while it waits, none after the answer.
#[tokio::test]
async fn a_promotion_wait_is_kept_alive_over_stdio_in_both_eras() {
    let every = Duration::from_millis(100);
    let mut c = StdioClient::spawn_with(
        &example_bin("fallback_server"),
        &["--task-fallback", "--keepalive-ms", "100"],
    );
    c.initialize(json!({})).await;
    for modern_era in [false, true] {
        let token = json!(format!("tally-{modern_era}"));
        let params = call_params("tally", json!({ "to": 100 }), Some(&token), modern_era);
        let (seen, _, response) = call_watching(&mut c, params).await;
        assert!(
            text(&response).contains("is running in the background as task"),
            "{response}"
        );
        // Two intervals fit in the 300 ms before the promotion; one stall of the machine takes
        // one of them.
        check_pace(&seen, &token, 1, every);
        for (_, p) in &seen {
            let message = p["message"].as_str().expect("the status");
            assert!(message.starts_with("counted to "), "{message}");
        }
        // The token ended with the answer: the task goes on without progress for it.
        tokio::time::sleep(every * 4).await;
        let late = c.try_take(|m| m["method"] == "notifications/progress");
        assert_eq!(late, None);
    }
}

// ---- Streamable HTTP -----------------------------------------------------------------------------

/// An HTTP response read as SSE, part by part, with when each came.
struct Parts {
    events: SseEvents,
    started: Instant,
}

impl Parts {
    /// `started`: when the request was sent (the times count from then).
    fn new(response: reqwest::Response, started: Instant) -> Parts {
        Parts {
            events: SseEvents::from_response(response),
            started,
        }
    }

    /// The next part, or `None` if none comes within `wait` or the stream ends.
    async fn next(&mut self, wait: Duration) -> Option<(Duration, Part)> {
        let part = self.events.next_part(wait).await?;
        Some((self.started.elapsed(), part))
    }

    /// Every part until the stream ends (at most 20 s).
    async fn all(&mut self) -> Vec<(Duration, Part)> {
        let mut parts = Vec::new();
        while let Some(part) = self.next(Duration::from_secs(20)).await {
            parts.push(part);
        }
        parts
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

/// A POST of one request: modern (routing headers, `_meta`) when `session` is `None`, else in that
/// legacy session.
fn post(
    c: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> reqwest::RequestBuilder {
    let b = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    match session {
        Some(id) => b
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25"),
        None => {
            let name = body["params"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let method = body["method"].as_str().unwrap_or_default().to_owned();
            b.header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method)
                .header("mcp-name", name)
        }
    }
    .body(body.to_string())
}

/// Opens a legacy session with these capabilities; its id.
async fn open_session(c: &reqwest::Client, url: &str, capabilities: Value) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": { "name": "keepalive", "version": "0" } } });
    let r = post(c, url, None, init)
        .header("mcp-method", "initialize")
        .send()
        .await
        .expect("answered");
    let id = r.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let r = post(c, url, Some(&id), initialized)
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), reqwest::StatusCode::ACCEPTED);
    id
}

fn tools_call(id: u64, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// `sleep {ms: 1500}` with a token streams its keepalive progress, then its result; without a
/// token the answer is plain JSON with the result alone. `session`: legacy, else modern.
async fn sleep_over_http(c: &reqwest::Client, url: &str, session: Option<&str>) {
    let modern_era = session.is_none();
    let token = json!("http-sleep");
    let params = call_params("sleep", json!({ "ms": 1500 }), Some(&token), modern_era);
    let sent = Instant::now();
    let r = post(c, url, session, tools_call(1, params))
        .send()
        .await
        .expect("answered");
    let parts = Parts::new(r, sent).all().await;
    let (last_at, last) = parts.last().cloned().expect("a reply");
    let Part::Message(reply) = last else {
        panic!("{parts:#?}")
    };
    assert_eq!(text(&reply), "slept 1500 ms");
    let seen: Seen = parts[..parts.len() - 1]
        .iter()
        .filter_map(|(at, part)| match part {
            Part::Message(m) if m["method"] == "notifications/progress" => {
                Some((*at, m["params"].clone()))
            }
            Part::Message(m) => panic!("unexpected message {m}"),
            Part::Comment(_) => None,
            // A legacy session's stream starts with its priming event (2025-11-25).
            Part::Priming { .. } if !modern_era => None,
            Part::Priming { .. } => panic!("a modern stream has no priming event: {parts:#?}"),
        })
        .collect();
    check_pace(&seen, &token, 3, EVERY);
    assert!(last_at >= Duration::from_millis(1000), "{parts:#?}");

    let params = call_params("sleep", json!({ "ms": 700 }), None, modern_era);
    let r = post(c, url, session, tools_call(2, params))
        .send()
        .await
        .expect("answered");
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(text(&body), "slept 700 ms");
}

#[tokio::test]
async fn inline_calls_with_a_token_stream_their_keepalives_over_http_in_both_eras() {
    let s = HttpServer::start_bin("example_server", &["--keepalive-ms", "300"]);
    let c = http();
    sleep_over_http(&c, &s.url, None).await;
    let session = open_session(&c, &s.url, json!({})).await;
    sleep_over_http(&c, &s.url, Some(&session)).await;
}

/// Comment lines at the configured pace on a silent stream: a legacy session's GET stream, and a
/// POST's SSE response waiting on the client's answer (`ask_name`'s elicitation, no token: no
/// progress); none with keepalive off.
#[tokio::test]
async fn silent_sse_streams_get_comment_lines_at_the_configured_pace() {
    for (every, expected) in [("300", 2..=5), ("off", 0..=0)] {
        let s = HttpServer::start(&["--keepalive-ms", every]);
        let c = http();
        let session = open_session(&c, &s.url, json!({ "elicitation": {} })).await;

        let get = c
            .get(&s.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25");
        let mut stream = Parts::new(get.send().await.expect("answered"), Instant::now());
        // A 2025-11-25 stream starts with its priming event, then is silent.
        let (_, priming) = stream.next(Duration::from_secs(1)).await.expect("priming");
        assert!(matches!(priming, Part::Priming { .. }), "{priming:?}");
        let mut comments = Vec::new();
        while let Some((at, part)) = stream
            .next(Duration::from_millis(1200).saturating_sub(stream.started.elapsed()))
            .await
        {
            assert_eq!(part, Part::Comment("keep-alive".into()), "at {at:?}");
            comments.push(at);
        }
        assert!(
            expected.contains(&comments.len()),
            "GET, keepalive {every}: comments at {comments:?}"
        );
        drop(stream);

        let call = tools_call(5, json!({ "name": "ask_name", "arguments": {} }));
        let r = post(&c, &s.url, Some(&session), call)
            .send()
            .await
            .expect("answered");
        let mut stream = Parts::new(r, Instant::now());
        let (_, priming) = stream.next(Duration::from_secs(10)).await.expect("priming");
        assert!(matches!(priming, Part::Priming { .. }), "{priming:?}");
        let (_, first) = stream
            .next(Duration::from_secs(10))
            .await
            .expect("the question");
        let Part::Message(question) = first else {
            panic!("{first:?}")
        };
        assert_eq!(question["method"], "elicitation/create", "{question}");
        let asked = stream.started.elapsed();
        let mut comments = Vec::new();
        while let Some((at, part)) = stream
            .next((asked + Duration::from_millis(1200)).saturating_sub(stream.started.elapsed()))
            .await
        {
            assert_eq!(part, Part::Comment("keep-alive".into()), "at {at:?}");
            comments.push(at - asked);
        }
        assert!(
            expected.contains(&comments.len()),
            "POST, keepalive {every}: comments at {comments:?}"
        );
        let answer = json!({ "jsonrpc": "2.0", "id": question["id"], "result": { "action": "accept", "content": { "name": "Ada" } } });
        let r = post(&c, &s.url, Some(&session), answer)
            .send()
            .await
            .expect("answered");
        assert_eq!(r.status(), reqwest::StatusCode::ACCEPTED);
        let rest = stream.all().await;
        let Some((_, Part::Message(reply))) = rest.last() else {
            panic!("{rest:#?}")
        };
        assert_eq!(text(reply), "Hello, Ada!");
    }
}
