//! MCP messages a tools server needs, in both eras.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `Implementation`: a name and version (`serverInfo`, `clientInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// One piece of tool output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// A link to a resource.
    ResourceLink {
        /// URI.
        uri: String,
        /// Name.
        name: String,
    },
}

impl Content {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<Content>,
    /// Structured content (an object), described by the tool's `outputSchema`.
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(
        rename = "isError",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_error: bool,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::from_content(vec![Content::text(text)])
    }
    /// No content.
    pub fn empty() -> Self {
        Self::from_content(vec![])
    }
    /// These blocks.
    pub fn from_content(content: Vec<Content>) -> Self {
        CallToolResult {
            content,
            structured_content: None,
            is_error: false,
            meta: None,
        }
    }
    /// A tool error with this text.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..Self::text(text)
        }
    }
    /// Structured content, with its JSON as text for clients that only read text.
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            content: vec![Content::text(value.to_string())],
            structured_content: Some(value),
            is_error: false,
            meta: None,
        }
    }
}

/// Behaviour hints of a tool (all optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'static str>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling twice with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world (the internet, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// Client capabilities, as declared at `initialize` (legacy) or per request (modern). Kept as
/// JSON: presence of a key is what counts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientCapabilities(pub Map<String, Value>);

impl ClientCapabilities {
    /// Whether a top-level capability (`elicitation`, `sampling`, `roots`) is declared.
    pub fn has(&self, capability: &str) -> bool {
        self.0.get(capability).is_some_and(|v| !v.is_null())
    }

    /// Whether an extension is declared (`extensions[id]` present).
    pub fn has_extension(&self, id: &str) -> bool {
        self.0
            .get("extensions")
            .and_then(Value::as_object)
            .is_some_and(|e| e.contains_key(id))
    }

    /// Whether the legacy `tasks` capability declares task-augmented requests of this kind.
    pub fn legacy_tasks(&self) -> Option<&Value> {
        self.0.get("tasks")
    }
}

/// A server-to-client request as it sits in an input-requests map: `{method, params}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// Its params.
    #[serde(default = "crate::protocol::jsonrpc::empty_object")]
    pub params: Value,
    /// The key the tool chose for it in `inputRequests` / `inputResponses` (not on the wire
    /// inside the request itself). `None`: the runtime numbers it (`elicit-0`, `sample-1`, ...).
    #[serde(skip)]
    pub key: Option<String>,
}

impl InputRequest {
    /// A request with these params.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        InputRequest {
            method: method.into(),
            params,
            key: None,
        }
    }

    /// Names the request's key in `inputRequests` (unique within one call or task).
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The client capability this request needs.
    pub fn required_capability(&self) -> Option<&'static str> {
        match self.method.as_str() {
            "elicitation/create" => Some("elicitation"),
            "sampling/createMessage" => Some("sampling"),
            "roots/list" => Some("roots"),
            _ => None,
        }
    }
}

/// A message in a sampling request or result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content (one block).
    pub content: Content,
}

/// `sampling/createMessage` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to produce.
    pub max_tokens: u32,
    /// A system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Model preferences, as JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

impl CreateMessageParams {
    /// One user message of text.
    pub fn user_text(text: impl Into<String>, max_tokens: u32) -> Self {
        CreateMessageParams {
            messages: vec![SamplingMessage {
                role: "user".into(),
                content: Content::text(text),
            }],
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            temperature: None,
        }
    }
}

/// `sampling/createMessage` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Role (normally `assistant`).
    pub role: String,
    /// The content.
    pub content: Content,
    /// The model that answered.
    pub model: String,
    /// Why it stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// The text, when the content is text.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// A client root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}
