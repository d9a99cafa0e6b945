//! The client: connecting (stdio, Streamable HTTP, in-process), agreeing on an era, listing and
//! calling tools.

use crate::error::Error;
use crate::handler::{DynHandler, InputHandler, NoInput, answer_all};
use crate::http::HttpWire;
use crate::peer::{DuplexSend, Peer, Wire};
use crate::result::structured;
use crate::session::{Era, ServerInfo, Session, TaskConfig, TaskMode, ToolCache};
use crate::task::{TaskHandle, TaskKind};
use futures_util::StreamExt;
use mcp_tasks_runtime::protocol::{CallToolResult, LEGACY_VERSION, TASKS_EXTENSION, codes, meta};
use mcp_tasks_runtime::{Server, TaskSupport};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

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

/// The characters of an HTTP token (RFC 9110 `tchar`).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The `x-mcp-header` annotations of a tool's input schema as `(argument, header name)` pairs,
/// or why they are invalid (then the tool must not be used): a name must be a non-empty HTTP
/// token, unique (ignoring case), on a `string`, `integer` or `boolean` property.
fn header_params(input_schema: &Value) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Some(props) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(out);
    };
    for (prop, schema) in props {
        let Some(header) = schema.get("x-mcp-header") else {
            continue;
        };
        let header = header
            .as_str()
            .ok_or_else(|| format!("`{prop}`: x-mcp-header is not a string"))?;
        if !is_token(header) {
            return Err(format!(
                "`{prop}`: x-mcp-header {header:?} is not a valid header name"
            ));
        }
        let kind = schema.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "`{prop}`: x-mcp-header is allowed on string, integer and boolean properties only"
            ));
        }
        if out.iter().any(|(_, h)| h.eq_ignore_ascii_case(header)) {
            return Err(format!("`{prop}`: x-mcp-header {header:?} is used twice"));
        }
        out.push((prop.clone(), header.to_owned()));
    }
    Ok(out)
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

/// The default of [`ClientBuilder::max_message`]: 16 MiB, as the server's.
const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

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
    max_message: usize,
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

impl ClientBuilder {
    /// The longest message read from a server: 16 MiB unless set. Over stdio that is one line
    /// (without its newline); a server that sends a longer one is cut off: the line is not
    /// buffered, the connection counts as closed, and every request still waiting fails with
    /// [`Error::Transport`]. Over HTTP it bounds a JSON answer's body and each SSE event (and
    /// line) of a stream: a longer one fails the request it answers with [`Error::Transport`]
    /// (on the session's GET stream, the stream is closed), without reading the rest.
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

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
        let max = self.max_message;
        tokio::spawn(async move {
            let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(max));
            while let Some(line) = lines.next().await {
                let line = match line {
                    Ok(line) => line,
                    Err(LinesCodecError::MaxLineLengthExceeded) => {
                        tracing::error!(
                            max_bytes = max,
                            "the server sent a message longer than the client's limit; closing the connection"
                        );
                        break;
                    }
                    Err(LinesCodecError::Io(e)) => {
                        tracing::warn!(error = %e, "reading the server's output failed; closing the connection");
                        break;
                    }
                };
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
    /// Plain `http://` only: this build has no TLS (put a TLS-terminating proxy in front of an
    /// `https://` server).
    pub async fn connect_http(self, url: impl Into<String>) -> Result<Client, Error> {
        let url = url.into();
        match url
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase())
        {
            Some(scheme) if scheme == "http" => {}
            Some(scheme) if scheme == "https" => {
                return Err(Error::Transport(format!(
                    "{url}: https is not supported by this build (no TLS); use http://"
                )));
            }
            _ => return Err(Error::Transport(format!("{url}: not an http:// URL"))),
        }
        let wire = HttpWire::new(
            url,
            self.bearer.clone(),
            self.headers.clone(),
            self.max_message,
        )?;
        let peer = Peer::new(Wire::Http(Box::new(wire)), self.handler.clone());
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
        let mut inner = Session {
            peer,
            era: Era::Legacy {
                version: LEGACY_VERSION.into(),
            },
            server: ServerInfo::from(&json!({}), None, false),
            client_info: json!({ "name": self.name, "version": self.version }),
            config: self.config.clone(),
            task_mode: self.task_mode,
            task_ttl: self.task_ttl,
            tools: Mutex::new(ToolCache::default()),
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
    inner: Arc<Session>,
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
            max_message: DEFAULT_MAX_MESSAGE,
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
        let mut headers = HashMap::new();
        let mut invalid = HashMap::new();
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
                let tool = ToolInfo::parse(raw.clone(), modern)?;
                match header_params(&tool.input_schema) {
                    Ok(params) => {
                        headers.insert(tool.name.clone(), params);
                        tools.push(tool);
                    }
                    Err(why) => {
                        tracing::warn!(tool = %tool.name, %why, "left out a tool with an invalid x-mcp-header");
                        invalid.insert(tool.name, why);
                    }
                }
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        if let Some(http) = self.inner.peer.http() {
            headers.retain(|_, params: &mut Vec<(String, String)>| !params.is_empty());
            http.set_param_headers(headers);
        }
        *lock(&self.inner.tools) = ToolCache {
            listed: true,
            tools: tools
                .iter()
                .map(|t| (t.name.clone(), t.task_support))
                .collect(),
            invalid,
        };
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
        if self.inner.peer.http().is_some() && !lock(&self.inner.tools).listed {
            // The tool's x-mcp-header annotations decide the request's headers.
            self.list_tools_for_call().await;
        }
        if let Some(why) = lock(&self.inner.tools).invalid.get(name) {
            return Err(Error::invalid(
                "tools/list",
                format!("the tool `{name}` is not usable: {why}"),
            ));
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
                    let task =
                        TaskHandle::start(self.inner.clone(), name, TaskKind::Modern, &result)?;
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
                self.task_support(name).await,
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
            Err(error)
                if error.code == codes::METHOD_NOT_FOUND
                    && lock(&self.inner.tools).tools.get(name)
                        == Some(&Some(TaskSupport::Required)) =>
            {
                return Err(Error::TaskCreation {
                    tool: name.to_owned(),
                    reason: "the tool runs only as a task, and the call was not one".into(),
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
                    self.inner.clone(),
                    name,
                    kind,
                    task,
                )?))
            }
            _ => Ok(ToolCall::Done(parse_result("tools/call", result)?)),
        }
    }

    /// Legacy: a tool's `taskSupport`, listing the tools first if it is not known yet.
    async fn task_support(&self, name: &str) -> Option<TaskSupport> {
        {
            let cache = lock(&self.inner.tools);
            if let Some(known) = cache.tools.get(name) {
                return *known;
            }
            if cache.listed {
                return None;
            }
        }
        self.list_tools_for_call().await;
        lock(&self.inner.tools).tools.get(name).copied().flatten()
    }

    /// Lists the tools for what a call needs to know; a server that cannot list them is called
    /// without that knowledge (and not asked again).
    async fn list_tools_for_call(&self) {
        if let Err(e) = self.list_tools().await {
            tracing::debug!(error = %e, "tools/list failed; calling without the tools' metadata");
            lock(&self.inner.tools).listed = true;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_mcp_header_annotations_are_validated() {
        let schema = |props: Value| json!({ "type": "object", "properties": props });
        let ok = header_params(&schema(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "n": { "type": "integer", "x-mcp-header": "N" },
            "b": { "type": "boolean", "x-mcp-header": "Flag_1" },
            "plain": { "type": "number" },
        })))
        .unwrap();
        assert_eq!(ok.len(), 3);
        for (why, props) in [
            (
                "empty",
                json!({ "a": { "type": "string", "x-mcp-header": "" } }),
            ),
            (
                "space",
                json!({ "a": { "type": "string", "x-mcp-header": "A B" } }),
            ),
            (
                "colon",
                json!({ "a": { "type": "string", "x-mcp-header": "A:B" } }),
            ),
            (
                "non-ASCII",
                json!({ "a": { "type": "string", "x-mcp-header": "Ré" } }),
            ),
            (
                "control",
                json!({ "a": { "type": "string", "x-mcp-header": "A\u{1}" } }),
            ),
            (
                "number",
                json!({ "a": { "type": "number", "x-mcp-header": "A" } }),
            ),
            (
                "object",
                json!({ "a": { "type": "object", "x-mcp-header": "A" } }),
            ),
            (
                "array",
                json!({ "a": { "type": "array", "x-mcp-header": "A" } }),
            ),
            (
                "null",
                json!({ "a": { "type": "null", "x-mcp-header": "A" } }),
            ),
            (
                "not a string",
                json!({ "a": { "type": "string", "x-mcp-header": 1 } }),
            ),
            (
                "duplicate",
                json!({
                    "a": { "type": "string", "x-mcp-header": "Region" },
                    "b": { "type": "string", "x-mcp-header": "region" },
                }),
            ),
        ] {
            assert!(
                header_params(&schema(props)).is_err(),
                "{why} must be refused"
            );
        }
    }
}
