//! The handlers: POST (modern requests, legacy requests in a session, `initialize`), GET (a legacy
//! session's stream), DELETE (ends a session), and how JSON-RPC replies map to HTTP responses.

use super::super::connection::{Connection, Requestor, Sink, owner_of, session_owner};
use super::super::driver;
use super::super::peer::Peer;
use super::super::session::{already_initialized, initialize as open_session};
use super::guards::{
    Accepts, SESSION_HEADER, accepts, check_param_headers, check_routing_headers, session_id,
};
use super::resume::{EventId, GET_STREAM, ResumeError, Source};
use super::routes::{CancelOnDrop, ORIGIN, RouteGuard, Routes, SessionSink};
use super::session::HttpSession;
use super::sse::{Serving, SseState, post_stream, priming_frame, resumable_stream};
use super::{HttpState, Principal};
use crate::protocol::Params;
use crate::protocol::jsonrpc::{self, Message, Notification, RequestId, RpcError, error_message};
use crate::protocol::meta::{MetaCache, ReadMeta};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    text_response(status, jsonrpc::Wire(body).to_json())
}

/// The reply to a request, written from its parts (its result never becomes a tree here).
fn reply_response(status: StatusCode, reply: &jsonrpc::Reply) -> Response {
    text_response(status, serde_json::to_string(reply).unwrap_or_default())
}

fn text_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn rpc_error_response(
    status: StatusCode,
    id: Option<&RequestId>,
    error: &RpcError,
) -> Response {
    json_response(status, &error_message(id, error))
}

pub(super) fn bad_request(message: impl Into<String>) -> Response {
    rpc_error_response(
        StatusCode::BAD_REQUEST,
        None,
        &RpcError::invalid_request(message),
    )
}

pub(super) fn method_not_allowed(why: &str) -> Response {
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

pub(super) fn session_not_found() -> Response {
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
pub(super) fn status_of(
    error: Option<&RpcError>,
    stateless_without_meta: bool,
    in_session: bool,
) -> StatusCode {
    let Some(error) = error else {
        return StatusCode::OK;
    };
    let code = error.code;
    if in_session {
        return match code {
            RpcError::PARSE_ERROR | RpcError::INVALID_REQUEST => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        };
    }
    match code {
        RpcError::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        RpcError::HEADER_MISMATCH
        | RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY
        | RpcError::UNSUPPORTED_PROTOCOL_VERSION
        | RpcError::PARSE_ERROR
        | RpcError::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        // A request with neither per-request `_meta` nor a session, or whose `_meta` lacks a
        // required key (the error names it in `data.missing`), is malformed.
        RpcError::INVALID_PARAMS
            if stateless_without_meta
                || (error.data.as_ref()).is_some_and(|d| d.get("missing").is_some()) =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

// ---- POST ------------------------------------------------------------------------------------

/// A POST: its headers and body are checked and read ([`read_message`]), then it is an answer to
/// one of a session's server-to-client requests, a notification, or a request.
pub(super) async fn post(
    state: Arc<HttpState>,
    principal: Option<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let accept = match accepted(&headers) {
        Ok(accept) => accept,
        Err(response) => return response,
    };
    let message = match read_message(&state, &principal, &headers, body).await {
        Ok(message) => message,
        Err(response) => return response,
    };
    match message {
        Message::Response(resp) => post_response(&state, &principal, &headers, resp),
        Message::Notification(n) => post_notification(&state, &principal, &headers, n),
        Message::Request(req) => post_request(state, principal, &headers, req, accept).await,
    }
}

/// What the client accepts, once the body is JSON (`Content-Type`) and the answer can be JSON, SSE
/// or both (`Accept`).
#[allow(clippy::result_large_err)] // as in check_host
fn accepted(headers: &HeaderMap) -> Result<Accepts, Response> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    {
        return Err(rpc_error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            &RpcError::invalid_request(
                "Unsupported Media Type: send `Content-Type: application/json`",
            ),
        ));
    }
    let accept = accepts(headers);
    if !accept.json && !accept.sse {
        return Err(rpc_error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            &RpcError::invalid_request(
                "Not Acceptable: accept `application/json` and/or `text/event-stream`",
            ),
        ));
    }
    Ok(accept)
}

/// Reads the body as one JSON-RPC message (HTTP 400 with the JSON-RPC error when it is not one).
#[allow(clippy::result_large_err)] // as in check_host
async fn read_message(
    state: &HttpState,
    principal: &Option<Principal>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Message, Response> {
    let limits = (state.config.max_body, state.config.body_timeout);
    let bytes = read_body(body, limits, headers).await?;
    let message = match std::str::from_utf8(&bytes) {
        Ok(text) => Message::parse(text),
        Err(_) => Err(jsonrpc::Rejected {
            id: None,
            error: RpcError::new(RpcError::PARSE_ERROR, "Parse error: the body is not UTF-8"),
        }),
    };
    message.map_err(|rejected| {
        // A broken answer to one of a session's server-to-client requests fails that request
        // (its tool gets the reason) instead of leaving it waiting.
        if let (Some(id), Some(session)) = (
            &rejected.id,
            session_id(headers).and_then(|s| state.sessions.get(&s, principal)),
        ) {
            session.conn.fail_pending(id, &rejected.error);
        }
        rpc_error_response(
            StatusCode::BAD_REQUEST,
            rejected.id.as_ref(),
            &rejected.error,
        )
    })
}

/// The client's answer to one of its session's server-to-client requests.
fn post_response(
    state: &HttpState,
    principal: &Option<Principal>,
    headers: &HeaderMap,
    resp: jsonrpc::Response,
) -> Response {
    let Some(id) = session_id(headers) else {
        return bad_request(
            "Bad Request: a response to a server request needs the Mcp-Session-Id of its session",
        );
    };
    let Some(session) = state.sessions.get(&id, principal) else {
        return session_not_found();
    };
    session.touch();
    session.conn.on_response(resp);
    StatusCode::ACCEPTED.into_response()
}

/// A notification: its routing headers are checked; a legacy session's goes to its connection,
/// and a modern one is accepted and ignored.
fn post_notification(
    state: &HttpState,
    principal: &Option<Principal>,
    headers: &HeaderMap,
    n: Notification,
) -> Response {
    let empty = Map::new();
    let params = (n.params.as_ref())
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let meta = params
        .get("_meta")
        .and_then(|m| serde_json::value::to_raw_value(m).ok())
        .map(|m| MetaCache::read(Cow::Owned(m)));
    let version = meta.as_ref().and_then(|m| m.version.as_deref());
    if let Err(e) = check_routing_headers(headers, &n.method, &Params::from_map(params), version) {
        return rpc_error_response(StatusCode::BAD_REQUEST, None, &e);
    }
    if meta.is_some_and(|m| m.claims_modern) {
        // Nothing in the modern era is a client notification over HTTP (closing the response
        // stream cancels a request); accepted and ignored.
        return StatusCode::ACCEPTED.into_response();
    }
    if let Some(id) = session_id(headers) {
        let Some(session) = state.sessions.get(&id, principal) else {
            return session_not_found();
        };
        session.touch();
        driver::on_notification(&session.conn, n);
    }
    StatusCode::ACCEPTED.into_response()
}

/// A request: `initialize` opens a session; any other has its routing headers checked and runs,
/// in its legacy session or (modern) on its own.
async fn post_request(
    state: Arc<HttpState>,
    principal: Option<Principal>,
    headers: &HeaderMap,
    req: jsonrpc::Request,
    accept: Accepts,
) -> Response {
    let meta = (req.meta.as_deref()).map(|m| MetaCache::read(Cow::Borrowed(m)));
    let modern = meta.as_ref().is_some_and(|m| m.claims_modern);
    let session_header = session_id(headers);
    if req.method == "initialize" && !modern {
        // `initialize` opens a session; sent on a live one it is an error and the session goes on
        // as it was.
        if let Some(id) = &session_header {
            return match state.sessions.get(id, &principal) {
                Some(_) => rpc_error_response(
                    StatusCode::BAD_REQUEST,
                    Some(&req.id),
                    &already_initialized(),
                ),
                None => session_not_found(),
            };
        }
        return initialize(&state, principal, &req);
    }
    let empty = Params::new();
    let params = req.params.as_ref().unwrap_or(&empty);
    let version = meta.as_ref().and_then(|m| m.version.as_deref());
    let checked =
        check_routing_headers(headers, &req.method, params, version).and_then(|()| {
            match (version, req.method.as_str()) {
                (Some(_), "tools/call") => check_param_headers(&state.server, headers, params),
                _ => Ok(()),
            }
        });
    if let Err(e) = checked {
        return rpc_error_response(StatusCode::BAD_REQUEST, Some(&req.id), &e);
    }
    let legacy_session = session_header.as_deref().filter(|_| !modern);
    if let Some(response) =
        check_scopes(&state, principal.as_ref(), legacy_session, &req, params).await
    {
        return response;
    }
    // Modern requests are stateless: a session id they carry means nothing.
    let session = match session_header {
        Some(id) if !modern => match state.sessions.get(&id, &principal) {
            Some(s) => Some(s),
            None => return session_not_found(),
        },
        _ => None,
    };
    run_request(&state, principal, session, req, meta.as_deref(), accept).await
}

/// A request that uses something declaring OAuth scopes, by a caller whose token lacks one:
/// HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` naming every
/// scope it needs, so that the client can ask for them and retry (step-up authorization). What
/// declares scopes (`scope = "..."` on the attribute): the tool of a `tools/call`, or of the task
/// a task request (`tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result`) or a
/// `resources/read` of a task's output is about; the resource of any other `resources/read` (a
/// template's, for what it stands for); the prompt of a
/// `prompts/get`; the prompt or resource template a `completion/complete` completes for.
/// Checked here, on the request's own token: in a legacy session, each request may carry a
/// different token for the same principal (`session`: the 2025-11-25 session the request names,
/// whose tasks are checked as the principal's own). Callers not limited by scopes (static
/// tokens, no authenticator) pass. A task of another owner, or none, passes on to be answered as unknown: a
/// 403 would tell that it exists; so do a URI or a name that names nothing.
async fn check_scopes(
    state: &HttpState,
    principal: Option<&Principal>,
    session: Option<&str>,
    req: &jsonrpc::Request,
    params: &Params,
) -> Option<Response> {
    let principal = principal.filter(|p| p.scopes().is_some())?;
    let server = &state.server;
    let (what, needed): (String, &[&str]) = match req.method.as_str() {
        "tools/call" => {
            let tool = server.tools.get(&params.str("name").flatten()?)?;
            (format!("the tool `{}`", tool.info.name), tool.info.scopes)
        }
        "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" => {
            let id = crate::protocol::task::TaskId::new(params.str("taskId").flatten()?);
            let tool = task_tool(state, principal, session, &id).await?;
            (format!("the tool `{}`", tool.info.name), tool.info.scopes)
        }
        "resources/read" => {
            let uri = params.str("uri").flatten()?;
            // A task's output (`task://{taskId}/{name}`) needs what its task's requests need.
            if let Some((id, _)) = crate::protocol::task::parse_output_uri(&uri) {
                let tool = task_tool(state, principal, session, &id).await?;
                (format!("the tool `{}`", tool.info.name), tool.info.scopes)
            } else {
                let found = server.resources.find(&uri)?;
                let info = &found.resource.info;
                (format!("the resource `{}`", info.uri), info.scopes)
            }
        }
        "prompts/get" => {
            let prompt = server.prompts.get(&params.str("name").flatten()?)?;
            (
                format!("the prompt `{}`", prompt.info.name),
                prompt.info.scopes,
            )
        }
        "completion/complete" => {
            let reference = params.value("ref")?;
            match reference.get("type").and_then(Value::as_str)? {
                "ref/prompt" => {
                    let prompt = server.prompts.get(reference.get("name")?.as_str()?)?;
                    (
                        format!("the prompt `{}`", prompt.info.name),
                        prompt.info.scopes,
                    )
                }
                "ref/resource" => {
                    let uri = reference.get("uri")?.as_str()?;
                    let resource = server.resources.iter().find(|r| r.info.uri == uri)?;
                    (format!("the resource `{uri}`"), resource.info.scopes)
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    if principal.has_scopes(needed) {
        return None;
    }
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|s| !principal.has_scope(s))
        .collect();
    let error = RpcError::invalid_request(format!(
        "Forbidden: {what} needs the scope `{}`, which this token does not grant",
        missing.join(" ")
    ))
    .with_data(serde_json::json!({
        "error": "insufficient_scope",
        "scope": needed.join(" "),
        "missing": missing,
    }));
    let mut response = rpc_error_response(StatusCode::FORBIDDEN, Some(&req.id), &error);
    let challenge = match &state.config.authenticator {
        Some(auth) => auth.insufficient_scope(needed),
        None => return Some(response),
    };
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    Some(response)
}

/// The tool that created task `id`, when the task is `principal`'s own (or, in the 2025-11-25
/// `session` it names, the session's: over HTTP a session owns the legacy tasks its calls create,
/// `Connection::owner`) and some tool declares scopes. `None` otherwise: another owner's task, or
/// none, is left to the method to answer as unknown (a 403 would tell that it exists), and a
/// store failure to the method to report.
async fn task_tool(
    state: &HttpState,
    principal: &Principal,
    session: Option<&str>,
    id: &crate::protocol::task::TaskId,
) -> Option<Arc<crate::tool::RegisteredTool>> {
    let server = &state.server;
    if server.tools.iter().all(|t| t.info.scopes.is_empty()) {
        return None;
    }
    // Read only for the tool's name.
    let record = server.store.get_unchecked(id).await.ok()??;
    let own = record.owner == owner_of(Some(principal))
        || session.is_some_and(|s| {
            record.owner == session_owner(s)
                && state.sessions.get(s, &Some(principal.clone())).is_some()
        });
    if !own {
        return None;
    }
    server.tools.get(record.tool.as_deref()?).cloned()
}

#[allow(clippy::result_large_err)] // as in check_host
pub(super) async fn read_body(
    body: Body,
    (max, deadline): (usize, Duration),
    headers: &HeaderMap,
) -> Result<Bytes, Response> {
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
    let reading = http_body_util::Limited::new(body, max).collect();
    let Ok(read) = tokio::time::timeout(deadline, reading).await else {
        // The client is too slow with its body: say so, and free the connection.
        let mut response = rpc_error_response(
            StatusCode::REQUEST_TIMEOUT,
            None,
            &RpcError::invalid_request(format!(
                "Request Timeout: the body did not arrive within {} ms",
                deadline.as_millis()
            )),
        );
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Err(response);
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(e) => Err(bad_request(format!(
            "Bad Request: reading the body failed: {e}"
        ))),
    }
}

/// `initialize` without per-request `_meta`: opens a legacy session.
pub(super) fn initialize(
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
        Requestor::http(principal.clone()),
        state.closing.child_token(),
    );
    let reply = open_session(&conn.server, &*conn, req);
    let Some(session_id) = conn.session().map(|s| s.id) else {
        conn.close();
        let error = (reply.get("error")).and_then(|e| serde::Deserialize::deserialize(e).ok());
        return json_response(status_of(error.as_ref(), false, false), &reply);
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
pub(super) struct PostSink(mpsc::Sender<Value>);

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

/// Runs a request (`meta`: its `_meta`, read) and answers: with its reply as JSON, or with an SSE
/// stream when something comes before the reply and the client reads SSE.
async fn run_request(
    state: &Arc<HttpState>,
    principal: Option<Principal>,
    session: Option<Arc<HttpSession>>,
    req: jsonrpc::Request,
    meta: Option<&ReadMeta>,
    accept: Accepts,
) -> Response {
    let id = req.id.clone();
    let (tx, mut rx) = mpsc::channel::<Value>(state.config.sse_buffer);
    let stateless_without_meta = session.is_none() && !meta.is_some_and(|m| m.claims_modern);
    let in_session = session.is_some();
    // Where this request's messages go in a session: read before the request is handed over.
    // Only a client that reads SSE can be sent anything on this response.
    let route = (in_session && accept.sse).then(|| {
        let task = (req.method == "tasks/result")
            .then(|| req.params.as_ref()?.str("taskId")?.map(Cow::into_owned))
            .flatten();
        let progress = (meta.and_then(|m| m.facts.as_ref().ok()))
            .and_then(|f| f.progress_token.as_ref())
            .map(Value::to_string);
        (task, progress)
    });
    let conn = match &session {
        Some(s) => {
            s.touch();
            s.conn.clone()
        }
        None => Connection::new(
            state.server.clone(),
            Arc::new(PostSink(tx.clone())),
            Requestor::http(principal.clone()),
            state.closing.child_token(),
        ),
    };
    // Taken as in flight first: a POST that reuses the id of a request in flight is refused
    // before it could open a route under that id, which would take the first one's route away.
    let run = match driver::start_request(&conn, req) {
        Ok(run) => run,
        Err(err) => return rpc_error_response(StatusCode::BAD_REQUEST, Some(&id), &err),
    };
    // In a session, an SSE response is a resumable stream, made now so that the tool can end
    // it (2025-11-25 clients know to resume it; older ones only get the event ids).
    let resumable = session.as_ref().filter(|_| route.is_some()).map(|s| {
        let stream = s.streams.new_post(state.config.sse_replay);
        let attached = stream.attach_new();
        (stream, attached, primes(&s.conn))
    });
    let route_guard = session
        .as_ref()
        .zip(route)
        .map(|(s, (task, progress))| RouteGuard {
            routes: s.routes.clone(),
            route: s.routes.open_post(
                &id,
                task,
                progress,
                tx.clone(),
                (resumable.as_ref())
                    .filter(|(_, _, primes)| *primes)
                    .map(|(stream, _, _)| stream.closer()),
            ),
        });
    drop(tx);
    let (reply_tx, mut reply_rx) = oneshot::channel();
    let replied = (conn.clone(), id.clone());
    let run = run.map(move |reply| {
        let _ = reply_tx.send(reply);
        replied.0.replied(&replied.1);
    });
    state.requests.spawn(ORIGIN.scope(id.clone(), run));
    let cancel = CancelOnDrop {
        conn: conn.clone(),
        id: Some(id.clone()),
    };
    let closed = async {
        match &resumable {
            Some((_, attached, _)) => attached.detach.cancelled().await,
            None => std::future::pending().await,
        }
    };
    // Whatever comes first decides the response: the reply (JSON), or a message before it or
    // the tool ending the stream (SSE).
    let first = tokio::select! {
        biased;
        m = rx.recv(), if accept.sse => match m {
            Some(m) => Some(m),
            // Nothing will be streamed (the sink is gone); wait for the reply.
            None => return finish_json(reply_rx.await, cancel, stateless_without_meta, in_session),
        },
        r = &mut reply_rx => return finish_json(r, cancel, stateless_without_meta, in_session),
        () = closed => None,
    };
    let keepalive = state.server.config.keepalive_interval;
    let (Some(session), Some((stream, mut attached, primes))) = (session, resumable) else {
        let stream = SseState {
            queued: first.into_iter().collect(),
            rx: Some(rx),
            reply: Some(reply_rx),
            cancel: Some(cancel),
        };
        return post_stream(stream, keepalive);
    };
    *attached.source = Source {
        first,
        rx: Some(rx),
        reply: Some(reply_rx),
        cancel: Some(cancel),
        route: route_guard,
        get_tx: None,
    };
    session.streams.insert(&stream);
    let serving = Serving {
        priming: primes.then(|| priming_frame(stream.last_id(), state.config.sse_retry)),
        streams: session.streams.clone(),
        stream,
        attached,
        session,
        window: state.config.sse_resume_window,
        draining: None,
    };
    resumable_stream(serving, keepalive)
}

/// Whether a session's streams start with a priming event, and so may be ended by the server:
/// from protocol version 2025-11-25 on (SEP-1699), whose clients resume them.
fn primes(conn: &Connection) -> bool {
    use super::super::peer::Peer as _;
    conn.session()
        .is_some_and(|s| s.version.as_str() >= "2025-11-25")
}

fn finish_json(
    reply: Result<Option<jsonrpc::Reply>, oneshot::error::RecvError>,
    mut cancel: CancelOnDrop,
    stateless_without_meta: bool,
    in_session: bool,
) -> Response {
    cancel.id = None;
    match reply {
        Ok(Some(reply)) => {
            let error = reply.outcome.as_ref().err();
            let status = status_of(error, stateless_without_meta, in_session);
            reply_response(status, &reply)
        }
        _ => rpc_error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            &RpcError::internal("the request was cancelled (the server is shutting down)"),
        ),
    }
}

// ---- GET / DELETE ----------------------------------------------------------------------------

/// A legacy session's GET: opens its stream, or with `Last-Event-ID` resumes one of its streams
/// (the GET stream or a POST's) after that event.
pub(super) async fn get(
    state: Arc<HttpState>,
    principal: Option<Principal>,
    headers: &HeaderMap,
) -> Response {
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
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(value) => match value.to_str().ok().and_then(EventId::parse) {
            Some(id) => Some(id),
            None => {
                return bad_request(format!(
                    "Bad Request: Last-Event-ID {value:?} is no event id of this server (they read `<stream>-<event>`)"
                ));
            }
        },
    };
    let cap = state.config.sse_replay;
    let stream = match resume {
        Some(last) => match session.streams.find(last.stream) {
            Some(stream) => stream,
            None => return resume_refused(last, &ResumeError::UnknownStream),
        },
        None => session.streams.get_stream(cap, || {
            let (tx, rx) = mpsc::channel(state.config.sse_buffer);
            Source {
                rx: Some(rx),
                get_tx: Some(tx),
                ..Source::default()
            }
        }),
    };
    let attached = match stream.attach(resume.map(|last| last.seq)).await {
        Ok(attached) => attached,
        Err(ResumeError::Busy) if resume.is_none() => {
            return rpc_error_response(
                StatusCode::CONFLICT,
                None,
                &RpcError::invalid_request("Conflict: this session's GET stream is already open"),
            );
        }
        Err(e) => return resume_refused(resume.unwrap_or(stream.last_id()), &e),
    };
    let get = stream.number == GET_STREAM;
    if let Some(tx) = &attached.source.get_tx
        && !session.routes.open_get(tx.clone())
    {
        return rpc_error_response(
            StatusCode::CONFLICT,
            None,
            &RpcError::invalid_request("Conflict: this session's GET stream is already open"),
        );
    }
    session.touch();
    // A new GET stream starts with its priming event; a resumed stream does not (the client
    // has its last id, and one pointing past what it is about to replay would lose that).
    let serving = Serving {
        priming: (get && resume.is_none() && primes(&session.conn))
            .then(|| priming_frame(stream.last_id(), state.config.sse_retry)),
        streams: session.streams.clone(),
        stream,
        attached,
        session,
        window: state.config.sse_resume_window,
        draining: get.then(|| state.draining.clone()),
    };
    resumable_stream(serving, state.server.config.keepalive_interval)
}

/// A `Last-Event-ID` that cannot be resumed: HTTP 400 and `-32600` saying why, with the id in
/// `data.lastEventId` (409 while another response holds the stream).
fn resume_refused(last: EventId, why: &ResumeError) -> Response {
    let status = match why {
        ResumeError::Busy => StatusCode::CONFLICT,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut error =
        RpcError::invalid_request(format!("Cannot resume from Last-Event-ID {last}: {why}"));
    error.data = Some(serde_json::json!({ "lastEventId": last.to_string() }));
    rpc_error_response(status, None, &error)
}

pub(super) fn delete(
    state: Arc<HttpState>,
    principal: Option<Principal>,
    headers: &HeaderMap,
) -> Response {
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
