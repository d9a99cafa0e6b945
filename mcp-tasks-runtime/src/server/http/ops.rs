//! The operations endpoints beside the MCP endpoint, for a load balancer or an orchestrator:
//! `GET /healthz` (the process serves HTTP), `GET /readyz` (the task store answers, and the
//! server is not shutting down) and, with a Prometheus recorder (feature `prometheus`),
//! `GET /metrics`. They live on the MCP listener, or on a listener of their own
//! ([`HttpConfig::ops_address`](super::HttpConfig::ops_address)).
//!
//! Beside the MCP endpoint (never on the operations listener), an authenticator that publishes
//! OAuth Protected Resource Metadata (RFC 9728) has it served at
//! `/.well-known/oauth-protected-resource` and at that path followed by the endpoint's path.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::HttpState;
use crate::protocol::task::TaskId;

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(1);

/// The id `/readyz` reads. Reading it changes nothing, whether a task has it or not.
const PROBE: &str = "mcp-tasks:readiness-probe";

/// The paths served here: beside an MCP endpoint at one of them, they are left out.
pub(super) const PATHS: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// `/healthz`, `/readyz`, and `/metrics` when the configuration has a recorder.
pub(super) fn routes(state: Arc<HttpState>) -> Router {
    let routes = Router::new()
        .route("/healthz", axum::routing::get(healthz))
        .route("/readyz", axum::routing::get(readyz));
    #[cfg(feature = "prometheus")]
    let routes = match state.config.metrics.clone() {
        Some(metrics) => routes.route(
            "/metrics",
            axum::routing::get(move || async move {
                (
                    [(
                        header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    metrics.render(),
                )
                    .into_response()
            }),
        ),
        None => routes,
    };
    routes.with_state(state)
}

/// Alive: the process accepts connections and answers.
async fn healthz() -> Response {
    reply(StatusCode::OK, json!({ "status": "alive" }))
}

/// Ready to serve MCP requests: `200 {"status":"ready"}` when the task store answers a read
/// within a second; `503` with `{"status":"unavailable","reason":...}` when it fails or does not
/// answer, and `{"status":"draining"}` once shutdown (or its drain period) has started.
async fn readyz(State(state): State<Arc<HttpState>>) -> Response {
    if state.draining.is_cancelled() || state.server.engine().is_draining() {
        return reply(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({ "status": "draining" }),
        );
    }
    let probe = TaskId::new(PROBE);
    let read = tokio::time::timeout(READY_TIMEOUT, state.server.store.get_unchecked(&probe));
    let reason = match read.await {
        Ok(Ok(_)) => return reply(StatusCode::OK, json!({ "status": "ready" })),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!(
            "the task store did not answer within {} ms",
            READY_TIMEOUT.as_millis()
        ),
    };
    reply(
        StatusCode::SERVICE_UNAVAILABLE,
        json!({ "status": "unavailable", "reason": reason }),
    )
}

fn reply(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// Where RFC 9728 metadata lives: the well-known prefix, alone and followed by the endpoint's
/// path (RFC 9728 section 3.1: the resource `https://host/mcp` publishes at
/// `https://host/.well-known/oauth-protected-resource/mcp`).
pub(super) const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource";

/// `GET` of the metadata at both paths: public (no authentication), readable from a browser.
pub(super) fn resource_metadata_routes(path: &str, metadata: serde_json::Value) -> Router {
    let body = metadata.to_string();
    let serve = move || {
        let body = body.clone();
        async move {
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "max-age=300"),
                    (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                ],
                body,
            )
                .into_response()
        }
    };
    let suffixed = format!("{RESOURCE_METADATA}{}", path.trim_end_matches('/'));
    let router = Router::new().route(RESOURCE_METADATA, axum::routing::get(serve.clone()));
    if suffixed == RESOURCE_METADATA {
        router
    } else {
        router.route(&suffixed, axum::routing::get(serve))
    }
}
