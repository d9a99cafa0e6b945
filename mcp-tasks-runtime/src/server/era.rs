use crate::protocol::{ClientCapabilities, Implementation};
use std::sync::Arc;

/// Which protocol era a request is served in.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// 2025-11-25 and earlier: the `initialize` session's version and capabilities apply.
    Legacy {
        /// The negotiated version.
        version: String,
    },
    /// 2026-07-28: everything comes from the request's own `_meta`.
    Modern {
        /// The request's protocol version.
        version: String,
    },
}

impl Era {
    /// Whether this is the modern era.
    pub fn is_modern(&self) -> bool {
        matches!(self, Era::Modern { .. })
    }
}

/// What the client said about itself: at `initialize` (legacy) or in the request's `_meta` (modern).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ClientView {
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) info: Option<Implementation>,
}
