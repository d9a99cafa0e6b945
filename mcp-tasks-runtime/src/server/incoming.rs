//! One request as dispatch serves it: its era decided from its `_meta` (read through
//! `MetaCache`) and the connection's legacy session ([`classify`]), what a tool sees of it
//! ([`request_info`]), and the shape of its answer ([`Answer`]).

use super::era::{ClientView, Era};
use super::peer::Peer;
use crate::protocol::jsonrpc::{Payload, Request, RequestId, RpcError};
use crate::protocol::meta::{self, MetaError, ReadMeta};
use crate::protocol::{LEGACY_VERSIONS, LogLevel, MODERN_VERSION, MODERN_VERSIONS, Params};
use crate::tool::RequestInfo;
use serde_json::{Value, json};
use std::sync::Arc;

/// What one request is, once its era is known.
pub(crate) struct Incoming {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    /// The params, without `_meta`.
    pub(crate) params: Params,
    /// The params' `_meta` (an object), read.
    pub(crate) meta: Option<Arc<ReadMeta>>,
    pub(crate) era: Era,
    /// The protocol version within the era: the request's own (modern) or the one `initialize`
    /// negotiated (legacy).
    pub(crate) version: String,
    pub(crate) client: Arc<ClientView>,
    /// The least severe level the client wants log messages for on this request, if any.
    pub(crate) log_level: Option<LogLevel>,
}

impl Incoming {
    /// `_meta.progressToken`.
    pub(crate) fn progress_token(&self) -> Option<Value> {
        let facts = self.meta.as_ref()?.facts.as_ref().ok()?;
        facts.progress_token.clone()
    }

    /// Whether this request's protocol version has tasks on the wire ([`super::era::has_tasks`]).
    pub(crate) fn has_tasks(&self) -> bool {
        super::era::has_tasks(self.era, &self.version)
    }
}

/// Decides the era of a request from its `_meta` (`meta`, read from `req.meta`, which the
/// caller took: see `driver::start_request`) and the connection's session.
pub(crate) fn classify(
    peer: &dyn Peer,
    req: Request,
    meta: Option<Arc<ReadMeta>>,
) -> Result<Incoming, RpcError> {
    debug_assert!(req.meta.is_none(), "the caller read `_meta`");
    let params = req.params.unwrap_or_default();
    let facts = match &meta {
        Some(read) => Some(read.facts.as_ref().map_err(meta_error)?),
        None => None,
    };
    if let Some((version, client, log_level)) = facts.and_then(|f| f.modern.clone()) {
        return Ok(Incoming {
            id: req.id,
            method: req.method,
            params,
            meta,
            era: Era::Modern,
            version,
            client,
            log_level,
        });
    }
    match peer.session() {
        Some(session) => Ok(Incoming {
            id: req.id,
            method: req.method,
            params,
            meta,
            era: Era::Legacy,
            version: session.version,
            client: session.client,
            log_level: Some(session.log_level),
        }),
        None => Err(RpcError::invalid_params(format!(
            "missing required `_meta[\"{}\"]`: send per-request `_meta` (protocol {MODERN_VERSION}) or `initialize` first (protocol {})",
            meta::PROTOCOL_VERSION,
            LEGACY_VERSIONS[0]
        ))),
    }
}

/// The JSON-RPC error a request with a refused `_meta` gets: `-32602` (with `data.missing` naming
/// a missing key, which HTTP answers with 400), or `-32022` with the versions there are.
pub(crate) fn meta_error(error: &MetaError) -> RpcError {
    let message = error.to_string();
    match error {
        MetaError::Missing(key) => {
            RpcError::invalid_params(message).with_data(json!({ "missing": key }))
        }
        MetaError::UnsupportedVersion(requested) => {
            let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
            supported.extend_from_slice(LEGACY_VERSIONS);
            RpcError::new(RpcError::UNSUPPORTED_PROTOCOL_VERSION, message)
                .with_data(json!({ "supported": supported, "requested": requested }))
        }
        _ => RpcError::invalid_params(message),
    }
}

/// What a tool sees of the request: who calls, from which client, in which era, with which
/// `_meta`. A task keeps it.
pub(crate) fn request_info(peer: &dyn Peer, req: &Incoming) -> Arc<RequestInfo> {
    let info = RequestInfo::new(req.era, req.version.clone())
        .with_principal(peer.principal())
        .with_client(req.client.info.clone());
    Arc::new(match &req.meta {
        Some(meta) => info.with_read_meta(meta.clone()),
        None => info,
    })
}

/// A method's answer: `None` when none is due (the request was cancelled); a result may already
/// be text ([`Payload::Text`]).
pub(crate) type Answer = Option<Result<Payload, RpcError>>;

/// An answer built as a tree.
pub(crate) fn tree(outcome: Option<Result<Value, RpcError>>) -> Answer {
    outcome.map(|result| result.map(Payload::Tree))
}
