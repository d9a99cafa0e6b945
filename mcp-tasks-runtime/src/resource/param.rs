//! The parameters of a resource function: template variables (decoded from the URI's text like
//! a tool argument from JSON), and what the server injects ([`ToolContext`], [`State<T>`]).

use crate::protocol::RpcError;
use crate::tool::{ParamsBuilder, State, StateNeed, ToolContext};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;

/// One `resources/read`: the URI read, and the values of the template's variables in it.
#[derive(Debug, Clone, Default)]
pub struct ResourceRequest {
    uri: String,
    vars: HashMap<String, String>,
}

impl ResourceRequest {
    /// A read of `uri`, with the variables a template matched in it.
    pub fn new(uri: impl Into<String>, vars: HashMap<String, String>) -> Self {
        ResourceRequest {
            uri: uri.into(),
            vars,
        }
    }

    /// The URI read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A variable's value (percent-decoded), if the URI defines it.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// A template variable's value as `T`: a string-like `T` takes the text as it is; any other
/// (`u32`, `bool`, an enum) reads it as JSON (`42`, `true`, or the variant's name). A variable
/// the URI leaves undefined is `null`, which an `Option<T>` takes as `None`.
pub(crate) fn var_value<T: DeserializeOwned>(
    request: &ResourceRequest,
    name: &str,
) -> Result<T, RpcError> {
    let bad = |why: String| {
        RpcError::invalid_params(format!(
            "invalid URI `{}`: template variable `{name}` {why}",
            request.uri
        ))
        .with_data(serde_json::json!({ "uri": request.uri, "variable": name }))
    };
    let Some(text) = request.var(name) else {
        return serde_json::from_value(Value::Null).map_err(|_| bad("is missing".to_owned()));
    };
    match serde_json::from_value::<T>(Value::String(text.to_owned())) {
        Ok(value) => Ok(value),
        Err(as_string) => serde_json::from_str::<T>(text)
            .map_err(|_| bad(format!("= `{text}` does not fit: {as_string}"))),
    }
}

/// A template variable's type, as the expansion checks it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource template variable",
    label = "a template variable's type must implement `serde::Deserialize`",
    note = "the variable's text is decoded as a string, or else as JSON (`42`, `true`); add \
            `#[derive(Deserialize)]` or take a `String`"
)]
pub trait IsResourceVar: DeserializeOwned + Send + 'static {}

// `do_not_recommend`: a type that is not a variable gets this trait's message, not serde's list
// of every type that does implement `Deserialize`.
#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + Send + 'static> IsResourceVar for T {}

/// What the server hands a resource function besides its variables: the [`ToolContext`] and
/// application [`State<T>`]. A parameter that names no template variable must be one of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a variable of this resource's URI template nor injected by mcp-tasks",
    label = "this parameter names no `{{variable}}` in the resource's `uri`",
    note = "a resource function takes its URI template's variables (by name) and, besides them, \
            only `ToolContext` and `State<T>`; add `{{name}}` to the `uri` or remove the parameter"
)]
pub trait ResourceInjected<M>: Sized + Send + 'static {
    /// Records what the parameter needs from the server.
    fn describe(params: &mut ParamsBuilder);
    /// The value for one read.
    fn inject(ctx: &ToolContext) -> Result<Self, RpcError>;
}

/// Marker: the context.
#[derive(Debug)]
pub enum InjectContext {}
/// Marker: application state.
#[derive(Debug)]
pub enum InjectState {}

impl ResourceInjected<InjectContext> for ToolContext {
    fn describe(_: &mut ParamsBuilder) {}
    fn inject(ctx: &ToolContext) -> Result<Self, RpcError> {
        Ok(ctx.clone())
    }
}

impl<T: Send + Sync + 'static> ResourceInjected<InjectState> for State<T> {
    fn describe(params: &mut ParamsBuilder) {
        params.needs_state(StateNeed::of::<T>());
    }
    fn inject(ctx: &ToolContext) -> Result<Self, RpcError> {
        ctx.state::<T>().ok_or_else(|| {
            RpcError::internal(format!(
                "no application state of type `{}` is registered (register it with `Server::state`)",
                std::any::type_name::<T>()
            ))
        })
    }
}
