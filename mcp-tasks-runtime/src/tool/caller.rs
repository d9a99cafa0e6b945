//! Who is calling: the authenticated principal, the client, the protocol era and the request's
//! `_meta`, as a tool sees them through [`ToolContext`](super::ToolContext).

use crate::protocol::meta::ReadMeta;
use crate::protocol::{Era, Implementation};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// An authenticated caller. Tasks a principal creates are visible to that principal only: any
/// other caller gets exactly the answer an unknown task id gets (`-32602`).
///
/// A principal is its identifier: two principals with the same id are the same caller (they
/// compare and hash equal) whatever scopes each request was granted.
#[derive(Debug, Clone)]
pub struct Principal {
    id: String,
    /// The OAuth scopes this request's token grants; `None`: not limited by scopes (a static
    /// token, an authenticator that does not deal in scopes).
    scopes: Option<Arc<[String]>>,
}

impl Principal {
    /// A principal with this stable identifier (a user id, a client id, a token subject), not
    /// limited by scopes.
    pub fn new(id: impl Into<String>) -> Self {
        Principal {
            id: id.into(),
            scopes: None,
        }
    }

    /// Limits this request to these OAuth scopes: a tool declaring
    /// `#[tool(scope = "...")]` needs all of its scopes among them.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Its identifier.
    pub fn as_str(&self) -> &str {
        &self.id
    }

    /// The scopes this request was granted; `None` when it is not limited by scopes.
    pub fn scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }

    /// Whether this request may use `scope` (always, when it is not limited by scopes).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes
            .as_deref()
            .is_none_or(|granted| granted.iter().any(|s| s == scope))
    }

    /// Whether this request may use something that needs all of `scopes`.
    pub(crate) fn has_scopes(&self, scopes: &[&str]) -> bool {
        scopes.iter().all(|s| self.has_scope(s))
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Principal {}

impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// What is known about the request a call came from. A task keeps the one of the `tools/call`
/// that created it, so a task tool running later sees who asked for it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RequestInfo {
    /// The authenticated principal: `None` over HTTP without an
    /// [`Authenticator`](crate::server::Authenticator) (or when it let an anonymous caller in),
    /// and on stdio unless the application names one
    /// ([`ServeIo::principal`](crate::server::ServeIo::principal)).
    pub principal: Option<Principal>,
    /// The client's `clientInfo` (from `initialize`, or the request's `_meta` in 2026-07-28).
    pub client: Option<Implementation>,
    /// The protocol era.
    pub era: Era,
    /// The protocol version (`2025-11-25`, `2026-07-28`, ...).
    pub protocol_version: String,
    /// The request's `_meta` ([`meta`](Self::meta)).
    meta: MetaField,
}

/// A request's `_meta`: a tree given whole, or the text the server read, made a tree only when a
/// tool asks for it ([`RequestInfo::meta`]). Most tools never look, and a `_meta` that changes
/// with every request (a `traceparent` per request, from a traced host) would otherwise be
/// parsed into a tree for each call.
#[derive(Debug, Clone)]
enum MetaField {
    Tree(Arc<Map<String, Value>>),
    Read(Arc<ReadMeta>),
}

impl Default for MetaField {
    fn default() -> Self {
        MetaField::Tree(Arc::default())
    }
}

impl RequestInfo {
    /// A request in this era and version, with nothing else known.
    pub fn new(era: Era, protocol_version: impl Into<String>) -> Self {
        RequestInfo {
            era,
            protocol_version: protocol_version.into(),
            ..Default::default()
        }
    }

    /// With this principal.
    pub fn with_principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// With this `clientInfo`.
    pub fn with_client(mut self, client: Option<Implementation>) -> Self {
        self.client = client;
        self
    }

    /// With this `_meta`.
    pub fn with_meta(mut self, meta: impl Into<Arc<Map<String, Value>>>) -> Self {
        self.meta = MetaField::Tree(meta.into());
        self
    }

    /// With the `_meta` the server read (shared: the server reads a `_meta` a client sends again
    /// and again once, and makes its tree once).
    pub(crate) fn with_read_meta(mut self, meta: Arc<ReadMeta>) -> Self {
        self.meta = MetaField::Read(meta);
        self
    }

    /// The request's `_meta`, as sent (empty when there was none).
    pub fn meta(&self) -> &Map<String, Value> {
        match &self.meta {
            MetaField::Tree(tree) => tree,
            MetaField::Read(read) => read.tree_ref(),
        }
    }
}
