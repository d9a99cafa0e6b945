use crate::protocol::RpcError;
use std::fmt;

/// How a tool fails.
///
/// - [`ToolError::new`] (and `?` on any `std::error::Error`) is a *tool error*: the call completes
///   with `isError: true` and the message as text, so the model can read it and react.
/// - [`ToolError::rpc`] and its shorthands are *protocol errors*: the call answers a JSON-RPC error
///   (and a task ends `failed`).
pub struct ToolError {
    kind: Kind,
}

enum Kind {
    Tool(String),
    Rpc(RpcError),
}

impl ToolError {
    /// A tool error: the result has `isError: true` and this text.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::Tool(message.into()),
        }
    }

    /// A JSON-RPC error with this code and message.
    pub fn rpc(code: i64, message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::Rpc(RpcError::new(code, message)),
        }
    }

    /// A JSON-RPC error with extra `data`.
    pub fn rpc_with_data(code: i64, message: impl Into<String>, data: serde_json::Value) -> Self {
        ToolError {
            kind: Kind::Rpc(RpcError::new(code, message).with_data(data)),
        }
    }

    /// `-32602` Invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::rpc(crate::protocol::codes::INVALID_PARAMS, message)
    }

    /// `-32603` Internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::rpc(crate::protocol::codes::INTERNAL_ERROR, message)
    }

    /// Whether this is a protocol (JSON-RPC) error rather than a tool error.
    pub fn is_rpc(&self) -> bool {
        matches!(self.kind, Kind::Rpc(_))
    }

    /// Converts into what the wire carries: `Ok` is an `isError` result, `Err` a JSON-RPC error.
    pub fn into_outcome(self) -> Result<String, RpcError> {
        match self.kind {
            Kind::Tool(text) => Ok(text),
            Kind::Rpc(err) => Err(err),
        }
    }

    /// `-32021` Missing required client capability: the call needs `capability` (`sampling`,
    /// `elicitation`, `roots`, ...), which the client did not declare. `data.requiredCapabilities`
    /// names it, as the protocol asks (`{"sampling": {}}`).
    pub fn missing_capability(capability: &str) -> Self {
        Self::rpc_with_data(
            crate::protocol::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "Missing required client capability: this call needs `{capability}`, which the client did not declare"
            ),
            serde_json::json!({ "requiredCapabilities": { capability: {} } }),
        )
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Tool(text) => f.write_str(text),
            Kind::Rpc(err) => write!(f, "{} ({})", err.message, err.code),
        }
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Tool(text) => f.debug_tuple("ToolError::Tool").field(text).finish(),
            Kind::Rpc(err) => f.debug_tuple("ToolError::Rpc").field(err).finish(),
        }
    }
}

/// Any error type becomes a tool error carrying its `Display` text (and its sources), except an
/// input request the client could not take ([`InputError::NotSupported`]): a server must not rely
/// on a capability the client did not declare, so that call answers
/// [`missing_capability`](ToolError::missing_capability) (`-32021`); and an input request a
/// server limit refused ([`InputError::LimitReached`]), which answers that limit's `-32010`.
///
/// [`InputError::NotSupported`]: super::InputError::NotSupported
/// [`InputError::LimitReached`]: super::InputError::LimitReached
impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(err: E) -> Self {
        match (&err as &dyn std::any::Any).downcast_ref::<super::InputError>() {
            Some(super::InputError::NotSupported { capability }) => {
                return ToolError::missing_capability(capability);
            }
            Some(super::InputError::LimitReached(e)) => {
                return ToolError::rpc_with_data(
                    e.code,
                    e.message.clone(),
                    e.data.clone().unwrap_or_default(),
                );
            }
            _ => {}
        }
        let mut text = err.to_string();
        let mut source = err.source();
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        ToolError::new(text)
    }
}

/// A tool's arguments did not decode. Always answered as `-32602`, naming the argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument, when one is at fault.
    pub argument: Option<String>,
    /// What is wrong, for a person.
    pub message: String,
}

impl ArgumentError {
    /// A required argument is absent.
    pub fn missing(name: &str) -> Self {
        ArgumentError {
            argument: Some(name.to_owned()),
            message: format!("missing required argument `{name}`"),
        }
    }

    /// An argument has the wrong shape.
    pub fn invalid(name: &str, err: impl fmt::Display) -> Self {
        ArgumentError {
            argument: Some(name.to_owned()),
            message: format!("invalid argument `{name}`: {err}"),
        }
    }

    /// The arguments as a whole are wrong.
    pub fn whole(err: impl fmt::Display) -> Self {
        ArgumentError {
            argument: None,
            message: format!("invalid arguments: {err}"),
        }
    }

    /// The JSON-RPC error this becomes.
    pub fn to_rpc(&self) -> RpcError {
        let err = RpcError::new(crate::protocol::codes::INVALID_PARAMS, self.message.clone());
        match &self.argument {
            Some(arg) => err.with_data(serde_json::json!({ "argument": arg })),
            None => err,
        }
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArgumentError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::InputError;

    #[test]
    fn a_capability_the_client_lacks_is_a_32021_naming_it_and_other_input_errors_are_tool_errors() {
        let err: ToolError = InputError::NotSupported {
            capability: "sampling",
        }
        .into();
        let rpc = err.into_outcome().unwrap_err();
        assert_eq!(
            rpc.code,
            crate::protocol::codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        );
        assert!(rpc.message.contains("`sampling`"), "{}", rpc.message);
        assert_eq!(
            rpc.data,
            Some(serde_json::json!({ "requiredCapabilities": { "sampling": {} } }))
        );
        let err: ToolError = InputError::Cancelled.into();
        assert_eq!(
            err.into_outcome().unwrap(),
            "cancelled while waiting for the client's input"
        );
    }
}
