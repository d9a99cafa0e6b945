//! A POST: a modern request, a legacy request in a session, `initialize` (opens a session), a
//! notification, or the answer to one of a session's server-to-client requests. Its headers and
//! body are checked here; the request itself runs through the driver and dispatch, as on every
//! transport (authorization included: `authz.rs`), and its reply comes back as JSON or SSE.

use super::super::auth::Authenticator;
use super::super::connection::{Connection, Requestor, Sink};
use super::super::driver;
use super::super::peer::Peer as _;
use super::super::session::{already_initialized, initialize as open_session};
use super::guards::{
    Accepts, SESSION_HEADER, accepts, check_param_headers, check_routing_headers, session_id,
};
use super::response::{
    bad_request, json_response, reply_response, rpc_error_response, session_not_found, status_of,
};
use super::resume::Source;
use super::routes::{CancelOnDrop, ORIGIN, RouteGuard, Routes, SessionSink};
use super::session::{HttpSession, primes};
use super::sse::{Serving, SseState, post_stream, priming_frame, resumable_stream};
use super::{HttpState, Principal};
use crate::protocol::Params;
use crate::protocol::jsonrpc::{self, Message, Notification, RpcError};
use crate::protocol::meta::{MetaCache, ReadMeta};
use crate::race::{self, Either};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

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
    // Only a client that reads SSE can be sent anything on this response. (A `tasks/result`
    // takes its task's messages only once dispatch serves it, authorized: `Peer::follow_task`.)
    let route = (in_session && accept.sse).then(|| {
        (meta.and_then(|m| m.facts.as_ref().ok()))
            .and_then(|f| f.progress_token.as_ref())
            .map(Value::to_string)
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
    // In a session, the request's own principal (its token may grant other scopes than the
    // one that opened the session) is what dispatch's authorization step checks.
    let own = session.as_ref().and(principal);
    let run = match driver::start_request(&conn, req, own) {
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
    let route_guard = session.as_ref().zip(route).map(|(s, progress)| RouteGuard {
        routes: s.routes.clone(),
        route: s.routes.open_post(
            &id,
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
    let answer = Answer {
        stateless_without_meta,
        in_session,
        authenticator: state.config.authenticator.as_deref(),
    };
    let message = race::or_never(accept.sse.then(|| rx.recv()));
    let first = match race::first(message, race::first(&mut reply_rx, closed)).await {
        Either::Left(Some(m)) => Some(m),
        // Nothing will be streamed (the sink is gone); wait for the reply.
        Either::Left(None) => return answer.json(reply_rx.await, cancel),
        Either::Right(Either::Left(r)) => return answer.json(r, cancel),
        Either::Right(Either::Right(())) => None,
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

/// How a request's reply becomes a JSON response ([`reply_response`]).
struct Answer<'a> {
    stateless_without_meta: bool,
    in_session: bool,
    authenticator: Option<&'a dyn Authenticator>,
}

impl Answer<'_> {
    /// The reply as a JSON response (a 503 when the request ended without one).
    fn json(
        &self,
        reply: Result<Option<jsonrpc::Reply>, oneshot::error::RecvError>,
        mut cancel: CancelOnDrop,
    ) -> Response {
        cancel.id = None;
        match reply {
            Ok(Some(reply)) => reply_response(
                &reply,
                self.stateless_without_meta,
                self.in_session,
                self.authenticator,
            ),
            _ => rpc_error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                &RpcError::internal("the request was cancelled (the server is shutting down)"),
            ),
        }
    }
}
