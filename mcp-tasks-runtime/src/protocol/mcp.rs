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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The severity of a log message (`notifications/message`), least severe first: the syslog levels
/// of RFC 5424, as MCP names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name (`debug`, `info`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Reads a level from the wire; the error names the value and the levels there are.
    pub fn from_wire(value: &Value) -> Result<Self, String> {
        let names = || {
            LogLevel::ALL
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match value {
            Value::String(s) => LogLevel::ALL
                .into_iter()
                .find(|l| l.as_str() == s)
                .ok_or_else(|| format!("unknown log level `{s}`; the levels are {}", names())),
            other => Err(format!(
                "a log level must be a string (one of {}), found {}",
                names(),
                crate::protocol::jsonrpc::json_kind(other)
            )),
        }
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
pub(crate) struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

// ---- What the server declares: `initialize`, `server/discover`, `tools/list` results ----------
//
// Written through a tree (`serde_json::to_value`), like every result: their keys come out sorted
// whatever the order of the fields.

/// `{}`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Empty {}

/// The result of `initialize` (2025-11-25).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult<'a> {
    pub(crate) protocol_version: &'a str,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) server_info: &'a Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// The result of `server/discover` (2026-07-28), a cacheable result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult<'a> {
    /// Every version the server speaks, the modern ones first.
    pub(crate) supported_versions: Vec<&'a str>,
    pub(crate) capabilities: ServerCapabilities,
    #[serde(flatten)]
    pub(crate) cache: Cacheable,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// How long a client may keep a 2026-07-28 `CacheableResult`, and with whom it may share it.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Cacheable {
    pub(crate) ttl_ms: u64,
    pub(crate) cache_scope: &'static str,
}

impl Cacheable {
    /// Kept for no time, and never shared across clients (what the server answers differs by era).
    pub(crate) const PRIVATE: Cacheable = Cacheable {
        ttl_ms: 0,
        cache_scope: "private",
    };
}

/// The server's capabilities: tools (a list that never changes), logging, and tasks in the era's
/// way (the legacy `tasks` capability, or the tasks extension).
#[derive(Debug, Serialize)]
pub(crate) struct ServerCapabilities {
    pub(crate) tools: ToolsCapability,
    /// Only on a server with resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<ResourcesCapability>,
    pub(crate) logging: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tasks: Option<LegacyTasksCapability>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) extensions: Option<TasksExtension>,
    /// Only when the server has prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompts: Option<PromptsCapability>,
    /// Only when some prompt argument (or resource-template variable) has a completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) completions: Option<Empty>,
}

impl ServerCapabilities {
    /// 2025-11-25: `tasks.list` only where requestors can be told apart (receivers that cannot
    /// SHOULD NOT declare it).
    pub(crate) fn legacy(list: bool) -> Self {
        ServerCapabilities {
            tools: ToolsCapability::default(),
            resources: None,
            logging: Empty {},
            tasks: Some(LegacyTasksCapability {
                cancel: Empty {},
                list: list.then_some(Empty {}),
                requests: TaskRequests {
                    tools: ToolsTaskRequests { call: Empty {} },
                },
            }),
            extensions: None,
            prompts: None,
            completions: None,
        }
    }

    /// 2026-07-28: the tasks extension.
    pub(crate) fn modern() -> Self {
        ServerCapabilities {
            tools: ToolsCapability::default(),
            resources: None,
            logging: Empty {},
            tasks: None,
            extensions: Some(TasksExtension),
            prompts: None,
            completions: None,
        }
    }

    /// Declares `prompts` when the server has any, and `completions` when any completion exists.
    pub(crate) fn with_prompts(mut self, prompts: bool, completions: bool) -> Self {
        self.prompts = prompts.then(PromptsCapability::default);
        self.completions = completions.then_some(Empty {});
        self
    }
}

/// `capabilities.prompts`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptsCapability {
    pub(crate) list_changed: bool,
}

/// `capabilities.resources`: subscriptions and list changes, both sent through the
/// application's `ResourceNotifier`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourcesCapability {
    pub(crate) subscribe: bool,
    pub(crate) list_changed: bool,
}

impl ServerCapabilities {
    /// With `capabilities.resources` when the server has any.
    pub(crate) fn with_resources(mut self, any: bool) -> Self {
        self.resources = any.then_some(ResourcesCapability {
            subscribe: true,
            list_changed: true,
        });
        self
    }
}

/// `capabilities.tools`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsCapability {
    pub(crate) list_changed: bool,
}

/// `capabilities.tasks` (2025-11-25).
#[derive(Debug, Serialize)]
pub(crate) struct LegacyTasksCapability {
    pub(crate) cancel: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) list: Option<Empty>,
    pub(crate) requests: TaskRequests,
}

/// `capabilities.tasks.requests`: what may be task-augmented.
#[derive(Debug, Serialize)]
pub(crate) struct TaskRequests {
    pub(crate) tools: ToolsTaskRequests,
}

/// `capabilities.tasks.requests.tools`.
#[derive(Debug, Serialize)]
pub(crate) struct ToolsTaskRequests {
    pub(crate) call: Empty,
}

/// `capabilities.extensions` declaring the tasks extension (2026-07-28): `{TASKS_EXTENSION: {}}`.
#[derive(Debug)]
pub(crate) struct TasksExtension;

impl Serialize for TasksExtension {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(super::TASKS_EXTENSION, &Empty {})?;
        map.end()
    }
}

/// The result of `tools/list`.
#[derive(Debug, Serialize)]
pub(crate) struct ListToolsResult<'a> {
    pub(crate) tools: Vec<ToolDescription<'a>>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
    /// 2026-07-28: a `CacheableResult`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<Cacheable>,
}

/// One tool as `tools/list` shows it.
#[derive(Debug, Serialize)]
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
        #[derive(Serialize)]
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
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Execution {
    /// `forbidden`, `optional` or `required`.
    pub(crate) task_support: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_ui_is_listed_in_both_forms_hosts_read() {
        let both = ToolMeta {
            resource_uri: "ui://weather/view.html",
            visibility: None,
        };
        assert_eq!(
            serde_json::to_value(&both).unwrap(),
            json!({
                "ui": { "resourceUri": "ui://weather/view.html" },
                "ui/resourceUri": "ui://weather/view.html",
            })
        );
        let app = ToolMeta {
            resource_uri: "ui://weather/view.html",
            visibility: Some(&["app"]),
        };
        assert_eq!(
            serde_json::to_value(&app).unwrap()["ui"],
            json!({ "resourceUri": "ui://weather/view.html", "visibility": ["app"] })
        );
    }

    #[test]
    fn binary_content_is_base64_and_embedded_resources_nest_their_contents() {
        let image = serde_json::to_value(Content::image([0xff, 0x00, 0x10], "image/png")).unwrap();
        assert_eq!(
            image,
            json!({ "type": "image", "data": "/wAQ", "mimeType": "image/png" })
        );
        let audio = serde_json::to_value(Content::audio(b"RIFF", "audio/wav")).unwrap();
        assert_eq!(
            audio,
            json!({ "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" })
        );
        let text = Content::resource(ResourceContents::text("test://a", "text/plain", "hi"));
        let wire = serde_json::to_value(&text).unwrap();
        assert_eq!(
            wire,
            json!({ "type": "resource", "resource": { "uri": "test://a", "mimeType": "text/plain", "text": "hi" } })
        );
        assert_eq!(serde_json::from_value::<Content>(wire).unwrap(), text);
        let blob = Content::resource(ResourceContents::blob(
            "test://b",
            "application/octet-stream",
            [1, 2],
        ));
        let wire = serde_json::to_value(&blob).unwrap();
        assert_eq!(wire["resource"]["blob"], "AQI=");
        assert!(wire["resource"].get("text").is_none());
        assert_eq!(serde_json::from_value::<Content>(wire).unwrap(), blob);
    }

    #[test]
    fn log_levels_order_by_severity_and_bad_ones_are_named() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        for level in LogLevel::ALL {
            assert_eq!(LogLevel::from_wire(&json!(level.as_str())), Ok(level));
            assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
        }
        let err = LogLevel::from_wire(&json!("verbose")).unwrap_err();
        assert!(
            err.contains("`verbose`") && err.contains("emergency"),
            "{err}"
        );
        let err = LogLevel::from_wire(&json!(3)).unwrap_err();
        assert!(
            err.contains("must be a string") && err.contains("number"),
            "{err}"
        );
    }
}
