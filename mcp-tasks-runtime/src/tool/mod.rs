//! Tools: the [`Tool`] trait that `#[tool]` implements, argument decoding, result conversion, the
//! registry, and the [`ToolContext`] a tool uses to reach the client.
//!
//! This layer knows `protocol` only. It reaches the task engine and the client through the
//! [`ContextBackend`] trait, which the layers below implement.

mod caller;
pub(crate) mod context;
mod error;
mod headers;
mod output;
mod param;
pub(crate) mod registry;
#[cfg(feature = "schemars")]
pub(crate) mod schema;
mod state;

pub use caller::{Principal, RequestInfo};
#[cfg(feature = "schemars")]
pub use context::Elicit;
pub(crate) use context::{ContextBackend, InputFuture, PublishFuture};
pub use context::{ElicitOutcome, InputError, ToolContext};
pub use error::{ArgumentError, ToolError};
pub(crate) use headers::HeaderParam;
#[cfg(feature = "http")]
pub(crate) use headers::header_matches;
pub use output::{IntoToolResult, Json};
pub use param::{Args, Arguments, ParamsBuilder, ToolParam};
pub(crate) use registry::{RegisteredTool, ToolRegistry};
pub use state::State;
pub(crate) use state::{StateMap, StateNeed};

use crate::protocol::{CallToolResult, RpcError, ToolAnnotations};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// Whether a tool may, must, or must not run as a task. The values are the MCP wire strings of
/// `execution.taskSupport` (protocol 2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, wire::Serialize, wire::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client supports tasks, inline otherwise.
    Optional,
    /// Always a task; clients that cannot run tasks get an error.
    Required,
}

impl TaskSupport {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Everything about a tool that is known at compile time.
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo {
    /// The tool name (MCP tool-name rules: 1-128 of `A-Za-z0-9_-.`).
    pub name: &'static str,
    /// Human-readable title.
    pub title: Option<&'static str>,
    /// Description, from the doc comment unless overridden.
    pub description: Option<&'static str>,
    /// Declared task support.
    pub task_support: TaskSupport,
    /// How long a task's record is kept after it ended (its `ttl`; not a limit on how long it
    /// runs); `None` takes the server default.
    pub ttl: Option<Duration>,
    /// Suggested poll interval; `None` takes the server default.
    pub poll_interval: Option<Duration>,
    /// In the modern era, start inline and become a task only when the tool calls
    /// [`ToolContext::start_task`]: input asked before that goes through MRTR
    /// (`InputRequiredResult`), so a tool can gather what it needs before the task exists.
    pub defer_task: bool,
    /// The task survives its process (`#[tool(durable)]`): when the instance running it dies or
    /// drains, another instance sharing the store runs the body again, from the task's stored
    /// arguments, with the answers it already received and its last checkpoint. The body may
    /// so run more than once (never twice at the same time): what it does must bear that.
    pub durable: bool,
    /// Promotion (`#[tool(promote_after = "30s")]`, `task_support = "optional"` only): in the
    /// modern era, a call from a client that declared the tasks extension starts inline and
    /// becomes a task if it is still running after this long. `None`: the server's setting
    /// ([`ServerBuilder::promote_after`](crate::ServerBuilder::promote_after) for this tool wins over this,
    /// this over [`ServerConfig::promote_after`](crate::ServerConfig::promote_after)).
    pub promote_after: Option<Duration>,
    /// Behaviour hints published in `tools/list`.
    pub annotations: ToolAnnotations,
    /// The MCP Apps UI resource a host renders for this tool (`#[tool(ui = "ui://...")]`),
    /// published in `tools/list` as `_meta.ui`.
    pub ui: Option<ToolUi>,
    /// The OAuth scopes a caller's token must grant, all of them, to call this tool
    /// (`#[tool(scope = "research")]`, space-separated as OAuth writes scopes). Empty: any
    /// authenticated caller may. Checked over HTTP on the request's token (a token without one
    /// gets HTTP 403 `insufficient_scope` naming them); callers not limited by scopes (static
    /// tokens, stdio) are not checked.
    pub scopes: &'static [&'static str],
}

/// An MCP Apps UI for a tool (`@modelcontextprotocol/ext-apps`, extension
/// `io.modelcontextprotocol/ui`): `tools/list` shows it as `_meta.ui.resourceUri` (and the older
/// `_meta["ui/resourceUri"]` key, which some hosts still read), and a host that renders apps
/// reads that resource (`text/html;profile=mcp-app`) and shows it with the tool's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolUi {
    /// The `ui://` URI of the UI resource, which the server must also serve.
    pub resource_uri: &'static str,
    /// Who may call the tool (`_meta.ui.visibility`).
    pub visibility: UiVisibility,
}

/// Who may call a tool that has a UI (`#[tool(ui_visibility = "...")]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UiVisibility {
    /// The model and the app (the default; `visibility` is left out of the listing).
    #[default]
    ModelAndApp,
    /// Only the model (`["model"]`).
    Model,
    /// Only the app, from its rendered UI (`["app"]`): hosts keep it from the model.
    App,
}

impl UiVisibility {
    /// The wire list, `None` for the default.
    pub(crate) fn wire(self) -> Option<&'static [&'static str]> {
        match self {
            UiVisibility::ModelAndApp => None,
            UiVisibility::Model => Some(&["model"]),
            UiVisibility::App => Some(&["app"]),
        }
    }
}

/// The future a tool call runs: the converted tool result, or a JSON-RPC error.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<CallToolResult, RpcError>> + Send>>;

/// A tool. `#[tool]` implements this on a type named after the function; implement it by hand only
/// when a macro will not do.
pub trait Tool: Send + Sync + 'static {
    /// The compile-time description of the tool.
    const INFO: ToolInfo;

    /// Describes each parameter (builds the input schema).
    fn describe(params: &mut ParamsBuilder);

    /// The output schema, if the tool returns structured content.
    fn output_schema() -> Option<serde_json::Value>;

    /// The input schema, as `tools/list` shows it (built with [`describe`](Self::describe)): for
    /// tests of a tool's description.
    fn input_schema() -> serde_json::Value {
        let mut params = ParamsBuilder::default();
        Self::describe(&mut params);
        params.finish()
    }

    /// Decodes the arguments and starts the call. Argument errors come back before anything runs.
    fn call(ctx: ToolContext, args: Arguments) -> Result<ToolFuture, ArgumentError>;
}
