//! Shared helpers for the integration tests: locating and driving the example server binary.

pub mod browser;
pub mod cli;
pub mod http;
pub mod instances;
pub mod oauth;
pub mod peers;
/// PostgreSQL 15 (in `mcp-tasks-testkit` too).
pub use mcp_tasks_testkit::postgres;
/// The pinned `redis-server` (it lives in `mcp-tasks-testkit`, which the benchmark uses too).
pub use mcp_tasks_testkit::redis;

/// Every Rust block of the README, compiled (and run unless marked `no_run`) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Every Rust block of the book (`docs/src/*.md`), one doc item per chapter, compiled (and run
/// unless marked `no_run`) as doc tests, each as a user's crate would compile it. A new chapter
/// needs a line here: `every_chapter_is_compiled` fails until it has one.
macro_rules! book {
    ($($name:ident = $file:literal,)*) => {
        /// The book's chapters, as doc items (only under `cargo test --doc`).
        #[cfg(doctest)]
        pub mod book {
            $(
                #[doc = include_str!(concat!("../../docs/src/", $file))]
                pub struct $name;
            )*
        }
        /// The chapter files of `docs/src/` whose Rust blocks are doc tests.
        pub const BOOK_CHAPTERS: &[&str] = &[$($file),*];
    };
}

book! {
    Introduction = "introduction.md",
    Tools = "tools.md",
    Tasks = "tasks.md",
    Asking = "asking.md",
    Resources = "resources.md",
    Prompts = "prompts.md",
    Completions = "completions.md",
    Apps = "apps.md",
    Skills = "skills.md",
    Http = "http.md",
    OAuth = "oauth.md",
    Stores = "stores.md",
    Durable = "durable.md",
    Push = "push.md",
    Hosts = "hosts.md",
    Promotion = "promotion.md",
    Fallback = "fallback.md",
    Limits = "limits.md",
    Logs = "logs.md",
    Rmcp = "rmcp.md",
    Client = "client.md",
    Testing = "testing.md",
    Cli = "cli.md",
}

#[cfg(test)]
mod book_tests {
    #[test]
    fn every_chapter_is_compiled() {
        let dir = super::workspace_root().join("docs/src");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("docs/src")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".md") && f != "SUMMARY.md")
            .collect();
        files.sort();
        let mut listed: Vec<&str> = super::BOOK_CHAPTERS.to_vec();
        listed.sort();
        assert_eq!(
            files, listed,
            "docs/src chapters and the book! list in tests/support/lib.rs"
        );
        let summary = std::fs::read_to_string(dir.join("SUMMARY.md")).expect("SUMMARY.md");
        for file in super::BOOK_CHAPTERS {
            assert!(
                summary.contains(&format!("({file})")),
                "SUMMARY.md does not list {file}"
            );
        }
    }
}

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The first line a child process prints on `stdout`, waiting at most `within`; the rest of its
/// output is read and dropped, so that the process never blocks on a full pipe. `None` if no
/// line came in time (or the output ended first).
pub fn first_line(stdout: std::process::ChildStdout, within: Duration) -> Option<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
        for _ in lines {}
    });
    rx.recv_timeout(within).ok()
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Path of a binary of the `mcp-tasks-examples` package, built (once per test process) with the
/// same profile as the tests.
pub fn example_bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(workspace_root())
            .args(["build", "--quiet", "-p", "mcp-tasks-examples", "--bins"])
            .status()
            .expect("cargo build runs");
        assert!(status.success(), "building the example binaries failed");
    });
    // target/debug/deps/<test-exe> -> target/debug/<name>
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} does not exist after building",
        path.display()
    );
    path
}

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

/// How long any single wait on the server may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// What a `tracing` writer wrote, kept for the test to read (`with_writer(move || log.clone())`).
#[derive(Debug, Clone, Default)]
pub struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Log {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Log {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `_meta` of a modern (2026-07-28) request, with these client capabilities.
pub fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "mcp-tasks-tests", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// Modern params: `params` plus `_meta` with these capabilities.
pub fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = modern_meta(capabilities);
    params
}

/// Sends a modern request with id `id` over an in-process connection (the client declaring
/// these capabilities) and returns the whole message that answers it (result or error), skipping
/// anything else the server sends meanwhile. Fails the test after [`WAIT`].
pub async fn in_memory_request(
    c: &mut mcp_tasks_runtime::server::InMemoryConnection,
    id: u64,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Value {
    in_memory_call(c, id, method, modern(params, capabilities)).await
}

/// [`in_memory_request`] with `params` sent as they are (their `_meta` the caller's).
pub async fn in_memory_call(
    c: &mut mcp_tasks_runtime::server::InMemoryConnection,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    c.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    loop {
        let m = tokio::time::timeout(WAIT, c.recv())
            .await
            .expect("answered in time")
            .expect("the server is up");
        if m["id"] == id {
            return m;
        }
    }
}

/// A client for a server process over real stdio pipes: writes raw lines, reads messages.
#[derive(Debug)]
pub struct StdioClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    /// Messages read while waiting for something else.
    backlog: VecDeque<Value>,
    next_id: i64,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl StdioClient {
    /// Starts a binary with piped stdin/stdout (stderr inherited, so server logs show in test output).
    pub fn spawn(bin: &std::path::Path) -> Self {
        Self::spawn_with(bin, &[])
    }

    /// [`spawn`](Self::spawn) with these command-line arguments.
    pub fn spawn_with(bin: &std::path::Path, args: &[&str]) -> Self {
        Self::spawn_logging(bin, args, "info")
    }

    /// [`spawn_with`](Self::spawn_with), logging what `filter` (a `RUST_LOG` value) lets through.
    pub fn spawn_logging(bin: &std::path::Path, args: &[&str], filter: &str) -> Self {
        let mut child = tokio::process::Command::new(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("RUST_LOG", filter)
            .kill_on_drop(true)
            .spawn()
            .expect("server binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stdin = child.stdin.take();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = log.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                eprintln!("[server] {line}");
                sink.lock().expect("log lock").push(line);
            }
        });
        let (tx, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioClient {
            child,
            stdin,
            lines,
            backlog: VecDeque::new(),
            next_id: 1,
            log,
        }
    }

    /// Waits until the server has logged a line containing `needle` (its stderr).
    pub async fn wait_for_log(&self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(line) = self
                .log
                .lock()
                .expect("log lock")
                .iter()
                .find(|l| l.contains(needle))
            {
                return line.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never logged {needle:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts the conformance fixture server.
    pub fn conformance() -> Self {
        Self::spawn(&example_bin("conformance_server"))
    }

    /// Starts the example server.
    pub fn example() -> Self {
        Self::spawn(&example_bin("example_server"))
    }

    /// Writes one raw line (a newline is added).
    pub async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to server");
        stdin.write_all(b"\n").await.expect("write to server");
        stdin.flush().await.expect("flush to server");
    }

    /// Writes one JSON message.
    pub async fn send(&mut self, msg: &Value) {
        self.send_raw(&msg.to_string()).await;
    }

    /// The next message from the server (from the backlog first).
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.backlog.pop_front() {
            return v;
        }
        self.recv_fresh().await
    }

    async fn recv_fresh(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.recv())
            .await
            .expect("the server answered in time")
            .expect("the server's stdout is open");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"))
    }

    /// Waits for the response with this id; other messages are kept in the backlog.
    pub async fn response(&mut self, id: &Value) -> Value {
        if let Some(pos) = self.backlog.iter().position(|m| is_response_to(m, id)) {
            return self.backlog.remove(pos).expect("position is valid");
        }
        loop {
            let msg = self.recv_fresh().await;
            if is_response_to(&msg, id) {
                return msg;
            }
            self.backlog.push_back(msg);
        }
    }

    /// Waits for the first message matching `pred`; others are kept in the backlog.
    pub async fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(pos) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(pos).expect("position is valid");
        }
        loop {
            let msg = self.recv_fresh().await;
            if pred(&msg) {
                return msg;
            }
            self.backlog.push_back(msg);
        }
    }

    /// Takes the first message already received (backlog or pending on the pipe) that matches,
    /// without waiting for new ones.
    pub fn try_take(&mut self, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        while let Ok(line) = self.lines.try_recv() {
            if let Ok(v) = serde_json::from_str(&line) {
                self.backlog.push_back(v);
            }
        }
        let pos = self.backlog.iter().position(&pred)?;
        self.backlog.remove(pos)
    }

    /// A fresh request id.
    pub fn id(&mut self) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        json!(id)
    }

    /// Sends a request and returns the whole response message.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.id();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        self.response(&id).await
    }

    /// Sends a request and returns its `result`, failing the test on an error.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request(method, params).await;
        match resp.get("result") {
            Some(r) => r.clone(),
            None => panic!("{method} failed: {resp}"),
        }
    }

    /// Sends a request and returns its `error`, failing the test on a result.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request(method, params).await;
        match resp.get("error") {
            Some(e) => e.clone(),
            None => panic!("{method} was expected to fail: {resp}"),
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// Performs the legacy handshake (`initialize` + `notifications/initialized`).
    pub async fn initialize(&mut self, capabilities: Value) -> Value {
        let result = self
            .result(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": { "name": "mcp-tasks-tests", "version": "0" }
                }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        result
    }

    /// Closes stdin and waits for the process to exit; returns its exit status.
    pub async fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("server exits after EOF")
            .expect("wait")
    }

    /// Closes stdin, then collects everything the server still writes, and its exit status.
    pub async fn close_and_drain(mut self) -> (Vec<Value>, std::process::ExitStatus) {
        drop(self.stdin.take());
        let mut out: Vec<Value> = self.backlog.drain(..).collect();
        while let Ok(Some(line)) = tokio::time::timeout(WAIT, self.lines.recv()).await {
            out.push(serde_json::from_str(&line).expect("json line"));
        }
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("exit")
            .expect("wait");
        (out, status)
    }

    /// SIGKILL, then waits until the process is gone (and so has released its files and locks);
    /// returns its exit status. No shutdown code of the server runs.
    pub async fn kill(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        tokio::time::timeout(WAIT, async {
            self.child.start_kill().expect("SIGKILL is sent");
            self.child.wait().await.expect("wait")
        })
        .await
        .expect("the process exits after SIGKILL")
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }
}

fn is_response_to(msg: &Value, id: &Value) -> bool {
    msg.get("id") == Some(id) && (msg.get("result").is_some() || msg.get("error").is_some())
}

/// Polls `tasks/get` (modern) until `done` holds for the task, failing after [`WAIT`].
pub async fn poll_modern(
    c: &mut StdioClient,
    task_id: &str,
    caps: &Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let task = c
            .result(
                "tasks/get",
                modern(json!({ "taskId": task_id }), caps.clone()),
            )
            .await;
        if done(&task) {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task never reached the expected state; last: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls legacy `tasks/get` until `done` holds.
pub async fn poll_legacy(
    c: &mut StdioClient,
    task_id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let task = c.result("tasks/get", json!({ "taskId": task_id })).await;
        if done(&task) {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task never reached the expected state; last: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
