//! Capabilities: the client's, as declared, and the server's, as it declares them.

use serde::Serialize;
use serde_json::{Map, Value};

/// `{}`.
#[derive(Debug, Clone, Copy, Default, wire::Serialize)]
pub(crate) struct Empty {}

/// Client capabilities, as declared at `initialize` (legacy) or per request (modern). Kept as
/// JSON: presence of a key is what counts.
#[derive(Debug, Clone, PartialEq, Default, wire::Serialize, wire::Deserialize)]
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

/// The server's capabilities: tools (a list that never changes), logging, and tasks in the era's
/// way (the legacy `tasks` capability, or the tasks extension).
#[derive(Debug, wire::Serialize)]
pub(crate) struct ServerCapabilities {
    pub(crate) tools: ToolsCapability,
    /// Only on a server with resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<ResourcesCapability>,
    pub(crate) logging: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tasks: Option<LegacyTasksCapability>,
    #[serde(skip_serializing_if = "Extensions::is_empty")]
    pub(crate) extensions: Extensions,
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
            extensions: Extensions::default(),
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
            extensions: Extensions {
                tasks: true,
                skills: false,
            },
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

    /// Declares the skills extension (both eras) when the server has skills, with
    /// `directoryRead`: every skill folder answers `resources/directory/read`.
    pub(crate) fn with_skills(mut self, any: bool) -> Self {
        self.extensions.skills = any;
        self
    }
}

/// `capabilities.prompts`.
#[derive(Debug, Default, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptsCapability {
    pub(crate) list_changed: bool,
}

/// `capabilities.resources`: subscriptions and list changes, both sent through the
/// application's `ResourceNotifier`.
#[derive(Debug, Default, wire::Serialize)]
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
#[derive(Debug, Default, wire::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsCapability {
    pub(crate) list_changed: bool,
}

/// `capabilities.tasks` (2025-11-25).
#[derive(Debug, wire::Serialize)]
pub(crate) struct LegacyTasksCapability {
    pub(crate) cancel: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) list: Option<Empty>,
    pub(crate) requests: TaskRequests,
}

/// `capabilities.tasks.requests`: what may be task-augmented.
#[derive(Debug, wire::Serialize)]
pub(crate) struct TaskRequests {
    pub(crate) tools: ToolsTaskRequests,
}

/// `capabilities.tasks.requests.tools`.
#[derive(Debug, wire::Serialize)]
pub(crate) struct ToolsTaskRequests {
    pub(crate) call: Empty,
}

/// `capabilities.extensions`: the tasks extension (2026-07-28) as `{TASKS_EXTENSION: {}}`, and
/// the skills extension (both eras) as `{SKILLS_EXTENSION: {"directoryRead": true}}`.
#[derive(Debug, Default)]
pub(crate) struct Extensions {
    pub(crate) tasks: bool,
    pub(crate) skills: bool,
}

impl Extensions {
    fn is_empty(&self) -> bool {
        !self.tasks && !self.skills
    }
}

impl Serialize for Extensions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if self.tasks {
            map.serialize_entry(crate::protocol::TASKS_EXTENSION, &Empty {})?;
        }
        if self.skills {
            map.serialize_entry(
                crate::protocol::skill::SKILLS_EXTENSION,
                &serde_json::json!({ "directoryRead": true }),
            )?;
        }
        map.end()
    }
}
