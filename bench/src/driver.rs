//! The load driver, written once and used for every server: a JSON-RPC client over any reader
//! and writer that keeps many requests in flight on one connection (responses are matched by id),
//! plus the request shapes of the modern (2026-07-28) wire.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The per-request `_meta` every modern request carries: version, client info, and the client's
/// capabilities for this request (elicitation and the tasks extension).
pub const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp-tasks-bench","version":"0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

/// A failure the benchmark stops on.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<String>>>>;

/// One connection to a server.
#[derive(Debug, Clone)]
pub struct Client {
    out: mpsc::UnboundedSender<Vec<u8>>,
    waiters: Waiters,
    next_id: Arc<AtomicU64>,
}

#[derive(Deserialize)]
struct IdOnly {
    id: Option<u64>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

impl Client {
    /// A client over this reader (the server's output) and writer (its input). Spawns a reader
    /// and a writer task; both end when the connection closes.
    pub fn new<R, W>(reader: R, writer: W) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let waiters: Waiters = Arc::default();
        tokio::spawn(async move {
            let mut writer = writer;
            let mut buf = Vec::with_capacity(64 * 1024);
            while let Some(line) = rx.recv().await {
                buf.clear();
                buf.extend_from_slice(&line);
                while let Ok(more) = rx.try_recv() {
                    buf.extend_from_slice(&more);
                    if buf.len() > 1 << 20 {
                        break;
                    }
                }
                if writer.write_all(&buf).await.is_err() || writer.flush().await.is_err() {
                    return;
                }
            }
            // Every `Client` is gone: end the server's input (an in-process pipe half stays open
            // until both halves drop, so say it explicitly).
            let _ = writer.shutdown().await;
        });
        let routes = waiters.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::with_capacity(64 * 1024, reader).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(IdOnly { id: Some(id) }) = serde_json::from_str::<IdOnly>(&line) else {
                    continue; // notifications and anything else are not waited for
                };
                let waiter = routes.lock().expect("waiters").remove(&id);
                if let Some(tx) = waiter {
                    let _ = tx.send(line);
                }
            }
            routes.lock().expect("waiters").clear();
        });
        Client {
            out,
            waiters,
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Sends a request (`params` is JSON text) and returns the response line.
    pub async fn raw(&self, method: &str, params: &str) -> Result<String, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().expect("waiters").insert(id, tx);
        let traced;
        let params = if SEND_TRACEPARENT.load(Ordering::Relaxed) {
            traced = with_traceparent(params, id);
            &traced
        } else {
            params
        };
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n"
        );
        self.out
            .send(line.into_bytes())
            .map_err(|_| "the connection is closed")?;
        Ok(rx
            .await
            .map_err(|_| "the connection closed before the answer")?)
    }

    /// Sends a request and decodes its `result`; a JSON-RPC error is an error.
    pub async fn call<T: DeserializeOwned>(&self, method: &str, params: &str) -> Result<T, Error> {
        let line = self.raw(method, params).await?;
        let envelope: Envelope<'_> = serde_json::from_str(&line)?;
        match (envelope.result, envelope.error) {
            (Some(result), _) => Ok(serde_json::from_str(result.get())?),
            (None, Some(error)) => Err(format!("{method} failed: {}", error.get()).into()),
            (None, None) => Err(format!("{method}: neither result nor error: {line}").into()),
        }
    }

    /// Requests in flight (sent, not answered).
    pub fn in_flight(&self) -> usize {
        self.waiters.lock().expect("waiters").len()
    }
}

/// Whether every request's `_meta` carries a `traceparent` ([`send_traceparent`]).
static SEND_TRACEPARENT: AtomicBool = AtomicBool::new(false);

/// The trace every request's `traceparent` names, when it carries one.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// From now on, every request's `_meta` carries a W3C `traceparent` (SEP-414), as a client in a
/// traced host would send: one trace, a parent span id of its own per request (the request id).
pub fn send_traceparent(on: bool) {
    SEND_TRACEPARENT.store(on, Ordering::Relaxed);
}

/// `params` with a `traceparent` first in its `_meta` (unchanged if it has none).
fn with_traceparent(params: &str, id: u64) -> String {
    const META_KEY: &str = r#""_meta":{"#;
    match params.find(META_KEY) {
        Some(at) => {
            let (head, tail) = params.split_at(at + META_KEY.len());
            format!(r#"{head}"traceparent":"00-{TRACE_ID}-{id:016x}-01",{tail}"#)
        }
        None => params.to_owned(),
    }
}

/// `tools/call` params with the modern `_meta`.
pub fn call_params(tool: &str, arguments: &str) -> String {
    format!(r#"{{"name":"{tool}","arguments":{arguments},"_meta":{META}}}"#)
}

/// `tasks/get` params.
pub fn get_params(task_id: &str) -> String {
    format!(r#"{{"taskId":"{task_id}","_meta":{META}}}"#)
}

/// `tasks/update` params answering `key` with an accepted elicitation of `{"name": name}`.
pub fn update_params(task_id: &str, key: &str, name: &str) -> String {
    format!(
        r#"{{"taskId":"{task_id}","inputResponses":{{"{key}":{{"action":"accept","content":{{"name":"{name}"}}}}}},"_meta":{META}}}"#
    )
}

/// The parts of a `tools/call` or `tasks/get` result the driver looks at.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    /// `resultType`.
    pub result_type: Option<String>,
    /// `taskId` (a task).
    pub task_id: Option<String>,
    /// `status` (a task).
    pub status: Option<String>,
    /// `inputRequests` (a task waiting for input): the keys.
    pub input_requests: Option<HashMap<String, serde::de::IgnoredAny>>,
    /// `content` (a tool result).
    pub content: Option<Vec<Text>>,
    /// `result` (a completed task).
    pub result: Option<ToolResult>,
    /// `error` (a failed task).
    pub error: Option<serde_json::Value>,
}

/// A tool result's content.
#[derive(Debug, Deserialize)]
pub struct ToolResult {
    /// The content blocks.
    pub content: Vec<Text>,
}

/// A text content block.
#[derive(Debug, Deserialize)]
pub struct Text {
    /// The text (absent for other block types).
    pub text: Option<String>,
}

impl Seen {
    fn first_text(blocks: &[Text]) -> Option<&str> {
        blocks.first().and_then(|b| b.text.as_deref())
    }

    /// The text of an inline result.
    pub fn text(&self) -> Option<&str> {
        self.content.as_deref().and_then(Self::first_text)
    }

    /// The text of a completed task's result.
    pub fn task_text(&self) -> Option<&str> {
        self.result
            .as_ref()
            .and_then(|r| Self::first_text(&r.content))
    }
}

/// One inline `echo` call; checks the text comes back. One round trip.
pub async fn echo_call(c: &Client, params: &str, expect: &str, check: bool) -> Result<u32, Error> {
    if check {
        let seen: Seen = c.call("tools/call", params).await?;
        if seen.text() != Some(expect) {
            return Err(format!("echo answered {seen:?}").into());
        }
    } else {
        let line = c.raw("tools/call", params).await?;
        if !line.contains("\"result\"") {
            return Err(format!("echo failed: {line}").into());
        }
    }
    Ok(1)
}

/// Starts a task with `tools/call`; returns its id.
pub async fn create_task(c: &Client, params: &str) -> Result<String, Error> {
    let seen: Seen = c.call("tools/call", params).await?;
    match (seen.result_type.as_deref(), seen.task_id) {
        (Some("task"), Some(id)) => Ok(id),
        (_, other) => Err(format!("not a task ({other:?})").into()),
    }
}

/// Polls `tasks/get` (without pausing: a benchmark ignores `pollIntervalMs`) until the status is
/// `want`; returns what was seen and how many round trips it took. A terminal status other than
/// `want` is an error.
pub async fn poll_until(c: &Client, get: &str, want: &str) -> Result<(Seen, u32), Error> {
    let mut trips = 0;
    loop {
        let seen: Seen = c.call("tasks/get", get).await?;
        trips += 1;
        match seen.status.as_deref() {
            Some(s) if s == want => return Ok((seen, trips)),
            Some("working" | "input_required") => {}
            other => return Err(format!("task ended {other:?}: {:?}", seen.error).into()),
        }
        if trips > 100_000 {
            return Err("the task never got there".into());
        }
    }
}

/// A whole task: create → poll until `completed`; checks the result's size. Returns round trips.
pub async fn task_lifecycle(c: &Client, create: &str, size: usize) -> Result<u32, Error> {
    let id = create_task(c, create).await?;
    let (seen, trips) = poll_until(c, &get_params(&id), "completed").await?;
    match seen.task_text() {
        Some(t) if t.len() == size => Ok(1 + trips),
        other => Err(format!("completed with {:?}", other.map(str::len)).into()),
    }
}

/// An in-task elicitation: create → poll until `input_required` → `tasks/update` with a name →
/// poll until `completed`; checks the greeting. Returns round trips.
pub async fn elicitation(c: &Client, create: &str, name: &str) -> Result<u32, Error> {
    let id = create_task(c, create).await?;
    let get = get_params(&id);
    let (seen, t1) = poll_until(c, &get, "input_required").await?;
    let key = seen
        .input_requests
        .as_ref()
        .and_then(|r| r.keys().next().cloned())
        .ok_or("input_required without inputRequests")?;
    let _: serde_json::Value = c
        .call("tasks/update", &update_params(&id, &key, name))
        .await?;
    let (seen, t2) = poll_until(c, &get, "completed").await?;
    let want = format!("Hello, {name}!");
    if seen.task_text() != Some(want.as_str()) {
        return Err(format!("completed with {:?}", seen.task_text()).into());
    }
    Ok(2 + t1 + t2)
}
