//! A fixture server over Streamable HTTP, as a child process: `conformance_server --http`.

use crate::{example_bin, modern_meta};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An example server binary run with `--http 127.0.0.1:0 [args]`, killed on drop.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Starts the conformance fixture server on a free loopback port with these extra arguments
    /// (e.g. `--token T=P`) and waits until it accepts connections.
    pub fn start(extra: &[&str]) -> HttpServer {
        Self::start_bin("conformance_server", extra)
    }

    /// [`start`](Self::start) with another of the example binaries (`example_server`).
    pub fn start_bin(name: &str, extra: &[&str]) -> HttpServer {
        let mut command = Command::new(example_bin(name));
        command.args(["--http", "127.0.0.1:0"]).args(extra).env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        );
        Self::start_command(command)
    }

    /// Runs `command`, a server whose first line on stdout is `listening on <URL>` (as the
    /// example binaries' with `--http`, or a third-party fixture's), until it is dropped.
    pub fn start_command(mut command: Command) -> HttpServer {
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let started = Instant::now();
        let line = crate::first_line(stdout, Duration::from_secs(30)).unwrap_or_else(|| {
            let _ = child.kill();
            panic!("the HTTP server printed no `listening on` line within 30 s")
        });
        let url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"))
            .to_owned();
        tracing_free_log(&format!(
            "HTTP server at {url} (up after {:?})",
            started.elapsed()
        ));
        HttpServer { child, url }
    }

    /// Whether the server's process has exited (it could not take an address it was given,
    /// say).
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (up to `within`) for the process to exit; its exit status.
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

fn tracing_free_log(line: &str) {
    eprintln!("{line}");
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One event of an SSE response: a message, or a comment line (`: keep-alive`).
#[derive(Debug, Clone, PartialEq)]
pub enum SsePart {
    /// An event's `data`, as JSON.
    Message(Value),
    /// An event without data: its comment text, trimmed.
    Comment(String),
    /// A priming event (a legacy session's stream, 2025-11-25): an id and an empty `data:` line,
    /// with the `retry` (ms) it asks for.
    Priming { id: String, retry: Option<u64> },
}

/// The messages of one SSE response (a POST answered as a stream, or a GET stream), in order.
#[derive(Debug)]
pub struct SseEvents {
    response: reqwest::Response,
    buffer: String,
    last_id: Option<String>,
    ids: Vec<String>,
}

impl SseEvents {
    /// Sends the request and checks that it is answered `200` with `text/event-stream`.
    pub async fn open(request: reqwest::RequestBuilder) -> SseEvents {
        SseEvents::from_response(request.send().await.expect("answered"))
    }

    /// Checks that `response` is a `200` with `text/event-stream`, and reads it.
    pub fn from_response(response: reqwest::Response) -> SseEvents {
        assert_eq!(response.status(), reqwest::StatusCode::OK);
        let kind = response.headers()["content-type"].to_str().unwrap();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        SseEvents {
            response,
            buffer: String::new(),
            last_id: None,
            ids: Vec::new(),
        }
    }

    /// The id of the last event read that had one (what a client resumes from).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The ids of the events read, in order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The next message's JSON (comments skipped), or `None` if none comes within `wait` or the
    /// stream ends.
    pub async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if let SsePart::Message(message) = self.next_part(left).await? {
                return Some(message);
            }
        }
    }

    /// The next event, comments included, or `None` if none comes within `wait` or the stream
    /// ends.
    pub async fn next_part(&mut self, wait: Duration) -> Option<SsePart> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    event
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::to_owned)
                };
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if let Some(id) = field("id: ") {
                    self.last_id = Some(id.clone());
                    self.ids.push(id.clone());
                    if data.is_empty() {
                        let retry = field("retry: ").map(|r| r.parse().expect("retry in ms"));
                        return Some(SsePart::Priming { id, retry });
                    }
                }
                if data.is_empty() {
                    let comment = event.trim().trim_start_matches(':').trim();
                    return Some(SsePart::Comment(comment.to_owned()));
                }
                return Some(SsePart::Message(
                    serde_json::from_str(&data).expect("JSON data"),
                ));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?;
            let chunk = chunk.expect("the stream stays readable")?;
            self.buffer
                .push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        }
    }
}

/// A 2026-07-28 request (`id` 1) POSTed to `url`: `params` with a `_meta` declaring
/// `capabilities`, and the headers the transport requires (`Mcp-Method`, and `Mcp-Name` from the
/// params' `name` or `uri` where they have one). Add `.bearer_auth(..)` for a server with tokens.
pub fn modern_post(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> reqwest::RequestBuilder {
    params["_meta"] = modern_meta(capabilities);
    let mut b = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        b = b.header("mcp-name", name);
    }
    b.body(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string())
}
