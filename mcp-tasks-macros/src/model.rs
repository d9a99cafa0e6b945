//! The validated tool: defaults filled in, every value checked. Nothing here can be wrong, so
//! `expand` only reads it and cannot fail.

use darling::FromMeta;

/// Whether the tool may, must, or must not run as a task. The attribute values are the MCP wire
/// strings of `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, FromMeta)]
#[darling(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client supports tasks, inline otherwise.
    Optional,
    /// Always a task.
    Required,
}

impl TaskSupport {
    /// Every value, as written in the attribute.
    pub const VALUES: [&'static str; 3] = ["forbidden", "optional", "required"];

    /// The variant's name in the runtime's `TaskSupport`.
    pub fn variant(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "Forbidden",
            TaskSupport::Optional => "Optional",
            TaskSupport::Required => "Required",
        }
    }
}

/// Behaviour hints (`ToolAnnotations`); `None` leaves a hint unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Annotations {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
}

/// `ui = "ui://..."` (MCP Apps): the UI resource a host renders for the tool's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ui {
    /// The `ui://` URI of the resource.
    pub resource_uri: String,
    /// `ui_visibility`: `None` for both the model and the app.
    pub visibility: Option<UiVisibility>,
}

/// `ui_visibility = "model" | "app"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UiVisibility {
    /// Only the model (the agent) calls it.
    Model,
    /// Only the app (the rendered UI) calls it; hosts keep it from the model.
    App,
}

impl UiVisibility {
    /// Every value, as written in the attribute.
    pub const VALUES: [&'static str; 2] = ["model", "app"];

    /// The variant's name in the runtime's `UiVisibility`.
    pub fn variant(self) -> &'static str {
        match self {
            UiVisibility::Model => "Model",
            UiVisibility::App => "App",
        }
    }
}

/// One parameter of the tool function, in order.
#[derive(Debug, Clone)]
pub struct Param {
    /// The argument name (the binding's name without `r#`, or `argN` for a pattern).
    pub name: String,
    /// From the parameter's doc comment.
    pub doc: Option<String>,
    /// The parameter type as written (its span is where a bad type is reported).
    pub ty: syn::Type,
}

/// A `#[tool]` function, ready to expand.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The user's function, re-emitted as written except for the parameter doc comments.
    pub item: syn::ItemFn,
    /// Path of the runtime crate (`::mcp_tasks_runtime` unless `crate = "..."`).
    pub runtime: syn::Path,
    /// The MCP tool name, already checked against the naming rules.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description, from `description = "..."` or the doc comment.
    pub description: Option<String>,
    /// Declared task support.
    pub task_support: TaskSupport,
    /// Task time-to-live in milliseconds.
    pub ttl_ms: Option<u64>,
    /// Suggested poll interval in milliseconds.
    pub poll_interval_ms: Option<u64>,
    /// Behaviour hints.
    pub annotations: Annotations,
    /// Start inline; become a task at `ctx.start_task()`.
    pub defer_task: bool,
    /// `durable`: the task's body may run again on another instance.
    pub durable: bool,
    /// Promotion threshold in milliseconds (`optional` tools only).
    pub promote_after_ms: Option<u64>,
    /// The MCP Apps UI resource (`ui = "ui://..."`) and who may call the tool.
    pub ui: Option<Ui>,
    /// The OAuth scopes a caller needs (`scope = "a b"`), each checked against RFC 6749's
    /// scope-token characters.
    pub scopes: Vec<String>,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// The `async fn`'s output type (`()` at the function name when omitted).
    pub output: syn::Type,
}

impl ToolSpec {
    /// The function's name: also the descriptor type's name.
    pub fn ident(&self) -> &syn::Ident {
        &self.item.sig.ident
    }
}

/// What the fallback needs when validation failed: enough to declare the descriptor type, so the
/// user's `.tool::<name>()` does not add an error of its own.
#[derive(Debug, Clone)]
pub struct Fallback {
    /// The user's function (parameter docs stripped).
    pub item: syn::ItemFn,
    /// The runtime path, if it was valid.
    pub runtime: Option<syn::Path>,
    /// Whether a descriptor type can be declared next to the item at all (not in an `impl`).
    pub declare: bool,
}
