//! Resources: `resources/list` and `resources/templates/list` (every page), and `resources/read`
//! in both eras (MRTR rounds in 2026-07-28), its blobs decoded.

use super::Client;
use crate::error::Error;
use base64::Engine as _;
use mcp_tasks_runtime::protocol::{ListedResourceTemplate, ResourceContents, RpcError};
use mcp_tasks_runtime::resource::ListedResource;
use serde::Deserialize;
use serde_json::{Map, Value};

/// What `resources/read` returned: one or more contents (a directory may give several).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadResourceResult {
    /// The contents, in the server's order.
    pub contents: Vec<ResourceContent>,
    /// The whole result, exactly as sent (blobs still base64; `_meta`, caching hints).
    pub raw: Value,
}

/// One piece of a resource's contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceContent {
    /// The URI these contents are of.
    pub uri: String,
    /// Their MIME type, when the server says.
    pub mime_type: Option<String>,
    /// The text, or the bytes (decoded from the wire's base64).
    pub data: ResourceData,
}

/// A resource's contents: text, or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceData {
    /// Text (`text` on the wire).
    Text(String),
    /// Bytes (`blob` on the wire, base64; decoded here).
    Blob(Vec<u8>),
}

impl ResourceData {
    /// The text, if these are text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceData::Text(t) => Some(t),
            ResourceData::Blob(_) => None,
        }
    }

    /// The bytes: a blob's, or a text's UTF-8.
    pub fn bytes(&self) -> &[u8] {
        match self {
            ResourceData::Text(t) => t.as_bytes(),
            ResourceData::Blob(b) => b,
        }
    }
}

impl ResourceContent {
    /// One `TextResourceContents` or `BlobResourceContents`, its blob decoded.
    fn decode(method: &str, contents: ResourceContents) -> Result<Self, Error> {
        Ok(match contents {
            ResourceContents::Text {
                uri,
                mime_type,
                text,
                ..
            } => ResourceContent {
                uri,
                mime_type,
                data: ResourceData::Text(text),
            },
            ResourceContents::Blob {
                uri,
                mime_type,
                blob,
                ..
            } => ResourceContent {
                data: ResourceData::Blob(
                    base64::engine::general_purpose::STANDARD
                        .decode(&blob)
                        .map_err(|e| {
                            Error::invalid(method, format!("the blob of {uri} is not base64: {e}"))
                        })?,
                ),
                uri,
                mime_type,
            },
        })
    }
}

/// Whether a `resources/read` error says the resource does not exist: `-32602` (2025-11-25 and
/// 2026-07-28; SEP-2164 adds `data.uri`) or the `-32002` of earlier versions.
fn is_not_found(error: &RpcError) -> bool {
    error.code == RpcError::INVALID_PARAMS || error.code == -32002
}

impl Client {
    /// Every resource (all pages of `resources/list`). Resources that a template describes are
    /// listed by [`list_resource_templates`](Self::list_resource_templates), not here.
    pub async fn list_resources(&self) -> Result<Vec<ListedResource>, Error> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template (all pages of `resources/templates/list`).
    pub async fn list_resource_templates(&self) -> Result<Vec<ListedResourceTemplate>, Error> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Reads a resource (a listed one, or a URI a template describes). Blobs are decoded:
    /// [`ResourceData::Blob`] holds the bytes (the base64 text is in
    /// [`raw`](ReadResourceResult::raw)). In 2026-07-28 the server may first ask for input
    /// (`InputRequiredResult`): the input handler answers and the read is sent again, as for a
    /// tool call. A URI the server does not know is [`Error::ResourceNotFound`]; any other
    /// JSON-RPC error is [`Error::Rpc`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let method = "resources/read";
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let outcome = if self.inner.era.is_modern() {
            self.request_answering(method, params).await?
        } else {
            self.inner.request(method, Value::Object(params)).await?
        };
        let raw = match outcome {
            Ok(raw) => raw,
            Err(error) if is_not_found(&error) => {
                return Err(Error::ResourceNotFound {
                    uri: uri.to_owned(),
                    error,
                });
            }
            Err(error) => {
                return Err(Error::Rpc {
                    method: method.into(),
                    error,
                });
            }
        };
        check_complete(method, &raw)?;
        /// `ReadResourceResult` on the wire.
        #[derive(mcp_tasks_wire::Deserialize)]
        struct Read {
            contents: Vec<ResourceContents>,
        }
        let read = Read::deserialize(&raw).map_err(|e| Error::invalid(method, e.to_string()))?;
        let contents = (read.contents.into_iter())
            .map(|c| ResourceContent::decode(method, c))
            .collect::<Result<_, _>>()?;
        Ok(ReadResourceResult { contents, raw })
    }
}

/// A final answer's `resultType` must be `complete` (or absent, from an earlier-protocol server).
pub(super) fn check_complete(method: &str, raw: &Value) -> Result<(), Error> {
    match raw.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(()),
        Some(other) => Err(Error::invalid(
            method,
            format!("unknown resultType {other:?}"),
        )),
    }
}
