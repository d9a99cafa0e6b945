use crate::completion::Completer;
use crate::protocol::PromptArgument;
use crate::protocol::jsonrpc::json_kind;
use crate::tool::{ArgumentError, State, StateNeed, ToolContext};
use serde_json::{Map, Value};

/// The `arguments` of a `prompts/get`, taken apart one parameter at a time. Prompt arguments
/// are strings on the wire.
#[derive(Debug, Default)]
pub struct PromptArguments {
    map: Map<String, Value>,
}

impl PromptArguments {
    /// Wraps the `arguments` value of a `prompts/get`: absent or `null` means none; anything other
    /// than an object is `-32602`.
    pub fn new(value: Option<Value>) -> Result<Self, ArgumentError> {
        match value {
            None | Some(Value::Null) => Ok(PromptArguments::default()),
            Some(Value::Object(map)) => Ok(PromptArguments { map }),
            Some(other) => Err(ArgumentError::whole(format_args!(
                "`arguments` must be an object of strings, found {}",
                json_kind(&other)
            ))),
        }
    }

    /// Takes one argument out: `None` when absent (or `null`), an error when it is not a string.
    pub fn take(&mut self, name: &str) -> Result<Option<String>, ArgumentError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ArgumentError::invalid(
                name,
                format_args!("prompt arguments are strings, found {}", json_kind(&other)),
            )),
        }
    }
}

/// Describes a prompt as its parameters declare it: its arguments, the state it takes, and the
/// completion of its arguments.
#[derive(Debug, Default)]
pub struct PromptBuilder {
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) states: Vec<StateNeed>,
    pub(crate) completers: Vec<(&'static str, Completer)>,
}

impl PromptBuilder {
    /// Adds an argument.
    pub fn argument(
        &mut self,
        name: &'static str,
        description: Option<&'static str>,
        required: bool,
    ) {
        self.arguments.push(PromptArgument {
            name: name.into(),
            title: None,
            description: description.map(Into::into),
            required,
        });
    }

    /// Records that the prompt takes application state of this type.
    pub fn needs_state(&mut self, need: StateNeed) {
        if !self.states.contains(&need) {
            self.states.push(need);
        }
    }

    /// Completes `argument` with `completer` (`#[complete(...)]` on a parameter).
    pub fn complete(&mut self, argument: &'static str, completer: Completer) {
        self.completers.push((argument, completer));
    }

    /// The arguments so far, in order.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }
}

/// Something a prompt function can take as a parameter: a `String` argument (required), an
/// `Option<String>` argument (optional), the injected [`ToolContext`], or [`State<T>`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as an MCP prompt parameter",
    label = "prompt arguments are strings on the wire",
    note = "take a required argument as `String` and an optional one as `Option<String>` (parse \
            it yourself); the injected context is `ToolContext`; application state is \
            `State<T>`, where `T` must be `Send + Sync + 'static`"
)]
pub trait PromptParam<M>: Sized + Send + 'static {
    /// Adds this parameter to the prompt's description.
    fn describe(prompt: &mut PromptBuilder, name: &'static str, description: Option<&'static str>);

    /// Takes this parameter's value out of the request.
    fn extract(
        ctx: &ToolContext,
        args: &mut PromptArguments,
        name: &'static str,
    ) -> Result<Self, ArgumentError>;
}

/// Marker: an argument.
#[derive(Debug)]
pub enum ViaArgument {}
/// Marker: injected by the runtime.
#[derive(Debug)]
pub enum ViaContext {}

impl PromptParam<ViaArgument> for String {
    fn describe(prompt: &mut PromptBuilder, name: &'static str, description: Option<&'static str>) {
        prompt.argument(name, description, true);
    }

    fn extract(
        _: &ToolContext,
        args: &mut PromptArguments,
        name: &'static str,
    ) -> Result<Self, ArgumentError> {
        args.take(name)?.ok_or_else(|| ArgumentError::missing(name))
    }
}

impl PromptParam<ViaArgument> for Option<String> {
    fn describe(prompt: &mut PromptBuilder, name: &'static str, description: Option<&'static str>) {
        prompt.argument(name, description, false);
    }

    fn extract(
        _: &ToolContext,
        args: &mut PromptArguments,
        name: &'static str,
    ) -> Result<Self, ArgumentError> {
        args.take(name)
    }
}

impl PromptParam<ViaContext> for ToolContext {
    fn describe(_: &mut PromptBuilder, _: &'static str, _: Option<&'static str>) {}

    fn extract(
        ctx: &ToolContext,
        _: &mut PromptArguments,
        _: &'static str,
    ) -> Result<Self, ArgumentError> {
        Ok(ctx.clone())
    }
}

impl<T: Send + Sync + 'static> PromptParam<ViaContext> for State<T> {
    fn describe(prompt: &mut PromptBuilder, _: &'static str, _: Option<&'static str>) {
        prompt.needs_state(StateNeed::of::<T>());
    }

    fn extract(
        ctx: &ToolContext,
        _: &mut PromptArguments,
        _: &'static str,
    ) -> Result<Self, ArgumentError> {
        ctx.state::<T>().ok_or_else(|| {
            ArgumentError::internal(format!(
                "no application state of type `{}` is registered (register it with `Server::state`)",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// A prompt argument that can be completed (`#[complete(...)]`): a `String` or an
/// `Option<String>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be completed: `#[complete]` goes on a prompt argument",
    label = "only a `String` or `Option<String>` argument can be completed",
    note = "completion offers values for an argument the user types; remove `#[complete(...)]` \
            from this parameter"
)]
pub trait Completable {}

impl Completable for String {}
impl Completable for Option<String> {}
