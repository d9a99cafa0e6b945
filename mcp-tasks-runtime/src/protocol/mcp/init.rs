//! The handshake of each era: `initialize` (2025-11-25) and `server/discover` (2026-07-28).

use super::capabilities::ServerCapabilities;

/// `Implementation`: a name and version (`serverInfo`, `clientInfo`).
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct Implementation {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

// ---- What the server declares: `initialize`, `server/discover`, `tools/list` results ----------
//
// Written through a tree (`serde_json::to_value`), like every result: their keys come out sorted
// whatever the order of the fields.

/// The result of `initialize` (2025-11-25).
#[derive(Debug, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult<'a> {
    pub(crate) protocol_version: &'a str,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) server_info: &'a Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// The result of `server/discover` (2026-07-28), a cacheable result.
#[derive(Debug, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult<'a> {
    /// Every version the server speaks, the modern ones first.
    pub(crate) supported_versions: Vec<&'a str>,
    pub(crate) capabilities: ServerCapabilities,
    #[serde(flatten)]
    pub(crate) cache: Cacheable,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// How long a client may keep a 2026-07-28 `CacheableResult`, and with whom it may share it.
#[derive(Debug, Clone, Copy, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Cacheable {
    pub(crate) ttl_ms: u64,
    pub(crate) cache_scope: &'static str,
}

impl Cacheable {
    /// Kept for no time, and never shared across clients (what the server answers differs by era).
    pub(crate) const PRIVATE: Cacheable = Cacheable {
        ttl_ms: 0,
        cache_scope: "private",
    };
}
