use super::ToolError;
#[cfg(feature = "schemars")]
use super::schema::{is_object_schema, schema_for};
use crate::protocol::{CallToolResult, Content, RpcError};
#[cfg(feature = "schemars")]
use schemars::JsonSchema;
#[cfg(feature = "schemars")]
use serde::Serialize;
use serde_json::Value;

/// What a tool function may return. The marker `M` lets several blanket implementations live side
/// by side; it is inferred, never written.
///
/// - any `Serialize + JsonSchema` value: an object becomes `structuredContent` (with its JSON as
///   text too, and an `outputSchema` in `tools/list`); a string becomes text; anything else its
///   JSON text;
/// - [`CallToolResult`], [`Content`], `Vec<Content>`: sent as they are;
/// - `Result<T, E>` where `T` is any of these and `E: Into<ToolError>`: `Err` is a tool error
///   (`isError: true`) or, for [`ToolError::rpc`], a JSON-RPC error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP tool",
    label = "this is what the tool returns",
    note = "return a type that implements `serde::Serialize` and `schemars::JsonSchema`, a `String`, \
            a `CallToolResult`, or a `Result<T, E>` of those with `E: Into<ToolError>`"
)]
pub trait IntoToolResult<M>: Send + 'static {
    /// The result as it goes on the wire, or a JSON-RPC error.
    fn into_tool_result(self) -> Result<CallToolResult, RpcError>;

    /// The `outputSchema` this output publishes, if any.
    fn output_schema() -> Option<Value> {
        None
    }
}

/// Marker: a serializable value.
#[cfg(feature = "schemars")]
#[derive(Debug)]
pub enum ViaSerialize {}
/// Marker: a ready-made result.
#[derive(Debug)]
pub enum ViaRaw {}
/// Marker: a `Result` around another output.
#[derive(Debug)]
pub struct ViaResult<M>(std::marker::PhantomData<M>);

#[cfg(feature = "schemars")]
impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult<ViaSerialize> for T {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        let value = serde_json::to_value(&self).map_err(|e| {
            RpcError::internal(format!("the tool's result could not be serialized: {e}"))
        })?;
        Ok(match value {
            Value::String(text) => CallToolResult::text(text),
            Value::Object(_) if Self::output_schema().is_some() => {
                CallToolResult::structured(value)
            }
            Value::Null => CallToolResult::empty(),
            other => CallToolResult::text(other.to_string()),
        })
    }

    fn output_schema() -> Option<Value> {
        let schema = schema_for::<T>();
        is_object_schema(&schema).then(|| (*schema).clone())
    }
}

impl IntoToolResult<ViaRaw> for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(self)
    }
}

impl IntoToolResult<ViaRaw> for Content {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::from_content(vec![self]))
    }
}

impl IntoToolResult<ViaRaw> for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult::from_content(self))
    }
}

impl<T, E, M> IntoToolResult<ViaResult<M>> for Result<T, E>
where
    T: IntoToolResult<M>,
    E: Into<ToolError> + Send + 'static,
    M: 'static,
{
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => e.into().into_outcome(),
        }
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

/// Structured output, explicitly: `Json(report)` always becomes `structuredContent`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

#[cfg(feature = "schemars")]
impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult<ViaRaw> for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, RpcError> {
        self.0.into_tool_result()
    }

    fn output_schema() -> Option<Value> {
        <T as IntoToolResult<ViaSerialize>>::output_schema()
    }
}
