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

pub(crate) use crate::protocol::meta::ClientView;
