//! Not public API. What `#[tool]`, `#[resource]`, `#[prompt]` write reaches the runtime here, with
//! absolute paths, so that the expansion never depends on the user's imports. It may change in any
//! release; `mcp-tasks-macros` is pinned to the exact version of this crate. It holds exactly what
//! the expansion names (the snapshots in `mcp-tasks-macros/tests/snapshots/` and the trybuild cases
//! in `mcp-tasks-macros/tests/ui/` use all of it), and nothing else.

pub use ::core::option::Option::{self, None, Some};
pub use ::core::result::Result::{self, Ok};
/// rmcp, for what `rmcp_task_methods!` writes (feature `rmcp`).
#[cfg(feature = "rmcp")]
pub use ::rmcp;
pub use ::serde_json;

pub use crate::protocol::ToolAnnotations;
pub use crate::tool::{
    ArgumentError, Arguments, ParamsBuilder, TaskSupport, Tool, ToolContext, ToolFuture, ToolInfo,
    ToolUi, UiVisibility,
};

use crate::tool::{IntoToolResult, ToolParam};
use ::core::future::Future;
use ::std::time::Duration;

/// A `Duration` from milliseconds (the macro parses `ttl = "10m"` into milliseconds).
#[inline]
pub const fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

// ---------------------------------------------------------------------------------------------
// What `#[tool]` emits. A parameter's and the return type's bounds are checked exactly once, in a
// `const` at the type's own span; every later use goes through the function pointers that `const`
// holds, so a type that is not a tool parameter is one error on that type, not one per use.

/// One parameter's kind, resolved and checked once: `const P: Param<T> = param::<T, _>();`.
pub struct Param<P> {
    /// Adds the parameter to the input schema.
    pub describe: fn(&mut ParamsBuilder, &'static str, Option<&'static str>),
    /// Takes the parameter's value out of the call.
    pub extract: fn(&ToolContext, &mut Arguments, &'static str) -> Result<P, ArgumentError>,
}

impl<P> ::core::fmt::Debug for Param<P> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("Param")
    }
}

/// [`ToolParam`] as the expansion checks it. The blanket impl is `do_not_recommend`, so a type
/// that is not a parameter gets one error, with this message, instead of one per serde or schemars
/// trait it lacks (each followed by a list of unrelated types that do implement it).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as an MCP tool parameter",
    label = "this parameter's type is neither an argument nor injected by mcp-tasks",
    note = "an argument type must implement `serde::Deserialize` and `schemars::JsonSchema` \
            (add `#[derive(Deserialize, JsonSchema)]`); the injected context is `ToolContext`; \
            the whole argument object is `Args<T>`; application state is `State<T>`, where `T` \
            must be `Send + Sync + 'static`"
)]
pub trait IsToolParam<M>: ToolParam<M> {}

#[diagnostic::do_not_recommend]
impl<P: ToolParam<M>, M> IsToolParam<M> for P {}

/// Resolves `P`'s parameter kind (`M` is inferred); fails to compile, at `P`'s span, when `P` is
/// not a tool parameter.
#[inline]
pub const fn param<P: IsToolParam<M>, M>() -> Param<P> {
    Param {
        describe: P::describe,
        extract: P::extract,
    }
}

/// The return type's conversion, resolved and checked once: `const O: Output<T> = output::<T, _>();`.
pub struct Output<O> {
    /// The `outputSchema`, if any.
    pub schema: fn() -> Option<serde_json::Value>,
    /// The conversion into what goes on the wire.
    pub convert: fn(O) -> Result<crate::protocol::CallToolResult, RpcError>,
}

impl<O> ::core::fmt::Debug for Output<O> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("Output")
    }
}

/// [`IntoToolResult`] as the expansion checks it: one error per bad return type (see
/// [`IsToolParam`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP tool",
    label = "this is what the tool returns",
    note = "return a type that implements `serde::Serialize` and `schemars::JsonSchema` \
            (add `#[derive(Serialize, JsonSchema)]`), a `String`, a `CallToolResult`, or a \
            `Result<T, E>` of those whose error converts into `ToolError` (any \
            `std::error::Error + Send + Sync + 'static` does)"
)]
pub trait IsToolOutput<M>: IntoToolResult<M> {}

#[diagnostic::do_not_recommend]
impl<O: IntoToolResult<M>, M> IsToolOutput<M> for O {}

/// Resolves `O`'s conversion (`M` is inferred); fails to compile, at `O`'s span, when `O` cannot
/// be returned from a tool.
#[inline]
pub const fn output<O: IsToolOutput<M>, M>() -> Output<O> {
    Output {
        schema: O::output_schema,
        convert: O::into_tool_result,
    }
}

/// Boxes the user's future and converts its output with `output`. Emitted at the function name's
/// span, so a future that is not `Send` is reported on the tool's name.
#[inline]
pub fn run_tool<F>(tool_future: F, output: Output<F::Output>) -> ToolFuture
where
    // A tool's future must be `Send` (it may run on another thread, and as a background task):
    // do not hold an `Rc`, a `RefCell` borrow or a `std::sync::MutexGuard` across an `.await`.
    F: Future + Send + 'static,
    F::Output: 'static,
{
    Box::pin(async move { (output.convert)(tool_future.await) })
}

// ---------------------------------------------------------------------------------------------
// What `#[resource]` emits: the same pattern, one `const` per parameter and for the return type.

pub use crate::protocol::RpcError;
pub use crate::resource::{ListFuture, Resource, ResourceFuture, ResourceInfo, ResourceRequest};

use crate::protocol::ResourceContents;
use crate::resource::{IntoResourceContents, IsResourceVar, ListedResource, ResourceInjected};

/// One resource parameter's kind, resolved and checked once.
pub struct ResourceParam<P> {
    /// Records what the parameter needs from the server.
    pub describe: fn(&mut ParamsBuilder),
    /// Takes the parameter's value out of the read.
    pub extract: fn(&ToolContext, &ResourceRequest, &'static str) -> Result<P, RpcError>,
}

impl<P> ::core::fmt::Debug for ResourceParam<P> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("ResourceParam")
    }
}

fn describe_nothing(_: &mut ParamsBuilder) {}

fn extract_var<P: IsResourceVar>(
    _: &ToolContext,
    request: &ResourceRequest,
    name: &'static str,
) -> Result<P, RpcError> {
    crate::resource::var_value(request, name)
}

fn extract_injected<P: ResourceInjected<M>, M>(
    ctx: &ToolContext,
    _: &ResourceRequest,
    _: &'static str,
) -> Result<P, RpcError> {
    P::inject(ctx)
}

/// A parameter named like a template variable: fails to compile, at `P`'s span, when `P` cannot
/// be decoded from the variable's text.
#[inline]
pub const fn resource_var<P: IsResourceVar>() -> ResourceParam<P> {
    ResourceParam {
        describe: describe_nothing,
        extract: extract_var::<P>,
    }
}

/// A parameter that names no template variable: fails to compile, at `P`'s span, unless the
/// server injects it (`ToolContext`, `State<T>`).
#[inline]
pub const fn resource_injected<P: ResourceInjected<M>, M>() -> ResourceParam<P> {
    ResourceParam {
        describe: P::describe,
        extract: extract_injected::<P, M>,
    }
}

/// What a read's conversion gives.
pub type Contents = Result<::std::vec::Vec<ResourceContents>, RpcError>;

/// The return type's conversion, resolved and checked once.
pub struct ResourceOutput<O> {
    /// The conversion into the read's contents (for this URI, with the declared MIME type).
    pub convert: fn(O, &str, Option<&str>) -> Contents,
}

impl<O> ::core::fmt::Debug for ResourceOutput<O> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("ResourceOutput")
    }
}

/// Resolves `O`'s conversion; fails to compile, at `O`'s span, when a resource cannot return it.
#[inline]
pub const fn resource_output<O: IntoResourceContents>() -> ResourceOutput<O> {
    ResourceOutput {
        convert: O::into_contents,
    }
}

/// Boxes the user's future and converts what it returns for `request`'s URI.
#[inline]
pub fn run_resource<F>(
    future: F,
    output: ResourceOutput<F::Output>,
    request: ResourceRequest,
    mime_type: Option<&'static str>,
) -> ResourceFuture
where
    // A resource's future must be `Send`, like a tool's.
    F: Future + Send + 'static,
    F::Output: 'static,
{
    Box::pin(async move { (output.convert)(future.await, request.uri(), mime_type) })
}

/// Boxes a template's `list` function's future.
#[inline]
pub fn run_list<F>(future: F) -> Option<ListFuture>
where
    F: Future<Output = ::std::vec::Vec<ListedResource>> + Send + 'static,
{
    Some(Box::pin(future))
}

// ---------------------------------------------------------------------------------------------
// What `#[prompt]` emits: the same shape as a tool's, checked once per parameter and return type.

pub use crate::completion::{CompleteFuture, Completer, CompletionContext};
pub use crate::prompt::{Prompt, PromptArguments, PromptBuilder, PromptFuture, PromptInfo};

use crate::completion::IntoCompletion;
use crate::prompt::{IntoPromptResult, PromptParam};

/// One prompt parameter's kind, resolved and checked once.
pub struct PromptArg<P> {
    /// Adds the parameter to the prompt's description.
    pub describe: fn(&mut PromptBuilder, &'static str, Option<&'static str>),
    /// Takes the parameter's value out of the request.
    pub extract: fn(&ToolContext, &mut PromptArguments, &'static str) -> Result<P, ArgumentError>,
}

impl<P> ::core::fmt::Debug for PromptArg<P> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("PromptArg")
    }
}

/// [`PromptParam`] as the expansion checks it: one error per bad parameter type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as an MCP prompt parameter",
    label = "prompt arguments are strings on the wire",
    note = "take a required argument as `String` and an optional one as `Option<String>` (parse \
            it yourself); the injected context is `ToolContext`; application state is \
            `State<T>`, where `T` must be `Send + Sync + 'static`"
)]
pub trait IsPromptParam<M>: PromptParam<M> {}

#[diagnostic::do_not_recommend]
impl<P: PromptParam<M>, M> IsPromptParam<M> for P {}

/// Resolves `P`'s parameter kind; fails to compile, at `P`'s span, when `P` is not a prompt
/// parameter.
#[inline]
pub const fn prompt_arg<P: IsPromptParam<M>, M>() -> PromptArg<P> {
    PromptArg {
        describe: P::describe,
        extract: P::extract,
    }
}

/// The return type's conversion, resolved and checked once.
pub struct PromptOutput<O> {
    /// The conversion into `GetPromptResult`.
    pub convert: fn(O) -> Result<crate::protocol::GetPromptResult, RpcError>,
}

impl<O> ::core::fmt::Debug for PromptOutput<O> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str("PromptOutput")
    }
}

/// [`IntoPromptResult`] as the expansion checks it: one error per bad return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt",
    label = "this is what the prompt returns",
    note = "return a `String` (one user message), a `Vec<PromptMessage>`, a `GetPromptResult`, \
            or a `Result` of those whose error converts into `ToolError`"
)]
pub trait IsPromptOutput<M>: IntoPromptResult<M> {}

#[diagnostic::do_not_recommend]
impl<O: IntoPromptResult<M>, M> IsPromptOutput<M> for O {}

/// Resolves `O`'s conversion; fails to compile, at `O`'s span, when a prompt cannot return `O`.
#[inline]
pub const fn prompt_output<O: IsPromptOutput<M>, M>() -> PromptOutput<O> {
    PromptOutput {
        convert: O::into_prompt_result,
    }
}

/// Boxes the prompt's future and converts its output. Emitted at the function name's span.
#[inline]
pub fn run_prompt<F>(prompt_future: F, output: PromptOutput<F::Output>) -> PromptFuture
where
    // A prompt's future must be `Send`: do not hold an `Rc`, a `RefCell` borrow or a
    // `std::sync::MutexGuard` across an `.await`.
    F: Future + Send + 'static,
    F::Output: 'static,
{
    Box::pin(async move { (output.convert)(prompt_future.await) })
}

/// Checks that a `#[complete]` parameter is a prompt argument (`String` or `Option<String>`).
#[inline]
pub const fn completable<T: crate::prompt::Completable>() {}

/// Runs a completion function (`#[complete(with = f)]`) and converts its answer.
#[inline]
pub fn complete_with<F, M>(completion_future: F) -> CompleteFuture
where
    F: Future + Send + 'static,
    F::Output: IntoCompletion<M>,
{
    crate::completion::boxed(completion_future)
}
