//! Reserved `_meta` keys.

/// Request: the protocol version (2026-07-28).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Request: the client capabilities for this request (2026-07-28).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Request: the least severe log level the client wants `notifications/message` for, on this
/// request only (2026-07-28; absent: no log messages).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Request: client name and version (2026-07-28).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Result: server name and version (2026-07-28).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Legacy tasks: the task a message belongs to (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Progress token.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// Notification: the `subscriptions/listen` request it is delivered for (its JSON-RPC id;
/// 2026-07-28).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
