//! Reading a tool's result.

use crate::error::Error;
use mcp_tasks_runtime::protocol::{CallToolResult, Content};
use serde::de::DeserializeOwned;

/// A result as `T`: its structured content, or (for servers that send none) its only text block
/// read as JSON. A tool error is [`Error::Tool`].
pub fn structured<T: DeserializeOwned>(result: CallToolResult) -> Result<T, Error> {
    if result.is_error {
        return Err(Error::Tool(result));
    }
    if let Some(value) = result.structured_content {
        return serde_json::from_value(value).map_err(|e| Error::Decode(e.to_string()));
    }
    match result.content.as_slice() {
        [Content::Text { text }] => {
            serde_json::from_str(text).map_err(|e| Error::Decode(e.to_string()))
        }
        _ => Err(Error::Decode(
            "the result has no structured content and no single text block".into(),
        )),
    }
}

/// The text blocks of a result, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
