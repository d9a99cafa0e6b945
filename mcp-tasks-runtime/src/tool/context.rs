use super::{Principal, RequestInfo, State, StateMap, ToolError};
use crate::protocol::task::{TaskId, check_output_name, output_uri};
use crate::protocol::{
    ClientCapabilities, Content, Era, Implementation, InputRequest, LogLevel, ResourceContents,
    RpcError,
};
use crate::race::unless;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

// `ctx.elicit::<T>()`: the form is `T`'s JSON Schema.
#[cfg(feature = "schemars")]
mod elicit;
mod outcome;
#[cfg(feature = "schemars")]
pub use elicit::Elicit;
pub use outcome::ElicitOutcome;

/// The future of one input request: the client's bare result object (`ElicitResult`,
/// `CreateMessageResult`, `ListRootsResult`), or why there is none.
pub type InputFuture = Pin<Box<dyn Future<Output = Result<Value, InputError>> + Send>>;

/// The future of [`ContextBackend::publish`].
pub type PublishFuture = Pin<Box<dyn Future<Output = Result<(), ToolError>> + Send>>;

/// Where a [`ToolContext`] sends what the tool asks of the client. The runtime picks the backend by
/// where the call runs (a modern task, a legacy task, inline in either era); tools never see it.
pub trait ContextBackend: Send + Sync + 'static {
    /// Sends one input request (elicitation, sampling, roots) and waits for its answer.
    fn input(&self, request: InputRequest) -> InputFuture;

    /// A human-readable status line (a task's `statusMessage`).
    fn status(&self, _message: String) {}

    /// Progress, for clients that asked for it.
    fn progress(&self, _progress: f64, _total: Option<f64>, _message: Option<String>) {}

    /// A log message (the params of `notifications/message`), already checked against the level
    /// the client asked for. Where the call has no way to the client (a modern task), it is dropped.
    fn log(&self, _params: Value) {}

    /// The id of the task this call runs as, if it is one.
    fn task_id(&self) -> Option<&str> {
        None
    }

    /// Keeps `contents` as output `name` of the task this call runs as (see
    /// [`ToolContext::publish_text`]). Called only where [`task_id`](Self::task_id) names one.
    fn publish(&self, _name: String, _contents: ResourceContents) -> PublishFuture {
        Box::pin(async { Err(ToolError::internal("this call runs as no task")) })
    }

    /// Turns a call that started inline into a task (see [`ToolContext::start_task`]). `None`
    /// means there is nothing to do: the call already is a task, or must stay inline.
    fn start_task(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send>>> {
        None
    }

    /// Whether this run replays a call that was suspended for input before (MRTR, see
    /// [`ToolContext::is_replay`]).
    fn is_replay(&self) -> bool {
        false
    }

    /// Ends the response stream the call is answered on, not the call (see
    /// [`ToolContext::close_stream`]); `false` where that cannot be done.
    fn close_stream(&self) -> bool {
        false
    }

    /// Which run of a durable task's body this is (see [`ToolContext::attempt`]).
    fn attempt(&self) -> u32 {
        1
    }

    /// The checkpoint a durable task kept before this run began (see [`ToolContext::resumed`]).
    fn resumed(&self) -> Option<&Value> {
        None
    }

    /// Keeps a durable task's checkpoint (see [`ToolContext::checkpoint`]); nothing for a call
    /// that runs as no task.
    fn checkpoint(&self, _value: Value) -> PublishFuture {
        Box::pin(async { Ok(()) })
    }

    /// What is cancelled when the server starts draining (see [`ToolContext::draining`]).
    fn draining(&self) -> Option<CancellationToken> {
        None
    }
}

/// Why an input request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability this request needs (`elicitation`, `sampling`,
    /// `roots`); nothing was sent.
    NotSupported {
        /// The capability that is missing.
        capability: &'static str,
    },
    /// The call or task was cancelled while waiting.
    Cancelled,
    /// The client answered with a JSON-RPC error.
    Client {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The answer did not have the expected shape.
    InvalidResponse(String),
    /// The task store failed, or could not be reached for longer than the server waits
    /// ([`ServerConfig::store_patience`](crate::ServerConfig::store_patience)), while the task
    /// asked or waited; the question may or may not have reached the client.
    Store(String),
    /// The request could not be delivered (the connection is gone).
    Disconnected,
    /// The type asked for cannot be an elicitation form (elicitation allows only a flat object of
    /// strings, numbers, integers, booleans and enums); nothing was sent.
    InvalidForm(String),
    /// Inline in the modern era: the call is suspended until the client retries with the answer.
    /// The runtime handles this; a tool only sees it if it swallows the error and goes on.
    Suspended,
    /// A server limit on outstanding input requests (per task or per session) was reached;
    /// nothing was sent. Returned with `?`, the call answers this JSON-RPC error (`-32010`).
    LimitReached(RpcError),
}

impl InputError {
    /// The client's JSON-RPC error answer to an input request, or a limit the server refused it
    /// under.
    pub(crate) fn from_rpc(e: RpcError) -> Self {
        if e.code == RpcError::LIMIT_REACHED {
            InputError::LimitReached(e)
        } else {
            InputError::Client {
                code: e.code,
                message: e.message,
            }
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::NotSupported { capability } => {
                write!(
                    f,
                    "the client did not declare the `{capability}` capability, so it cannot be asked"
                )
            }
            InputError::Cancelled => f.write_str("cancelled while waiting for the client's input"),
            InputError::Client { code, message } => {
                write!(f, "the client answered with an error: {message} ({code})")
            }
            InputError::InvalidResponse(why) => {
                write!(f, "the client's answer was not valid: {why}")
            }
            InputError::Store(why) => {
                write!(
                    f,
                    "the task store failed while the task asked for input: {why}"
                )
            }
            InputError::Disconnected => f.write_str("the client is no longer connected"),
            InputError::InvalidForm(why) => write!(f, "cannot ask for this form: {why}"),
            InputError::Suspended => f.write_str("waiting for the client to retry with input"),
            InputError::LimitReached(e) => write!(f, "{}", e.message),
        }
    }
}

impl std::error::Error for InputError {}

/// The tool's door to the client and the runtime: ask the user ([`elicit`](Self::elicit)), the
/// client's model ([`sample`](Self::sample)) or the client's roots ([`roots`](Self::roots)), report
/// status and progress, and notice cancellation. Take it as a parameter of a `#[tool]` function.
///
/// The same calls work wherever the tool runs: inside a task they become stored input requests,
/// inline they take the route the protocol era needs.
#[derive(Clone)]
pub struct ToolContext {
    inner: Arc<Inner>,
    /// The least severe level the client wants log messages for; `None`: none at all.
    log_level: Option<LogLevel>,
    /// Who is calling, from which client, in which era.
    request: Arc<RequestInfo>,
    /// The application state registered on the server.
    state: Arc<StateMap>,
}

struct Inner {
    backend: Arc<dyn ContextBackend>,
    capabilities: Arc<ClientCapabilities>,
    cancel: CancellationToken,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("task_id", &self.task_id())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// Builds a context. Called by the runtime (and by tests that drive a tool directly). The
    /// capabilities are shared: every call and task of a request (and, where the client declares
    /// the same ones each time, of many requests) reads the same ones.
    pub(crate) fn new(
        backend: Arc<dyn ContextBackend>,
        capabilities: Arc<ClientCapabilities>,
        cancel: CancellationToken,
    ) -> Self {
        ToolContext {
            inner: Arc::new(Inner {
                backend,
                capabilities,
                cancel,
            }),
            log_level: None,
            request: Arc::default(),
            state: Arc::default(),
        }
    }

    /// Sets what is known about the request (principal, client, era, `_meta`); the runtime does
    /// this for every call.
    pub(crate) fn with_request(mut self, request: Arc<RequestInfo>) -> Self {
        self.request = request;
        self
    }

    /// Sets the application state the call can reach ([`state`](Self::state), [`State<T>`]
    /// parameters); the runtime passes what was registered with [`ServerBuilder::state`].
    ///
    /// [`ServerBuilder::state`]: crate::ServerBuilder::state
    pub(crate) fn with_state(mut self, state: Arc<StateMap>) -> Self {
        self.state = state;
        self
    }

    /// The application state of type `T` registered with [`ServerBuilder::state`], if any (a tool that
    /// takes a [`State<T>`] parameter instead is checked when the server starts).
    ///
    /// [`ServerBuilder::state`]: crate::ServerBuilder::state
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.state.get::<T>()
    }

    /// Everything known about the request this call came from. A task keeps the one of the
    /// `tools/call` that created it.
    pub fn request_info(&self) -> &RequestInfo {
        &self.request
    }

    /// The authenticated caller: `None` on stdio and over HTTP without an authenticator. A task
    /// sees the principal that created it. Refuse a caller with
    /// [`ToolError::forbidden`](super::ToolError::forbidden).
    pub fn principal(&self) -> Option<&Principal> {
        self.request.principal.as_ref()
    }

    /// The client's name and version (`clientInfo`), when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.request.client.as_ref()
    }

    /// The protocol era of the request.
    pub fn era(&self) -> Era {
        self.request.era
    }

    /// The protocol version of the request (`2025-11-25`, `2026-07-28`, ...).
    pub fn protocol_version(&self) -> &str {
        &self.request.protocol_version
    }

    /// The request's `_meta` object, as the client sent it.
    pub fn meta(&self) -> &serde_json::Map<String, Value> {
        self.request.meta()
    }

    /// Whether this run of the tool is a *replay*. Inline in the 2026-07-28 era, a call that asks
    /// for input ends with `InputRequiredResult`, and the client's retry runs the tool again
    /// **from the top**: the answers gathered so far are handed back at once, in order, and the
    /// first new question suspends it again. Everything before the last question runs once per
    /// round. Keep side effects after the questions (or run the tool as a task, which never
    /// replays); use this to skip work that must not repeat. `false` for tasks, in the
    /// 2025-11-25 era, and on a call's first run.
    pub fn is_replay(&self) -> bool {
        self.inner.backend.is_replay()
    }

    /// Sets the least severe level the client wants log messages for (`None`, the default of
    /// [`new`](Self::new): it wants none). The runtime sets it from `logging/setLevel` (2025-11-25)
    /// or the request's `io.modelcontextprotocol/logLevel` (2026-07-28).
    pub(crate) fn with_log_level(mut self, level: Option<LogLevel>) -> Self {
        self.log_level = level;
        self
    }

    /// The least severe level the client wants log messages for, if it wants any.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }

    /// Sends a log message to the client (`notifications/message`): `data` is any serializable
    /// value (a string, an object of details). Sent only when the client asked for this level or
    /// a less severe one; otherwise (and where the call cannot reach the client) it is dropped.
    pub fn log(&self, level: LogLevel, data: impl serde::Serialize) {
        self.log_as(level, None, data);
    }

    /// [`log`](Self::log), naming the logger the message comes from.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl serde::Serialize) {
        if self.log_level.is_none_or(|min| level < min) {
            return;
        }
        let data = match serde_json::to_value(data) {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!("a log message could not be serialized and was dropped: {e}");
                return;
            }
        };
        let mut params = serde_json::json!({ "level": level, "data": data });
        if let Some(logger) = logger {
            params["logger"] = Value::String(logger.to_owned());
        }
        self.inner.backend.log(params);
    }

    /// The capabilities the client declared for this call.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }

    /// The task id, when this call runs as a task.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.backend.task_id()
    }

    /// Publishes `text` as the output `name` of this call, and returns the content that points
    /// to it, to put in the tool's result.
    ///
    /// In a task, the text is kept with the task as a resource at `task://{taskId}/{name}` and
    /// the answer is a `resource_link` to it: a client reads it with `resources/read`, as long as
    /// the task is kept (its `ttl`), and only the principal or session that owns the task can
    /// (anyone else gets "resource not found", as for an unknown URI). A task's result stays
    /// small however large its outputs are; `tasks/get` never carries them. Publishing a name
    /// again replaces that output; once the task has ended, nothing more is kept.
    ///
    /// Inline there is nothing to keep it with: the answer embeds the text itself (a `resource`
    /// content with the URI `task:///{name}`, which no read finds), so the same tool works
    /// either way.
    ///
    /// `name` is 1 to 128 of `A-Z a-z 0-9 - . _ ~`; another name, or a store that fails to keep
    /// the output, is an error (`-32603`). A task keeps at most
    /// [`Limits::outputs_per_task`](crate::server::Limits::outputs_per_task) outputs of at most
    /// [`Limits::output_bytes_per_task`](crate::server::Limits::output_bytes_per_task) bytes in
    /// all: one more is refused with that limit's `-32010` (returned with `?`, the task fails
    /// with it), and the outputs already kept stay.
    ///
    /// ```
    /// use mcp_tasks_runtime::{CallToolResult, Content, ToolContext, ToolError, tool};
    ///
    /// /// Writes a long report.
    /// #[tool(task_support = "optional")]
    /// async fn report(ctx: ToolContext, topic: String) -> Result<CallToolResult, ToolError> {
    ///     let text = format!("# {topic}\n\n(a long report)");
    ///     let link = ctx.publish_text("report.md", "text/markdown", text).await?;
    ///     Ok(CallToolResult::from_content(vec![Content::text("The report is ready."), link]))
    /// }
    /// ```
    pub async fn publish_text(
        &self,
        name: &str,
        mime_type: &str,
        text: impl Into<String>,
    ) -> Result<Content, ToolError> {
        let text = text.into();
        let size = text.len() as u64;
        self.publish(name, mime_type, size, |uri| {
            ResourceContents::text(uri, mime_type, text)
        })
        .await
    }

    /// [`publish_text`](Self::publish_text) for bytes (sent base64-encoded).
    pub async fn publish_blob(
        &self,
        name: &str,
        mime_type: &str,
        bytes: impl AsRef<[u8]>,
    ) -> Result<Content, ToolError> {
        let bytes = bytes.as_ref();
        self.publish(name, mime_type, bytes.len() as u64, |uri| {
            ResourceContents::blob(uri, mime_type, bytes)
        })
        .await
    }

    async fn publish(
        &self,
        name: &str,
        mime_type: &str,
        size: u64,
        contents: impl FnOnce(String) -> ResourceContents,
    ) -> Result<Content, ToolError> {
        check_output_name(name).map_err(ToolError::internal)?;
        let backend = &self.inner.backend;
        let Some(id) = backend.task_id() else {
            return Ok(Content::resource(contents(format!("task:///{name}"))));
        };
        let uri = output_uri(&TaskId::new(id), name);
        backend
            .publish(name.to_owned(), contents(uri.clone()))
            .await?;
        Ok(Content::ResourceLink {
            uri,
            name: name.to_owned(),
            mime_type: Some(mime_type.to_owned()),
            size: Some(size),
        })
    }

    /// Sets the human-readable status (a task's `statusMessage`). In a task, the message shows
    /// this status and the latest [`progress`](Self::progress) together: `{status} ({progress})`,
    /// e.g. `importing (3/10: copying)`; each call replaces only its own part.
    pub fn status(&self, message: impl Into<String>) {
        self.inner.backend.status(message.into());
    }

    /// Reports progress: sent as `notifications/progress` when the client gave a progress token
    /// (inline calls, and legacy tasks). In a task it also shows in the `statusMessage`, after the
    /// [`status`](Self::status): `3/10: copying` alone, or `importing (3/10: copying)`. The
    /// value should increase with each call (the protocol requires it of the notifications); in an
    /// inline call, one that does not is sent as the next value above the last one sent, as are the
    /// server's keepalive notifications ([`ServerConfig::keepalive_interval`](crate::ServerConfig::keepalive_interval)).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.inner
            .backend
            .progress(progress, total, message.map(str::to_owned));
    }

    /// Ends the HTTP response stream this call is being answered on, without ending the call
    /// (SEP-1699 "polling"): the client reconnects after the `retry` the stream announced, with
    /// `GET` and `Last-Event-ID`, and gets what the call sent meanwhile and its result there. A
    /// server can so avoid holding a connection open for the whole of a long call (proxies and
    /// load balancers often cut them). Returns whether it did: only an inline call in a
    /// 2025-11-25 session over Streamable HTTP, whose client reads SSE, has such a stream; in
    /// the 2026-07-28 protocol closing the stream would cancel the call, and stdio has none.
    /// What the call sends while no stream is open waits for the client (see
    /// [`HttpConfig::sse_resume_window`](crate::server::HttpConfig::sse_resume_window)).
    pub fn close_stream(&self) -> bool {
        self.inner.backend.close_stream()
    }

    /// Which run of a durable task's body this is (`#[tool(durable)]`): 1 for the first, 2 once
    /// its instance died or drained and another took it over, and so on. 1 for every other call.
    pub fn attempt(&self) -> u32 {
        self.inner.backend.attempt()
    }

    /// The last checkpoint ([`checkpoint`](Self::checkpoint)) a durable task kept before this
    /// run began: `None` on the first run, or when none was kept, or when it does not decode as
    /// `T`. A long tool goes on from there instead of starting over.
    pub fn resumed<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        let value = self.inner.backend.resumed()?;
        T::deserialize(value).ok()
    }

    /// Keeps `value` with the task, replacing the last checkpoint: a later run of a durable
    /// task's body reads it with [`resumed`](Self::resumed). An error when it does not encode,
    /// is larger than the server allows
    /// ([`Limits::checkpoint_bytes`](crate::server::Limits::checkpoint_bytes)), or was not
    /// kept; nothing happens for a call that runs as no task.
    pub async fn checkpoint<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<(), ToolError> {
        let value = serde_json::to_value(value)
            .map_err(|e| ToolError::internal(format!("the checkpoint does not encode: {e}")))?;
        self.inner.backend.checkpoint(value).await
    }

    /// Resolves once the server starts draining (a graceful shutdown with a drain period): the
    /// tool has until the period ends to finish; a durable one may checkpoint now, as another
    /// instance takes its task over at the end. Never resolves where the server does not drain.
    pub async fn draining(&self) {
        match self.inner.backend.draining() {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Whether the call or task has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the call or task is cancelled: `select!` on it around long work.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The cancellation token itself, to hand to other code.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// For a tool declared `defer_task = true`: from here on, run as a task. The client gets its
    /// `CreateTaskResult` now and polls for the rest; input asked before this point went through
    /// MRTR, input asked after it becomes the task's stored input requests. Where the call is
    /// already a task, or must stay inline (the client did not declare the tasks extension), this
    /// returns at once and changes nothing.
    pub async fn start_task(&self) {
        if let Some(started) = self.inner.backend.start_task() {
            started.await;
        }
    }

    /// Sends a raw input request (checked against the client's capabilities first) and waits for the
    /// bare result. The typed [`elicit`](Self::elicit), [`sample`](Self::sample) and
    /// [`roots`](Self::roots) are built on this.
    pub async fn request(&self, request: InputRequest) -> Result<Value, InputError> {
        if let Some(capability) = request.required_capability()
            && !self.inner.capabilities.has(capability)
        {
            return Err(InputError::NotSupported { capability });
        }
        let fut = self.inner.backend.input(request);
        unless(self.inner.cancel.cancelled(), fut)
            .await
            .unwrap_or(Err(InputError::Cancelled))
    }

    /// Asks the user for a `T` (a flat object of primitive fields, as elicitation allows); the form
    /// is `T`'s JSON Schema. Answers come back as an [`ElicitOutcome`].
    #[cfg(feature = "schemars")]
    pub fn elicit<T>(&self, message: impl Into<String>) -> Elicit<'_, T> {
        Elicit::new(self, message.into())
    }

    /// Asks the client's model: sends `sampling/createMessage` with these params and returns the
    /// bare `CreateMessageResult`.
    pub async fn sample(
        &self,
        params: crate::protocol::CreateMessageParams,
    ) -> Result<crate::protocol::CreateMessageResult, InputError> {
        self.sample_with(None, params).await
    }

    /// [`sample`](Self::sample), with the request's key in `inputRequests` named by the tool
    /// (unique within one call or task).
    pub async fn sample_keyed(
        &self,
        key: impl Into<String>,
        params: crate::protocol::CreateMessageParams,
    ) -> Result<crate::protocol::CreateMessageResult, InputError> {
        self.sample_with(Some(key.into()), params).await
    }

    async fn sample_with(
        &self,
        key: Option<String>,
        params: crate::protocol::CreateMessageParams,
    ) -> Result<crate::protocol::CreateMessageResult, InputError> {
        let value = serde_json::to_value(&params)
            .map_err(|e| InputError::InvalidResponse(e.to_string()))?;
        let mut request = InputRequest::new("sampling/createMessage", value);
        request.key = key;
        let answer = self.request(request).await?;
        serde_json::from_value(answer).map_err(|e| InputError::InvalidResponse(e.to_string()))
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn roots(&self) -> Result<Vec<crate::protocol::Root>, InputError> {
        self.roots_with(None).await
    }

    /// [`roots`](Self::roots), with the request's key in `inputRequests` named by the tool
    /// (unique within one call or task).
    pub async fn roots_keyed(
        &self,
        key: impl Into<String>,
    ) -> Result<Vec<crate::protocol::Root>, InputError> {
        self.roots_with(Some(key.into())).await
    }

    async fn roots_with(
        &self,
        key: Option<String>,
    ) -> Result<Vec<crate::protocol::Root>, InputError> {
        let mut request = InputRequest::new("roots/list", serde_json::json!({}));
        request.key = key;
        let answer = self.request(request).await?;
        let list: crate::protocol::ListRootsResult = serde_json::from_value(answer)
            .map_err(|e| InputError::InvalidResponse(e.to_string()))?;
        Ok(list.roots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Logs(Mutex<Vec<Value>>);

    impl ContextBackend for Logs {
        fn input(&self, _: InputRequest) -> InputFuture {
            Box::pin(async { Err(InputError::Disconnected) })
        }
        fn log(&self, params: Value) {
            self.0.lock().unwrap().push(params);
        }
    }

    fn ctx(level: Option<LogLevel>) -> (ToolContext, Arc<Logs>) {
        let logs = Arc::new(Logs::default());
        let ctx = ToolContext::new(logs.clone(), Default::default(), Default::default())
            .with_log_level(level);
        (ctx, logs)
    }

    #[test]
    fn log_messages_go_out_only_at_or_above_the_level_the_client_asked_for() {
        let (quiet, logs) = ctx(None);
        quiet.log(LogLevel::Emergency, "nobody asked");
        assert!(logs.0.lock().unwrap().is_empty());

        let (ctx, logs) = ctx(Some(LogLevel::Warning));
        ctx.log(LogLevel::Info, "dropped");
        ctx.log(LogLevel::Warning, "kept");
        ctx.log_as(LogLevel::Error, Some("db"), json!({ "code": 7 }));
        assert_eq!(
            *logs.0.lock().unwrap(),
            vec![
                json!({ "level": "warning", "data": "kept" }),
                json!({ "level": "error", "data": { "code": 7 }, "logger": "db" }),
            ]
        );
    }
}
