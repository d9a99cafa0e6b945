//! Content: what a tool result, a prompt message or a sampling message carries, and a resource's
//! contents.

use serde_json::{Map, Value};

/// One piece of tool output.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource, which the client reads with `resources/read` (a task's outputs:
    /// [`ToolContext::publish_text`](crate::ToolContext::publish_text)).
    ResourceLink {
        /// URI.
        uri: String,
        /// Name.
        name: String,
        /// MIME type, if known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Size in bytes (before any base64 encoding), if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// A resource's contents, embedded in the result.
    Resource {
        /// The contents.
        resource: ResourceContents,
    },
}

impl Content {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image from its bytes (sent base64-encoded), with its MIME type (`image/png`, ...).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64_of(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// Audio from its bytes (sent base64-encoded), with its MIME type (`audio/wav`, ...).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64_of(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource: these contents, as the resource at their URI holds them.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource { resource: contents }
    }
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The contents of a resource: text, or bytes (base64 on the wire).
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// `_meta`: what an extension says of these contents (MCP Apps: `ui`, the view's
        /// content security policy and border preference).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Binary contents.
    Blob {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
        /// `_meta`, as for text.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
}

impl ResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents of the resource at `uri`, from its bytes (sent base64-encoded).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: base64_of(bytes.as_ref()),
            meta: None,
        }
    }

    /// These contents with `key` set in their `_meta` (an MCP App's view, for instance, says its
    /// content security policy under `ui`: `.with_meta("ui", json!({ "prefersBorder": true }))`).
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let (ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. }) = &mut self;
        meta.get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }
}
