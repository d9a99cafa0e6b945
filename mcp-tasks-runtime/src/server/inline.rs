//! Backends for calls that run inline (not as tasks). They reach the client through the
//! [`Peer`] interface only.

use super::peer::Peer;
use crate::protocol::InputRequest;
use crate::tool::{ContextBackend, InputError, InputFuture};
use serde_json::{Value, json};
use std::sync::{Arc, Weak};

/// The backend of an inline call in a legacy session. (Inline modern calls use MRTR instead:
/// `task::mrtr`.)
pub(crate) fn legacy_backend(
    conn: Weak<dyn Peer>,
    progress_token: Option<Value>,
) -> Arc<dyn ContextBackend> {
    Arc::new(LegacyInline {
        conn,
        progress_token,
    })
}

pub(crate) fn send_progress(
    conn: &Weak<dyn Peer>,
    token: &Option<Value>,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
) {
    let (Some(conn), Some(token)) = (conn.upgrade(), token) else {
        return;
    };
    let mut params = json!({ "progressToken": token, "progress": progress });
    if let Some(total) = total {
        params["total"] = json!(total);
    }
    if let Some(message) = message {
        params["message"] = json!(message);
    }
    conn.send(crate::protocol::jsonrpc::notification_message(
        "notifications/progress",
        params,
    ));
}

/// Inline in a legacy session: input requests are plain server-to-client requests.
struct LegacyInline {
    conn: Weak<dyn Peer>,
    progress_token: Option<Value>,
}

impl ContextBackend for LegacyInline {
    fn input(&self, request: InputRequest) -> InputFuture {
        let conn = self.conn.clone();
        Box::pin(async move {
            let conn = conn.upgrade().ok_or(InputError::Disconnected)?;
            conn.request(&request.method, request.params)
                .await
                .map_err(InputError::from_rpc)
        })
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        send_progress(&self.conn, &self.progress_token, progress, total, message);
    }

    fn log(&self, params: Value) {
        send_log(&self.conn, params);
    }
}

/// Sends a `notifications/message` on the connection (on HTTP, on the stream of the request it
/// comes from).
pub(crate) fn send_log(conn: &Weak<dyn Peer>, params: Value) {
    if let Some(conn) = conn.upgrade() {
        conn.send(crate::protocol::jsonrpc::notification_message(
            "notifications/message",
            params,
        ));
    }
}
