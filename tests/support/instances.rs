//! Example-server processes over HTTP sharing one task store (Redis, Postgres): start, kill,
//! terminate, read their logs, and speak to them in both eras as the principal `alice`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{example_bin, modern_meta};
use serde_json::{Value, json};

pub const TOKEN: &str = "secret-token";
const WAIT: Duration = Duration::from_secs(20);

/// `example_server` (or another example binary with the same arguments) with `--http
/// 127.0.0.1:0 --store STORE --token ...`, killed on drop; its stderr
/// is kept for [`Instance::wait_for_log`].
#[derive(Debug)]
pub struct Instance {
    child: Child,
    pub url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Instance {
    pub fn start(name: &str, store: &str) -> Instance {
        Self::start_with(name, store, &[])
    }

    /// [`Instance::start`] with extra arguments.
    pub fn start_with(name: &str, store: &str, extra: &[&str]) -> Instance {
        Self::start_bin("example_server", name, store, extra)
    }

    /// [`Instance::start_with`] with another example binary that takes the same `--http`,
    /// `--store` and `--token` arguments (`rmcp_bridge_server`); `name` labels its log lines.
    pub fn start_bin(bin: &str, name: &str, store: &str, extra: &[&str]) -> Instance {
        let bin = example_bin(bin);
        let mut child = Command::new(&bin)
            .args(["--http", "127.0.0.1:0", "--store", store])
            .args(extra)
            .args(["--token", &format!("{TOKEN}=alice")])
            .env(
                "RUST_LOG",
                "mcp_tasks_runtime=debug,mcp_tasks_examples=info",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("piped stderr");
        let (sink, label) = (log.clone(), name.to_owned());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[{label}] {line}");
                sink.lock().unwrap().push(line);
            }
        });
        let stdout = child.stdout.take().expect("piped stdout");
        let line = crate::first_line(stdout, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{name} printed no `listening on` line"));
        let url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Instance { child, url, log }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then waits for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the process gets no chance to settle anything.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits until the server logged a line containing every one of `needles`.
    pub async fn wait_for_log(&self, needles: &[&str]) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(line) = self
                .log
                .lock()
                .unwrap()
                .iter()
                .find(|line| needles.iter().all(|n| line.contains(n)))
            {
                return line.clone();
            }
            assert!(Instant::now() < deadline, "never logged {needles:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The lines logged so far that contain every one of `needles`.
    pub fn lines(&self, needles: &[&str]) -> Vec<String> {
        let log = self.log.lock().unwrap();
        let found = log.iter().filter(|l| needles.iter().all(|n| l.contains(n)));
        found.cloned().collect()
    }

    /// Whether a line containing `needle` was logged.
    pub fn logged(&self, needle: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(needle))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(WAIT)
        .pool_max_idle_per_host(64)
        .build()
        .expect("client")
}

pub fn caps() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } })
}

/// The JSON-RPC message in a response body (plain JSON, or the last `data:` of an SSE body).
fn message(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {text:?}"))
}

/// A modern request; the whole response message.
pub async fn modern(c: &reqwest::Client, url: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta(caps());
    let mut b = c
        .post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        b = b.header("mcp-name", name);
    }
    if let Some(id) = params.get("taskId").and_then(Value::as_str) {
        b = b.header("mcp-name", id);
    }
    if let Some(uri) = params.get("uri").and_then(Value::as_str) {
        b = b.header("mcp-name", uri);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let r = b
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    message(&r.text().await.expect("a body"))
}

/// A modern request's `result`, failing the test on an error.
pub async fn result(c: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let m = modern(c, url, method, params).await;
    match m.get("result") {
        Some(r) => r.clone(),
        None => panic!("{method} at {url} failed: {m}"),
    }
}

/// Polls modern `tasks/get` at `url` until `done` holds.
pub async fn poll(
    c: &reqwest::Client,
    url: &str,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let task = result(c, url, "tasks/get", json!({ "taskId": id })).await;
        if done(&task) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task never got there; last: {task}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The single outstanding input request of a task: (key, request).
pub fn only_request(task: &Value) -> (String, Value) {
    let requests = task["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{task}");
    let (k, v) = requests.iter().next().unwrap();
    (k.clone(), v.clone())
}

/// A legacy (2025-11-25) session on one instance.
#[derive(Debug)]
pub struct Session {
    pub url: String,
    pub id: String,
    pub next: u64,
}

impl Session {
    pub async fn open(c: &reqwest::Client, url: &str) -> Session {
        let capabilities = json!({ "tasks": { "requests": { "elicitation": { "create": {} } } } });
        Self::open_with(c, url, capabilities).await
    }

    /// [`Session::open`] declaring `capabilities`.
    pub async fn open_with(c: &reqwest::Client, url: &str, capabilities: Value) -> Session {
        let r = c
            .post(url)
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": { "name": "store-tests", "version": "0" } } })
                .to_string(),
            )
            .send()
            .await
            .expect("initialize");
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let mut session = Session {
            url: url.to_owned(),
            id,
            next: 1,
        };
        session
            .send(
                c,
                json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            )
            .await;
        session
    }

    async fn send(&mut self, c: &reqwest::Client, body: Value) -> String {
        c.post(&self.url)
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
            .send()
            .await
            .expect("the server answers")
            .text()
            .await
            .expect("a body")
    }

    pub async fn request(&mut self, c: &reqwest::Client, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({ "jsonrpc": "2.0", "id": self.next, "method": method, "params": params });
        message(&self.send(c, body).await)
    }

    pub async fn result(&mut self, c: &reqwest::Client, method: &str, params: Value) -> Value {
        let m = self.request(c, method, params).await;
        match m.get("result") {
            Some(r) => r.clone(),
            None => panic!("legacy {method} at {} failed: {m}", self.url),
        }
    }
}
