//! Claude Code as a real host: the npm package, pinned (`tests/claude_code/`, installed by its
//! `install.sh` into `target/claude-code`), running `claude -p` with an `--mcp-config` for the
//! example server over stdio and over Streamable HTTP. Its model is a small local mock of the
//! Anthropic Messages API (`ANTHROPIC_BASE_URL`, a dummy key) that scripts the model's turns from
//! what the host sends it: it calls a tool, reads the tool result, and says what it saw. Non-essential
//! traffic is off, and every other host is unreachable: `HTTPS_PROXY`/`HTTP_PROXY` point at a
//! trap that fails the test on any connection (only the mock and the MCP server, on 127.0.0.1,
//! are reached directly).
//!
//! - `greet` reaches the model: its tool result is what the model says it saw.
//! - `research` (a task-only tool) through the fallback: the model gets a task id, calls
//!   `tasks_result` with it until the task has ended, and sees its outcome (`claude -p` declares
//!   elicitation, with nobody to ask: it declines `research`'s question, and the tool says so).

use axum::Router;
use axum::body::Bytes;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use mcp_tasks_tests::http::HttpServer;
use mcp_tasks_tests::{example_bin, workspace_root};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Installs Claude Code (once) and returns its binary.
fn claude() -> PathBuf {
    let script = workspace_root().join("tests/claude_code/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).expect("a path").trim())
}

/// What the mock saw: every request (method, path, body), and what came in at the trap.
#[derive(Default)]
struct Seen {
    requests: Vec<(String, Value)>,
    /// The tool results the scripted model read, in order: (tool, text).
    tool_results: Vec<(String, String)>,
    /// Connections to anything but the mock.
    trapped: usize,
}

type Shared = Arc<Mutex<Seen>>;

/// How long the `sleep` call runs: past Claude Code's 60 s limit on a silent HTTP call.
const SLEEP_MS: u64 = 70_000;

/// The prefix Claude Code gives the tools of the MCP server named `example`.
const PREFIX: &str = "mcp__example__";

/// The text of a `tool_result` block.
fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One assistant turn, as content blocks.
enum Turn {
    Text(String),
    Tool(&'static str, Value),
}

/// The scripted model: from the conversation so far, its next turn.
fn script(body: &Value, seen: &Shared) -> Turn {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let prompt = messages
        .first()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let result = (last["content"].as_array().into_iter().flatten())
        .find(|b| b["type"] == "tool_result")
        .cloned();
    let Some(result) = result else {
        // The user's prompt: the first tool call.
        return if prompt.contains("RESEARCH") {
            Turn::Tool("research", json!({ "topic": "tides" }))
        } else if prompt.contains("SLEEP") {
            Turn::Tool("sleep", json!({ "ms": SLEEP_MS }))
        } else {
            Turn::Tool("greet", json!({ "name": "Ada" }))
        };
    };
    // The tool this result answers: the last assistant turn's tool_use.
    let called = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_use")
        .and_then(|b| b["name"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let text = result_text(&result);
    seen.lock()
        .unwrap()
        .tool_results
        .push((called.clone(), text.clone()));
    match called.strip_prefix(PREFIX) {
        Some("research") => match task_id(&text) {
            Some(id) => Turn::Tool("tasks_result", json!({ "taskId": id })),
            None => Turn::Text(format!("MODEL SAW NO TASK: {text}")),
        },
        Some("tasks_result") if text.contains("has no result yet") => {
            std::thread::sleep(Duration::from_millis(200));
            let id = task_id(&text).unwrap_or_default();
            Turn::Tool("tasks_result", json!({ "taskId": id }))
        }
        _ => Turn::Text(format!("MODEL SAW: {text}")),
    }
}

/// The task id in a fallback text: "... as task ID. ..." or "Task ID is ...".
fn task_id(text: &str) -> Option<String> {
    let after = text
        .split_once("as task ")
        .or_else(|| text.split_once("Task "))?
        .1;
    let id: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// The Messages API answer carrying `turn`: a stream of events when the request asked for one.
fn answer(turn: Turn, stream: bool, model: &str) -> Response {
    let (block, delta, stop) = match &turn {
        Turn::Text(text) => (
            json!({ "type": "text", "text": "" }),
            json!({ "type": "text_delta", "text": text }),
            "end_turn",
        ),
        Turn::Tool(name, input) => (
            json!({ "type": "tool_use", "id": format!("toolu_{}", rand_id()), "name": format!("{PREFIX}{name}"), "input": {} }),
            json!({ "type": "input_json_delta", "partial_json": input.to_string() }),
            "tool_use",
        ),
    };
    let usage = json!({ "input_tokens": 10, "output_tokens": 10 });
    let id = format!("msg_{}", rand_id());
    if !stream {
        let mut content = block.clone();
        match &turn {
            Turn::Text(text) => content["text"] = json!(text),
            Turn::Tool(_, input) => content["input"] = input.clone(),
        }
        let message = json!({
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [content], "stop_reason": stop, "stop_sequence": null, "usage": usage,
        });
        return json_response(&message);
    }
    let events = [
        (
            "message_start",
            json!({ "type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": usage,
            } }),
        ),
        (
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": block }),
        ),
        (
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        ),
        (
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            "message_delta",
            json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": 10 } }),
        ),
        ("message_stop", json!({ "type": "message_stop" })),
    ];
    let body: String = events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect();
    (
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn json_response(value: &Value) -> Response {
    ([("content-type", "application/json")], value.to_string()).into_response()
}

fn rand_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{:016x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The mock Messages API: answers every request Claude Code makes. `POST /v1/messages` of the
/// main conversation (the one offered the example server's tools) is scripted; any other model
/// request (a title, a quota check) gets a short text; anything else an empty object.
async fn mock(seen: Shared) -> String {
    let handler = move |method: axum::http::Method, uri: Uri, body: Bytes| {
        let seen = seen.clone();
        async move {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            seen.lock()
                .unwrap()
                .requests
                .push((format!("{method} {}", uri.path()), body.clone()));
            let path = uri.path();
            if path.ends_with("/v1/messages/count_tokens") {
                return json_response(&json!({ "input_tokens": 10 }));
            }
            if !path.ends_with("/v1/messages") {
                return json_response(&json!({}));
            }
            let stream = body["stream"] == json!(true);
            let model = body["model"].as_str().unwrap_or("claude-test").to_owned();
            let offered = (body["tools"].as_array().into_iter().flatten())
                .any(|t| t["name"].as_str().is_some_and(|n| n.starts_with(PREFIX)));
            let turn = if offered {
                tokio::task::block_in_place(|| script(&body, &seen))
            } else {
                Turn::Text("ok".into())
            };
            answer(turn, stream, &model)
        }
    };
    let router = Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// A listener that counts every connection: the proxy every other host would be reached through.
async fn trap(seen: Shared) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            seen.lock().unwrap().trapped += 1;
            drop(socket);
        }
    });
    url
}

/// Runs `claude -p prompt` with `mcp_config`, the mock as its model; returns its stdout, and
/// fails the test if it did not exit 0 or reached anything but the mock.
async fn run_claude(prompt: &str, mcp_config: Value, seen: &Shared) -> String {
    let claude = claude();
    let api = mock(seen.clone()).await;
    let proxy = trap(seen.clone()).await;
    let home = std::env::temp_dir().join(format!("mcp-tasks-claude-{}", rand_id()));
    std::fs::create_dir_all(&home).unwrap();
    let tools: Vec<String> = ["greet", "sleep", "research", "tasks_status", "tasks_result"]
        .iter()
        .map(|t| format!("{PREFIX}{t}"))
        .collect();
    let mut cmd = tokio::process::Command::new(&claude);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", &api)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("HTTPS_PROXY", &proxy)
        .env("HTTP_PROXY", &proxy)
        .env("https_proxy", &proxy)
        .env("http_proxy", &proxy)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .current_dir(&home)
        .arg("-p")
        .arg(prompt)
        .args(["--bare", "--strict-mcp-config", "--mcp-config"])
        .arg(mcp_config.to_string())
        .arg("--allowedTools")
        .arg(tools.join(","))
        .args(["--max-turns", "30", "--output-format", "text"])
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("claude -p ended within 180 s")
        .expect("claude runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let _ = std::fs::remove_dir_all(&home);
    let seen = seen.lock().unwrap();
    let asked: Vec<&String> = seen.requests.iter().map(|(r, _)| r).collect();
    assert!(
        out.status.success(),
        "claude -p failed ({}):\nstdout: {stdout}\nstderr: {stderr}\nrequests: {asked:?}",
        out.status
    );
    assert_eq!(
        seen.trapped, 0,
        "claude reached something other than the mock: {asked:?}"
    );
    stdout
}

/// `--mcp-config` for the example server over stdio.
fn stdio_config() -> Value {
    json!({ "mcpServers": { "example": {
        "type": "stdio",
        "command": example_bin("example_server").display().to_string(),
        "args": [],
    } } })
}

/// `--mcp-config` for the example server over Streamable HTTP at `url`.
fn http_config(url: &str) -> Value {
    json!({ "mcpServers": { "example": { "type": "http", "url": url } } })
}

async fn greet_reaches_the_model(config: Value) {
    let seen = Shared::default();
    let said = run_claude("GREET Ada, please.", config, &seen).await;
    assert!(said.contains("MODEL SAW: Hello, Ada!"), "{said}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.tool_results.len(), 1, "{:?}", seen.tool_results);
}

async fn research_goes_through_the_fallback(config: Value) {
    let seen = Shared::default();
    let said = run_claude("RESEARCH tides, please.", config, &seen).await;
    let seen = seen.lock().unwrap();
    let results = &seen.tool_results;
    let (tool, started) = &results[0];
    assert_eq!(tool, &format!("{PREFIX}research"), "{results:?}");
    let id = task_id(started).unwrap_or_else(|| panic!("no task id in {started}"));
    assert!(started.contains("tasks_result"), "{started}");
    let (tool, outcome) = results.last().unwrap();
    assert_eq!(tool, &format!("{PREFIX}tasks_result"), "{results:?}");
    // `research` asks the user how many sources to read. `claude -p` declares elicitation but
    // has nobody to ask, and declines: the task's outcome is the tool's own answer to that.
    assert!(
        outcome.contains("the user called the research off"),
        "task {id}: {outcome}"
    );
    assert!(
        said.contains("MODEL SAW:") && said.contains("the user called the research off"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_over_stdio_greets_and_follows_research_through_the_fallback() {
    greet_reaches_the_model(stdio_config()).await;
    research_goes_through_the_fallback(stdio_config()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_over_http_greets_and_follows_research_through_the_fallback() {
    let server = HttpServer::start_bin("example_server", &[]);
    greet_reaches_the_model(http_config(&server.url)).await;
    research_goes_through_the_fallback(http_config(&server.url)).await;
}

/// A 70 s inline `sleep` over HTTP: with the server's keepalive (progress every 10 s, the
/// default) Claude Code waits it out and the model gets its result; with the keepalive off, the
/// call fails at Claude Code's 60 s default and the model gets an error instead. (The two run at
/// once: this test takes about 70 s.)
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_over_http_waits_out_a_70_s_call_only_with_keepalive() {
    let kept = HttpServer::start_bin("example_server", &[]);
    let silent = HttpServer::start_bin("example_server", &["--keepalive-ms", "off"]);
    let (kept_seen, silent_seen) = (Shared::default(), Shared::default());
    let started = std::time::Instant::now();
    let (kept_said, silent_said) = tokio::join!(
        run_claude("SLEEP 70 s.", http_config(&kept.url), &kept_seen),
        run_claude("SLEEP 70 s.", http_config(&silent.url), &silent_seen),
    );
    let slept = format!("slept {SLEEP_MS} ms");
    assert!(
        kept_said.contains(&format!("MODEL SAW: {slept}")),
        "{kept_said}"
    );
    let silent_results = &silent_seen.lock().unwrap().tool_results;
    let (_, failed) = silent_results.last().expect("a tool result");
    assert!(
        !failed.contains(&slept) && failed.contains("timed out"),
        "{failed}"
    );
    assert!(!silent_said.contains(&slept), "{silent_said}");
    eprintln!(
        "without keepalive Claude Code said: {failed} (both runs took {:?})",
        started.elapsed()
    );
}
