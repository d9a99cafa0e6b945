//! From a transport's message to a dispatched request: the step every transport shares. A
//! transport owns its loop (reading lines on stdio, channel messages in memory, POST bodies on
//! HTTP) and calls in here; this module registers requests as in flight on the [`Connection`],
//! hands them to `dispatch.rs` with the connection as a [`Peer`], takes them off again however
//! they end, cancels them on `notifications/cancelled`, and hands the client's answers to our own
//! requests back to the connection. Data flows one way: transport -> driver -> dispatch -> (tool,
//! task engine, store); dispatch sees the connection only through [`Peer`].

use super::connection::Connection;
use super::dispatch;
use super::peer::Peer;
use super::session;
use crate::protocol::jsonrpc::{
    self, Message, Notification, Reply, RequestId, RpcError, error_message,
};
use crate::protocol::meta::{MetaCache, ReadMeta};
use crate::tool::Principal;
use futures_util::FutureExt;
use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

/// Handles one message from a transport that answers on the same channel it reads (stdio, in
/// memory): replies go to the connection's sink, requests run concurrently on its tracker.
pub(crate) fn on_message(conn: &Arc<Connection>, message: Result<Message, jsonrpc::Rejected>) {
    match message {
        Err(rejected) => {
            tracing::debug!(error = %rejected.error, "rejected a message");
            if let Some(id) = &rejected.id {
                conn.fail_pending(id, &rejected.error);
            }
            conn.send(error_message(rejected.id.as_ref(), &rejected.error));
        }
        Ok(Message::Request(req)) if req.method == "initialize" => {
            // Answered in order, before anything read after it, so a client that pipelines
            // `initialize` with what follows is served in the session it opened.
            let reply = session::initialize(&conn.server, &**conn, &req);
            conn.send(reply);
        }
        Ok(Message::Request(req)) => {
            let id = req.id.clone();
            let run = match start_request(conn, req, None) {
                Ok(run) => run,
                Err(err) => {
                    conn.send(error_message(Some(&id), &err));
                    return;
                }
            };
            let conn2 = conn.clone();
            // A combinator, not `async move { run.await … }`: an async block keeps the future it
            // captured and the future it awaits in separate fields, which doubles the spawned
            // task (see `start_request` on why its size matters).
            conn.tracker.spawn(run.map(move |reply| {
                if let Some(reply) = reply {
                    conn2.send_reply(reply);
                }
                conn2.replied(&id);
            }));
        }
        Ok(Message::Notification(n)) => on_notification(conn, n),
        Ok(Message::Response(resp)) => conn.on_response(resp),
    }
}

/// Registers a request as in flight and returns the future that dispatches it and yields the
/// reply (`None`: cancelled, nothing is due). `principal`: the request's own, when it
/// authenticated apart from its connection (a POST in an HTTP session); dispatch's authorization
/// step checks it. A request whose id is already in flight is not started: the `-32600` error is
/// returned for the transport to answer where that request's answer belongs (the sink on stdio,
/// the POST's own response on HTTP).
pub(crate) fn start_request(
    conn: &Arc<Connection>,
    mut req: jsonrpc::Request,
    principal: Option<Principal>,
) -> Result<impl Future<Output = Option<Reply>> + Send + 'static, RpcError> {
    let Some(token) = conn.begin(&req.id, principal) else {
        return Err(RpcError::invalid_request(format!(
            "Invalid Request: id {} is already in use by a request in flight",
            req.id
        )));
    };
    let conn = conn.clone();
    // The `_meta` is read here, once for the span (its trace context) and for dispatch.
    let meta = (req.meta.take()).map(|text| MetaCache::read(Cow::Owned(text)));
    // One span per request; dispatch fills in the era, the owner, the tool and the task as it
    // learns them, so one task can be followed across its polls. The client's trace context
    // (`_meta.traceparent`) is recorded here, before the span is first entered, when an
    // OpenTelemetry span can still take the client's span as its parent, and when whether its
    // trace is kept is decided. It is read only when a subscriber may want the span (`info`).
    let context = tracing::level_enabled!(tracing::Level::INFO)
        .then(|| meta.as_deref().and_then(ReadMeta::trace_context))
        .flatten();
    let span = crate::telemetry::trace::request_span(context.as_ref(), |left_out| {
        crate::telemetry::trace::root_span!(
            left_out,
            "request",
            id = %req.id,
            method = %req.method,
            era = tracing::field::Empty,
            owner = tracing::field::Empty,
            tool = tracing::field::Empty,
            task = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
            tracestate = tracing::field::Empty,
        )
    });
    let run = async move {
        let _done = InflightGuard {
            conn: &conn,
            id: req.id.clone(),
        };
        let peer: Arc<dyn Peer> = conn.clone();
        // Boxed, so that the spawned task's cell, which tokio aligns to 128 bytes, stays
        // small: glibc serves every aligned allocation from its bins, and a large one also
        // first merges all its fast-bin chunks back into them, on a heap that many stored tasks
        // leave full of small cold holes. The box itself (dispatch boxes the larger
        // `tools/call`) is an ordinary allocation, which glibc recycles from its per-thread
        // cache. The figures: bench/HISTORY.md, "Spawned request cell kept small".
        Box::pin(dispatch::request(&conn.server, &peer, req, meta, token)).await
    };
    Ok(crate::telemetry::trace::instrument(run, span))
}

/// Handles a notification from the client: `notifications/cancelled` cancels a request in flight;
/// the others need nothing.
pub(crate) fn on_notification(conn: &Connection, n: Notification) {
    match n.method.as_str() {
        "notifications/initialized" => {}
        "notifications/cancelled" => {
            let id = n
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_param);
            match id {
                Some(id) => {
                    if !conn.cancel_request(&id) {
                        tracing::debug!(%id, "cancellation for a request not in flight; ignored");
                    }
                }
                None => {
                    tracing::debug!("notifications/cancelled without a valid requestId; ignored")
                }
            }
        }
        other => tracing::debug!(method = other, "unhandled notification; ignored"),
    }
}

/// Takes a request off the in-flight table when its future ends, however it ends (a transport
/// may drop the future when its client goes away).
struct InflightGuard<'a> {
    conn: &'a Connection,
    id: RequestId,
}

impl Drop for InflightGuard<'_> {
    fn drop(&mut self) {
        self.conn.finished(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::authz::Authorized;
    use crate::server::call;
    use crate::server::inner::ServerInner;
    use tokio_util::sync::CancellationToken;

    /// The size of what a `Result` holds when it is `Ok`.
    trait OkSize {
        const SIZE: usize;
    }

    impl<T, E> OkSize for Result<T, E> {
        const SIZE: usize = size_of::<T>();
    }

    /// The size of the future `start_request` returns (never called).
    fn started_size<R: OkSize>(
        _: impl FnOnce(&'static Arc<Connection>, jsonrpc::Request, Option<Principal>) -> R,
    ) -> usize {
        R::SIZE
    }

    /// The size of the future a function of a request returns (never called).
    fn future_size<Req, F>(
        _: impl FnOnce(&'static ServerInner, &'static Arc<dyn Peer>, Req, CancellationToken) -> F,
    ) -> usize {
        size_of::<F>()
    }

    /// The memory and speed figures rely on these sizes (`start_request`, dispatch's `route`):
    /// the future a transport spawns per request stays small, so that tokio's cell for it
    /// (aligned to 128 bytes) stays at 384 bytes; the dispatch future it boxes stays about 1 KiB
    /// (an ordinary allocation glibc recycles from its per-thread cache); and the large
    /// `tools/call` future stays boxed apart, so the common small methods need not carry its size.
    /// A change that makes one noticeably bigger fails here: raise a bound only knowing what it
    /// costs (measure with `bench/profile.sh`). The sizes are the test build's (unoptimized).
    #[test]
    fn request_futures_stay_small() {
        let started = started_size(start_request);
        let dispatch = future_size(|server, peer, req, cancel| {
            dispatch::request(server, peer, req, None, cancel)
        });
        let tools_call = future_size::<Authorized, _>(call::tools_call);
        println!(
            "request futures: start_request {started} bytes, dispatch::request {dispatch} bytes, call::tools_call {tools_call} bytes"
        );
        assert!(started <= 256, "start_request's future is {started} bytes");
        assert!(
            dispatch <= 1088,
            "dispatch::request's future is {dispatch} bytes"
        );
        assert!(
            tools_call <= 2304,
            "call::tools_call's future is {tools_call} bytes"
        );
    }
}
