//! The client: connecting (stdio, Streamable HTTP, in-process), agreeing on an era, listing and
//! calling tools.

use crate::error::Error;
use crate::handler::{Answer, DynHandler, InputContext, InputHandler, NoInput, answer};
use crate::http::HttpWire;
use crate::peer::{DuplexSend, Outcome, Peer, Wire};
use crate::task::{TaskHandle, TaskKind};
use mcp_tasks_runtime::protocol::{
    CallToolResult, LEGACY_VERSION, MODERN_VERSION, MODERN_VERSIONS, TASKS_EXTENSION, codes, meta,
};
use mcp_tasks_runtime::{Server, TaskSupport};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How many `InputRequiredResult` rounds one inline call may take before the client gives up.
const MAX_INPUT_ROUNDS: usize = 32;

/// Which protocol era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EraChoice {
    /// Probe with `server/discover`; fall back to `initialize` when the server does not answer it
    /// as a 2026-07-28 server would.
    #[default]
    Auto,
    /// 2026-07-28 only (stateless, per-request `_meta`, the tasks extension).
    Modern,
    /// 2025-11-25 only (`initialize`, a session, experimental tasks).
    Legacy,
}

/// The era the client and server agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28 and later: the protocol version sent on every request.
    Modern {
        /// The version.
        version: String,
    },
    /// 2025-11-25 and earlier: the version `initialize` negotiated.
    Legacy {
        /// The version.
        version: String,
    },
}

impl Era {
    /// The protocol version.
    pub fn version(&self) -> &str {
        match self {
            Era::Modern { version } | Era::Legacy { version } => version,
        }
    }

    /// Whether this is the modern (2026-07-28) era.
    pub fn is_modern(&self) -> bool {
        matches!(self, Era::Modern { .. })
    }
}

/// Whether the client asks for tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Modern: declare the tasks extension on every request (the server decides). Legacy: send
    /// `task` for tools whose `execution.taskSupport` is `optional` or `required`, when the server
    /// declares task-augmented `tools/call`.
    #[default]
    Auto,
    /// Never ask for tasks: tools that can only run as tasks fail with
    /// [`Error::TaskCreation`].
    Never,
}

/// What the server said about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// `serverInfo.name` (empty when the server sent none).
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// Instructions for the model.
    pub instructions: Option<String>,
    /// The server's capabilities, as sent.
    pub capabilities: Value,
    /// Whether the server runs tool calls as tasks (modern: the tasks extension; legacy:
    /// `tasks.requests.tools.call`).
    pub supports_tasks: bool,
}

impl ServerInfo {
    fn from(result: &Value, server_info: Option<&Value>, modern: bool) -> Self {
        let text = |v: Option<&Value>, k: &str| {
            v.and_then(|v| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let capabilities = result.get("capabilities").cloned().unwrap_or(json!({}));
        let supports_tasks = if modern {
            capabilities
                .get("extensions")
                .and_then(|e| e.get(TASKS_EXTENSION))
                .is_some()
        } else {
            capabilities.pointer("/tasks/requests/tools/call").is_some()
        };
        ServerInfo {
            name: text(server_info, "name").unwrap_or_default(),
            version: text(server_info, "version").unwrap_or_default(),
            title: text(server_info, "title"),
            instructions: text(Some(result), "instructions"),
            capabilities,
            supports_tasks,
        }
    }
}

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments, exactly as sent.
    pub input_schema: Value,
    /// The JSON Schema of its structured result, if it has one.
    pub output_schema: Option<Value>,
    /// Legacy era: `execution.taskSupport` (absent means `forbidden`). Modern era: always `None`
    /// (the server decides per call).
    pub task_support: Option<TaskSupport>,
    /// The whole tool object, exactly as sent.
    pub raw: Value,
}

impl ToolInfo {
    fn parse(raw: Value, modern: bool) -> Result<Self, Error> {
        let name = raw
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("tools/list", "a tool without a `name`"))?
            .to_owned();
        let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_owned);
        let task_support = if modern {
            None
        } else {
            Some(
                match raw
                    .pointer("/execution/taskSupport")
                    .and_then(Value::as_str)
                {
                    Some("optional") => TaskSupport::Optional,
                    Some("required") => TaskSupport::Required,
                    _ => TaskSupport::Forbidden,
                },
            )
        };
        Ok(ToolInfo {
            title: text("title"),
            description: text("description"),
            input_schema: raw.get("inputSchema").cloned().unwrap_or(json!({})),
            output_schema: raw.get("outputSchema").cloned(),
            task_support,
            name,
            raw,
        })
    }
}

/// What a `tools/call` came to: the result at once, or a task to follow.
#[derive(Debug)]
pub enum ToolCall {
    /// The server answered with the result.
    Done(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

impl ToolCall {
    /// The final result, waiting for the task if it is one. A tool error (`isError: true`) is a
    /// result like any other; a failed or cancelled task is an error.
    pub async fn result(self) -> Result<CallToolResult, Error> {
        match self {
            ToolCall::Done(result) => Ok(result),
            ToolCall::Task(task) => task.result().await,
        }
    }

    /// The final result's structured content as `T` (see [`structured`]).
    pub async fn structured<T: DeserializeOwned>(self) -> Result<T, Error> {
        structured(self.result().await?)
    }

    /// The task, if the call became one.
    pub fn task(&self) -> Option<&TaskHandle> {
        match self {
            ToolCall::Task(t) => Some(t),
            ToolCall::Done(_) => None,
        }
    }
}

/// A result as `T`: its structured content, or (for servers that send none) its only text block
/// read as JSON. A tool error is [`Error::Tool`].
pub fn structured<T: DeserializeOwned>(result: CallToolResult) -> Result<T, Error> {
    if result.is_error {
        return Err(Error::Tool(result));
    }
    if let Some(value) = result.structured_content {
        return serde_json::from_value(value).map_err(|e| Error::Decode(e.to_string()));
    }
    match result.content.as_slice() {
        [mcp_tasks_runtime::Content::Text { text }] => {
            serde_json::from_str(text).map_err(|e| Error::Decode(e.to_string()))
        }
        _ => Err(Error::Decode(
            "the result has no structured content and no single text block".into(),
        )),
    }
}

/// Settings of a connection; see [`Client::builder`].
pub struct ClientBuilder {
    handler: Arc<dyn DynHandler>,
    era: EraChoice,
    name: String,
    version: String,
    pub(crate) config: TaskConfig,
    discover_timeout: Duration,
    task_mode: TaskMode,
    task_ttl: Option<Duration>,
    bearer: Option<String>,
    headers: HeaderMap,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("era", &self.era)
            .field("name", &self.name)
            .field("config", &self.config)
            .field("task_mode", &self.task_mode)
            .finish_non_exhaustive()
    }
}

/// How tasks are followed.
#[derive(Debug, Clone)]
pub(crate) struct TaskConfig {
    pub(crate) stuck_after: Option<Duration>,
    pub(crate) default_poll_interval: Duration,
    pub(crate) min_poll_interval: Duration,
}

impl ClientBuilder {
    /// Answers what servers ask with `handler` (default: [`NoInput`], which declares nothing).
    pub fn handler(mut self, handler: impl InputHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Which era to speak (default [`EraChoice::Auto`]).
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }

    /// The client's name and version (`clientInfo`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Raises [`TaskEvent::Stuck`](crate::TaskEvent::Stuck) when a task's status, message and
    /// progress have not changed for this long (default: never).
    pub fn stuck_after(mut self, after: Duration) -> Self {
        self.config.stuck_after = Some(after);
        self
    }

    /// The poll interval when the server suggests none (default 1 s). When it does, its
    /// suggestion is honoured.
    pub fn default_poll_interval(mut self, interval: Duration) -> Self {
        self.config.default_poll_interval = interval;
        self
    }

    /// How long [`EraChoice::Auto`] waits for an answer to `server/discover` before trying
    /// `initialize` (default 5 s; servers that answer with an error are not waited for).
    pub fn discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// Whether to ask for tasks (default [`TaskMode::Auto`]).
    pub fn tasks(mut self, mode: TaskMode) -> Self {
        self.task_mode = mode;
        self
    }

    /// Legacy era: the `ttl` asked for in `task` (default: the server's choice).
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = Some(ttl);
        self
    }

    /// HTTP: sends `Authorization: Bearer TOKEN` on every request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// HTTP: sends this header on every request.
    ///
    /// # Panics
    /// When the name or value is not a valid HTTP header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("a valid header name");
        let value = HeaderValue::from_str(value).expect("a valid header value");
        self.headers.insert(name, value);
        self
    }

    /// Starts `command` and speaks to it over its stdin and stdout (its stderr is left as the
    /// command says, inherited by default). The process is killed when the client is dropped;
    /// [`Client::close`] ends it gracefully.
    pub async fn connect_stdio(
        self,
        mut command: tokio::process::Command,
    ) -> Result<Client, Error> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command
            .spawn()
            .map_err(|e| Error::Transport(format!("could not start `{program}`: {e}")))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                let mut line = serde_json::to_vec(&message).expect("JSON values serialise");
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let send: DuplexSend = Box::new(move |m| tx.send(m).is_ok());
        let peer = Peer::new(Wire::Duplex(Mutex::new(Some(send))), self.handler.clone());
        let weak = Arc::downgrade(&peer);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.trim().is_empty() {
                    continue;
                }
                let Some(peer) = weak.upgrade() else { return };
                match serde_json::from_str::<Value>(&line) {
                    Ok(message) => peer.on_incoming(message),
                    Err(e) => {
                        tracing::warn!(error = %e, "a line from the server that is not JSON; ignored")
                    }
                }
            }
            if let Some(peer) = weak.upgrade() {
                peer.on_closed();
            }
        });
        self.finish(peer, Some(child)).await
    }

    /// Speaks Streamable HTTP to the endpoint at `url` (e.g. `http://127.0.0.1:8080/mcp`).
    pub async fn connect_http(self, url: impl Into<String>) -> Result<Client, Error> {
        let wire = HttpWire::new(url.into(), self.bearer.clone(), self.headers.clone())?;
        let peer = Peer::new(Wire::Http(wire), self.handler.clone());
        self.finish(peer, None).await
    }

    /// Connects to `server` in this process: messages are handed over in memory, with no process
    /// or socket (see [`Server::connect_in_memory`]). For tests of tools; see the crate docs.
    pub async fn connect_in_process(self, server: &Server) -> Result<Client, Error> {
        let (sender, mut receiver) = server.connect_in_memory().split();
        let send: DuplexSend = Box::new(move |m| sender.send(m));
        let peer = Peer::new(Wire::Duplex(Mutex::new(Some(send))), self.handler.clone());
        let weak = Arc::downgrade(&peer);
        tokio::spawn(async move {
            while let Some(message) = receiver.recv().await {
                let Some(peer) = weak.upgrade() else { return };
                peer.on_incoming(message);
            }
            if let Some(peer) = weak.upgrade() {
                peer.on_closed();
            }
        });
        self.finish(peer, None).await
    }

    async fn finish(
        self,
        peer: Arc<Peer>,
        child: Option<tokio::process::Child>,
    ) -> Result<Client, Error> {
        let mut inner = ClientInner {
            peer,
            era: Era::Legacy {
                version: LEGACY_VERSION.into(),
            },
            server: ServerInfo::from(&json!({}), None, false),
            client_info: json!({ "name": self.name, "version": self.version }),
            config: self.config.clone(),
            task_mode: self.task_mode,
            task_ttl: self.task_ttl,
            tools: Mutex::new(HashMap::new()),
            child: tokio::sync::Mutex::new(child),
        };
        let modern = match self.era {
            EraChoice::Legacy => None,
            EraChoice::Modern => match inner.discover(None).await? {
                Ok(found) => Some(found),
                Err(why) => return Err(Error::Negotiation(why)),
            },
            EraChoice::Auto => match inner.discover(Some(self.discover_timeout)).await? {
                Ok(found) => Some(found),
                Err(why) => {
                    tracing::debug!(%why, "not a 2026-07-28 server; trying initialize");
                    None
                }
            },
        };
        match modern {
            Some((era, server)) => {
                inner.era = era;
                inner.server = server;
            }
            None => inner.initialize().await?,
        }
        Ok(Client {
            inner: Arc::new(inner),
        })
    }
}

/// A connection to an MCP server. Cheap to clone; the connection closes when the last clone (and
/// the last task handle) is dropped, or with [`close`](Self::close).
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_tasks_client::Error> {
/// use mcp_tasks_client::Client;
///
/// let client = Client::builder()
///     .bearer_token("secret")
///     .connect_http("http://127.0.0.1:8080/mcp")
///     .await?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client
///     .call_tool("greet", serde_json::json!({ "name": "Ada" }))
///     .await?
///     .result()
///     .await?;
/// println!("{result:?}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

pub(crate) struct ClientInner {
    peer: Arc<Peer>,
    era: Era,
    server: ServerInfo,
    client_info: Value,
    pub(crate) config: TaskConfig,
    task_mode: TaskMode,
    task_ttl: Option<Duration>,
    /// Legacy: the tools' `taskSupport`, from the last `tools/list`.
    tools: Mutex<HashMap<String, Option<TaskSupport>>>,
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
}

impl std::fmt::Debug for ClientInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientInner")
            .field("era", &self.era)
            .field("server", &self.server.name)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ClientInner {
    /// Client capabilities for this era.
    fn capabilities(&self, modern: bool) -> Value {
        let mut caps = self.peer.handler().capabilities().to_json();
        if modern && self.task_mode == TaskMode::Auto {
            caps.insert("extensions".into(), json!({ TASKS_EXTENSION: {} }));
        }
        Value::Object(caps)
    }

    fn modern_meta(&self) -> Value {
        json!({
            meta::PROTOCOL_VERSION: MODERN_VERSION,
            meta::CLIENT_CAPABILITIES: self.capabilities(true),
            meta::CLIENT_INFO: self.client_info,
        })
    }

    /// `server/discover`: `Ok(Ok(..))` for a 2026-07-28 server, `Ok(Err(why))` for one that is
    /// not (or did not answer within `timeout`), `Err` when the server cannot be reached.
    async fn discover(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Result<(Era, ServerInfo), String>, Error> {
        if let Some(http) = self.peer.http() {
            http.set_modern(MODERN_VERSION);
        }
        let request = self
            .peer
            .request("server/discover", json!({ "_meta": self.modern_meta() }));
        let outcome = match timeout {
            Some(t) => match tokio::time::timeout(t, request).await {
                Ok(r) => r,
                Err(_) => return Ok(Err(format!("no answer to server/discover within {t:?}"))),
            },
            None => request.await,
        };
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => return Ok(Err(format!("server/discover: {error}"))),
            Err(Error::Http { status, body }) => {
                return Ok(Err(format!("server/discover: HTTP {status}: {body}")));
            }
            Err(Error::InvalidResponse { reason, .. }) => {
                return Ok(Err(format!("server/discover: {reason}")));
            }
            Err(e) => return Err(e),
        };
        let supported: Vec<&str> = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(version) = MODERN_VERSIONS
            .iter()
            .find(|v| supported.contains(v))
            .copied()
        else {
            return Ok(Err(format!(
                "the server supports {supported:?}, none of {MODERN_VERSIONS:?}"
            )));
        };
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO))
            .or_else(|| result.get("serverInfo"));
        let info = ServerInfo::from(&result, server_info, true);
        Ok(Ok((
            Era::Modern {
                version: version.to_owned(),
            },
            info,
        )))
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(&mut self) -> Result<(), Error> {
        if let Some(http) = self.peer.http() {
            http.start_initialize();
        }
        let params = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.capabilities(false),
            "clientInfo": self.client_info,
        });
        let result = match self.peer.request("initialize", params).await {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => {
                return Err(Error::Negotiation(format!("initialize failed: {error}")));
            }
            Err(e) => return Err(e),
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid("initialize", "no `protocolVersion` in the result"))?
            .to_owned();
        if MODERN_VERSIONS.contains(&version.as_str()) {
            return Err(Error::Negotiation(format!(
                "initialize answered with {version}, a version that has no initialize"
            )));
        }
        self.server = ServerInfo::from(&result, result.get("serverInfo"), false);
        if let Some(http) = self.peer.http() {
            http.set_legacy(&version);
        }
        self.era = Era::Legacy { version };
        self.peer
            .notify("notifications/initialized", json!({}))
            .await?;
        if let Some(http) = self.peer.http() {
            http.open_session_stream(Arc::downgrade(&self.peer));
        }
        Ok(())
    }

    /// Params with the era's additions (`_meta` in the modern era).
    pub(crate) fn params(&self, mut params: Value) -> Value {
        if self.era.is_modern() {
            let obj = params.as_object_mut().expect("params are an object");
            let meta = obj.entry("_meta").or_insert_with(|| json!({}));
            if let (Some(meta), Value::Object(add)) = (meta.as_object_mut(), self.modern_meta()) {
                meta.extend(add);
            }
        }
        params
    }

    /// A request with the era's additions; a JSON-RPC error is [`Error::Rpc`].
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Value, Error> {
        match self.request(method, params).await? {
            Ok(v) => Ok(v),
            Err(error) => Err(Error::Rpc {
                method: method.to_owned(),
                error,
            }),
        }
    }

    /// A request with the era's additions, its JSON-RPC error kept apart.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Outcome, Error> {
        self.peer.request(method, self.params(params)).await
    }

    pub(crate) fn peer(&self) -> &Arc<Peer> {
        &self.peer
    }
}

/// Answers every request of an input-requests map with the handler: the `inputResponses` map,
/// or the method of a request the handler declined where the wire has no way to decline.
pub(crate) async fn answer_all(
    handler: &dyn DynHandler,
    requests: &Map<String, Value>,
    task_id: Option<&str>,
) -> Result<Map<String, Value>, String> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(json!({}));
        let context = InputContext {
            task_id: task_id.map(str::to_owned),
            key: Some(key.clone()),
        };
        match answer(handler, method, params, context).await {
            Answer::Result(r) => {
                responses.insert(key.clone(), r);
            }
            Answer::Declined | Answer::Unknown => return Err(method.to_owned()),
        }
    }
    Ok(responses)
}

fn parse_result(method: &str, value: Value) -> Result<CallToolResult, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::invalid(method, format!("not a CallToolResult: {e}")))
}

impl Client {
    /// Settings for a new connection.
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            handler: Arc::new(NoInput),
            era: EraChoice::Auto,
            name: "mcp-tasks-client".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            config: TaskConfig {
                stuck_after: None,
                default_poll_interval: Duration::from_secs(1),
                min_poll_interval: Duration::from_millis(10),
            },
            discover_timeout: Duration::from_secs(5),
            task_mode: TaskMode::Auto,
            task_ttl: None,
            bearer: None,
            headers: HeaderMap::new(),
        }
    }

    /// The era the client and server agreed on.
    pub fn era(&self) -> &Era {
        &self.inner.era
    }

    /// What the server said about itself.
    pub fn server(&self) -> &ServerInfo {
        &self.inner.server
    }

    /// Every tool (all pages of `tools/list`).
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, Error> {
        let modern = self.inner.era.is_modern();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let result = self.inner.call("tools/list", params).await?;
            let page = result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::invalid("tools/list", "no `tools` array"))?;
            for raw in page {
                tools.push(ToolInfo::parse(raw.clone(), modern)?);
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        let mut known = lock(&self.inner.tools);
        known.clear();
        known.extend(tools.iter().map(|t| (t.name.clone(), t.task_support)));
        drop(known);
        Ok(tools)
    }

    /// Calls a tool with these arguments (anything that serialises to a JSON object; `()` or
    /// `Value::Null` for none). The server may answer at once or run the call as a task; whatever
    /// it asks on the way (elicitation, sampling, roots) goes to the input handler, by whichever
    /// route the era uses.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<ToolCall, Error> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| Error::Decode(format!("the arguments do not serialise: {e}")))?;
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        match arguments {
            Value::Null => {}
            Value::Object(_) => {
                params.insert("arguments".into(), arguments);
            }
            other => {
                return Err(Error::Decode(format!(
                    "tool arguments must be a JSON object, not {other}"
                )));
            }
        }
        if self.inner.era.is_modern() {
            self.call_modern(name, params).await
        } else {
            self.call_legacy(name, params).await
        }
    }

    async fn call_modern(&self, name: &str, base: Map<String, Value>) -> Result<ToolCall, Error> {
        let mut retry = Map::new();
        for _ in 0..MAX_INPUT_ROUNDS {
            let mut params = base.clone();
            params.extend(retry.clone());
            let result = match self
                .inner
                .request("tools/call", Value::Object(params))
                .await?
            {
                Ok(result) => result,
                Err(error)
                    if error.code == codes::MISSING_REQUIRED_CLIENT_CAPABILITY
                        && error
                            .data
                            .as_ref()
                            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
                            .and_then(|e| e.get(TASKS_EXTENSION))
                            .is_some() =>
                {
                    return Err(Error::TaskCreation {
                        tool: name.to_owned(),
                        reason: "the tool runs only as a task, and the client does not take tasks"
                            .into(),
                        error: Some(error),
                    });
                }
                Err(error) => {
                    return Err(Error::Rpc {
                        method: "tools/call".into(),
                        error,
                    });
                }
            };
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => {
                    return Ok(ToolCall::Done(parse_result("tools/call", result)?));
                }
                Some("task") => {
                    let task = TaskHandle::start(self.clone(), name, TaskKind::Modern, &result)?;
                    return Ok(ToolCall::Task(task));
                }
                Some("input_required") => {
                    let requests = result
                        .get("inputRequests")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    let state = result.get("requestState").cloned();
                    if requests.is_empty() && state.is_none() {
                        return Err(Error::invalid(
                            "tools/call",
                            "an InputRequiredResult with neither inputRequests nor requestState",
                        ));
                    }
                    let responses = answer_all(self.inner.peer.handler(), &requests, None)
                        .await
                        .map_err(|method| Error::InputDeclined { method })?;
                    retry.clear();
                    retry.insert("inputResponses".into(), Value::Object(responses));
                    if let Some(state) = state {
                        retry.insert("requestState".into(), state);
                    }
                }
                Some(other) => {
                    return Err(Error::invalid(
                        "tools/call",
                        format!("unknown resultType {other:?}"),
                    ));
                }
            }
        }
        Err(Error::invalid(
            "tools/call",
            format!("the server asked for input more than {MAX_INPUT_ROUNDS} times"),
        ))
    }

    async fn call_legacy(
        &self,
        name: &str,
        mut params: Map<String, Value>,
    ) -> Result<ToolCall, Error> {
        let augment = self.inner.task_mode == TaskMode::Auto
            && self.inner.server.supports_tasks
            && matches!(
                self.task_support(name).await?,
                Some(TaskSupport::Optional | TaskSupport::Required)
            );
        let progress_token = format!("mcp-tasks-client-{}", rand_token());
        if augment {
            let mut task = Map::new();
            if let Some(ttl) = self.inner.task_ttl {
                task.insert("ttl".into(), Value::from(ttl.as_millis() as u64));
            }
            params.insert("task".into(), Value::Object(task));
            params.insert(
                "_meta".into(),
                json!({ meta::PROGRESS_TOKEN: progress_token }),
            );
        }
        let result = match self
            .inner
            .request("tools/call", Value::Object(params))
            .await?
        {
            Ok(result) => result,
            Err(error) if augment => {
                return Err(Error::TaskCreation {
                    tool: name.to_owned(),
                    reason: "the server refused the task-augmented call".into(),
                    error: Some(error),
                });
            }
            Err(error) => {
                return Err(Error::Rpc {
                    method: "tools/call".into(),
                    error,
                });
            }
        };
        match result.get("task") {
            Some(task) if task.is_object() => {
                let kind = TaskKind::Legacy {
                    progress_token: augment.then_some(progress_token),
                };
                Ok(ToolCall::Task(TaskHandle::start(
                    self.clone(),
                    name,
                    kind,
                    task,
                )?))
            }
            _ => Ok(ToolCall::Done(parse_result("tools/call", result)?)),
        }
    }

    /// Legacy: a tool's `taskSupport`, listing the tools first if it is not known yet.
    async fn task_support(&self, name: &str) -> Result<Option<TaskSupport>, Error> {
        if let Some(known) = lock(&self.inner.tools).get(name) {
            return Ok(*known);
        }
        self.list_tools().await?;
        Ok(lock(&self.inner.tools).get(name).copied().flatten())
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self) -> Result<(), Error> {
        self.inner.call("ping", json!({})).await.map(|_| ())
    }

    /// Sends any request (with the era's `_meta` added) and returns its result; for methods this
    /// client has no call for.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Error> {
        if !params.is_object() {
            return Err(Error::Decode("request params must be a JSON object".into()));
        }
        self.inner.call(method, params).await
    }

    /// Ends the connection: a legacy HTTP session is deleted; a spawned server gets its stdin
    /// closed and up to 2 seconds to exit before it is killed. Task handles stop working.
    pub async fn close(&self) {
        if let Some(http) = self.inner.peer.http() {
            http.close().await;
        }
        self.inner.peer.close_duplex();
        if let Some(mut child) = self.inner.child.lock().await.take()
            && tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }

    pub(crate) fn inner(&self) -> &ClientInner {
        &self.inner
    }
}

/// A short random token (progress tokens).
fn rand_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{t:x}-{n}")
}
