//! Method dispatch for both eras: a service over the server (its tools, configuration and task
//! engine) and one client seen as a [`Peer`]. It decides the era of a request, answers the
//! methods of both eras, and carries out the [`CallPlan`] of a `tools/call` (`plan.rs` decides
//! it): a task goes to the task engine, an inline call runs here (MRTR in the modern era, plain
//! server-to-client requests in the legacy one) and may hand its running future to the engine
//! when it becomes a task. It knows nothing of connections or transports: `driver.rs` calls in
//! with the connection as a [`Peer`].

use super::ServerInner;
use super::era::{ClientView, Era};
use super::fallback;
use super::inline;
use super::listen::Listen;
use super::peer::{LegacySession, Peer};
use super::plan::{self, Becomes, CallFacts, CallPlan, Promotion};
use crate::protocol::Params;
use crate::protocol::jsonrpc::{
    Payload, Reply, Request, RequestId, RpcError, codes, error_message, result_message,
};
use crate::protocol::meta::RequestMeta;
use crate::protocol::task::{
    AsTaskView, OutcomeView, RelatedResult, TaskId, TaskOrigin, TaskShape, TaskView,
};
use crate::protocol::{
    ClientCapabilities, Implementation, LEGACY_VERSIONS, LogLevel, MODERN_VERSION, MODERN_VERSIONS,
    TASKS_EXTENSION, meta,
};
use crate::store::{CancelResult, StoreError};
use crate::task::deferred::Deferred;
use crate::task::engine::{CaughtFuture, Launch};
use crate::task::{mrtr, state};
use crate::tool::{ProtocolEra, RequestInfo, TaskSupport, ToolContext};
use futures_util::FutureExt;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Answers `initialize`: opens (or re-opens) the legacy session of this connection.
pub(crate) fn initialize(server: &ServerInner, peer: &dyn Peer, req: &Request) -> Value {
    if peer.session().is_some() {
        return error_message(Some(&req.id), &already_initialized());
    }
    let params = req.params.as_ref().map(Params::to_map).unwrap_or_default();
    let requested = match params.get("protocolVersion") {
        Some(Value::String(v)) => v.clone(),
        Some(_) => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("`protocolVersion` must be a string"),
            );
        }
        None => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("missing required parameter `protocolVersion`"),
            );
        }
    };
    let capabilities = match params.get("capabilities") {
        None => ClientCapabilities::default(),
        Some(Value::Object(map)) => ClientCapabilities(map.clone()),
        Some(_) => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("`capabilities` must be an object"),
            );
        }
    };
    let info: Option<Implementation> = params
        .get("clientInfo")
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    // A supported legacy version is echoed; anything else (including 2026-07-28, which has no
    // `initialize`) gets the newest legacy version, per the 2025-11-25 lifecycle.
    let version = if LEGACY_VERSIONS.contains(&requested.as_str()) {
        requested
    } else {
        LEGACY_VERSIONS[0].to_owned()
    };
    let opened = peer.open_session(LegacySession {
        version: version.clone(),
        client: Arc::new(ClientView {
            capabilities: Arc::new(capabilities),
            info,
        }),
        id: random_id(),
        log_level: LogLevel::Debug,
    });
    if !opened {
        return error_message(Some(&req.id), &already_initialized());
    }
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": legacy_capabilities(peer.identified()),
        "serverInfo": server.info,
    });
    if let Some(text) = &server.instructions {
        result["instructions"] = Value::String(text.clone());
    }
    result_message(&req.id, result)
}

/// The answer to a second `initialize` on a live session: the session stays as it was.
pub(crate) fn already_initialized() -> RpcError {
    RpcError::invalid_request(
        "Invalid Request: this session is already initialized; `initialize` opens a session once (end it and open a new one to start again)",
    )
}

/// `tasks.list` only where requestors can be told apart (2025-11-25: receivers that cannot
/// SHOULD NOT declare it): an authenticated principal, or a connection that is one client.
fn legacy_capabilities(identified: bool) -> Value {
    let mut tasks = json!({ "cancel": {}, "requests": { "tools": { "call": {} } } });
    if identified {
        tasks["list"] = json!({});
    }
    json!({
        "tools": { "listChanged": false },
        "logging": {},
        "tasks": tasks,
    })
}

fn modern_capabilities() -> Value {
    json!({
        "tools": { "listChanged": false },
        "logging": {},
        "extensions": { TASKS_EXTENSION: {} },
    })
}

fn random_id() -> String {
    use rand::RngExt;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one request is, once its era is known.
struct Incoming {
    id: RequestId,
    method: String,
    /// The params, without `_meta`.
    params: Params,
    /// The params' `_meta` (an object), read.
    meta: Option<Arc<ReadMeta>>,
    era: Era,
    client: Arc<ClientView>,
    /// The least severe level the client wants log messages for on this request, if any.
    log_level: Option<LogLevel>,
}

impl Incoming {
    /// `_meta.progressToken`.
    fn progress_token(&self) -> Option<Value> {
        self.meta.as_ref()?.facts.progress_token.clone()
    }
}

/// A request's `_meta` as read: its text, what it says, and (once a tool is called with it) its
/// tree.
struct ReadMeta {
    text: Box<RawValue>,
    facts: MetaFacts,
    tree: std::sync::OnceLock<Arc<Map<String, Value>>>,
}

impl ReadMeta {
    /// The `_meta` object as a tree, made once.
    fn tree(&self) -> Arc<Map<String, Value>> {
        let tree = || Arc::new(serde_json::from_str(self.text.get()).unwrap_or_default());
        self.tree.get_or_init(tree).clone()
    }
}

thread_local! {
    /// The `_meta` last read on this thread: a client sends the same `_meta` with request after
    /// request, and a match costs a comparison of its text instead of reading it again.
    static LAST_META: std::cell::RefCell<Option<Arc<ReadMeta>>> =
        const { std::cell::RefCell::new(None) };
}

/// [`read_meta`], for the same text as the last request's (on this thread) what was read then.
fn read_meta_cached(text: Box<RawValue>) -> Result<Arc<ReadMeta>, RpcError> {
    let last = LAST_META.with(|last| last.borrow().clone());
    if let Some(last) = last
        && last.text.get() == text.get()
    {
        return Ok(last);
    }
    let read = Arc::new(ReadMeta {
        facts: read_meta(Some(&text))?,
        text,
        tree: std::sync::OnceLock::new(),
    });
    LAST_META.with(|last| *last.borrow_mut() = Some(read.clone()));
    Ok(read)
}

/// Handles a request. `None` means no response is due (the request was cancelled).
pub(crate) async fn request(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Request,
    cancel: CancellationToken,
) -> Option<Reply> {
    let id = req.id.clone();
    let incoming = match classify(&**peer, req) {
        Ok(incoming) => incoming,
        Err(err) => {
            return Some(Reply {
                id,
                outcome: Err(err),
                server_info: None,
            });
        }
    };
    let modern = incoming.era.is_modern();
    let span = tracing::Span::current();
    span.record("era", if modern { "modern" } else { "legacy" });
    span.record("owner", peer.owner(&incoming.era).as_str());
    let outcome = route(server, peer, incoming, cancel).await?;
    // What every modern result carries (`resultType`, `serverInfo`) is added as it is written.
    Some(Reply {
        id,
        outcome,
        server_info: modern.then(|| server.info_json().clone()),
    })
}

/// What a request's `_meta` says, read from its text: the era's facts of a 2026-07-28 request,
/// and the progress token.
#[derive(Debug, PartialEq)]
pub(crate) struct MetaFacts {
    /// A 2026-07-28 request's version, client and log level; `None` for a request without them.
    pub(crate) modern: Option<(String, Arc<ClientView>, Option<LogLevel>)>,
    pub(crate) progress_token: Option<Value>,
}

/// Reads a request's `_meta` (as sent, `None` when absent) without a tree of it: the answer and
/// the error [`read_meta_tree`] gives for the same `_meta`.
pub(crate) fn read_meta(meta: Option<&RawValue>) -> Result<MetaFacts, RpcError> {
    let Some(raw) = meta else {
        return Ok(MetaFacts {
            modern: None,
            progress_token: None,
        });
    };
    let Some(fields) = RequestMeta::read(raw) else {
        return Err(meta_not_object());
    };
    let progress_token = fields.progress_token.map(to_value);
    if !fields.is_modern() {
        return Ok(MetaFacts {
            modern: None,
            progress_token,
        });
    }
    let version = match fields.protocol_version {
        Some(v) => match meta::as_str(v) {
            Some(v) => v,
            None => return Err(version_not_string()),
        },
        None => return Err(missing_meta(meta::PROTOCOL_VERSION)),
    };
    if !MODERN_VERSIONS.contains(&&*version) {
        return Err(unsupported_version(&version));
    }
    let client = match fields.client_capabilities {
        Some(c) if meta::is_object(c) => client_view(c, fields.client_info),
        Some(_) => return Err(capabilities_not_object()),
        None => return Err(missing_meta(meta::CLIENT_CAPABILITIES)),
    };
    let log_level = match fields.log_level {
        None => None,
        Some(v) => Some(LogLevel::from_wire(&to_value(v)).map_err(log_level_error)?),
    };
    Ok(MetaFacts {
        modern: Some((version.into_owned(), client, log_level)),
        progress_token,
    })
}

/// A JSON text the parser already checked, as a tree.
fn to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A client view with the texts of the capabilities and `clientInfo` it was read from.
struct ReadClient {
    capabilities: Box<str>,
    info: Option<Box<str>>,
    view: Arc<ClientView>,
}

thread_local! {
    /// The client view last read on this thread: a client sends the same capabilities and
    /// `clientInfo` with each request, and a match costs a comparison of two short strings
    /// instead of two trees.
    static LAST_CLIENT: std::cell::RefCell<Option<ReadClient>> =
        const { std::cell::RefCell::new(None) };
}

/// The client a 2026-07-28 request describes: its capabilities (an object) and `clientInfo`.
fn client_view(capabilities: &RawValue, info: Option<&RawValue>) -> Arc<ClientView> {
    let (caps_text, info_text) = (capabilities.get(), info.map(RawValue::get));
    LAST_CLIENT.with(|last| {
        let mut last = last.borrow_mut();
        if let Some(read) = &*last
            && *read.capabilities == *caps_text
            && read.info.as_deref() == info_text
        {
            return read.view.clone();
        }
        let view = Arc::new(ClientView {
            capabilities: Arc::new(ClientCapabilities(
                serde_json::from_str(caps_text).unwrap_or_default(),
            )),
            // Read through a tree, as `clientInfo` always was (a key given twice: the last counts).
            info: info.and_then(|v| serde::Deserialize::deserialize(to_value(v)).ok()),
        });
        *last = Some(ReadClient {
            capabilities: caps_text.into(),
            info: info_text.map(Into::into),
            view: view.clone(),
        });
        view
    })
}

/// Decides the era of a request from its `_meta` and the connection's session.
fn classify(peer: &dyn Peer, req: Request) -> Result<Incoming, RpcError> {
    let params = req.params.unwrap_or_default();
    let meta = req.meta.map(read_meta_cached).transpose()?;
    if let Some((version, client, log_level)) = meta.as_ref().and_then(|m| m.facts.modern.clone()) {
        return Ok(Incoming {
            id: req.id,
            method: req.method,
            params,
            meta,
            era: Era::Modern { version },
            client,
            log_level,
        });
    }
    match peer.session() {
        Some(session) => Ok(Incoming {
            id: req.id,
            method: req.method,
            params,
            meta,
            era: Era::Legacy {
                version: session.version,
            },
            client: session.client,
            log_level: Some(session.log_level),
        }),
        None => Err(RpcError::invalid_params(format!(
            "missing required `_meta[\"{}\"]`: send per-request `_meta` (protocol {MODERN_VERSION}) or `initialize` first (protocol {})",
            meta::PROTOCOL_VERSION,
            LEGACY_VERSIONS[0]
        ))),
    }
}

/// [`read_meta`] through a tree of the params (with `_meta`), the way requests were read before:
/// what the fuzz target and the tests hold it to.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn read_meta_tree(params: &Map<String, Value>) -> Result<MetaFacts, RpcError> {
    let meta_obj = match params.get("_meta") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err(meta_not_object()),
    };
    let progress_token = meta_obj.and_then(|m| m.get(meta::PROGRESS_TOKEN)).cloned();
    let version = meta_obj.and_then(|m| m.get(meta::PROTOCOL_VERSION));
    let caps = meta_obj.and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
    if version.is_none() && caps.is_none() {
        return Ok(MetaFacts {
            modern: None,
            progress_token,
        });
    }
    let version = match version {
        Some(Value::String(v)) => v.clone(),
        Some(_) => return Err(version_not_string()),
        None => return Err(missing_meta(meta::PROTOCOL_VERSION)),
    };
    if !MODERN_VERSIONS.contains(&version.as_str()) {
        return Err(unsupported_version(&version));
    }
    let capabilities = match caps {
        Some(Value::Object(c)) => ClientCapabilities(c.clone()),
        Some(_) => return Err(capabilities_not_object()),
        None => return Err(missing_meta(meta::CLIENT_CAPABILITIES)),
    };
    let info = meta_obj
        .and_then(|m| m.get(meta::CLIENT_INFO))
        .and_then(|v| serde::Deserialize::deserialize(v).ok());
    let log_level = match meta_obj.and_then(|m| m.get(meta::LOG_LEVEL)) {
        None => None,
        Some(v) => Some(LogLevel::from_wire(v).map_err(log_level_error)?),
    };
    let client = Arc::new(ClientView {
        capabilities: Arc::new(capabilities),
        info,
    });
    Ok(MetaFacts {
        modern: Some((version, client, log_level)),
        progress_token,
    })
}

fn meta_not_object() -> RpcError {
    RpcError::invalid_params("`_meta` must be an object")
}

fn version_not_string() -> RpcError {
    RpcError::invalid_params(format!(
        "`_meta[\"{}\"]` must be a string",
        meta::PROTOCOL_VERSION
    ))
}

fn capabilities_not_object() -> RpcError {
    RpcError::invalid_params(format!(
        "`_meta[\"{}\"]` must be an object",
        meta::CLIENT_CAPABILITIES
    ))
}

fn log_level_error(why: impl std::fmt::Display) -> RpcError {
    RpcError::invalid_params(format!("`_meta[\"{}\"]`: {why}", meta::LOG_LEVEL))
}

fn missing_meta(key: &str) -> RpcError {
    RpcError::invalid_params(format!("missing required `_meta[\"{key}\"]`"))
        .with_data(json!({ "missing": key }))
}

fn unsupported_version(requested: &str) -> RpcError {
    let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
    supported.extend_from_slice(LEGACY_VERSIONS);
    let hint = if LEGACY_VERSIONS.contains(&requested) {
        "; that version is served after `initialize`"
    } else {
        ""
    };
    RpcError::new(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}{hint}"),
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

type Outcome = Option<Result<Value, RpcError>>;

/// An [`Outcome`] whose result may already be text ([`Payload::Text`]).
type Answer = Option<Result<Payload, RpcError>>;

/// An outcome built as a tree, as an [`Answer`].
fn tree(outcome: Outcome) -> Answer {
    outcome.map(|result| result.map(Payload::Tree))
}

async fn route(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Incoming,
    cancel: CancellationToken,
) -> Answer {
    let modern = req.era.is_modern();
    match (req.method.as_str(), modern) {
        ("server/discover", true) => tree(Some(Ok(discover(server)))),
        ("ping", false) => tree(Some(Ok(json!({})))),
        ("logging/setLevel", false) => tree(Some(set_log_level(&**peer, &req))),
        ("tools/list", _) => tree(Some(Ok(tools_list(server, &req.era, &req.client)))),
        // The large futures (`tools/call`'s is about 2 KB of a request's 3) are boxed: a
        // request's future is copied as its task is spawned and as it ends, and the common small
        // methods (`tasks/get`) need not carry their size (elicitation round trip 274k -> 259k
        // instructions with the three boxed; see also `driver::start_request`).
        ("tools/call", _) => Box::pin(tools_call(server, peer, req, cancel)).await,
        ("tasks/get" | "tasks/update" | "tasks/cancel", true) => {
            Some(modern_task_method(server, peer, &req).await)
        }
        ("tasks/get" | "tasks/list" | "tasks/cancel", false) => {
            Some(legacy_task_method(server, peer, &req).await)
        }
        ("tasks/result", false) => Box::pin(legacy_task_result(server, peer, &req, cancel)).await,
        ("subscriptions/listen", true) => {
            let declared = req.client.capabilities.has_extension(TASKS_EXTENSION);
            match Listen::parse(&req.params, declared, missing_tasks_capability) {
                Ok(listen) => {
                    let owner = peer.owner(&req.era);
                    tree(Box::pin(listen.run(server, &**peer, &req.id, owner, cancel)).await)
                }
                Err(err) => Some(Err(err)),
            }
        }
        // A request with per-request `_meta` is a 2026-07-28 request, and `initialize` is not a
        // 2026-07-28 method (SEP-2575: -32601, HTTP 404). A 2025-11-25 client sends it without
        // `_meta`, and the transport opens a legacy session before it gets here.
        ("initialize", _) => Some(Err(RpcError::new(
            codes::METHOD_NOT_FOUND,
            format!(
                "Method not found: `initialize` is not a {MODERN_VERSION} method (use `server/discover`); a {} client sends `initialize` without per-request `_meta`",
                LEGACY_VERSIONS[0]
            ),
        ))),
        (method, _) => Some(Err(RpcError::method_not_found(method))),
    }
}

/// `logging/setLevel` (2025-11-25; the modern era sets a level per request in `_meta`).
fn set_log_level(peer: &dyn Peer, req: &Incoming) -> Result<Value, RpcError> {
    let level = match req.params.value("level") {
        Some(v) => LogLevel::from_wire(&v)
            .map_err(|why| RpcError::invalid_params(format!("`level`: {why}")))?,
        None => {
            return Err(RpcError::invalid_params(
                "missing required parameter `level`",
            ));
        }
    };
    if !peer.set_log_level(level) {
        return Err(RpcError::internal("the session ended"));
    }
    Ok(json!({}))
}

fn discover(server: &ServerInner) -> Value {
    let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
    supported.extend_from_slice(LEGACY_VERSIONS);
    let mut result = json!({
        "supportedVersions": supported,
        "capabilities": modern_capabilities(),
        "ttlMs": 0,
        "cacheScope": "private",
    });
    if let Some(text) = &server.instructions {
        result["instructions"] = Value::String(text.clone());
    }
    result
}

fn tools_list(server: &ServerInner, era: &Era, client: &ClientView) -> Value {
    let fallback = server.task_fallback && !fallback::declares_tasks(era, &client.capabilities);
    let tools: Vec<Value> = server
        .tools
        .iter()
        .map(|t| {
            let info = &t.info;
            let mut tool = json!({ "name": info.name, "inputSchema": *t.input_schema });
            if let Some(title) = info.title {
                tool["title"] = json!(title);
            }
            if let Some(description) = info.description {
                tool["description"] = json!(description);
            }
            if let Some(schema) = &t.output_schema
                && !(fallback && fallback::may_answer_started(server, t))
            {
                tool["outputSchema"] = (**schema).clone();
            }
            if !info.annotations.is_empty() {
                tool["annotations"] = json!(info.annotations);
            }
            if !era.is_modern() {
                tool["execution"] = json!({ "taskSupport": info.task_support.as_str() });
            }
            tool
        })
        .collect();
    let mut tools = tools;
    if server.task_fallback {
        tools.extend(fallback::tools(era));
    }
    if era.is_modern() {
        // 2026-07-28: ListToolsResult is a CacheableResult. The list never changes while the server
        // runs, but it differs by era, so it must not be shared across clients.
        json!({ "tools": tools, "ttlMs": 0, "cacheScope": "private" })
    } else {
        json!({ "tools": tools })
    }
}

/// One `tools/call`, read: the tool, its arguments, and the progress token to report under.
struct ToolCall {
    tool: Arc<crate::tool::RegisteredTool>,
    arguments: Option<Value>,
    progress_token: Option<Value>,
}

impl ToolCall {
    /// What the task fallback needs of this call.
    fn fallback(self, peer: &dyn Peer, req: &Incoming) -> fallback::Call {
        fallback::Call {
            era: req.era.clone(),
            id: req.id.clone(),
            capabilities: req.client.capabilities.clone(),
            log_level: req.log_level,
            request: request_info(peer, req),
            arguments: self.arguments,
            tool: self.tool,
        }
    }
}

/// `tools/call`: decides how the call runs (a [`CallPlan`], see `plan.rs`) and carries it out.
async fn tools_call(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: Incoming,
    cancel: CancellationToken,
) -> Answer {
    let name = match req.params.str("name") {
        Some(Some(name)) => name.into_owned(),
        Some(None) => return Some(Err(RpcError::invalid_params("`name` must be a string"))),
        None => {
            return Some(Err(RpcError::invalid_params(
                "missing required parameter `name`",
            )));
        }
    };
    tracing::Span::current().record("tool", name.as_str());
    if server.task_fallback && fallback::COMPANION_TOOLS.contains(&name.as_str()) {
        // The companion tools run inline, like any `forbidden` tool.
        if let CallPlan::Refuse(err) = plan::plan(&CallFacts {
            support: TaskSupport::Forbidden,
            era: protocol_era(&req.era),
            declared: req.client.capabilities.has_extension(TASKS_EXTENSION),
            task_param: req.params.has_non_null("task"),
            defers: false,
            fallback: false,
            promotion: Promotion::default(),
        }) {
            return Some(Err(err));
        }
        let owner = peer.owner(&req.era);
        return tree(Some(
            fallback::call_companion(server, &name, &req.params, &owner).await,
        ));
    }
    let Some(tool) = server.tools.get(&name).cloned() else {
        return Some(Err(RpcError::invalid_params(format!(
            "Unknown tool: `{name}`"
        ))
        .with_data(json!({ "tool": name }))));
    };
    let info = &tool.info;
    let plan = plan::plan(&CallFacts {
        support: info.task_support,
        era: protocol_era(&req.era),
        declared: req.client.capabilities.has_extension(TASKS_EXTENSION),
        task_param: req.params.has_non_null("task"),
        defers: info.defer_task,
        fallback: server.task_fallback,
        promotion: Promotion {
            builder: server.promote_after.get(info.name).copied(),
            attribute: info.promote_after,
            server: server.config.promote_after,
        },
    });
    let call = ToolCall {
        arguments: req.params.value("arguments"),
        progress_token: req.progress_token(),
        tool,
    };
    let becomes = match plan {
        CallPlan::Refuse(err) => return Some(Err(err)),
        CallPlan::Task => return Some(launch_task(server, peer, call, &req).await),
        CallPlan::Fallback => {
            let call = call.fallback(&**peer, &req);
            return tree(Some(fallback::launch(server, peer, call).await));
        }
        CallPlan::Inline { becomes } => becomes,
    };
    if req.era.is_modern() {
        return run_mrtr(server, peer, call, &req, cancel, becomes).await;
    }
    let backend = inline::legacy_backend(Arc::downgrade(peer), call.progress_token.clone());
    if let Becomes::FallbackAfter(after) = becomes {
        let call = call.fallback(&**peer, &req);
        return tree(fallback::run_promotable(server, peer, call, backend, cancel, after).await);
    }
    let ctx = ToolContext::new(backend, req.client.capabilities.clone(), cancel.clone())
        .with_log_level(req.log_level)
        .with_request(request_info(&**peer, &req))
        .with_state(server.state.clone());
    let fut = match call.tool.call(ctx, call.arguments) {
        Ok(fut) => fut,
        Err(err) => return Some(Err(err.to_rpc())),
    };
    let outcome = tokio::select! {
        biased;
        _ = cancel.cancelled() => return None,
        r = AssertUnwindSafe(fut).catch_unwind() => r,
    };
    Some(finish(&name, outcome))
}

fn protocol_era(era: &Era) -> ProtocolEra {
    match era {
        Era::Modern { .. } => ProtocolEra::Modern,
        Era::Legacy { .. } => ProtocolEra::Legacy,
    }
}

/// What a tool sees of the request: who calls, from which client, in which era, with which
/// `_meta`. A task keeps it.
fn request_info(peer: &dyn Peer, req: &Incoming) -> Arc<RequestInfo> {
    let version = match &req.era {
        Era::Modern { version } | Era::Legacy { version } => version,
    };
    let era = protocol_era(&req.era);
    let meta = req.meta.as_ref().map(|m| m.tree()).unwrap_or_default();
    Arc::new(
        RequestInfo::new(era, version.clone())
            .with_principal(peer.principal())
            .with_client(req.client.info.clone())
            .with_meta(meta),
    )
}

type Caught =
    Result<Result<crate::protocol::CallToolResult, RpcError>, Box<dyn std::any::Any + Send>>;

/// An inline call's answer: its `CallToolResult` is written as it is, with no tree on the way.
fn finish(tool: &str, outcome: Caught) -> Result<Payload, RpcError> {
    match outcome {
        Ok(Ok(result)) => Ok(Payload::Tool(result)),
        Ok(Err(err)) => Err(err),
        Err(panic) => Err(crate::task::panic_error(tool, &*panic)),
    }
}

/// An inline call in the modern era: input goes through MRTR (`InputRequiredResult`, retried with
/// `inputResponses` and the sealed `requestState`).
async fn run_mrtr(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: ToolCall,
    req: &Incoming,
    cancel: CancellationToken,
    becomes: Becomes,
) -> Answer {
    let ToolCall {
        tool,
        arguments,
        progress_token,
    } = call;
    let may_become_task = !matches!(becomes, Becomes::Never);
    let promote_after = match becomes {
        Becomes::WhenAskedOrAfter(after) | Becomes::FallbackAfter(after) => Some(after),
        _ => None,
    };
    let fallback = matches!(becomes, Becomes::FallbackAfter(_));
    let name = tool.info.name;
    let info = request_info(&**peer, req);
    let owner = peer.owner(&req.era);
    let call = state::call_digest(name, arguments.as_ref(), owner.as_str());
    let key = &server.state_key;
    let responses = match mrtr::parse_responses(req.params.value("inputResponses")) {
        Ok(responses) => responses,
        Err(why) => return Some(Err(RpcError::invalid_params(why))),
    };
    // Answers that come before any question (no `requestState` yet) are offered to the tool under
    // their keys; on a retry only the keys the sealed state says were asked count.
    let (mut gathered, volunteered) = match req.params.value("requestState") {
        None | Some(Value::Null) => (
            state::Gathered {
                call,
                ..Default::default()
            },
            responses,
        ),
        Some(Value::String(text)) => match state::open(key, &text, &call) {
            Ok(mut gathered) => {
                mrtr::accept_responses(&mut gathered, responses);
                (gathered, Map::new())
            }
            Err(e) => return Some(Err(RpcError::invalid_params(e.to_string()))),
        },
        Some(_) => {
            return Some(Err(RpcError::invalid_params(
                "`requestState` must be a string",
            )));
        }
    };
    let weak = Arc::downgrade(peer);
    let progress: Option<mrtr::ProgressFn> = progress_token.clone().map(|token| {
        Box::new(move |p: f64, total: Option<f64>, message: Option<String>| {
            inline::send_progress(&weak, &Some(token.clone()), p, total, message)
        }) as mrtr::ProgressFn
    });
    let log: Option<mrtr::LogFn> = req.log_level.map(|_| {
        let weak = Arc::downgrade(peer);
        Box::new(move |params: Value| inline::send_log(&weak, params)) as mrtr::LogFn
    });
    let replay = Arc::new(mrtr::Replay::new(&gathered, volunteered, progress, log));
    // A call that may become a task gets its own cancellation: once it is a task, cancelling the
    // `tools/call` request no longer reaches it (only `tasks/cancel` does).
    let (backend, deferred, tool_cancel): (Arc<dyn crate::tool::ContextBackend>, _, _) =
        if may_become_task {
            let deferred = Arc::new(Deferred::new(replay.clone()));
            (deferred.clone(), Some(deferred), CancellationToken::new())
        } else {
            (replay.clone(), None, cancel.clone())
        };
    let ctx = ToolContext::new(
        backend,
        req.client.capabilities.clone(),
        tool_cancel.clone(),
    )
    .with_log_level(req.log_level)
    .with_request(info.clone())
    .with_state(server.state.clone());
    let fut = match tool.call(ctx, arguments.clone()) {
        Ok(fut) => fut,
        Err(err) => return Some(Err(err.to_rpc())),
    };
    let mut fut: CaughtFuture = Box::pin(AssertUnwindSafe(fut).catch_unwind());
    let wants_task = || deferred.as_ref().is_some_and(|d| d.wants_task());
    let step = tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            tool_cancel.cancel();
            return None;
        }
        step = mrtr::drive(&mut fut, &replay, wants_task) => step,
        // Still running at the threshold: the same run goes on as a task.
        _ = sleep_or_never(promote_after) => mrtr::Step::Promote,
    };
    Some(match step {
        mrtr::Step::Done(outcome) => finish(name, outcome),
        // The client's answer does not fit its question: its error, and nothing is used up (a
        // retry with a fitting answer under the same `requestState` goes on).
        mrtr::Step::Misfit(why) => {
            tool_cancel.cancel();
            Err(RpcError::invalid_params(why))
        }
        mrtr::Step::Suspended(needed) => {
            replay.keep_used(&mut gathered);
            mrtr::record_asked(&mut gathered, &needed);
            let requests: Map<String, Value> = needed
                .into_iter()
                .map(|(k, r)| (k, serde_json::to_value(r).unwrap_or(Value::Null)))
                .collect();
            Ok(Payload::Tree(json!({
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state::seal(key, gathered),
            })))
        }
        mrtr::Step::Promote => {
            let deferred = deferred.expect("only a deferred call asks to become a task");
            let started = tool.clone();
            let launch = Launch {
                tool,
                arguments,
                owner,
                origin: TaskOrigin::Modern,
                requested_ttl: None,
                capabilities: req.client.capabilities.clone(),
                channel: None,
                // A taskless client's progress token ends with the fallback's answer.
                progress_token: progress_token.filter(|_| !fallback),
                start_after: None,
                log_level: req.log_level,
                request: info,
                state: server.state.clone(),
            };
            let engine = server.engine();
            let prepared = engine.prepare(&launch);
            let task_backend = match fallback {
                true => fallback::no_answers(prepared.backend()),
                false => prepared.backend(),
            };
            // The MRTR phase's keys end here; the task has its own key space.
            engine
                .start(prepared, fut, tool_cancel, |record| {
                    deferred.switch_to(record.id.as_str(), task_backend)
                })
                .await
                .map(|record| match fallback {
                    true => Payload::Tree(fallback::started(&record, &started)),
                    false => Payload::Tree(record.modern_create_result()),
                })
        }
    })
}

/// Starts a task for a `tools/call` and answers with the era's `CreateTaskResult`.
async fn launch_task(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    call: ToolCall,
    req: &Incoming,
) -> Result<Payload, RpcError> {
    let ToolCall {
        tool,
        arguments,
        progress_token,
    } = call;
    let (origin, requested_ttl, channel) = match &req.era {
        Era::Modern { .. } => (TaskOrigin::Modern, None, None),
        Era::Legacy { .. } => {
            let ttl = match req
                .params
                .value("task")
                .and_then(|mut t| t.get_mut("ttl").map(Value::take))
            {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(ms) => Some(std::time::Duration::from_millis(ms)),
                    None => {
                        return Err(RpcError::invalid_params(
                            "`task.ttl` must be a non-negative integer (milliseconds)",
                        ));
                    }
                },
            };
            (
                TaskOrigin::Legacy,
                ttl,
                Some(super::peer::channel(Arc::downgrade(peer))),
            )
        }
    };
    let launch = Launch {
        tool,
        arguments,
        owner: peer.owner(&req.era),
        origin,
        requested_ttl,
        capabilities: req.client.capabilities.clone(),
        // A legacy task's tool may send requests naming the task on the session at once: it starts
        // only after the client has its `CreateTaskResult`.
        start_after: channel.as_ref().map(|_| peer.after_reply(&req.id)),
        channel,
        progress_token,
        log_level: req.log_level,
        request: request_info(&**peer, req),
        state: server.state.clone(),
    };
    let record = server.engine().launch(launch).await?;
    let view = record.task_view();
    Ok(Payload::Text(match origin {
        TaskOrigin::Modern => view
            .render(TaskShape::ModernCreate)
            .with_server_info(server.info_json())
            .to_text(),
        TaskOrigin::Legacy => view.render(TaskShape::LegacyCreate).to_text(),
    }))
}

fn missing_tasks_capability() -> RpcError {
    RpcError::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: declare the `{TASKS_EXTENSION}` extension in this request's clientCapabilities"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }))
}

/// The request's `taskId` (recorded on the request's span).
fn task_id_param(params: &Params) -> Result<TaskId, RpcError> {
    match params.str("taskId") {
        Some(Some(id)) => {
            tracing::Span::current().record("task", &*id);
            Ok(TaskId::from(&*id))
        }
        Some(None) => Err(RpcError::invalid_params("`taskId` must be a string")),
        None => Err(RpcError::invalid_params(
            "missing required parameter `taskId`",
        )),
    }
}

fn task_not_found() -> RpcError {
    RpcError::invalid_params("Failed to retrieve task: Task not found")
}

/// `tasks/get`, `tasks/update`, `tasks/cancel` of the tasks extension (2026-07-28).
async fn modern_task_method(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
) -> Result<Payload, RpcError> {
    // The capability gate comes before the lookup: a non-declaring client learns nothing about ids.
    if !req.client.capabilities.has_extension(TASKS_EXTENSION) {
        return Err(missing_tasks_capability());
    }
    let id = task_id_param(&req.params)?;
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match req.method.as_str() {
        "tasks/get" => {
            // Written to text as the store shows it (a stored result is copied, not parsed).
            let info = server.info_json();
            let mut text = None;
            let mut write = |t: TaskView<'_>| {
                text = Some(
                    t.render(TaskShape::ModernGet)
                        .with_server_info(info)
                        .to_text(),
                );
            };
            store.get_view(&id, &owner, &mut write).await?;
            text.map(Payload::Text).ok_or_else(task_not_found)
        }
        "tasks/update" => {
            if !req.params.contains_key("inputResponses") {
                return Err(RpcError::invalid_params(
                    "missing required parameter `inputResponses`",
                ));
            }
            // The same shape rules as an MRTR retry; then each answer to an outstanding request
            // must fit that request. A wrong answer is the caller's error and uses nothing up:
            // the question stays open for a right one.
            let responses = mrtr::parse_responses(req.params.value("inputResponses"))
                .map_err(RpcError::invalid_params)?;
            // Only the methods of the outstanding requests, not a copy of the record.
            let mut asked = Map::new();
            let mut methods = |t: TaskView<'_>| {
                let methods = t.input_requests.iter();
                asked = methods
                    .map(|(k, r)| (k.clone(), r.method.clone().into()))
                    .collect();
            };
            if !store.get_view(&id, &owner, &mut methods).await? {
                return Err(task_not_found());
            }
            for (key, answer) in &responses {
                if let Some(method) = asked.get(key).and_then(Value::as_str)
                    && let Err(why) = mrtr::check_answer(method, answer)
                {
                    return Err(RpcError::invalid_params(format!(
                        "`inputResponses.{key}` does not answer its `{method}` request: {why}"
                    ))
                    .with_data(json!({ "key": key })));
                }
            }
            match store.deliver_responses(&id, &owner, responses).await {
                Ok(report) => {
                    if !report.ignored.is_empty() {
                        tracing::debug!(task = %id, ignored = ?report.ignored, "tasks/update ignored keys that are not outstanding");
                    }
                    Ok(Payload::Tree(json!({})))
                }
                Err(StoreError::NotFound) => Err(task_not_found()),
                Err(e) => Err(e.to_rpc_error()),
            }
        }
        _ => match store.cancel(&id, &owner).await {
            // Cancelling an ended task is acknowledged like any other (the extension's rule).
            Ok(_) => Ok(Payload::Tree(json!({}))),
            Err(StoreError::NotFound) => Err(task_not_found()),
            Err(e) => Err(e.to_rpc_error()),
        },
    }
}

/// `tasks/get`, `tasks/list`, `tasks/cancel` of the 2025-11-25 experimental tasks.
async fn legacy_task_method(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
) -> Result<Payload, RpcError> {
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match req.method.as_str() {
        "tasks/list" => {
            let cursor = match req.params.value("cursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(c)) => Some(c),
                Some(_) => return Err(RpcError::invalid_params("`cursor` must be a string")),
            };
            let page = store.list(&owner, cursor.as_deref(), LIST_PAGE).await?;
            Ok(Payload::Tree(crate::protocol::task::legacy_list_result(
                &page.tasks,
                page.next_cursor.as_deref(),
            )))
        }
        "tasks/get" => {
            let id = task_id_param(&req.params)?;
            let mut text = None;
            let mut write =
                |t: TaskView<'_>| text = Some(t.render(TaskShape::LegacyTask).to_text());
            store.get_view(&id, &owner, &mut write).await?;
            text.map(Payload::Text).ok_or_else(task_not_found)
        }
        _ => {
            let id = task_id_param(&req.params)?;
            match store.cancel(&id, &owner).await {
                Ok(CancelResult::Cancelled(record)) => Ok(Payload::Text(
                    record.task_view().render(TaskShape::LegacyTask).to_text(),
                )),
                Ok(CancelResult::AlreadyTerminal(record)) => {
                    Err(RpcError::invalid_params(format!(
                        "Cannot cancel task: already in terminal status '{}'",
                        record.status.as_str()
                    )))
                }
                Err(StoreError::NotFound) => Err(task_not_found()),
                Err(e) => Err(e.to_rpc_error()),
            }
        }
    }
}

/// How many tasks a legacy `tasks/list` page holds.
const LIST_PAGE: usize = 50;

/// Legacy `tasks/result`: blocks until the task ends, then answers exactly what the call would have
/// (its result with `related-task` meta, or its JSON-RPC error). It waits on the task's version
/// and status only, and writes a stored result from its text.
async fn legacy_task_result(
    server: &ServerInner,
    peer: &Arc<dyn Peer>,
    req: &Incoming,
    cancel: CancellationToken,
) -> Answer {
    let id = match task_id_param(&req.params) {
        Ok(id) => id,
        Err(e) => return Some(Err(e)),
    };
    let owner = peer.owner(&req.era);
    let store = server.engine().store().clone();
    match store.get_view(&id, &owner, &mut |_| {}).await {
        Ok(true) => {}
        Ok(false) => return Some(Err(task_not_found())),
        Err(e) => return Some(Err(e.to_rpc_error())),
    }
    // Version 0 is older than any task's: the first wait answers at once.
    let mut seen = 0;
    loop {
        let changed = tokio::select! {
            _ = cancel.cancelled() => return None,
            r = store.changed_status(&id, seen) => r,
        };
        match changed {
            Ok((_, status)) if status.is_terminal() => break,
            Ok((version, _)) => seen = version,
            Err(StoreError::NotFound) => return Some(Err(task_not_found())),
            Err(e) => return Some(Err(e.to_rpc_error())),
        }
    }
    let mut answer = None;
    let mut write = |t: TaskView<'_>| {
        answer = Some(match t.outcome {
            Some(OutcomeView::Error(error)) => Err(error.clone()),
            Some(result) => Ok(Payload::Text(
                RelatedResult {
                    result,
                    task_id: id.as_str(),
                }
                .to_text(),
            )),
            None => Err(RpcError::internal(format!(
                "Task was {} before producing a result",
                t.status.as_str()
            ))
            .with_data(json!({ meta::RELATED_TASK: { "taskId": id.as_str() } }))),
        });
    };
    match store.get_view(&id, &owner, &mut write).await {
        Ok(_) => Some(answer.unwrap_or_else(|| Err(task_not_found()))),
        Err(e) => Some(Err(e.to_rpc_error())),
    }
}

/// Resolves after `after`, or never.
async fn sleep_or_never(after: Option<std::time::Duration>) {
    match after {
        Some(after) => tokio::time::sleep(after).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::Message;

    /// A request's `_meta` read from its text says what it says read as a tree, as the server
    /// read it before: the same era, client, log level and progress token, or exactly the same
    /// error. (The fuzz target `message` holds every parsed request to this too.)
    #[test]
    fn the_meta_reader_agrees_with_the_tree() {
        let v = r#""io.modelcontextprotocol/protocolVersion""#;
        let c = r#""io.modelcontextprotocol/clientCapabilities""#;
        let i = r#""io.modelcontextprotocol/clientInfo""#;
        let l = r#""io.modelcontextprotocol/logLevel""#;
        let caps = r#"{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}"#;
        let info = r#"{"name":"c","version":"1"}"#;
        let metas = [
            "{}".to_owned(),
            "null".into(),
            r#""x""#.into(),
            "[1]".into(),
            "7".into(),
            r#"{"progressToken":5,"other":{"a":[1,{}]}}"#.into(),
            r#"{"progressToken":{"a":[1]},"progressToken":"last"}"#.into(),
            format!(r#"{{{v}:"2026-07-28"}}"#),
            format!(r#"{{{c}:{{}}}}"#),
            format!(r#"{{{v}:7,{c}:{{}}}}"#),
            format!(r#"{{{v}:"2025-11-25",{c}:{{}}}}"#),
            format!(r#"{{{v}:"1999-01-01",{c}:{{}}}}"#),
            format!(r#"{{{v}:"2026\u002d07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:[]}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:null}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:"x"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{info}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{info},"progressToken":"p"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":"other","version":"1"}}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}: {{ "sampling" : {{ }} }} ,{i}:{info}}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":1}}}}"#),
            format!(
                r#"{{{v}:"2026-07-28",{c}:{caps},{i}:{{"name":"a","name":"b","version":"1"}}}}"#
            ),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:"info"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:"bogus"}}"#),
            format!(r#"{{{v}:"2026-07-28",{c}:{caps},{l}:3}}"#),
            format!(r#"{{{v}:"bad",{v}:"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{v}:"2026-07-28",{v}:"bad",{c}:{caps}}}"#),
            format!(r#"{{"io.modelcontextprotocol\/protocolVersion":"2026-07-28",{c}:{caps}}}"#),
            format!(r#"{{{l}:"bogus"}}"#),
        ];
        let mut modern = 0;
        for meta in &metas {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":1,"_meta":{meta}}}}}"#
            );
            let Ok(Message::Request(req)) = Message::parse(&text) else {
                panic!("{text}")
            };
            let tree = match req.clone().params_with_meta() {
                Some(Value::Object(params)) => params,
                other => panic!("{other:?}"),
            };
            let read = read_meta(req.meta.as_deref());
            assert_eq!(read, read_meta_tree(&tree), "{meta}");
            modern += read.is_ok_and(|f| f.modern.is_some()) as usize;
        }
        assert_eq!(modern, 11);
    }

    /// The same `_meta` text again is what was read from it before (one tree for the tools that
    /// look); another text of the same length is read anew, and a refused one is refused again.
    #[test]
    fn a_meta_sent_again_is_read_once() {
        let raw = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        let meta = |level: &str| {
            format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/logLevel":"{level}"}}"#
            )
        };
        let first = read_meta_cached(raw(&meta("debug"))).unwrap();
        let again = read_meta_cached(raw(&meta("debug"))).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(Arc::ptr_eq(&first.tree(), &again.tree()));
        let other = read_meta_cached(raw(&meta("error"))).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        let level = |m: &ReadMeta| m.facts.modern.as_ref().and_then(|(_, _, l)| *l);
        assert_eq!(level(&first), Some(LogLevel::Debug));
        assert_eq!(level(&other), Some(LogLevel::Error));
        assert_eq!(other.tree()["io.modelcontextprotocol/logLevel"], "error");
        for _ in 0..2 {
            let refused = read_meta_cached(raw(&meta("nope"))).err().unwrap();
            assert_eq!(refused.code, codes::INVALID_PARAMS);
        }
    }
}
