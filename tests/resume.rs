//! Resumable SSE streams of legacy (2025-11-25) sessions over real HTTP (SEP-1699): every event
//! has an id, a broken stream is resumed with `GET` + `Last-Event-ID` (a POST's stream up to its
//! reply, and the session's GET stream), a resume from an event no longer kept is a clear 400, a
//! stream nobody resumes within the window cancels its request, and a tool may end its stream
//! on purpose (`ToolContext::close_stream`, the conformance suite's `test_reconnection`), with
//! the result then on the resumed stream, for raw HTTP, this project's client and the official
//! TypeScript SDK's client.

use mcp_tasks_tests::http::{HttpServer, SseEvents, SsePart};
use mcp_tasks_tests::instances::{Instance, Session, TOKEN, client};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

/// Opens a 2025-11-25 session as `alice` declaring `capabilities`; its id.
async fn open_session(c: &reqwest::Client, url: &str, capabilities: Value) -> String {
    Session::open_with(c, url, capabilities).await.id
}

/// A POST of `body` in session `session`, reading JSON or SSE.
fn post(c: &reqwest::Client, url: &str, session: &str, body: Value) -> reqwest::RequestBuilder {
    c.post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
}

/// A GET on the session, resuming after `last` when given.
fn get(
    c: &reqwest::Client,
    url: &str,
    session: &str,
    last: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut b = c
        .get(url)
        .bearer_auth(TOKEN)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(last) = last {
        b = b.header("last-event-id", last);
    }
    b
}

/// `{stream}-{seq}`, as the server writes event ids.
fn parse_id(id: &str) -> (u64, u64) {
    let (stream, seq) = id
        .split_once('-')
        .unwrap_or_else(|| panic!("event id {id:?}"));
    (stream.parse().unwrap(), seq.parse().unwrap())
}

/// A `sleep` of `ms` with progress token `token` (keepalive progress comes every 100 ms).
fn sleep_call(id: u64, ms: u64, token: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "sleep", "arguments": { "ms": ms }, "_meta": { "progressToken": token } } })
}

/// Reads the priming event, then `n` progress notifications; returns the stream.
async fn started(events: &mut SseEvents, n: usize) -> Vec<f64> {
    let first = events.next_part(WAIT).await.expect("the priming event");
    let SsePart::Priming { id, retry } = first else {
        panic!("a 2025-11-25 stream starts with its priming event: {first:?}")
    };
    assert_eq!(
        parse_id(&id).1,
        0,
        "the priming event points before the first event"
    );
    assert_eq!(retry, Some(1000), "the default retry");
    let mut seen = Vec::new();
    while seen.len() < n {
        let m = events.next(WAIT).await.expect("progress");
        assert_eq!(m["method"], "notifications/progress", "{m}");
        seen.push(m["params"]["progress"].as_f64().unwrap());
    }
    seen
}

/// The next server-to-client request `method` on `stream` (notifications skipped), and its event
/// id. Every message read, notifications included, is added to `seen`.
async fn next_request(
    stream: &mut SseEvents,
    method: &str,
    seen: &mut Vec<(String, Value)>,
) -> (Value, String) {
    loop {
        let m = stream
            .next(WAIT)
            .await
            .unwrap_or_else(|| panic!("no {method}"));
        let id = stream.last_event_id().unwrap().to_owned();
        seen.push((id.clone(), m.clone()));
        if m.get("id").is_some() {
            assert_eq!(m["method"], method, "{m}");
            return (m, id);
        }
    }
}

/// The error of a refused resume: HTTP 400, `-32600`, its message.
async fn refused(r: reqwest::Response) -> String {
    assert_eq!(r.status(), reqwest::StatusCode::BAD_REQUEST);
    let body: Value = r.json().await.expect("a JSON-RPC error");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

/// A POST's stream that breaks half-way is resumed after the last event the client read: the
/// events it missed come again with the next ids, none twice, then the reply, and the stream
/// ends. Meanwhile the call went on (a disconnection is not a cancellation).
#[tokio::test]
async fn a_broken_post_stream_resumes_after_its_last_event_with_nothing_lost_or_repeated() {
    let server = Instance::start_with("resume", "memory", &["--keepalive-ms", "100"]);
    let c = client();
    let session = open_session(&c, &server.url, json!({})).await;
    let started_at = Instant::now();
    let mut events =
        SseEvents::open(post(&c, &server.url, &session, sleep_call(7, 1200, "t"))).await;
    let before = started(&mut events, 3).await;
    let last = events.last_event_id().unwrap().to_owned();
    let (stream, last_seq) = parse_id(&last);
    assert!(
        stream >= 1,
        "a POST's stream is not the GET stream (0): {last}"
    );
    assert_eq!(last_seq, 3);
    drop(events);
    // The call goes on while nobody reads its stream.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut resumed = SseEvents::from_response(
        get(&c, &server.url, &session, Some(&last))
            .send()
            .await
            .unwrap(),
    );
    let mut after = Vec::new();
    let reply = loop {
        let m = resumed.next(WAIT).await.expect("the rest, then the reply");
        if m.get("id").is_some() {
            break m;
        }
        assert_eq!(m["method"], "notifications/progress", "{m}");
        after.push(m["params"]["progress"].as_f64().unwrap());
    };
    assert_eq!(reply["id"], 7);
    assert_eq!(
        reply["result"]["content"][0]["text"], "slept 1200 ms",
        "{reply}"
    );
    assert!(started_at.elapsed() >= Duration::from_millis(1200));
    assert!(
        resumed.next(Duration::from_secs(2)).await.is_none(),
        "the stream ends with its reply"
    );
    // The ids go on from the resumed one, without a gap or a repeat.
    let ids: Vec<(u64, u64)> = resumed.ids().iter().map(|id| parse_id(id)).collect();
    let expected: Vec<(u64, u64)> = (last_seq + 1..=last_seq + ids.len() as u64)
        .map(|seq| (stream, seq))
        .collect();
    assert_eq!(ids, expected);
    // Progress kept coming while the stream was down, and none is repeated.
    assert!(
        after.len() >= 3,
        "progress sent while nobody read: {after:?}"
    );
    let all: Vec<f64> = before.iter().chain(&after).copied().collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");

    // The finished stream can be replayed again, reply included.
    let mut again = SseEvents::from_response(
        get(&c, &server.url, &session, Some(&last))
            .send()
            .await
            .unwrap(),
    );
    let mut replayed = 0;
    while let Some(m) = again.next(Duration::from_secs(2)).await {
        replayed += 1;
        if m.get("id").is_some() {
            assert_eq!(m, reply);
        }
    }
    assert_eq!(replayed, ids.len());
}

/// A stream keeps its last `--sse-replay` events: a resume from before them is refused with
/// HTTP 400 saying what is lost, and so are ids this server never wrote; the session and the
/// stream go on, and a resume from a kept event still gets the reply.
#[tokio::test]
async fn resuming_from_an_event_no_longer_kept_is_a_400_that_says_so() {
    let server = Instance::start_with(
        "resume",
        "memory",
        &["--keepalive-ms", "100", "--sse-replay", "2"],
    );
    let c = client();
    let session = open_session(&c, &server.url, json!({})).await;
    let mut events =
        SseEvents::open(post(&c, &server.url, &session, sleep_call(3, 1500, "t"))).await;
    started(&mut events, 5).await;
    let ids = events.ids().to_vec();
    drop(events);
    let (stream, _) = parse_id(&ids[1]);

    let message = refused(
        get(&c, &server.url, &session, Some(&ids[1]))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(
        message.contains("keeps only its last 2 events") && message.contains(&ids[1]),
        "{message}"
    );
    for (bad, says) in [
        ("garbage".to_owned(), "no event id of this server"),
        ("99-1".to_owned(), "no stream with that number"),
        (format!("{stream}-9999"), "has sent no event with that id"),
    ] {
        let message = refused(
            get(&c, &server.url, &session, Some(&bad))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(message.contains(says), "{bad}: {message}");
    }

    let last = ids.last().unwrap();
    let mut resumed = SseEvents::from_response(
        get(&c, &server.url, &session, Some(last))
            .send()
            .await
            .unwrap(),
    );
    let reply = loop {
        let m = resumed.next(WAIT).await.expect("the reply");
        if m.get("id").is_some() {
            break m;
        }
    };
    assert_eq!(
        reply["result"]["content"][0]["text"], "slept 1500 ms",
        "{reply}"
    );
}

/// A stream nobody resumes within `--sse-resume-window-ms` has its request cancelled, and the
/// stream is forgotten: a late resume is refused.
#[tokio::test]
async fn a_stream_nobody_resumes_within_the_window_cancels_its_request() {
    let server = Instance::start_with(
        "resume",
        "memory",
        &["--keepalive-ms", "100", "--sse-resume-window-ms", "400"],
    );
    let c = client();
    let session = open_session(&c, &server.url, json!({})).await;
    let dropped_at = Instant::now();
    let mut events =
        SseEvents::open(post(&c, &server.url, &session, sleep_call(4, 10_000, "t"))).await;
    started(&mut events, 1).await;
    let last = events.last_event_id().unwrap().to_owned();
    drop(events);
    server
        .wait_for_log(&["no client came back for a dropped SSE stream"])
        .await;
    server.wait_for_log(&["request cancelled"]).await;
    assert!(dropped_at.elapsed() < Duration::from_secs(5));
    let message = refused(
        get(&c, &server.url, &session, Some(&last))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(message.contains("no stream with that number"), "{message}");
}

/// The session's GET stream resumes too: a legacy task's question the client lost with its GET
/// stream comes again on the resumed one, a second plain GET meanwhile is a 409, and a resume
/// takes the stream from a response still holding it (whose client is most likely gone). The
/// task completes through its two questions.
#[tokio::test]
async fn the_get_stream_resumes_and_a_lost_question_is_asked_again() {
    let server = Instance::start_with("resume", "memory", &["--keepalive-ms", "100"]);
    let c = client();
    let session = open_session(
        &c,
        &server.url,
        json!({ "elicitation": {}, "sampling": {} }),
    )
    .await;
    let mut stream =
        SseEvents::from_response(get(&c, &server.url, &session, None).send().await.unwrap());
    let Some(SsePart::Priming { id, .. }) = stream.next_part(WAIT).await else {
        panic!("the GET stream starts with its priming event")
    };
    assert_eq!(id, "0-0");

    let created = post(
        &c,
        &server.url,
        &session,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "research", "arguments": { "topic": "tides" }, "task": {} } }),
    )
    .send()
    .await
    .unwrap();
    let created: Value = created.json().await.unwrap();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let mut before = Vec::new();
    let (ask, ask_id) = next_request(&mut stream, "elicitation/create", &mut before).await;
    // The client loses the stream before it could answer.
    drop(stream);

    // Everything the stream carried comes again, in order and with the same ids: the task's
    // status notifications as well as its question.
    let mut stream = SseEvents::from_response(
        get(&c, &server.url, &session, Some("0-0"))
            .send()
            .await
            .unwrap(),
    );
    let mut replayed = Vec::new();
    let (again, again_id) = next_request(&mut stream, "elicitation/create", &mut replayed).await;
    assert_eq!((again, again_id.as_str()), (ask.clone(), ask_id.as_str()));
    assert_eq!(replayed, before);
    assert_eq!(
        stream.ids()[0],
        "0-1",
        "no priming event on a resumed stream"
    );
    let busy = get(&c, &server.url, &session, None).send().await.unwrap();
    assert_eq!(busy.status(), reqwest::StatusCode::CONFLICT);

    let answered = post(
        &c,
        &server.url,
        &session,
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "sources": 2 } } }),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(answered.status(), reqwest::StatusCode::ACCEPTED);
    let (sample, sample_id) =
        next_request(&mut stream, "sampling/createMessage", &mut Vec::new()).await;

    // A resume while the stream is still served takes it over; the old response ends.
    let (_, seq) = parse_id(&sample_id);
    let before = format!("0-{}", seq - 1);
    let mut taken = SseEvents::from_response(
        get(&c, &server.url, &session, Some(&before))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(taken.next(WAIT).await.expect("replayed"), sample);
    assert_eq!(taken.ids(), [sample_id]);
    assert!(
        stream.next(Duration::from_secs(2)).await.is_none(),
        "the old response ended"
    );
    let answered = post(
        &c,
        &server.url,
        &session,
        json!({ "jsonrpc": "2.0", "id": sample["id"], "result": {
            "role": "assistant", "content": { "type": "text", "text": "Moon." }, "model": "m" } }),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(answered.status(), reqwest::StatusCode::ACCEPTED);
    let result = post(
        &c,
        &server.url,
        &session,
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": { "taskId": task } }),
    )
    .send()
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(result.contains("Moon."), "{result}");
}

/// `test_reconnection` ends its stream before it answers: over raw HTTP the stream is only the
/// priming event (with the configured `retry`), and the answer comes on the resumed stream; in
/// a 2026-07-28 request (no resumption) the same tool just answers.
#[tokio::test]
async fn a_tool_that_ends_its_stream_is_answered_on_the_resumed_one() {
    let server = HttpServer::start(&["--sse-retry-ms", "250"]);
    let c = reqwest::Client::builder().timeout(WAIT).build().unwrap();
    let init = c
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "resume-tests", "version": "0" } } })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "test_reconnection", "arguments": {} } });
    let mut events = SseEvents::open(
        c.post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(call.to_string()),
    )
    .await;
    let first = events.next_part(WAIT).await;
    let Some(SsePart::Priming { id, retry }) = first else {
        panic!("{first:?}")
    };
    assert_eq!(retry, Some(250));
    assert!(
        events.next_part(WAIT).await.is_none(),
        "the tool ended the stream"
    );
    let resumed = c
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &id)
        .send()
        .await
        .unwrap();
    let mut resumed = SseEvents::from_response(resumed);
    let reply = resumed.next(WAIT).await.expect("the answer");
    assert_eq!(reply["id"], 9);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "Reconnection test completed successfully"
    );

    let modern = mcp_tasks_tests::http::modern_post(
        &c,
        &server.url,
        "tools/call",
        json!({ "name": "test_reconnection", "arguments": {} }),
        json!({}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(modern.status(), reqwest::StatusCode::OK);
    let body: Value = modern
        .json()
        .await
        .expect("plain JSON: nothing was streamed");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Reconnection test completed successfully"
    );
}

/// This project's client, in a legacy session, gets `test_reconnection`'s answer: it resumes
/// the ended stream after the server's `retry`.
#[tokio::test]
async fn our_client_resumes_a_stream_the_tool_ended() {
    use mcp_tasks_client::{Client, EraChoice};
    let server = HttpServer::start(&["--sse-retry-ms", "200"]);
    let client = tokio::time::timeout(
        WAIT,
        Client::builder()
            .era(EraChoice::Legacy)
            .connect_http(&server.url),
    )
    .await
    .unwrap()
    .expect("connects");
    let started = Instant::now();
    let result = tokio::time::timeout(WAIT, client.call_tool("test_reconnection", json!({})))
        .await
        .expect("in time")
        .expect("answered")
        .result()
        .await
        .expect("a result");
    assert_eq!(
        mcp_tasks_client::text(&result),
        "Reconnection test completed successfully"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "waited the retry"
    );
}
