use crate::protocol::{GetPromptResult, PromptMessage, RpcError};
use crate::tool::ToolError;

/// What a prompt function may return: a `String` (one user message), a `Vec<PromptMessage>`,
/// a [`GetPromptResult`] (messages with a description), or a `Result` of those whose error
/// converts into [`ToolError`]. A prompt's error answers `prompts/get` with a JSON-RPC error:
/// the [`RpcError`] it carries (`ToolError::invalid_params`, ...), or `-32603` with its text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt",
    label = "this is what the prompt returns",
    note = "return a `String` (one user message), a `Vec<PromptMessage>`, a `GetPromptResult`, \
            or a `Result` of those whose error converts into `ToolError`"
)]
pub trait IntoPromptResult<M>: Send + 'static {
    /// The result, or the JSON-RPC error it stands for.
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError>;
}

/// Marker: a value.
#[derive(Debug)]
pub enum ViaValue {}
/// Marker: a `Result`.
#[derive(Debug)]
pub enum ViaResult {}

impl IntoPromptResult<ViaValue> for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(self)
    }
}

impl IntoPromptResult<ViaValue> for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult<ViaValue> for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new([self]))
    }
}

impl IntoPromptResult<ViaValue> for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new([PromptMessage::user(self)]))
    }
}

impl<T, E> IntoPromptResult<ViaResult> for Result<T, E>
where
    T: IntoPromptResult<ViaValue>,
    E: Into<ToolError> + Send + 'static,
{
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        match self {
            Ok(value) => value.into_prompt_result(),
            Err(err) => Err(err.into().into_rpc()),
        }
    }
}
