//! Prompts and completions on the wire (both eras: `prompts/list`, `prompts/get`,
//! `completion/complete`).

use super::mcp::{Cacheable, Content};
use serde_json::{Map, Value};

/// Who a prompt message speaks as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

impl Role {
    /// The wire name: `user` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One message of a prompt: a role and one piece of content (text, an image, audio, an embedded
/// resource or a resource link).
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

/// The result of `prompts/get`: the messages, and an optional description of this rendering of
/// the prompt.
#[derive(Debug, Clone, PartialEq, Default, wire::Serialize, wire::Deserialize)]
pub struct GetPromptResult {
    /// A description of the prompt as rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// These messages, with no description.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        GetPromptResult {
            description: None,
            messages: messages.into_iter().collect(),
        }
    }

    /// Adds a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// One argument of a prompt (its value is a string), as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, wire::Serialize, wire::Deserialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (from the parameter's doc comment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must carry it.
    #[serde(default)]
    pub required: bool,
}

/// A prompt as `prompts/list` shows it, owned: what a client reads (the server writes the same
/// object from its registry).
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct ListedPrompt {
    /// Its name (what `prompts/get` names).
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes, in the server's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// The other keys, as sent (`icons`, `_meta`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One prompt as the server writes it in `prompts/list` (borrowing from its registry); a client
/// reads the same object as a [`ListedPrompt`].
#[derive(Debug, wire::Serialize)]
pub(crate) struct PromptDescription<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) arguments: &'a [PromptArgument],
}

/// `prompts/list`'s result.
#[derive(Debug, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListPromptsResult<'a> {
    pub(crate) prompts: Vec<PromptDescription<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
    /// 2026-07-28: a `CacheableResult`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<Cacheable>,
}
