//! JSON-RPC replies and errors as HTTP responses: the body, its `Content-Type`, and the status a
//! reply maps to ([`status_of`]), with the `WWW-Authenticate` challenge of a request refused for
//! want of a scope ([`reply_response`]).

use super::super::auth::Authenticator;
use super::super::authz;
use crate::protocol::jsonrpc::{self, RequestId, RpcError, error_message};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    text_response(status, jsonrpc::Wire(body).to_json())
}

/// The response to a request's reply, written from its parts (its result never becomes a tree
/// here), with its status ([`status_of`]; `stateless_without_meta`, `in_session` as there). A
/// request the authorization step refused for want of a scope (`authz.rs`) is also given the
/// `authenticator`'s `WWW-Authenticate` challenge naming the scopes, so that the client can ask
/// for them and retry (step-up authorization).
pub(super) fn reply_response(
    reply: &jsonrpc::Reply,
    stateless_without_meta: bool,
    in_session: bool,
    authenticator: Option<&dyn Authenticator>,
) -> Response {
    let error = reply.outcome.as_ref().err();
    let status = status_of(error, stateless_without_meta, in_session);
    let mut response = text_response(status, serde_json::to_string(reply).unwrap_or_default());
    let refused = error.and_then(authz::refused_scopes);
    if let (Some(scopes), Some(auth)) = (refused, authenticator)
        && let Ok(v) = HeaderValue::from_str(&auth.insufficient_scope(&scopes))
    {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    response
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
/// without `task`, say) is HTTP 200. A request refused for want of a scope is a 403 in both
/// eras.
pub(super) fn status_of(
    error: Option<&RpcError>,
    stateless_without_meta: bool,
    in_session: bool,
) -> StatusCode {
    let Some(error) = error else {
        return StatusCode::OK;
    };
    if authz::refused_scopes(error).is_some() {
        return StatusCode::FORBIDDEN;
    }
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
