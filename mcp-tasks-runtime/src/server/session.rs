//! The legacy (2025-11-25) handshake: `initialize` opens a connection's session, once, and
//! answers with the server's capabilities. The transports call it in order, before anything read
//! after it (through `dispatch`, their one door to this layer).

use super::era::ClientView;
use super::inner::ServerInner;
use super::peer::{LegacySession, Peer};
use crate::protocol::jsonrpc::{Request, RpcError, error_message, result_message};
use crate::protocol::{
    ClientCapabilities, Implementation, InitializeResult, LEGACY_VERSIONS, LogLevel, Params,
    ServerCapabilities,
};
use serde_json::Value;
use std::sync::Arc;

/// Answers `initialize`: opens (or re-opens) the legacy session of this connection.
pub(crate) fn initialize(server: &ServerInner, peer: &dyn Peer, req: &Request) -> Value {
    if peer.session().is_some() {
        return error_message(Some(&req.id), &already_initialized());
    }
    let params = req.params.as_ref().map(Params::to_map).unwrap_or_default();
    let requested = match params.get("protocolVersion") {
        Some(Value::String(v)) => v.clone(),
        Some(_) => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("`protocolVersion` must be a string"),
            );
        }
        None => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("missing required parameter `protocolVersion`"),
            );
        }
    };
    let capabilities = match params.get("capabilities") {
        None => ClientCapabilities::default(),
        Some(Value::Object(map)) => ClientCapabilities(map.clone()),
        Some(_) => {
            return error_message(
                Some(&req.id),
                &RpcError::invalid_params("`capabilities` must be an object"),
            );
        }
    };
    let info: Option<Implementation> = params
        .get("clientInfo")
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    // A supported legacy version is echoed; anything else (including 2026-07-28, which has no
    // `initialize`) gets the newest legacy version, per the 2025-11-25 lifecycle.
    let version = if LEGACY_VERSIONS.contains(&requested.as_str()) {
        requested
    } else {
        LEGACY_VERSIONS[0].to_owned()
    };
    let opened = peer.open_session(LegacySession {
        version: version.clone(),
        client: Arc::new(ClientView {
            capabilities: Arc::new(capabilities),
            info,
        }),
        id: random_id(),
        log_level: LogLevel::Debug,
    });
    if !opened {
        return error_message(Some(&req.id), &already_initialized());
    }
    // `tasks.list` only where requestors can be told apart: an authenticated principal, or a
    // connection that is one client. No `tasks` at all for a version without tasks.
    let mut capabilities = ServerCapabilities::legacy(peer.identified());
    if !super::era::has_tasks(super::era::Era::Legacy, &version) {
        capabilities.tasks = None;
    }
    let result = InitializeResult {
        protocol_version: &version,
        capabilities: server.capabilities(capabilities),
        server_info: &server.info,
        instructions: server.instructions.as_deref(),
    };
    result_message(&req.id, serde_json::to_value(result).unwrap_or_default())
}

/// The answer to a second `initialize` on a live session: the session stays as it was.
pub(crate) fn already_initialized() -> RpcError {
    RpcError::invalid_request(
        "Invalid Request: this session is already initialized; `initialize` opens a session once (end it and open a new one to start again)",
    )
}

fn random_id() -> String {
    use rand::RngExt;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
