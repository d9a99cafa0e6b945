//! Server-Sent Events framing: the SSE response of one POST (messages sent while the request runs,
//! then its reply) and a legacy session's standalone GET stream.

use super::*;

use axum::response::sse::{Event, KeepAlive, Sse};
use std::convert::Infallible;

/// One JSON-RPC message as an SSE event (`event: message`, the message on one `data:` line).
fn sse_event(message: &Value) -> Event {
    Event::default()
        .event("message")
        .data(jsonrpc::Wire(message).to_json())
}

/// The reply to the request as an SSE event, written from its parts.
fn sse_reply(reply: &jsonrpc::Reply) -> Event {
    Event::default()
        .event("message")
        .data(serde_json::to_string(reply).unwrap_or_default())
}

/// The SSE response of one POST (axum's [`Sse`]: `text/event-stream`, `no-cache`), with a
/// `: keep-alive` comment line whenever it has been silent for `keepalive` (the server's
/// [`keepalive_interval`](crate::ServerConfig::keepalive_interval); `None`: never).
pub(super) fn post_stream(state: SseState, keepalive: Option<Duration>) -> Response {
    kept(
        Sse::new(futures_util::stream::unfold(state, SseState::next)),
        keepalive,
    )
}

/// A legacy session's standalone GET stream, with a `: keep-alive` comment line whenever it has
/// been silent for `keepalive`, as [`post_stream`].
pub(super) fn get_stream(state: GetStream, keepalive: Option<Duration>) -> Response {
    kept(
        Sse::new(futures_util::stream::unfold(state, GetStream::next)),
        keepalive,
    )
}

/// `sse` with its keep-alive comments, which keep proxies from closing a silent stream.
fn kept<S>(sse: Sse<S>, keepalive: Option<Duration>) -> Response
where
    S: futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    match keepalive {
        Some(every) => sse
            .keep_alive(KeepAlive::new().interval(every).text("keep-alive"))
            .into_response(),
        None => sse.into_response(),
    }
}

/// The SSE response of one POST: messages sent while the request runs, then its reply.
pub(super) struct SseState {
    pub(super) queued: Vec<Value>,
    pub(super) rx: Option<mpsc::Receiver<Value>>,
    pub(super) reply: Option<oneshot::Receiver<Option<jsonrpc::Reply>>>,
    pub(super) cancel: Option<CancelOnDrop>,
    pub(super) _route: Option<RouteGuard>,
    pub(super) _session: Option<Arc<HttpSession>>,
}

impl SseState {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        if let Some(m) = self.queued.pop() {
            return Some((Ok(sse_event(&m)), self));
        }
        let reply = self.reply.as_mut()?;
        let out = match self.rx.as_mut() {
            Some(rx) => tokio::select! {
                biased;
                m = rx.recv() => match m {
                    Some(m) => return Some((Ok(sse_event(&m)), self)),
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
            Ok(Some(reply)) => Some((Ok(sse_reply(&reply)), self)),
            _ => None,
        }
    }
}

/// A session's standalone stream: what the server sends on its own (the keep-alive comments are
/// [`get_stream`]'s). Ends when the session ends or the server shuts down.
pub(super) struct GetStream {
    pub(super) rx: mpsc::Receiver<Value>,
    pub(super) tx: mpsc::Sender<Value>,
    pub(super) session: Arc<HttpSession>,
    pub(super) draining: CancellationToken,
}

impl GetStream {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        let closing = self.session.conn.closing.clone();
        tokio::select! {
            m = self.rx.recv() => m.map(|m| (Ok(sse_event(&m)), self)),
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
