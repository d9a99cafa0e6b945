//! Tools: `tools/call`'s result, and `tools/list`.

use serde::Serialize;
use serde_json::{Map, Value};

use super::content::Content;
use super::init::Cacheable;
use crate::tool::TaskSupport;

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
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

/// Behaviour hints of a tool (all optional). Written, not read: its title is `'static` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, wire::Serialize)]
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

/// A tool as `tools/list` shows it, owned: what a client reads (the server writes the same object
/// from its registry, borrowing the schemas).
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    /// Its name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, as sent.
    #[serde(default = "crate::protocol::jsonrpc::empty_object")]
    pub input_schema: Value,
    /// The JSON Schema of its structured result, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// 2025-11-25 only: whether the tool runs as a task (`execution.taskSupport`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// The other keys, as sent (`annotations`, `_meta`, `icons`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ListedTool {
    /// Its `execution.taskSupport` (absent: `forbidden`). A 2025-11-25 listing; in 2026-07-28 the
    /// server decides per call and lists none.
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .and_then(|e| e.task_support)
            .unwrap_or(TaskSupport::Forbidden)
    }
}

/// A tool's `execution` (2025-11-25), as a client reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// `forbidden` (also when absent), `optional` or `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// The result of `tools/list`.
#[derive(Debug, wire::Serialize)]
pub(crate) struct ListToolsResult<'a> {
    pub(crate) tools: Vec<ToolDescription<'a>>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
    /// 2026-07-28: a `CacheableResult`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<Cacheable>,
}

/// One tool as `tools/list` shows it, as the server writes it (borrowing from its registry); a
/// client reads the same object as a [`ListedTool`].
#[derive(Debug, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolDescription<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    pub(crate) input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "ToolAnnotations::is_empty")]
    pub(crate) annotations: ToolAnnotations,
    /// 2025-11-25 only: `task_support` is published there, and is server policy in 2026-07-28.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) execution: Option<Execution>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<ToolMeta<'a>>,
}

/// A tool's `_meta`: its MCP Apps UI (ext-apps `McpUiToolMeta`), as `ui: {resourceUri,
/// visibility?}` and, for hosts that read the older form, `"ui/resourceUri"`.
#[derive(Debug)]
pub(crate) struct ToolMeta<'a> {
    pub(crate) resource_uri: &'a str,
    /// `None`: both the model and the app (the default, left out).
    pub(crate) visibility: Option<&'a [&'a str]>,
}

impl Serialize for ToolMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        #[derive(wire::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Ui<'a> {
            resource_uri: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            visibility: Option<&'a [&'a str]>,
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry(
            "ui",
            &Ui {
                resource_uri: self.resource_uri,
                visibility: self.visibility,
            },
        )?;
        map.serialize_entry("ui/resourceUri", self.resource_uri)?;
        map.end()
    }
}

/// A tool's `execution` (2025-11-25).
#[derive(Debug, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Execution {
    /// `forbidden`, `optional` or `required`.
    pub(crate) task_support: &'static str,
}
