//! JSON-RPC and MCP error codes, and the error object.

use serde_json::Value;
use std::fmt;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq, wire::Serialize, wire::Deserialize)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// A message for people.
    pub message: String,
    /// Anything else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    // JSON-RPC and MCP error codes.

    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP header disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// Unsupported protocol version (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// A server limit was reached (this implementation's; in the range 2026-07-28 leaves to
    /// implementations). `data.limit` names the limit, `data.max` is its value; nothing was
    /// started or queued, and the request may be tried again once something ends.
    pub const LIMIT_REACHED: i64 = -32010;

    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(RpcError::INVALID_PARAMS, message)
    }
    /// `-32600`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(RpcError::INVALID_REQUEST, message)
    }
    /// `-32601`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            RpcError::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
    /// `-32603`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(RpcError::INTERNAL_ERROR, message)
    }
    /// `-32010` Limit reached: `Limit reached: {what} (at most {max})`, with
    /// `data: {"limit": limit, "max": max}`.
    pub fn limit_reached(limit: &str, max: usize, what: &str) -> Self {
        Self::new(
            RpcError::LIMIT_REACHED,
            format!("Limit reached: {what} (at most {max})"),
        )
        .with_data(serde_json::json!({ "limit": limit, "max": max }))
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}
