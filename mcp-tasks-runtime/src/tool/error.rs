use crate::protocol::{CallToolResult, RpcError};
use serde_json::Value;
use std::fmt;

/// How a tool fails.
///
/// - [`ToolError::new`] (and `?` on any error, see below) is a *tool error*: the call completes
///   with `isError: true` and the message as text, so the model can read it and react. Add
///   machine-readable details with [`with_structured`](Self::with_structured).
/// - [`ToolError::rpc`] and its shorthands, and `?` on an [`RpcError`], are *protocol errors*:
///   the call answers that JSON-RPC error (and a task ends `failed`).
///
/// `?` works on anything that converts into `Box<dyn Error + Send + Sync>`: every
/// `std::error::Error + Send + Sync + 'static` (`io::Error`, your own error types),
/// `Box<dyn Error + Send + Sync>` itself, `anyhow::Error`, and even a `String` or `&str`. The text
/// is the error's `Display` followed by its sources. Two errors keep their meaning: an
/// [`RpcError`] stays that JSON-RPC error, and an input request the client cannot take
/// ([`InputError::NotSupported`](super::InputError::NotSupported)) answers `-32021` naming the
/// capability.
///
/// ```
/// use mcp_tasks_runtime::{ToolError, tool};
///
/// /// Reads a file.
/// #[tool]
/// async fn read(path: String) -> Result<String, ToolError> {
///     if path.contains("..") {
///         // Input the tool refuses: a tool error the model can read and correct its call by.
///         return Err(ToolError::new("invalid argument `path`: must not contain `..`"));
///     }
///     Ok(std::fs::read_to_string(path)?) // an io::Error becomes `isError: true` text
/// }
/// ```
pub struct ToolError {
    kind: Kind,
}

enum Kind {
    Tool {
        text: String,
        structured: Option<Value>,
    },
    Rpc(RpcError),
}

impl ToolError {
    /// A tool error: the result has `isError: true` and this text.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::Tool {
                text: message.into(),
                structured: None,
            },
        }
    }

    /// Adds `structuredContent` to a tool error (details a program can read: a field name, a
    /// retry delay, a list of what was refused). A protocol error is left as it is.
    pub fn with_structured(mut self, value: impl serde::Serialize) -> Self {
        if let Kind::Tool { structured, .. } = &mut self.kind {
            *structured = Some(serde_json::to_value(value).unwrap_or(Value::Null));
        }
        self
    }

    /// The caller may not do this (a tool refusing a principal): a tool error whose text is
    /// `Forbidden: {message}`, with `structuredContent` `{"error": "forbidden", "message": ...}`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        let message = message.into();
        ToolError::new(format!("Forbidden: {message}"))
            .with_structured(serde_json::json!({ "error": "forbidden", "message": message }))
    }

    /// A JSON-RPC error with this code and message.
    pub fn rpc(code: i64, message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::Rpc(RpcError::new(code, message)),
        }
    }

    /// A JSON-RPC error with extra `data`.
    pub fn rpc_with_data(code: i64, message: impl Into<String>, data: Value) -> Self {
        ToolError {
            kind: Kind::Rpc(RpcError::new(code, message).with_data(data)),
        }
    }

    /// `-32602` Invalid params: a protocol error. For input the tool refuses (a value out of
    /// range, a date in the wrong format) the spec asks for a tool error instead
    /// ([`ToolError::new`]), which the model reads and can correct its call by.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::rpc(RpcError::INVALID_PARAMS, message)
    }

    /// `-32603` Internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::rpc(RpcError::INTERNAL_ERROR, message)
    }

    /// Whether this is a protocol (JSON-RPC) error rather than a tool error.
    pub fn is_rpc(&self) -> bool {
        matches!(self.kind, Kind::Rpc(_))
    }

    /// Converts into what the wire carries: `Ok` is an `isError` result, `Err` a JSON-RPC error.
    pub fn into_outcome(self) -> Result<CallToolResult, RpcError> {
        match self.kind {
            Kind::Tool { text, structured } => Ok(CallToolResult {
                structured_content: structured,
                ..CallToolResult::error(text)
            }),
            Kind::Rpc(err) => Err(err),
        }
    }

    /// This error where no tool result can carry it (a prompt, a completion): a protocol error
    /// stays as it is; a tool error becomes `-32603` with its text.
    pub(crate) fn into_rpc(self) -> RpcError {
        match self.kind {
            Kind::Tool { text, .. } => RpcError::internal(text),
            Kind::Rpc(err) => err,
        }
    }

    /// `-32021` Missing required client capability: the call needs `capability` (`sampling`,
    /// `elicitation`, `roots`, ..., or an extension such as `io.modelcontextprotocol/tasks`), which
    /// the client did not declare. `data.requiredCapabilities` names it in the shape of the
    /// client's capabilities, as the protocol asks: `{"sampling": {}}`, and an extension (a name
    /// with a `/`) under `extensions`: `{"extensions": {"io.modelcontextprotocol/tasks": {}}}`.
    pub fn missing_capability(capability: &str) -> Self {
        let required = if capability.contains('/') {
            serde_json::json!({ "extensions": { capability: {} } })
        } else {
            serde_json::json!({ capability: {} })
        };
        Self::rpc_with_data(
            RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "Missing required client capability: this call needs `{capability}`, which the client did not declare"
            ),
            serde_json::json!({ "requiredCapabilities": required }),
        )
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Tool { text, .. } => f.write_str(text),
            Kind::Rpc(err) => write!(f, "{} ({})", err.message, err.code),
        }
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Tool { text, structured } => f
                .debug_struct("ToolError::Tool")
                .field("text", text)
                .field("structured", structured)
                .finish(),
            Kind::Rpc(err) => f.debug_tuple("ToolError::Rpc").field(err).finish(),
        }
    }
}

/// `?` on any error. The bound is `Into<Box<dyn Error + Send + Sync>>` rather than `Error`, the
/// way `Box<dyn Error>` itself takes errors: it covers every `Error + Send + Sync + 'static`, and
/// also the boxed error, `anyhow::Error` and strings, which a blanket impl over `Error` cannot
/// (`Box<dyn Error>` does not implement `Error`, and coherence forbids a second impl for it).
/// `ToolError` does not implement `Error`, so this does not overlap `From<ToolError>`.
///
/// Three errors keep their meaning: an [`RpcError`] stays that JSON-RPC error; an input request
/// the client could not take ([`InputError::NotSupported`](super::InputError::NotSupported))
/// answers [`missing_capability`](ToolError::missing_capability) (`-32021`); and an input request
/// a server limit refused ([`InputError::LimitReached`](super::InputError::LimitReached)) answers
/// that limit's `-32010`.
impl<E> From<E> for ToolError
where
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
{
    fn from(err: E) -> Self {
        let err: Box<dyn std::error::Error + Send + Sync + 'static> = err.into();
        let err = match err.downcast::<RpcError>() {
            Ok(rpc) => {
                return ToolError {
                    kind: Kind::Rpc(*rpc),
                };
            }
            Err(other) => other,
        };
        match err.downcast_ref::<super::InputError>() {
            Some(super::InputError::NotSupported { capability }) => {
                return ToolError::missing_capability(capability);
            }
            Some(super::InputError::LimitReached(e)) => {
                return ToolError {
                    kind: Kind::Rpc(e.clone()),
                };
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

/// A tool's arguments did not decode, naming the argument at fault.
///
/// The MCP spec (tools, "Error Handling", 2025-11-25 and 2026-07-28) classes input validation
/// errors as *tool execution errors*, so a call answers most of these as a `CallToolResult` with
/// `isError: true` and this message ([`into_outcome`](Self::into_outcome)), which the model can
/// read and correct its call by. Two stay JSON-RPC errors: `arguments` that is not an object at
/// all (a malformed `tools/call`, `-32602`) and an injected parameter the server cannot supply
/// (the server's fault, `-32603`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument, when one is at fault.
    pub argument: Option<String>,
    /// What is wrong, for a person.
    pub message: String,
    kind: ArgumentKind,
}

/// Who is at fault, which decides how the call answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgumentKind {
    /// The values do not fit the tool's input: a tool error.
    Input,
    /// `arguments` is not an object: the request is malformed (`-32602`).
    Malformed,
    /// The server cannot supply an injected parameter (`-32603`).
    Internal,
}

impl ArgumentError {
    /// A required argument is absent.
    pub fn missing(name: &str) -> Self {
        ArgumentError {
            argument: Some(name.to_owned()),
            message: format!("missing required argument `{name}`"),
            kind: ArgumentKind::Input,
        }
    }

    /// An argument has the wrong shape.
    pub fn invalid(name: &str, err: impl fmt::Display) -> Self {
        ArgumentError {
            argument: Some(name.to_owned()),
            message: format!("invalid argument `{name}`: {err}"),
            kind: ArgumentKind::Input,
        }
    }

    /// The arguments as a whole are wrong.
    pub fn whole(err: impl fmt::Display) -> Self {
        ArgumentError {
            argument: None,
            message: format!("invalid arguments: {err}"),
            kind: ArgumentKind::Input,
        }
    }

    /// `arguments` is not an object: the `tools/call` itself is malformed (`-32602`).
    pub(crate) fn malformed(err: impl fmt::Display) -> Self {
        ArgumentError {
            kind: ArgumentKind::Malformed,
            ..Self::whole(err)
        }
    }

    /// The server cannot supply an injected parameter (answered `-32603`, not `-32602`).
    pub fn internal(message: impl Into<String>) -> Self {
        ArgumentError {
            argument: None,
            message: message.into(),
            kind: ArgumentKind::Internal,
        }
    }

    /// Converts into what the wire carries, as [`ToolError::into_outcome`] does: `Ok` is the
    /// `isError: true` result whose text is the message, for arguments that do not fit the
    /// tool's input; `Err` the JSON-RPC error ([`to_rpc`](Self::to_rpc)) for a malformed
    /// `arguments` or an injected parameter the server cannot supply.
    pub fn into_outcome(self) -> Result<CallToolResult, RpcError> {
        match self.kind {
            ArgumentKind::Input => Ok(CallToolResult::error(self.message)),
            ArgumentKind::Malformed | ArgumentKind::Internal => Err(self.to_rpc()),
        }
    }

    /// This error as a JSON-RPC error: `-32603` for an injected parameter the server cannot
    /// supply, otherwise `-32602` with `data.argument` naming the argument when one is at fault.
    /// A server answers only a malformed `arguments` this way (see
    /// [`into_outcome`](Self::into_outcome)).
    pub fn to_rpc(&self) -> RpcError {
        if self.kind == ArgumentKind::Internal {
            return RpcError::internal(self.message.clone());
        }
        let err = RpcError::new(RpcError::INVALID_PARAMS, self.message.clone());
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
        assert_eq!(rpc.code, RpcError::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert!(rpc.message.contains("`sampling`"), "{}", rpc.message);
        assert_eq!(
            rpc.data,
            Some(serde_json::json!({ "requiredCapabilities": { "sampling": {} } }))
        );
        // An extension is named under `extensions`, as the client declares it.
        let rpc = ToolError::missing_capability(crate::protocol::TASKS_EXTENSION)
            .into_outcome()
            .unwrap_err();
        assert_eq!(
            rpc.data,
            Some(serde_json::json!({ "requiredCapabilities": {
                "extensions": { crate::protocol::TASKS_EXTENSION: {} }
            } }))
        );
        let err: ToolError = InputError::Cancelled.into();
        assert_eq!(
            err.into_outcome().unwrap(),
            CallToolResult::error("cancelled while waiting for the client's input")
        );
    }
}
