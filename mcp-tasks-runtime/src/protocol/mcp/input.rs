//! What a server asks of a client: elicitation, sampling (`sampling/createMessage`) and roots
//! (`roots/list`).

use serde_json::Value;

use super::content::Content;

/// A server-to-client request as it sits in an input-requests map: `{method, params}`.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content (one block).
    pub content: Content,
}

/// `sampling/createMessage` params.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub(crate) struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}
