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
//! Requests go through the same `driver` and `dispatch` as stdio; this module only moves bytes,
//! checks headers, finds the session, and maps JSON-RPC errors to HTTP statuses. By concern:
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the shared endpoint state, the router, serving and graceful shutdown, the first step of every request (host check, authentication, method) |
//! | `accept.rs` | the connections: the accept loop, the header deadline, the connection cap |
//! | `config.rs` | [`HttpConfig`] and the host policy |
//! | `guards.rs` | the checks a request passes first: `Host`/`Origin`, routing headers against the body, `Accept` |
//! | `post.rs` | POST: requests (run through the driver and dispatch), notifications, answers, `initialize` |
//! | `get.rs` | a legacy session's GET (its stream, resumption) and DELETE |
//! | `response.rs` | JSON-RPC replies and errors as HTTP responses: statuses, the 403 scope challenge |
//! | `ops.rs` | `/healthz`, `/readyz`, `/metrics`, and the OAuth Protected Resource Metadata |
//! | `resume.rs` | resumable SSE streams of legacy sessions: event ids, replay after `Last-Event-ID`, parked POST streams |
//! | `routes.rs` | where a legacy session's server-to-client messages go: a POST's stream, the GET stream, or a backlog |
//! | `sse.rs` | SSE framing, written here (axum's `Sse` cannot write a priming event): a POST's stream, a session's GET stream |
//! | `session.rs` | legacy sessions: one connection per `Mcp-Session-Id`, with its routes and streams |

mod accept;
mod config;
mod get;
mod guards;
mod ops;
mod post;
mod response;
mod resume;
mod routes;
mod session;
mod sse;

use super::auth::{Authenticator, Principal};
use super::inner::ServerInner;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::{LEGACY_VERSIONS, MODERN_VERSIONS, meta};
use crate::race::{Either, first};
use crate::tracker::TaskTracker;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use session::Sessions;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use config::HttpConfig;
use config::*;
use get::{delete, get};
use guards::*;
use post::post;
use response::*;

/// Everything the endpoint shares between requests.
struct HttpState {
    server: Arc<ServerInner>,
    config: HttpConfig,
    sessions: Sessions,
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
            draining: CancellationToken::new(),
            closing: CancellationToken::new(),
            requests: TaskTracker::new(),
            sweeper: OnceLock::new(),
        })
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
    let metadata = (state.config.authenticator.as_ref()).and_then(|a| a.resource_metadata());
    let router = Router::new().route(&path, axum::routing::any(handle).with_state(state));
    match metadata {
        Some(metadata) => router.merge(ops::resource_metadata_routes(&path, metadata)),
        None => router,
    }
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
    // A worker serves no MCP client: only the ops endpoints.
    let worker = state.server.config.role == crate::server::config::Role::Worker;
    let mut app = match worker {
        true => Router::new(),
        false => router_for(state.clone()),
    };
    let ops_beside = worker
        || (state.config.ops_address.is_none()
            && !ops::PATHS.contains(&state.config.path.as_str()));
    if ops_beside {
        app = app.merge(ops::routes(state.clone()));
    }
    tracing::info!(address = %local, path = %state.config.path, "serving MCP over Streamable HTTP");
    if let Some(address) = state.config.ops_address {
        let ops = tokio::net::TcpListener::bind(address).await?;
        tracing::info!(address = %ops.local_addr()?, "serving /healthz and /readyz");
        let (routes, closing) = (ops::routes(state.clone()), state.closing.clone());
        tokio::spawn(async move {
            let stopped = async move { closing.cancelled().await };
            let _ = axum::serve(ops, routes)
                .with_graceful_shutdown(stopped)
                .await;
        });
    }
    let draining = state.clone();
    let serving = accept::serve(listener, app, &state.config, async move {
        shutdown.await;
        tracing::info!("shutdown signal; finishing in-flight requests");
        draining.drain(grace);
    });
    // The graceful shutdown waits for open responses; `closing` ends them after the grace, so
    // this bound is only a guard against a stuck connection.
    let stuck = async {
        state.closing.cancelled().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    if let Either::Right(()) = first(serving, stuck).await {
        tracing::warn!("connections still open after the shutdown grace; stopping anyway");
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
                    rejected.status,
                    None,
                    &RpcError::invalid_request(rejected.message),
                );
                if !rejected.challenge.is_empty()
                    && let Ok(v) = HeaderValue::from_str(&rejected.challenge)
                {
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
                }
                if let Some(after) = rejected.retry_after {
                    // Whole seconds, rounded up: a client never comes back too early.
                    let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
                }
                return response;
            }
        },
    };
    match parts.method {
        Method::POST => post(state, principal, parts.headers, body).await,
        Method::GET => get(state, principal, &parts.headers).await,
        Method::DELETE => delete(state, principal, &parts.headers),
        _ => method_not_allowed("use POST (or GET / DELETE with a legacy session)"),
    }
}
