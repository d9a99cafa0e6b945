//! [`Era`]: which of the two protocol generations a request, a connection or a task belongs to.

/// The protocol era: the one name the runtime, the client and the task stores use for which of
/// the two MCP generations is spoken.
///
/// - [`Legacy`](Era::Legacy): protocol 2025-11-25 and earlier ([`LEGACY_VERSION`] and older): an
///   `initialize` handshake agrees on a version and capabilities for a session; tasks are the
///   experimental 2025-11-25 tasks.
/// - [`Modern`](Era::Modern): protocol 2026-07-28 ([`MODERN_VERSION`]): stateless, every request
///   carries its version, capabilities and `clientInfo` in its `_meta`; tasks are the
///   `io.modelcontextprotocol/tasks` extension.
///
/// The era says how a request is served, how a task is rendered and how a tool error
/// (`isError: true`) ends a task (a legacy task fails, a modern one completes). The exact
/// version negotiated within an era is kept next to it (for a tool:
/// [`RequestInfo::protocol_version`](crate::RequestInfo::protocol_version)).
///
/// It is stored with every task (as `"legacy"` or `"modern"`), so its serialized form is part
/// of the durable stores' format.
///
/// [`LEGACY_VERSION`]: crate::protocol::LEGACY_VERSION
/// [`MODERN_VERSION`]: crate::protocol::MODERN_VERSION
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// Protocol 2025-11-25 and earlier: `initialize`, sessions, experimental tasks.
    #[default]
    Legacy,
    /// Protocol 2026-07-28: stateless, everything in each request's `_meta`, the tasks extension.
    Modern,
}

impl Era {
    /// Whether this is the modern (2026-07-28) era.
    pub fn is_modern(self) -> bool {
        self == Era::Modern
    }
}

#[cfg(test)]
mod tests {
    use super::Era;

    /// Task records store the era; these strings are what durable stores already hold.
    #[test]
    fn serialized_form_is_stable() {
        for (era, text) in [(Era::Legacy, "\"legacy\""), (Era::Modern, "\"modern\"")] {
            assert_eq!(serde_json::to_string(&era).unwrap(), text);
            assert_eq!(serde_json::from_str::<Era>(text).unwrap(), era);
        }
        assert!(Era::Modern.is_modern() && !Era::Legacy.is_modern());
    }
}
