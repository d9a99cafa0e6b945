//! The JSON-RPC peer: sends requests and matches their responses, answers the server's own
//! requests with the input handler, and fans notifications out to whoever listens. The wire under
//! it is either a duplex of messages (stdio, in-process) or Streamable HTTP (one POST per message).

use crate::error::Error;
use crate::handler::{Answer, DynHandler, InputContext, answer};
use crate::http::{HttpWire, Inbox, Outcome};
use crate::wire::{Tap, WireDirection};
use mcp_tasks_runtime::__internal::race::{Either, first, or_never};
use mcp_tasks_runtime::__internal::{self as jsonrpc, Message, meta};
use mcp_tasks_runtime::protocol::{RequestId, RpcError};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};
use tokio::time::Instant;

/// A notification from the server.
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    pub(crate) method: String,
    pub(crate) params: Value,
}

/// Hands one message to a duplex connection; `false` when it is gone.
pub(crate) type DuplexSend = Box<dyn Fn(Value) -> bool + Send + Sync>;

/// How messages travel.
pub(crate) enum Wire {
    /// Whole messages both ways on one connection (stdio, in-process): responses come back
    /// through [`Peer::on_incoming`]. `None` once closed.
    Duplex(Mutex<Option<DuplexSend>>),
    /// Streamable HTTP.
    Http(Box<HttpWire>),
}

pub(crate) struct Peer {
    wire: Wire,
    handler: Arc<dyn DynHandler>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
    notifications: broadcast::Sender<Notification>,
    closed: AtomicBool,
    /// How long a request may go without an answer (or a sign of life); `None`: for ever.
    timeout: Option<Duration>,
    /// Server-to-client requests the input handler is answering right now.
    answering: AtomicUsize,
    /// Sees every message sent (received ones are seen where the transport reads them).
    tap: Option<Tap>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Peer {
    pub(crate) fn new(
        wire: Wire,
        handler: Arc<dyn DynHandler>,
        timeout: Option<Duration>,
        tap: Option<Tap>,
    ) -> Arc<Peer> {
        let (notifications, _) = broadcast::channel(256);
        Arc::new(Peer {
            wire,
            handler,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            notifications,
            closed: AtomicBool::new(false),
            timeout,
            answering: AtomicUsize::new(0),
            tap,
        })
    }

    /// Numbers this peer's request ids from a random point in `[2^40, 2^41)` on, instead of 1:
    /// for a client that joins a session another client opened, whose ids (from 1) the server
    /// may still have in flight. (Below 2^53: exact in every JSON reader.)
    pub(crate) fn number_ids_apart(&self) {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        let start = (1u64 << 40) + hasher.finish() % (1u64 << 40);
        self.next_id.store(start, Ordering::Relaxed);
    }

    pub(crate) fn http(&self) -> Option<&HttpWire> {
        match &self.wire {
            Wire::Http(h) => Some(h),
            Wire::Duplex(_) => None,
        }
    }

    pub(crate) fn handler(&self) -> &dyn DynHandler {
        &*self.handler
    }

    /// How long a request may go without an answer (`None`: for ever).
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Listens to the server's notifications from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.notifications.subscribe()
    }

    /// Sends a request and waits for its outcome. `Err` is a transport failure, or
    /// [`Error::Timeout`] when the server said nothing about it for the client's request timeout;
    /// a JSON-RPC error from the server is `Ok(Err(..))`.
    ///
    /// The timeout starts again whenever the server shows the request is alive: progress for
    /// the request's `progressToken`, or a question of the server's (while the input handler
    /// answers one, nothing times out). Legacy `tasks/result` is exempt: it waits, by design,
    /// for as long as the task runs (the task's polls, which do time out, notice a server gone
    /// silent).
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Value,
    ) -> Result<Outcome, Error> {
        let Some(limit) = self.timeout.filter(|_| method != "tasks/result") else {
            return self.request_untimed(method, params).await;
        };
        let token = params
            .get("_meta")
            .and_then(|m| m.get(meta::PROGRESS_TOKEN))
            .cloned();
        let mut notes = self.subscribe();
        let mut notes_open = true;
        let request = self.request_untimed(method, params);
        let mut request = std::pin::pin!(request);
        let mut deadline = Instant::now() + limit;
        loop {
            // The deadline before the notifications, which a busy connection may always have.
            let note = or_never(notes_open.then(|| notes.recv()));
            let timer = first(tokio::time::sleep_until(deadline), note);
            match first(&mut request, timer).await {
                Either::Left(outcome) => return outcome,
                Either::Right(Either::Left(())) => {
                    if self.answering.load(Ordering::Acquire) > 0 {
                        deadline = Instant::now() + limit;
                        continue;
                    }
                    // Dropping the request tells the server (`notifications/cancelled`, or the
                    // HTTP response stream closed).
                    return Err(Error::Timeout {
                        method: method.to_owned(),
                        after: limit,
                    });
                }
                Either::Right(Either::Right(note)) => match note {
                    Ok(n)
                        if n.method == "notifications/progress"
                            && token.is_some()
                            && n.params.get(meta::PROGRESS_TOKEN) == token.as_ref() =>
                    {
                        deadline = Instant::now() + limit;
                    }
                    Ok(_) => {}
                    // Missed notifications may have been progress: count them as a sign of life.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        deadline = Instant::now() + limit
                    }
                    Err(broadcast::error::RecvError::Closed) => notes_open = false,
                },
            }
        }
    }

    /// [`request`](Self::request) without the timeout.
    async fn request_untimed(
        self: &Arc<Self>,
        method: &str,
        params: Value,
    ) -> Result<Outcome, Error> {
        let id = self.next_request_id();
        self.request_as(id, method, params).await
    }

    /// A fresh id for a request of ours.
    pub(crate) fn next_request_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) as i64)
    }

    /// A request with this id (from [`next_request_id`](Self::next_request_id)), without the
    /// timeout: for `subscriptions/listen`, whose notifications carry the id and which is answered
    /// only when the subscription ends.
    pub(crate) async fn request_as(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        params: Value,
    ) -> Result<Outcome, Error> {
        let message = jsonrpc::request_message(&id, method, params);
        self.tap_sent(&message);
        match &self.wire {
            Wire::Http(http) => {
                let inbox: Arc<dyn Inbox> = self.clone();
                http.request(&inbox, &id, method, message).await
            }
            Wire::Duplex(send) => {
                if self.closed.load(Ordering::Acquire) {
                    return Err(Error::transport("the connection is closed"));
                }
                let (tx, rx) = oneshot::channel();
                lock(&self.pending).insert(id.clone(), tx);
                if !duplex_send(send, message) {
                    lock(&self.pending).remove(&id);
                    return Err(Error::transport("the connection is closed"));
                }
                let mut guard = PendingGuard {
                    peer: self,
                    id,
                    done: false,
                };
                let outcome = rx
                    .await
                    .map_err(|_| Error::transport("the server closed the connection"));
                guard.done = true;
                outcome
            }
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), Error> {
        let message = jsonrpc::notification_message(method, params);
        self.send_unanswered(message).await
    }

    /// Sends a message that gets no JSON-RPC answer (notification, response).
    async fn send_unanswered(&self, message: Value) -> Result<(), Error> {
        self.tap_sent(&message);
        match &self.wire {
            Wire::Http(http) => http.post_unanswered(message).await,
            Wire::Duplex(send) => {
                if duplex_send(send, message) {
                    Ok(())
                } else {
                    Err(Error::transport("the connection is closed"))
                }
            }
        }
    }

    fn tap_sent(&self, message: &Value) {
        if let Some(tap) = &self.tap {
            tap(WireDirection::Sent, &message.to_string());
        }
    }

    /// Stops sending on a duplex connection (the server sees its input close).
    pub(crate) fn close_duplex(&self) {
        if let Wire::Duplex(send) = &self.wire {
            lock(send).take();
        }
    }

    /// The connection ended: every request still waiting fails.
    pub(crate) fn on_closed(&self) {
        self.closed.store(true, Ordering::Release);
        lock(&self.pending).clear();
    }

    /// One message from the server, from any stream.
    pub(crate) fn on_incoming(self: &Arc<Self>, value: Value) {
        match Message::from_value(value) {
            Ok(Message::Response(resp)) => {
                if let Some(tx) = lock(&self.pending).remove(&resp.id) {
                    let _ = tx.send(resp.outcome);
                } else {
                    tracing::debug!(id = %resp.id, "a response to no request of ours; ignored");
                }
            }
            Ok(Message::Notification(n)) => {
                let _ = self.notifications.send(Notification {
                    method: n.method,
                    params: n.params.unwrap_or(Value::Null),
                });
            }
            Ok(Message::Request(req)) => {
                let peer = self.clone();
                // Requests of ours wait while the handler answers (a person may be typing).
                peer.answering.fetch_add(1, Ordering::AcqRel);
                tokio::spawn(async move {
                    let (id, method) = (req.id.clone(), req.method.clone());
                    let reply = {
                        let _answering = Answering(&peer.answering);
                        peer.serve_request(&method, req.params_with_meta()).await
                    };
                    let message = match reply {
                        Ok(result) => jsonrpc::result_message(&id, result),
                        Err(error) => jsonrpc::error_message(Some(&id), &error),
                    };
                    if let Err(e) = peer.send_unanswered(message).await {
                        tracing::warn!(error = %e, %method, "could not answer the server");
                    }
                });
            }
            Err(rejected) => {
                tracing::warn!(error = %rejected.error, "an unreadable message from the server; ignored");
            }
        }
    }

    /// Answers one server-to-client request (legacy inline, or tagged `related-task`).
    async fn serve_request(&self, method: &str, params: Option<Value>) -> Outcome {
        let params = params.unwrap_or_else(|| json!({}));
        if method == "ping" {
            return Ok(json!({}));
        }
        let related = params
            .get("_meta")
            .and_then(|m| m.get(meta::RELATED_TASK))
            .cloned();
        let context = InputContext {
            task_id: related
                .as_ref()
                .and_then(|r| r.get("taskId"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            key: None,
        };
        let caps = self.handler.capabilities();
        let declared = match method {
            "elicitation/create" => caps.elicitation || caps.elicitation_url,
            "sampling/createMessage" => caps.sampling,
            "roots/list" => caps.roots,
            _ => false,
        };
        if !declared {
            return Err(RpcError::method_not_found(method));
        }
        match answer(&*self.handler, method, params, context).await {
            Answer::Result(mut result) => {
                if let (Some(related), Some(obj)) = (related, result.as_object_mut()) {
                    obj.insert("_meta".into(), json!({ meta::RELATED_TASK: related }));
                }
                Ok(result)
            }
            Answer::Declined => Err(RpcError::new(
                -1,
                format!("the user declined the {method} request"),
            )),
            Answer::Unknown => Err(RpcError::method_not_found(method)),
        }
    }
}

/// Counts one server request as being answered until dropped.
struct Answering<'a>(&'a AtomicUsize);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn duplex_send(send: &Mutex<Option<DuplexSend>>, message: Value) -> bool {
    lock(send).as_ref().is_some_and(|send| send(message))
}

impl Inbox for Peer {
    fn deliver(self: Arc<Self>, message: Value) {
        self.on_incoming(message);
    }
}

/// Forgets a request when its future ends; when the caller gave up before the answer came, the
/// server is told (`notifications/cancelled`) so it can stop the work. (Over HTTP, dropping the
/// response stream says the same.)
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: RequestId,
    done: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let waiting = lock(&self.peer.pending).remove(&self.id).is_some();
        if waiting
            && !self.done
            && let Wire::Duplex(send) = &self.peer.wire
        {
            // The client's own ids are numbers, never beyond 64 bits.
            let id = self.id.to_value();
            let params = json!({ "requestId": id, "reason": "the client stopped waiting" });
            let message = jsonrpc::notification_message("notifications/cancelled", params);
            self.peer.tap_sent(&message);
            duplex_send(send, message);
        }
    }
}
