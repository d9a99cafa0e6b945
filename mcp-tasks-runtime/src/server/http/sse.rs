//! Server-Sent Events: the SSE response of one POST (messages sent while the request runs, then
//! its reply) and a legacy session's streams, which are resumable (see [`resume`](super::resume)).
//!
//! The framing is written here rather than with axum's `Sse`, which cannot write the empty
//! `data:` line of a priming event.

use super::resume::{self, Attached, EventId, Stream, Streams};
use super::routes::CancelOnDrop;
use super::session::HttpSession;
use crate::protocol::jsonrpc;
use crate::race::{Either, first, unless};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use axum::body::Bytes;
use futures_util::StreamExt;
use std::convert::Infallible;

/// The comment line sent on a stream silent for the keepalive interval; it keeps proxies from
/// closing the stream.
const KEEPALIVE: &[u8] = b": keep-alive\n\n";

/// One `message` event: `data` on one line (JSON has no raw line breaks), with its id if it has
/// one.
fn message_frame(id: Option<EventId>, data: &str) -> Bytes {
    let mut frame = String::with_capacity(data.len() + 40);
    frame.push_str("event: message\n");
    if let Some(id) = id {
        frame.push_str("id: ");
        frame.push_str(&id.to_string());
        frame.push('\n');
    }
    frame.push_str("data: ");
    frame.push_str(data);
    frame.push_str("\n\n");
    Bytes::from(frame)
}

/// A priming event (2025-11-25): an id and an empty `data:` line, with the `retry` a client waits
/// before it reconnects. It tells the client where to resume from before anything else arrives.
pub(super) fn priming_frame(id: EventId, retry: Duration) -> Bytes {
    Bytes::from(format!(
        "id: {id}\nretry: {}\ndata: \n\n",
        retry.as_millis()
    ))
}

/// The response of a stream of frames (`text/event-stream`, `no-cache`), with a keepalive comment
/// whenever it has been silent for `keepalive` (the server's
/// [`keepalive_interval`](crate::ServerConfig::keepalive_interval); `None`: never).
fn sse_response<S>(frames: S, keepalive: Option<Duration>) -> Response
where
    S: futures_util::Stream<Item = Bytes> + Send + 'static,
{
    let frames = Box::pin(frames);
    let body = futures_util::stream::unfold(frames, move |mut frames| async move {
        let frame = match keepalive {
            None => frames.next().await?,
            Some(every) => match tokio::time::timeout(every, frames.next()).await {
                Ok(frame) => frame?,
                Err(_) => Bytes::from_static(KEEPALIVE),
            },
        };
        Some((Ok::<_, Infallible>(frame), frames))
    });
    let mut response = Response::new(axum::body::Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The SSE response of a POST outside a legacy session (a modern request): messages sent while
/// the request runs, then its reply. Not resumable (the 2026-07-28 protocol has no resumption:
/// closing the stream cancels the request).
pub(super) fn post_stream(state: SseState, keepalive: Option<Duration>) -> Response {
    sse_response(
        futures_util::stream::unfold(state, SseState::next),
        keepalive,
    )
}

/// A resumable stream of a legacy session, served by this response until it ends or lets go.
pub(super) fn resumable_stream(serving: Serving, keepalive: Option<Duration>) -> Response {
    sse_response(
        futures_util::stream::unfold(serving, Serving::next),
        keepalive,
    )
}

/// The SSE response of one POST: messages sent while the request runs, then its reply.
pub(super) struct SseState {
    pub(super) queued: Vec<Value>,
    pub(super) rx: Option<mpsc::Receiver<Value>>,
    pub(super) reply: Option<oneshot::Receiver<Option<jsonrpc::Reply>>>,
    pub(super) cancel: Option<CancelOnDrop>,
}

impl SseState {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        if let Some(m) = self.queued.pop() {
            return Some((message_frame(None, &jsonrpc::Wire(&m).to_json()), self));
        }
        let reply = self.reply.as_mut()?;
        let out = match self.rx.as_mut() {
            Some(rx) => match first(rx.recv(), &mut *reply).await {
                Either::Left(Some(m)) => {
                    return Some((message_frame(None, &jsonrpc::Wire(&m).to_json()), self));
                }
                Either::Left(None) => {
                    self.rx = None;
                    reply.await
                }
                Either::Right(r) => r,
            },
            None => reply.await,
        };
        self.reply = None;
        if let Some(mut c) = self.cancel.take() {
            c.id = None;
        }
        match out {
            Ok(Some(reply)) => {
                let text = serde_json::to_string(&reply).unwrap_or_default();
                Some((message_frame(None, &text), self))
            }
            _ => None,
        }
    }
}

/// What a stream's source gives next.
enum Out {
    Message(Value),
    /// The reply to the POST's request (`None`: it ended without one).
    Reply(Option<jsonrpc::Reply>),
    /// Nothing more will come.
    End,
}

/// The next thing from `source`: a message, else the reply once every message before it is out.
async fn next_out(source: &mut resume::Source) -> Out {
    if let Some(first) = source.first.take() {
        return Out::Message(first);
    }
    loop {
        let closed = match (source.rx.as_mut(), source.reply.as_mut()) {
            (Some(rx), Some(reply)) => match first(rx.recv(), reply).await {
                Either::Left(Some(m)) => return Out::Message(m),
                Either::Left(None) => true,
                Either::Right(r) => return Out::Reply(r.ok().flatten()),
            },
            (Some(rx), None) => return rx.recv().await.map_or(Out::End, Out::Message),
            (None, Some(reply)) => return Out::Reply(reply.await.ok().flatten()),
            (None, None) => return Out::End,
        };
        if closed {
            source.rx = None;
        }
    }
}

/// A legacy session's stream (a POST's, or the session's GET stream) while one response serves
/// it: the priming event, the events a resume asked for again, then what the stream sends, each
/// with its id and recorded for a later resume. Ends with the reply (a POST's stream), when told
/// to let go (the tool closed the stream, or a resume took it), or when the session or the server
/// ends; a POST's stream that ends before its reply is parked.
pub(super) struct Serving {
    pub(super) stream: Arc<Stream>,
    pub(super) attached: Attached,
    pub(super) priming: Option<Bytes>,
    pub(super) session: Arc<HttpSession>,
    pub(super) streams: Arc<Streams>,
    /// How long a parked POST stream waits for its client.
    pub(super) window: Duration,
    /// The server is shutting down (ends a GET stream; a POST's ends with its reply).
    pub(super) draining: Option<CancellationToken>,
}

impl Serving {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        if let Some(priming) = self.priming.take() {
            return Some((priming, self));
        }
        if let Some((seq, text)) = self.attached.replay.pop_front() {
            let id = EventId {
                stream: self.stream.number,
                seq,
            };
            return Some((message_frame(Some(id), &text), self));
        }
        if self.stream.finished() {
            return None;
        }
        let draining = async {
            match &self.draining {
                Some(draining) => draining.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let stop = first(
            self.attached.detach.cancelled(),
            first(self.session.conn.closing.cancelled(), draining),
        );
        let out = unless(stop, next_out(&mut self.attached.source)).await?;
        let (text, last) = match out {
            Out::Message(m) => (jsonrpc::Wire(&m).to_json(), false),
            Out::Reply(Some(reply)) => (serde_json::to_string(&reply).unwrap_or_default(), true),
            Out::Reply(None) | Out::End => {
                self.finish();
                return None;
            }
        };
        let id = self.stream.record(Arc::from(text.as_str()), last);
        if last {
            self.finish();
        }
        Some((message_frame(Some(id), &text), self))
    }

    /// The stream has nothing more to send: its request no longer needs cancelling if the
    /// response breaks, and its route closes.
    fn finish(&mut self) {
        let source = &mut *self.attached.source;
        if let Some(cancel) = source.cancel.as_mut() {
            cancel.id = None;
        }
        source.cancel = None;
        source.route = None;
        source.reply = None;
        source.rx = None;
        self.stream.finish();
        if self.stream.number != resume::GET_STREAM {
            self.streams.finished(self.stream.number);
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(tx) = &self.attached.source.get_tx {
            self.session.routes.close_get(tx);
        } else if !self.stream.finished() {
            // The connection went (or was let go) before the reply: the request goes on, and
            // what it sends waits for the client to resume.
            self.stream.park(&self.streams, self.window);
        }
        self.session.touch();
    }
}
