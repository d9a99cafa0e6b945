//! Streamable HTTP: one endpoint that serves both eras.
//!
//! - **Modern (2026-07-28)**: every request is its own POST, stateless; `MCP-Protocol-Version`,
//!   `Mcp-Method` and `Mcp-Name` must agree with the body (`-32020`, HTTP 400). The answer is JSON,
//!   or an SSE stream when the client accepts one and something (progress) comes before the result.
//! - **Legacy (2025-11-25)**: `initialize` opens a session (`Mcp-Session-Id`); later POSTs carry
//!   the id; GET opens the session's stream for what the server sends on its own; DELETE ends it;
//!   idle sessions expire. Server-to-client requests of a legacy task go out on the SSE response
//!   of the client's open `tasks/result` for that task, else on the GET stream.
//!
//! Requests go through the same [`dispatch`](super::dispatch) as stdio; this module only moves
//! bytes, checks headers, finds the session, and maps JSON-RPC errors to HTTP statuses.

mod session;

use super::ServerInner;
use super::auth::{Authenticator, Principal};
use super::connection::{Connection, Sink};
use super::dispatch;
use super::driver;
use crate::protocol::jsonrpc::{self, Message, RequestId, RpcError, codes, error_message};
use crate::protocol::task::Owner;
use crate::protocol::{LEGACY_VERSIONS, MODERN_VERSIONS, meta};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Map, Value};
use session::{HttpSession, ORIGIN, PostRoute, Routes, SessionSink, Sessions};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// Which `Host` / `Origin` values are let in (DNS-rebinding protection).
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPolicy {
    /// Loopback names only when serving on a loopback address; anything otherwise.
    Auto,
    Any,
    Only(Vec<String>),
}

/// Settings of the Streamable HTTP endpoint.
#[derive(Clone)]
pub struct HttpConfig {
    path: String,
    max_body: usize,
    session_idle: Duration,
    max_sessions: usize,
    session_backlog: usize,
    sse_buffer: usize,
    hosts: HostPolicy,
    authenticator: Option<Arc<dyn Authenticator>>,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("max_body", &self.max_body)
            .field("session_idle", &self.session_idle)
            .field("max_sessions", &self.max_sessions)
            .field("session_backlog", &self.session_backlog)
            .field("sse_buffer", &self.sse_buffer)
            .field("hosts", &self.hosts)
            .field("authenticator", &self.authenticator.is_some())
            .finish()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            max_body: 4 * 1024 * 1024,
            session_idle: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            session_backlog: 256,
            sse_buffer: 1024,
            hosts: HostPolicy::Auto,
            authenticator: None,
        }
    }
}

impl HttpConfig {
    /// The endpoint's path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The largest request body accepted (default 4 MiB); larger ones get HTTP 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a legacy session may sit idle (no request, no open GET stream) before it ends
    /// (default 30 minutes). Its id then answers 404, and the client starts a new session.
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// How many legacy sessions may be open at once (default 10,000). Over it, `initialize`
    /// answers `-32010` `Limit reached: …` with `data: {"limit": "sessions", "max": N}` (HTTP 200)
    /// and opens nothing; the sessions already open go on.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// How many server-to-client requests a legacy session keeps for a stream to come when the
    /// client has none open that can take them (default 256). Over it, the request is refused:
    /// the tool that asked gets [`InputError::LimitReached`](crate::InputError::LimitReached)
    /// (`-32010`, `"limit": "session_backlog"`) at once; nothing waiting is dropped.
    pub fn session_backlog(mut self, n: usize) -> Self {
        self.session_backlog = n;
        self
    }

    /// How many messages an SSE response (or a session's GET stream) buffers for a client that
    /// reads slowly (default 1,024, at least 1). A request that finds the buffer full goes to
    /// another of the session's streams or its backlog (see [`session_backlog`](Self::session_backlog));
    /// a notification (progress, log) is dropped. The reply to the request itself never is.
    pub fn sse_buffer(mut self, messages: usize) -> Self {
        self.sse_buffer = messages.max(1);
        self
    }

    /// Lets in only requests whose `Host` and `Origin` (when sent) name one of these hosts (no
    /// port; `[::1]` in brackets); others get HTTP 403. By default a server bound to a loopback
    /// address allows `localhost`, `127.0.0.1` and `[::1]`, and one bound elsewhere allows any.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = HostPolicy::Only(
            hosts
                .into_iter()
                .map(|h| h.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Lets in any `Host` and `Origin` (behind a proxy that checks them, for instance).
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = HostPolicy::Any;
        self
    }

    /// Authenticates every request; tasks are bound to the principal it names.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    fn resolved(mut self, loopback: bool) -> Self {
        if self.hosts == HostPolicy::Auto {
            self.hosts = if loopback {
                HostPolicy::Only(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()])
            } else {
                HostPolicy::Any
            };
        }
        self
    }
}

/// The owner of modern-era tasks of unauthenticated callers: the same on every instance sharing a
/// store, so a `tasks/get` that lands on another instance finds the task (the task id, random and
/// unguessable, is what protects it, as the spec requires without an authorization context).
const ANONYMOUS_OWNER: &str = "anonymous";

/// Everything the endpoint shares between requests.
struct HttpState {
    server: Arc<ServerInner>,
    config: HttpConfig,
    sessions: Sessions,
    /// Owner of modern-era tasks of unauthenticated callers.
    anonymous: Owner,
    /// Cancelled when shutdown starts: GET streams end, in-flight POSTs go on.
    draining: CancellationToken,
    /// Cancelled when the shutdown grace is over: everything still in flight ends.
    closing: CancellationToken,
    /// The dispatch of every request in flight.
    requests: TaskTracker,
    sweeper: OnceLock<()>,
}

impl HttpState {
    fn new(server: Arc<ServerInner>, config: HttpConfig) -> Arc<Self> {
        Arc::new(HttpState {
            server,
            config,
            sessions: Sessions::default(),
            anonymous: Owner::new(ANONYMOUS_OWNER),
            draining: CancellationToken::new(),
            closing: CancellationToken::new(),
            requests: TaskTracker::new(),
            sweeper: OnceLock::new(),
        })
    }

    fn owner(&self, principal: &Option<Principal>) -> Owner {
        match principal {
            Some(p) => Owner::new(format!("principal:{}", p.as_str())),
            None => self.anonymous.clone(),
        }
    }

    /// Starts the session sweeper once (from the first request: a runtime is running then). It
    /// holds only a weak reference and ends with the endpoint.
    fn start_sweeper(self: &Arc<Self>) {
        self.sweeper.get_or_init(|| {
            let weak: Weak<HttpState> = Arc::downgrade(self);
            let idle = self.config.session_idle;
            let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(state) = weak.upgrade() else { return };
                    let ended = state.sessions.sweep(idle);
                    if ended > 0 {
                        tracing::debug!(ended, "idle legacy sessions expired");
                    }
                }
            });
        });
    }

    /// Starts a graceful shutdown: GET streams end now, requests in flight get `grace` to finish.
    fn drain(self: &Arc<Self>, grace: Duration) {
        self.draining.cancel();
        self.requests.close();
        let state = self.clone();
        tokio::spawn(async move {
            if tokio::time::timeout(grace, state.requests.wait())
                .await
                .is_err()
            {
                tracing::info!("shutdown grace over; cancelling requests still in flight");
            }
            state.closing.cancel();
            state.sessions.close_all();
        });
    }
}

/// Builds the endpoint's router.
pub(crate) fn router(server: Arc<ServerInner>, config: HttpConfig) -> Router {
    let state = HttpState::new(server, config.resolved(false));
    router_for(state)
}

fn router_for(state: Arc<HttpState>) -> Router {
    let path = state.config.path.clone();
    Router::new().route(&path, axum::routing::any(handle).with_state(state))
}

/// Serves until `shutdown` resolves, then finishes in-flight responses (within the server's
/// `shutdown_grace`) and returns.
pub(crate) async fn serve(
    server: Arc<ServerInner>,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let grace = server.config.shutdown_grace;
    let engine = server.engine().clone();
    engine.serve_started();
    let state = HttpState::new(server, config.resolved(local.ip().is_loopback()));
    let app = router_for(state.clone());
    tracing::info!(address = %local, path = %state.config.path, "serving MCP over Streamable HTTP");
    let draining = state.clone();
    let serving = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        tracing::info!("shutdown signal; finishing in-flight requests");
        draining.drain(grace);
    });
    // The server's own graceful shutdown waits for open responses; `closing` ends them after the
    // grace, so this bound is only a guard against a stuck connection.
    let serving = serving.into_future();
    tokio::pin!(serving);
    tokio::select! {
        r = &mut serving => r?,
        _ = async {
            state.closing.cancelled().await;
            tokio::time::sleep(Duration::from_secs(2)).await;
        } => tracing::warn!("connections still open after the shutdown grace; stopping anyway"),
    }
    state.sessions.close_all();
    // No task of this process is left running with nobody to finish it.
    engine.serve_ended().await;
    Ok(())
}

async fn handle(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    state.start_sweeper();
    let (parts, body) = request.into_parts();
    if let Err(response) = check_host(&state.config.hosts, &parts.headers) {
        return response;
    }
    let principal = match &state.config.authenticator {
        None => None,
        Some(auth) => match auth.authenticate(&parts).await {
            Ok(p) => p,
            Err(rejected) => {
                let mut response = rpc_error_response(
                    StatusCode::UNAUTHORIZED,
                    None,
                    &RpcError::invalid_request(rejected.message),
                );
                if let Ok(v) = HeaderValue::from_str(&rejected.challenge) {
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
                }
                return response;
            }
        },
    };
    match parts.method {
        Method::POST => post(state, principal, parts.headers, body).await,
        Method::GET => get(state, principal, &parts.headers),
        Method::DELETE => delete(state, principal, &parts.headers),
        _ => method_not_allowed("use POST (or GET / DELETE with a legacy session)"),
    }
}

// ---- responses -------------------------------------------------------------------------------

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, jsonrpc::Wire(body).to_json()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn rpc_error_response(status: StatusCode, id: Option<&RequestId>, error: &RpcError) -> Response {
    json_response(status, &error_message(id, error))
}

fn bad_request(message: impl Into<String>) -> Response {
    rpc_error_response(
        StatusCode::BAD_REQUEST,
        None,
        &RpcError::invalid_request(message),
    )
}

fn method_not_allowed(why: &str) -> Response {
    let mut response = rpc_error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        &RpcError::invalid_request(format!("Method not allowed: {why}")),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}

fn session_not_found() -> Response {
    // 2025-11-25: an unknown or ended session is 404; the client starts a new one.
    rpc_error_response(
        StatusCode::NOT_FOUND,
        None,
        &RpcError::new(
            -32001,
            "Session not found: start a new session with `initialize`",
        ),
    )
}

/// The HTTP status of a JSON-RPC reply. `in_session`: the reply to a request of a legacy
/// (2025-11-25) session, where a 404 means "your session is gone" and a compliant client drops
/// the session and every task in it: there, only a message that could not be taken as a request
/// at all is a 400, and every other JSON-RPC error (`-32601` for a `required` tool called
/// without `task`, say) is HTTP 200.
fn status_of(reply: &Value, stateless_without_meta: bool, in_session: bool) -> StatusCode {
    let Some(code) = reply
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
    else {
        return StatusCode::OK;
    };
    if in_session {
        return match code {
            codes::PARSE_ERROR | codes::INVALID_REQUEST => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        };
    }
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::HEADER_MISMATCH
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION
        | codes::PARSE_ERROR
        | codes::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        // A request with neither per-request `_meta` nor a session, or whose `_meta` lacks a
        // required key (the error names it in `data.missing`), is malformed.
        codes::INVALID_PARAMS
            if stateless_without_meta || reply["error"]["data"].get("missing").is_some() =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

// ---- checks ----------------------------------------------------------------------------------

/// DNS-rebinding protection: `Host` and `Origin` must name an allowed host.
// The error is the finished rejection, built once per rejected request; boxing buys nothing.
#[allow(clippy::result_large_err)]
fn check_host(policy: &HostPolicy, headers: &HeaderMap) -> Result<(), Response> {
    let HostPolicy::Only(allowed) = policy else {
        return Ok(());
    };
    let forbidden = |what: &str, value: &str| {
        rpc_error_response(
            StatusCode::FORBIDDEN,
            None,
            &RpcError::invalid_request(format!("Forbidden: {what} `{value}` is not allowed")),
        )
    };
    let allowed_host = |host: &str| allowed.iter().any(|a| a == &host.to_ascii_lowercase());
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        if !allowed_host(strip_port(host)) {
            return Err(forbidden("Host", host));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
            .map(strip_port);
        if !host.is_some_and(allowed_host) {
            return Err(forbidden("Origin", origin));
        }
    }
    Ok(())
}

/// `localhost:3000` -> `localhost`, `[::1]:3000` -> `[::1]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    host.split(':').next().unwrap_or(host)
}

/// A header's value with surrounding whitespace removed and a `=?base64?…?=` sentinel decoded.
/// `Err` when it is not text or its base64 is broken.
fn header_value(headers: &HeaderMap, name: &str) -> Option<Result<String, String>> {
    let mut values = headers.get_all(name).iter();
    let raw = values.next()?;
    if values.next().is_some() {
        return Some(Err(format!("the `{name}` header is sent more than once")));
    }
    Some(decode_header(raw).map_err(|why| format!("the `{name}` header {why}")))
}

fn decode_header(raw: &HeaderValue) -> Result<String, String> {
    let text = std::str::from_utf8(raw.as_bytes()).map_err(|_| "is not UTF-8".to_owned())?;
    let text = text.trim_matches([' ', '\t']);
    match text
        .strip_prefix("=?base64?")
        .and_then(|t| t.strip_suffix("?="))
    {
        None => Ok(text.to_owned()),
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("has invalid base64 ({e})"))?;
            String::from_utf8(bytes).map_err(|_| "decodes to bytes that are not UTF-8".to_owned())
        }
    }
}

fn header_mismatch(message: String) -> RpcError {
    RpcError::new(
        codes::HEADER_MISMATCH,
        format!("Header mismatch: {message}"),
    )
}

/// What `Mcp-Name` must equal for this request, and whether the header is required.
fn expected_name(method: &str, params: &Map<String, Value>) -> Option<(String, bool)> {
    let (key, required) = match method {
        "tools/call" | "prompts/get" => ("name", true),
        "resources/read" => ("uri", true),
        // The tasks extension makes it a client MUST, but the core marks it required only for
        // the three above: checked when sent.
        "tasks/get" | "tasks/update" | "tasks/cancel" => ("taskId", false),
        _ => return None,
    };
    let value = params.get(key)?.as_str()?;
    Some((value.to_owned(), required))
}

/// The routing headers must agree with the body (SEP-2243). `modern_version`: the body's
/// `_meta` protocol version, when it has one; then the headers are required too.
fn check_routing_headers(
    headers: &HeaderMap,
    method: &str,
    params: &Map<String, Value>,
    modern_version: Option<&str>,
) -> Result<(), RpcError> {
    let get = |name: &str| {
        header_value(headers, name)
            .transpose()
            .map_err(header_mismatch)
    };
    let protocol = get(PROTOCOL_HEADER)?;
    match (modern_version, protocol.as_deref()) {
        (Some(body), Some(header)) if header != body => {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version is `{header}` but the body's `_meta[\"{}\"]` is `{body}`",
                meta::PROTOCOL_VERSION
            )));
        }
        (Some(_), None) => {
            return Err(header_mismatch(
                "the MCP-Protocol-Version header is required".into(),
            ));
        }
        (None, Some(header))
            if !LEGACY_VERSIONS.contains(&header) && !MODERN_VERSIONS.contains(&header) =>
        {
            return Err(RpcError::invalid_request(format!(
                "Bad Request: unsupported MCP-Protocol-Version `{header}`"
            )));
        }
        _ => {}
    }
    match get(METHOD_HEADER)? {
        Some(h) if h != method => {
            return Err(header_mismatch(format!(
                "Mcp-Method is `{h}` but the body's method is `{method}`"
            )));
        }
        None if modern_version.is_some() => {
            return Err(header_mismatch("the Mcp-Method header is required".into()));
        }
        _ => {}
    }
    if let Some((want, required)) = expected_name(method, params) {
        match get(NAME_HEADER)? {
            Some(h) if h != want => {
                return Err(header_mismatch(format!(
                    "Mcp-Name is `{h}` but the body names `{want}`"
                )));
            }
            None if required && modern_version.is_some() => {
                return Err(header_mismatch(format!(
                    "the Mcp-Name header is required for `{method}`"
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` must agree with the arguments the
/// tool's schema marks `x-mcp-header` (SEP-2243): present exactly when the argument is, with the
/// same value (after `=?base64?…?=` decoding). An unknown tool is left to dispatch.
fn check_param_headers(
    server: &ServerInner,
    headers: &HeaderMap,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    let Some(tool) = params
        .get("name")
        .and_then(Value::as_str)
        .and_then(|name| server.tools.get(name))
    else {
        return Ok(());
    };
    let arguments = params.get("arguments");
    for param in tool.header_params() {
        let header = param.header();
        let argument = param.path.join(".");
        let sent = header_value(headers, &header.to_ascii_lowercase())
            .transpose()
            .map_err(header_mismatch)?;
        match (param.value_in(arguments), sent) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(header_mismatch(format!(
                    "the {header} header is required: the arguments set `{argument}`"
                )));
            }
            (None, Some(_)) => {
                return Err(header_mismatch(format!(
                    "{header} is sent but the arguments do not set `{argument}`"
                )));
            }
            (Some(value), Some(sent)) if !crate::tool::header_matches(&sent, value) => {
                return Err(header_mismatch(format!(
                    "{header} is `{sent}` but the arguments' `{argument}` is {value}"
                )));
            }
            (Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

/// The body's `_meta` protocol version (the modern era), if any.
fn modern_version(params: Option<&Value>) -> Option<&str> {
    params?.get("_meta")?.get(meta::PROTOCOL_VERSION)?.as_str()
}

fn has_modern_meta(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| {
            m.contains_key(meta::PROTOCOL_VERSION) || m.contains_key(meta::CLIENT_CAPABILITIES)
        })
}

struct Accepts {
    json: bool,
    sse: bool,
}

fn accepts(headers: &HeaderMap) -> Accepts {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Accepts {
            json: true,
            sse: false,
        };
    };
    let types: Vec<String> = accept
        .split(',')
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .collect();
    let any = types.iter().any(|t| t == "*/*");
    Accepts {
        json: any
            || types
                .iter()
                .any(|t| t == "application/json" || t == "application/*"),
        sse: types
            .iter()
            .any(|t| t == "text/event-stream" || t == "text/*"),
    }
}

fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
}

// ---- POST ------------------------------------------------------------------------------------

async fn post(
    state: Arc<HttpState>,
    principal: Option<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    {
        return rpc_error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            &RpcError::invalid_request(
                "Unsupported Media Type: send `Content-Type: application/json`",
            ),
        );
    }
    let accept = accepts(&headers);
    if !accept.json && !accept.sse {
        return rpc_error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            &RpcError::invalid_request(
                "Not Acceptable: accept `application/json` and/or `text/event-stream`",
            ),
        );
    }
    let bytes = match read_body(body, state.config.max_body, &headers).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    let message = match std::str::from_utf8(&bytes) {
        Ok(text) => Message::parse(text),
        Err(_) => Err(jsonrpc::Rejected {
            id: None,
            error: RpcError::new(codes::PARSE_ERROR, "Parse error: the body is not UTF-8"),
        }),
    };
    let message = match message {
        Ok(m) => m,
        Err(rejected) => {
            // A broken answer to one of a session's server-to-client requests fails that request
            // (its tool gets the reason) instead of leaving it waiting.
            if let (Some(id), Some(session)) = (
                &rejected.id,
                session_id(&headers).and_then(|s| state.sessions.get(&s, &principal)),
            ) {
                session.conn.fail_pending(id, &rejected.error);
            }
            return rpc_error_response(
                StatusCode::BAD_REQUEST,
                rejected.id.as_ref(),
                &rejected.error,
            );
        }
    };
    let session_header = session_id(&headers);
    match message {
        Message::Response(resp) => {
            let Some(id) = session_header else {
                return bad_request(
                    "Bad Request: a response to a server request needs the Mcp-Session-Id of its session",
                );
            };
            let Some(session) = state.sessions.get(&id, &principal) else {
                return session_not_found();
            };
            session.touch();
            session.conn.on_response(resp);
            StatusCode::ACCEPTED.into_response()
        }
        Message::Notification(n) => {
            let empty = Map::new();
            let params = n
                .params
                .as_ref()
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            if let Err(e) = check_routing_headers(
                &headers,
                &n.method,
                params,
                modern_version(n.params.as_ref()),
            ) {
                return rpc_error_response(StatusCode::BAD_REQUEST, None, &e);
            }
            if has_modern_meta(n.params.as_ref()) {
                // Nothing in the modern era is a client notification over HTTP (closing the
                // response stream cancels a request); accepted and ignored.
                return StatusCode::ACCEPTED.into_response();
            }
            match session_header {
                Some(id) => {
                    let Some(session) = state.sessions.get(&id, &principal) else {
                        return session_not_found();
                    };
                    session.touch();
                    dispatch::notification(&session.conn, n);
                    StatusCode::ACCEPTED.into_response()
                }
                None => StatusCode::ACCEPTED.into_response(),
            }
        }
        Message::Request(req) => {
            let modern = has_modern_meta(req.params.as_ref());
            if req.method == "initialize" && !modern {
                // `initialize` opens a session; sent on a live one it is an error and the
                // session goes on as it was.
                if let Some(id) = &session_header {
                    return match state.sessions.get(id, &principal) {
                        Some(_) => rpc_error_response(
                            StatusCode::BAD_REQUEST,
                            Some(&req.id),
                            &dispatch::already_initialized(),
                        ),
                        None => session_not_found(),
                    };
                }
                return initialize(&state, principal, &req);
            }
            let empty = Map::new();
            let params = req
                .params
                .as_ref()
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let version = modern_version(req.params.as_ref());
            let checked = check_routing_headers(&headers, &req.method, params, version).and_then(
                |()| match (version, req.method.as_str()) {
                    (Some(_), "tools/call") => check_param_headers(&state.server, &headers, params),
                    _ => Ok(()),
                },
            );
            if let Err(e) = checked {
                return rpc_error_response(StatusCode::BAD_REQUEST, Some(&req.id), &e);
            }
            // Modern requests are stateless: a session id they carry means nothing.
            let session = match session_header {
                Some(id) if !modern => match state.sessions.get(&id, &principal) {
                    Some(s) => Some(s),
                    None => return session_not_found(),
                },
                _ => None,
            };
            run_request(&state, principal, session, req, accept).await
        }
    }
}

#[allow(clippy::result_large_err)] // as in check_host
async fn read_body(body: Body, max: usize, headers: &HeaderMap) -> Result<Bytes, Response> {
    let too_large = || {
        rpc_error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            &RpcError::invalid_request(format!(
                "Payload Too Large: a request body may be at most {max} bytes"
            )),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(e) => Err(bad_request(format!(
            "Bad Request: reading the body failed: {e}"
        ))),
    }
}

/// `initialize` without per-request `_meta`: opens a legacy session.
fn initialize(
    state: &Arc<HttpState>,
    principal: Option<Principal>,
    req: &jsonrpc::Request,
) -> Response {
    if state.sessions.len() >= state.config.max_sessions {
        let err = RpcError::limit_reached(
            "sessions",
            state.config.max_sessions,
            "the server has as many sessions open as it may; try again later",
        );
        return rpc_error_response(StatusCode::OK, Some(&req.id), &err);
    }
    let routes = Arc::new(Routes::new(state.config.session_backlog));
    let conn = Connection::new(
        state.server.clone(),
        Arc::new(SessionSink(routes.clone())),
        state.owner(&principal),
        principal.clone(),
        state.closing.child_token(),
        principal.is_some(),
    );
    let reply = dispatch::initialize(&conn, req);
    let Some(session_id) = conn.session().map(|s| s.id) else {
        conn.close();
        return json_response(status_of(&reply, false, false), &reply);
    };
    state.sessions.insert(
        session_id.clone(),
        Arc::new(HttpSession::new(principal, conn, routes)),
    );
    let mut response = json_response(StatusCode::OK, &reply);
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// A stateless request's sink: its own response stream.
#[derive(Debug)]
struct PostSink(mpsc::Sender<Value>);

impl Sink for PostSink {
    fn send(&self, message: Value) -> bool {
        match self.0.try_send(message) {
            Ok(()) => true,
            // Only notifications go here; the reply does not (it has its own channel).
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::debug!("a response stream's buffer is full; notification dropped");
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// Cancels a request whose client went away before its answer (closing the response = cancel).
struct CancelOnDrop {
    conn: Arc<Connection>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && self.conn.cancel_request(&id)
        {
            tracing::debug!(%id, "the client closed the response; request cancelled");
        }
    }
}

/// Unregisters a legacy POST's stream when its response ends.
struct RouteGuard {
    routes: Arc<Routes>,
    route: PostRoute,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.close_post(&self.route);
    }
}

async fn run_request(
    state: &Arc<HttpState>,
    principal: Option<Principal>,
    session: Option<Arc<HttpSession>>,
    req: jsonrpc::Request,
    accept: Accepts,
) -> Response {
    let id = req.id.clone();
    let (tx, mut rx) = mpsc::channel::<Value>(state.config.sse_buffer);
    let stateless_without_meta = session.is_none() && !has_modern_meta(req.params.as_ref());
    let in_session = session.is_some();
    let (conn, route_guard) = match &session {
        Some(s) => {
            s.touch();
            // Only a client that reads SSE can be sent anything on this response.
            let guard = accept.sse.then(|| {
                let task = (req.method == "tasks/result")
                    .then(|| {
                        req.params
                            .as_ref()?
                            .get("taskId")?
                            .as_str()
                            .map(str::to_owned)
                    })
                    .flatten();
                let progress = req
                    .params
                    .as_ref()
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(meta::PROGRESS_TOKEN))
                    .map(Value::to_string);
                RouteGuard {
                    routes: s.routes.clone(),
                    route: s.routes.open_post(&id, task, progress, tx.clone()),
                }
            });
            (s.conn.clone(), guard)
        }
        None => (
            Connection::new(
                state.server.clone(),
                Arc::new(PostSink(tx.clone())),
                state.owner(&principal),
                principal.clone(),
                state.closing.child_token(),
                principal.is_some(),
            ),
            None,
        ),
    };
    drop(tx);
    if conn.is_in_flight(&id) {
        let err = RpcError::invalid_request(format!(
            "Invalid Request: id {id} is already in use by a request in flight"
        ));
        return rpc_error_response(StatusCode::BAD_REQUEST, Some(&id), &err);
    }
    let Some(run) = driver::start_request(&conn, req) else {
        let err = RpcError::invalid_request("Invalid Request: duplicate request id");
        return rpc_error_response(StatusCode::BAD_REQUEST, Some(&id), &err);
    };
    let (reply_tx, mut reply_rx) = oneshot::channel();
    let replied = (conn.clone(), id.clone());
    state.requests.spawn(ORIGIN.scope(id.clone(), async move {
        let _ = reply_tx.send(run.await);
        replied.0.replied(&replied.1);
    }));
    let cancel = CancelOnDrop {
        conn: conn.clone(),
        id: Some(id.clone()),
    };
    let keep_session = session.clone();
    // Whatever comes first decides the response: the reply (JSON) or a message before it (SSE).
    let first = tokio::select! {
        biased;
        m = rx.recv(), if accept.sse => m,
        r = &mut reply_rx => return finish_json(r, cancel, stateless_without_meta, in_session),
    };
    let Some(first) = first else {
        // Nothing will be streamed (the sink is gone); wait for the reply.
        return finish_json(reply_rx.await, cancel, stateless_without_meta, in_session);
    };
    let stream = SseState {
        queued: vec![first],
        rx: Some(rx),
        reply: Some(reply_rx),
        cancel: Some(cancel),
        _route: route_guard,
        _session: keep_session,
    };
    sse_response(futures_util::stream::unfold(stream, SseState::next))
}

fn finish_json(
    reply: Result<Option<Value>, oneshot::error::RecvError>,
    mut cancel: CancelOnDrop,
    stateless_without_meta: bool,
    in_session: bool,
) -> Response {
    cancel.id = None;
    match reply {
        Ok(Some(reply)) => json_response(
            status_of(&reply, stateless_without_meta, in_session),
            &reply,
        ),
        _ => rpc_error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            &RpcError::internal("the request was cancelled (the server is shutting down)"),
        ),
    }
}

fn sse_event(message: &Value) -> Bytes {
    Bytes::from(format!(
        "event: message\ndata: {}\n\n",
        jsonrpc::Wire(message).to_json()
    ))
}

fn sse_response<S>(stream: S) -> Response
where
    S: futures_util::Stream<Item = Bytes> + Send + 'static,
{
    use futures_util::StreamExt;
    let body = Body::from_stream(stream.map(Ok::<_, std::convert::Infallible>));
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The SSE response of one POST: messages sent while the request runs, then its reply.
struct SseState {
    queued: Vec<Value>,
    rx: Option<mpsc::Receiver<Value>>,
    reply: Option<oneshot::Receiver<Option<Value>>>,
    cancel: Option<CancelOnDrop>,
    _route: Option<RouteGuard>,
    _session: Option<Arc<HttpSession>>,
}

impl SseState {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        if let Some(m) = self.queued.pop() {
            return Some((sse_event(&m), self));
        }
        let reply = self.reply.as_mut()?;
        let out = match self.rx.as_mut() {
            Some(rx) => tokio::select! {
                biased;
                m = rx.recv() => match m {
                    Some(m) => return Some((sse_event(&m), self)),
                    None => { self.rx = None; reply.await }
                },
                r = &mut *reply => r,
            },
            None => reply.await,
        };
        self.reply = None;
        if let Some(mut c) = self.cancel.take() {
            c.id = None;
        }
        match out {
            Ok(Some(reply)) => Some((sse_event(&reply), self)),
            _ => None,
        }
    }
}

// ---- GET / DELETE ----------------------------------------------------------------------------

fn get(state: Arc<HttpState>, principal: Option<Principal>, headers: &HeaderMap) -> Response {
    let Some(id) = session_id(headers) else {
        return method_not_allowed(
            "GET opens the stream of a legacy session (send Mcp-Session-Id); the 2026-07-28 protocol has no GET stream",
        );
    };
    if !accepts(headers).sse {
        return rpc_error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            &RpcError::invalid_request("Not Acceptable: GET needs `Accept: text/event-stream`"),
        );
    }
    let Some(session) = state.sessions.get(&id, &principal) else {
        return session_not_found();
    };
    let (tx, rx) = mpsc::channel(state.config.sse_buffer);
    if !session.routes.open_get(tx.clone()) {
        return rpc_error_response(
            StatusCode::CONFLICT,
            None,
            &RpcError::invalid_request("Conflict: this session's GET stream is already open"),
        );
    }
    session.touch();
    let stream = GetStream {
        rx,
        tx,
        session,
        draining: state.draining.clone(),
    };
    sse_response(futures_util::stream::unfold(stream, GetStream::next))
}

/// A session's standalone stream: what the server sends on its own, and a comment now and then so
/// proxies keep it open. Ends when the session ends or the server shuts down.
struct GetStream {
    rx: mpsc::Receiver<Value>,
    tx: mpsc::Sender<Value>,
    session: Arc<HttpSession>,
    draining: CancellationToken,
}

impl GetStream {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        let closing = self.session.conn.closing.clone();
        tokio::select! {
            m = self.rx.recv() => m.map(|m| (sse_event(&m), self)),
            _ = tokio::time::sleep(Duration::from_secs(15)) => {
                Some((Bytes::from_static(b": keep-alive\n\n"), self))
            }
            _ = self.draining.cancelled() => None,
            _ = closing.cancelled() => None,
        }
    }
}

impl Drop for GetStream {
    fn drop(&mut self) {
        self.session.routes.close_get(&self.tx);
        self.session.touch();
    }
}

fn delete(state: Arc<HttpState>, principal: Option<Principal>, headers: &HeaderMap) -> Response {
    let Some(id) = session_id(headers) else {
        return method_not_allowed(
            "DELETE ends a legacy session (send Mcp-Session-Id); the 2026-07-28 protocol has no sessions",
        );
    };
    if state.sessions.get(&id, &principal).is_none() {
        return session_not_found();
    }
    state.sessions.remove(&id);
    StatusCode::OK.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_trimmed_and_base64_decoded() {
        let v = |s: &'static str| decode_header(&HeaderValue::from_static(s));
        assert_eq!(v("  greet \t").unwrap(), "greet");
        assert_eq!(v("=?base64?Z3JlZXQ=?=").unwrap(), "greet");
        assert!(v("=?base64?Z3J!ZXQ=?=").is_err());
        assert_eq!(v("=?base64?").unwrap(), "=?base64?");
    }

    #[test]
    fn ports_are_stripped_from_hosts() {
        assert_eq!(strip_port("localhost:3000"), "localhost");
        assert_eq!(strip_port("[::1]:3000"), "[::1]");
        assert_eq!(strip_port("127.0.0.1"), "127.0.0.1");
    }
}
