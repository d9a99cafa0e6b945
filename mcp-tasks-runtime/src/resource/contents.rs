//! What a resource read returns: one or more [`ResourceContents`] items (text, or bytes sent as
//! base64 `blob`), and [`IntoResourceContents`], the conversion from what a `#[resource]`
//! function returns.

use crate::protocol::{ResourceContents, RpcError};
use crate::tool::{Json, ToolError};
use serde::Serialize;

/// Bytes a resource returns as a base64 `blob` (a `Vec<u8>` does the same; this names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// What a `#[resource]` function may return:
///
/// - `String`, `&'static str`: one text item (`mimeType` the resource's `mime_type`, else
///   `text/plain`);
/// - `Vec<u8>`, [`Blob`]: one binary item, base64 `blob` (else `application/octet-stream`);
/// - [`Json<T>`](crate::Json): `T` serialized as one text item (else `application/json`);
/// - [`ResourceContents`], `Vec<ResourceContents>` (several items): as they are;
/// - `Result<T, E>` of those with `E: Into<ToolError>`: `Err` answers a JSON-RPC error (a
///   [`ToolError::rpc`] keeps its code, any other error is `-32603` with its text).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP resource",
    label = "this is what the resource returns",
    note = "return a `String` (text), a `Vec<u8>` or `Blob` (bytes), a `Json<T>` (JSON text), \
            `ResourceContents` or `Vec<ResourceContents>` (several items), or a `Result<T, E>` \
            of those whose error converts into `ToolError`"
)]
pub trait IntoResourceContents: Send + 'static {
    /// The items, for a read of `uri` from a resource declared with `mime_type`.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError>;
}

fn mime(declared: Option<&str>, default: &str) -> Option<String> {
    Some(declared.unwrap_or(default).to_owned())
}

fn text(uri: &str, mime_type: Option<String>, text: String) -> Vec<ResourceContents> {
    vec![ResourceContents::Text {
        uri: uri.to_owned(),
        mime_type,
        text,
        meta: None,
    }]
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(text(uri, mime(m, "text/plain"), self))
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        self.to_owned().into_contents(uri, m)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        let mime_type = m.unwrap_or("application/octet-stream");
        Ok(vec![ResourceContents::blob(uri, mime_type, self)])
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        self.0.into_contents(uri, m)
    }
}

impl<T: Serialize + Send + 'static> IntoResourceContents for Json<T> {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        let json = serde_json::to_string(&self.0)
            .map_err(|e| RpcError::internal(format!("the resource's JSON: {e}")))?;
        Ok(text(uri, mime(m, "application/json"), json))
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(
        mut self,
        _: &str,
        m: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        if let Some(declared) = m {
            for item in &mut self {
                let (ResourceContents::Text { mime_type, .. }
                | ResourceContents::Blob { mime_type, .. }) = item;
                mime_type.get_or_insert_with(|| declared.to_owned());
            }
        }
        Ok(self)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        vec![self].into_contents(uri, m)
    }
}

impl<T: IntoResourceContents, E: Into<ToolError> + Send + 'static> IntoResourceContents
    for Result<T, E>
{
    fn into_contents(self, uri: &str, m: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        match self {
            Ok(value) => value.into_contents(uri, m),
            Err(err) => Err(match err.into().into_outcome() {
                Err(rpc) => rpc,
                // A tool error has no `isError` result to live in here: the read failed.
                Ok(result) => RpcError::internal(
                    result
                        .content
                        .iter()
                        .find_map(|c| match c {
                            crate::protocol::Content::Text { text } => Some(text.clone()),
                            _ => None,
                        })
                        .unwrap_or_else(|| "the resource could not be read".to_owned()),
                ),
            }),
        }
    }
}
