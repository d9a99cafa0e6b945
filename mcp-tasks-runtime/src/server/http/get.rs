//! A legacy session's GET (opens its stream, or resumes one of its streams) and DELETE (ends
//! the session).

use super::guards::{accepts, session_id};
use super::response::{bad_request, method_not_allowed, rpc_error_response, session_not_found};
use super::resume::{EventId, GET_STREAM, ResumeError, Source};
use super::session::primes;
use super::sse::{Serving, priming_frame, resumable_stream};
use super::{HttpState, Principal};
use crate::protocol::jsonrpc::RpcError;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tokio::sync::mpsc;

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
