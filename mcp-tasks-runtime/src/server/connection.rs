//! One client connection: its messages, its legacy session, its in-flight requests, and the
//! requests this server sends to the client.

use super::ServerInner;
use super::dispatch;
use super::era::ClientView;
use super::era::Era;
use crate::protocol::jsonrpc::{self, Message, RequestId, RpcError, error_message};
use crate::protocol::task::Owner;
use crate::task::engine::ClientChannel;
use crate::transport::Outbound;
use crate::transport::stdio::{Incoming, LineReader, spawn_writer};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The legacy session opened by `initialize` on this connection.
#[derive(Debug, Clone)]
pub(crate) struct LegacySession {
    pub(crate) version: String,
    pub(crate) client: ClientView,
    /// Random id: the owner of this session's tasks.
    pub(crate) id: String,
}

/// A client connection. Requests on it are handled concurrently.
#[derive(Debug)]
pub struct Connection {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) outbound: Outbound,
    pub(crate) session: Mutex<Option<LegacySession>>,
    inflight: Mutex<HashMap<RequestId, CancellationToken>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
    tracker: TaskTracker,
    closing: CancellationToken,
    /// Who owns modern-era tasks created on this connection (no authentication on stdio: the
    /// connection itself).
    owner: Owner,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Connection {
    pub(crate) fn new(server: Arc<ServerInner>, outbound: Outbound) -> Arc<Self> {
        Arc::new(Connection {
            server,
            outbound,
            session: Mutex::new(None),
            inflight: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            tracker: TaskTracker::new(),
            closing: CancellationToken::new(),
            owner: Owner::new(format!(
                "connection:{}",
                crate::protocol::task::TaskId::generate().as_str()
            )),
        })
    }

    pub(crate) fn session(&self) -> Option<LegacySession> {
        lock(&self.session).clone()
    }

    pub(crate) fn set_session(&self, session: LegacySession) {
        *lock(&self.session) = Some(session);
    }

    /// The owner of tasks a request in this era creates or touches: the legacy session for
    /// 2025-11-25 requests, the connection's principal for modern ones.
    pub(crate) fn owner_for(&self, era: &Era) -> Owner {
        match (era, self.session()) {
            (Era::Legacy { .. }, Some(session)) => Owner::new(format!("session:{}", session.id)),
            _ => self.owner.clone(),
        }
    }

    /// This connection as the engine's way back to a legacy client.
    pub(crate) fn channel(self: &Arc<Self>) -> Arc<dyn ClientChannel> {
        Arc::new(SessionChannel(Arc::downgrade(self)))
    }

    /// Sends a message to the client.
    pub(crate) fn send(&self, message: Value) -> bool {
        self.outbound.send(message)
    }

    /// Sends a server-to-client request and waits for the client's answer.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = RequestId::String(format!(
            "mcp-tasks-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        ));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        if !self.send(jsonrpc::request_message(&id, method, params)) {
            lock(&self.pending).remove(&id);
            return Err(RpcError::internal("the client connection is closed"));
        }
        let guard = PendingGuard {
            conn: self,
            id: id.clone(),
        };
        let out = tokio::select! {
            r = rx => r.unwrap_or_else(|_| Err(RpcError::internal("the client connection is closed"))),
            _ = self.closing.cancelled() => Err(RpcError::internal("the client connection is closed")),
        };
        drop(guard);
        out
    }

    /// Handles one line of input.
    fn on_line(self: &Arc<Self>, line: String) {
        match Message::parse(&line) {
            Err(rejected) => {
                tracing::debug!(error = %rejected.error, "rejected a message");
                self.send(error_message(rejected.id.as_ref(), &rejected.error));
            }
            Ok(Message::Request(req)) if req.method == "initialize" => {
                // Answered in order, before anything read after it, so a client that pipelines
                // `initialize` with what follows is served in the session it opened.
                let reply = dispatch::initialize(self, &req);
                self.send(reply);
            }
            Ok(Message::Request(req)) => {
                let token = self.closing.child_token();
                {
                    let mut inflight = lock(&self.inflight);
                    if inflight.contains_key(&req.id) {
                        drop(inflight);
                        let err = RpcError::invalid_request(format!(
                            "Invalid Request: id {} is already in use by a request in flight",
                            req.id
                        ));
                        self.send(error_message(Some(&req.id), &err));
                        return;
                    }
                    inflight.insert(req.id.clone(), token.clone());
                }
                let conn = self.clone();
                self.tracker.spawn(async move {
                    let id = req.id.clone();
                    let reply = dispatch::request(&conn, req, token).await;
                    lock(&conn.inflight).remove(&id);
                    if let Some(reply) = reply {
                        conn.send(reply);
                    }
                });
            }
            Ok(Message::Notification(n)) => dispatch::notification(self, n),
            Ok(Message::Response(resp)) => {
                let waiter = lock(&self.pending).remove(&resp.id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(resp.outcome);
                    }
                    None => {
                        tracing::debug!(id = %resp.id, "a response to no request of ours; ignored")
                    }
                }
            }
        }
    }

    /// Cancels one in-flight request (`notifications/cancelled`).
    pub(crate) fn cancel_request(&self, id: &RequestId) -> bool {
        match lock(&self.inflight).get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// A legacy session, seen from the task engine.
struct SessionChannel(Weak<Connection>);

impl ClientChannel for SessionChannel {
    fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + '_>> {
        let method = method.to_owned();
        Box::pin(async move {
            let conn = self
                .0
                .upgrade()
                .ok_or_else(|| RpcError::internal("the client connection is closed"))?;
            conn.request(&method, params).await
        })
    }

    fn notify(&self, method: &str, params: Value) {
        if let Some(conn) = self.0.upgrade() {
            conn.send(jsonrpc::notification_message(method, params));
        }
    }
}

struct PendingGuard<'a> {
    conn: &'a Connection,
    id: RequestId,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.conn.pending).remove(&self.id);
    }
}

pub(crate) async fn serve<R, W>(
    server: Arc<ServerInner>,
    reader: R,
    writer: W,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let grace = server.config.shutdown_grace;
    let (outbound, writer_task) = spawn_writer(writer);
    let conn = Connection::new(server, outbound);
    let mut reader = LineReader::new(reader);
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let mut signalled = false;
    loop {
        tokio::select! {
            item = reader.next() => match item {
                Some(Incoming::Line(line)) => conn.on_line(line),
                Some(Incoming::Unreadable(why)) => {
                    let err = RpcError::new(jsonrpc::codes::PARSE_ERROR, format!("Parse error: {why}"));
                    conn.send(error_message(None, &err));
                }
                None => {
                    tracing::debug!("input closed; finishing in-flight requests");
                    break;
                }
            },
            _ = &mut shutdown => {
                tracing::info!("shutdown signal; cancelling in-flight requests");
                signalled = true;
                break;
            }
        }
    }
    conn.tracker.close();
    if !signalled {
        // In-flight requests may finish, within the grace period, unless a signal says stop now
        // (a signal that comes while we wait counts too: input often closes at the same moment).
        signalled = tokio::select! {
            _ = conn.tracker.wait() => false,
            _ = tokio::time::sleep(grace) => true,
            _ = &mut shutdown => {
                tracing::info!("shutdown signal; cancelling in-flight requests");
                true
            }
        };
    }
    if signalled {
        conn.closing.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), conn.tracker.wait()).await;
    }
    conn.closing.cancel();
    drop(conn);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer_task).await;
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
