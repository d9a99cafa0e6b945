//! Where what a legacy (2025-11-25) session's server sends on its own goes: the routing of
//! each outgoing message to the stream the client is reading (a POST's SSE response, the GET
//! stream, or a backlog), and the guards a POST's response holds while it is open.

use super::super::connection::{Connection, Sink};
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::jsonrpc::RpcError;
use crate::protocol::meta;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// The client request whose handling is running (set around each legacy POST's dispatch):
    /// a server-to-client request or notification sent from inside it belongs on its stream.
    pub(super) static ORIGIN: RequestId;
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The streams a legacy client is reading, and where each outgoing message goes.
#[derive(Debug)]
pub(super) struct Routes {
    inner: Mutex<RoutesInner>,
    /// How many server-to-client requests may wait in the backlog.
    max_backlog: usize,
}

#[derive(Debug, Default)]
struct RoutesInner {
    /// The session's standalone stream (GET).
    get: Option<Sender<Value>>,
    /// The SSE responses of POSTs in flight, by request id.
    posts: HashMap<RequestId, Post>,
    /// Open `tasks/result` POSTs, by task id.
    task_results: HashMap<String, Vec<RequestId>>,
    /// Progress tokens of requests in flight.
    progress: HashMap<String, RequestId>,
    /// Server-to-client requests no stream could take yet (with their related task).
    backlog: VecDeque<(Option<String>, Value)>,
}

/// The SSE response of a POST in flight.
struct Post {
    tx: Sender<Value>,
    /// Ends its resumable stream's current response, when the tool may close it
    /// ([`Routes::close_stream`]).
    close: Option<Weak<Mutex<CancellationToken>>>,
    /// The task it waits on (`tasks/result`, [`Routes::follow_task`]).
    task: Option<String>,
}

/// What a POST registered, removed again when its response ends.
#[derive(Debug, Default)]
pub(super) struct PostRoute {
    pub(super) id: Option<RequestId>,
    pub(super) progress: Option<String>,
}

/// Offers a message to one stream: `true` when it took it. A stream whose buffer is full (its
/// client reads too slowly) does not, and the message goes elsewhere.
fn offer(tx: &Sender<Value>, msg: &Value) -> bool {
    match tx.try_send(msg.clone()) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) => {
            tracing::debug!("an SSE stream's buffer is full; trying another route");
            false
        }
        Err(TrySendError::Closed(_)) => false,
    }
}

impl std::fmt::Debug for Post {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Post")
            .field("resumable", &self.close.is_some())
            .finish()
    }
}

impl Routes {
    /// Routes with a backlog of at most `max_backlog` requests.
    pub(super) fn new(max_backlog: usize) -> Self {
        Routes {
            inner: Mutex::default(),
            max_backlog,
        }
    }

    /// Sends one message to the stream it belongs on: the open `tasks/result` of its related task,
    /// the request that carries its progress token, the request it was sent from, or the
    /// session's GET stream. A request no stream can take waits in the backlog, and one the full
    /// backlog cannot take is refused (`-32010`), so that its sender fails at once instead of
    /// waiting for an answer that cannot come; a notification no stream can take is dropped.
    fn route(&self, msg: Value) -> Result<(), RpcError> {
        let related = msg
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::RELATED_TASK))
            .and_then(|r| r.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let progress = (msg.get("method").and_then(Value::as_str)
            == Some("notifications/progress"))
        .then(|| msg.get("params").and_then(|p| p.get(meta::PROGRESS_TOKEN)))
        .flatten()
        .map(Value::to_string);
        let origin = ORIGIN.try_with(Clone::clone).ok();
        let mut r = lock(&self.inner);
        let mut candidates: Vec<RequestId> = Vec::new();
        if let Some(ids) = related.as_ref().and_then(|t| r.task_results.get(t)) {
            candidates.extend(ids.iter().rev().cloned());
        }
        if let Some(id) = progress.as_ref().and_then(|t| r.progress.get(t)) {
            candidates.push(id.clone());
        }
        candidates.extend(origin);
        for id in candidates {
            if let Some(post) = r.posts.get(&id)
                && offer(&post.tx, &msg)
            {
                return Ok(());
            }
        }
        if let Some(tx) = &r.get {
            if offer(tx, &msg) {
                return Ok(());
            }
            if tx.is_closed() {
                r.get = None;
            }
        }
        let is_request = msg.get("id").is_some() && msg.get("method").is_some();
        if is_request {
            if r.backlog.len() >= self.max_backlog {
                tracing::warn!(
                    max = self.max_backlog,
                    "a session's backlog is full; a server-to-client request was refused"
                );
                return Err(RpcError::limit_reached(
                    "session_backlog",
                    self.max_backlog,
                    "this session already has as many requests waiting for the client to open a stream as it may",
                ));
            }
            r.backlog.push_back((related, msg));
        } else {
            tracing::debug!("no stream can take a notification now; dropped");
        }
        Ok(())
    }

    /// Registers the SSE stream of a POST in flight (`close`: ends its resumable stream's
    /// response, when the tool may).
    pub(super) fn open_post(
        &self,
        id: &RequestId,
        progress: Option<String>,
        tx: Sender<Value>,
        close: Option<Weak<Mutex<CancellationToken>>>,
    ) -> PostRoute {
        let mut r = lock(&self.inner);
        if let Some(token) = &progress {
            r.progress.insert(token.clone(), id.clone());
        }
        let task = None;
        r.posts.insert(id.clone(), Post { tx, close, task });
        PostRoute {
            id: Some(id.clone()),
            progress,
        }
    }

    /// The POST `id` waits on `task` (a `tasks/result` that dispatch serves, so authorized): the
    /// task's requests go on its stream, those that found no stream yet at once. Nothing when the
    /// POST has no open stream.
    pub(super) fn follow_task(&self, id: &RequestId, task: &str) {
        let mut r = lock(&self.inner);
        let Some(post) = r.posts.get_mut(id) else {
            return;
        };
        post.task = Some(task.to_owned());
        let tx = post.tx.clone();
        // Requests of this task that found no stream wait for exactly this one.
        let backlog = std::mem::take(&mut r.backlog);
        for (related, msg) in backlog {
            if related.as_deref() != Some(task) || !offer(&tx, &msg) {
                r.backlog.push_back((related, msg));
            }
        }
        r.task_results
            .entry(task.to_owned())
            .or_default()
            .push(id.clone());
    }

    pub(super) fn close_post(&self, route: &PostRoute) {
        let Some(id) = &route.id else { return };
        let mut r = lock(&self.inner);
        let task = r.posts.remove(id).and_then(|post| post.task);
        if let Some(task) = &task
            && let Some(ids) = r.task_results.get_mut(task)
        {
            ids.retain(|i| i != id);
            if ids.is_empty() {
                r.task_results.remove(task);
            }
        }
        if let Some(token) = &route.progress
            && r.progress.get(token) == Some(id)
        {
            r.progress.remove(token);
        }
    }

    /// Ends the response stream of the request whose handling is running (not the request: the
    /// client resumes the stream with `Last-Event-ID`); `false` when it has no resumable stream.
    pub(super) fn close_stream(&self) -> bool {
        let Ok(origin) = ORIGIN.try_with(Clone::clone) else {
            return false;
        };
        let close = lock(&self.inner)
            .posts
            .get(&origin)
            .and_then(|post| post.close.as_ref())
            .and_then(Weak::upgrade);
        close.map(|close| lock(&close).cancel()).is_some()
    }

    /// Opens the session's GET stream; `false` when one is already open.
    pub(super) fn open_get(&self, tx: Sender<Value>) -> bool {
        let mut r = lock(&self.inner);
        if r.get.as_ref().is_some_and(|g| !g.is_closed()) {
            return false;
        }
        for (related, msg) in std::mem::take(&mut r.backlog) {
            if !offer(&tx, &msg) {
                r.backlog.push_back((related, msg));
            }
        }
        r.get = Some(tx);
        true
    }

    pub(super) fn close_get(&self, tx: &Sender<Value>) {
        let mut r = lock(&self.inner);
        if r.get.as_ref().is_some_and(|g| g.same_channel(tx)) {
            r.get = None;
        }
    }

    pub(super) fn has_get(&self) -> bool {
        lock(&self.inner)
            .get
            .as_ref()
            .is_some_and(|g| !g.is_closed())
    }
}

/// The connection's sink for a legacy session.
#[derive(Debug)]
pub(super) struct SessionSink(pub(super) Arc<Routes>);

impl Sink for SessionSink {
    fn send(&self, message: Value) -> bool {
        self.0.route(message).is_ok()
    }

    fn send_request(&self, message: Value) -> Result<(), RpcError> {
        self.0.route(message)
    }

    fn close_stream(&self) -> bool {
        self.0.close_stream()
    }

    fn follow_task(&self, request: &RequestId, task: &str) {
        self.0.follow_task(request, task);
    }
}

/// Cancels a request whose client went away before its answer (closing the response = cancel).
pub(super) struct CancelOnDrop {
    pub(super) conn: Arc<Connection>,
    pub(super) id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && self.conn.cancel_request(&id)
        {
            tracing::debug!(%id, "the client closed the response; request cancelled");
        }
    }
}

/// Unregisters a legacy POST's stream when its response ends.
pub(super) struct RouteGuard {
    pub(super) routes: Arc<Routes>,
    pub(super) route: PostRoute,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.close_post(&self.route);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::sync::mpsc;

    fn request(n: u64) -> Value {
        json!({ "jsonrpc": "2.0", "id": format!("r{n}"), "method": "elicitation/create", "params": {} })
    }

    /// An SSE stream's buffer is bounded: a request that finds it full waits in the backlog,
    /// one the full backlog cannot take is refused with `-32010`, a notification is dropped,
    /// and nothing already queued is lost.
    #[test]
    fn a_full_stream_buffer_and_a_full_backlog_lose_nothing_already_queued() {
        let routes = Routes::new(1);
        let (tx, mut rx) = mpsc::channel(1);
        assert!(routes.open_get(tx.clone()));
        routes.route(request(1)).unwrap();
        routes.route(request(2)).unwrap();
        let refused = routes.route(request(3)).unwrap_err();
        assert_eq!(refused.code, RpcError::LIMIT_REACHED);
        assert_eq!(refused.data.as_ref().unwrap()["limit"], "session_backlog");
        routes
            .route(json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": {} }))
            .unwrap();
        assert_eq!(rx.try_recv().unwrap()["id"], "r1");
        assert!(rx.try_recv().is_err());

        routes.close_get(&tx);
        let (tx2, mut rx2) = mpsc::channel(4);
        assert!(routes.open_get(tx2));
        assert_eq!(rx2.try_recv().unwrap()["id"], "r2");
        assert!(rx2.try_recv().is_err());
    }
}
