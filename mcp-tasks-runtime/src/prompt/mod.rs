//! Prompts: the [`Prompt`] trait that `#[prompt]` implements, their arguments (strings on the
//! wire), what a prompt returns, and the registry.
//!
//! A prompt sits beside tools at the same layer: it takes the same injected [`ToolContext`]
//! (to ask the user, which goes out by the same inline routes as a tool's questions) and the same
//! [`State<T>`](crate::State), and its completed arguments register in the
//! [`completion`](crate::completion) registry.

mod output;
mod param;
mod registry;

#[doc(hidden)]
// the bound of `__private::prompt_output`; `#[prompt]`'s page lists the return types
pub use output::IntoPromptResult;
#[doc(hidden)] // what `#[prompt]` expands to (through `__private`); not API
pub use param::{Completable, PromptArguments, PromptBuilder, PromptParam};
pub(crate) use registry::{PromptRegistry, RegisteredPrompt};

use crate::protocol::{GetPromptResult, RpcError};
use crate::tool::{ArgumentError, ToolContext};
use std::future::Future;
use std::pin::Pin;

/// Everything about a prompt that is known at compile time.
#[derive(Debug, Clone, Copy)]
pub struct PromptInfo {
    /// The prompt's name (what `prompts/get` names).
    pub name: &'static str,
    /// Human-readable title.
    pub title: Option<&'static str>,
    /// Description, from the doc comment unless overridden.
    pub description: Option<&'static str>,
    /// The OAuth scopes a caller's token must grant, all of them, to get this prompt or complete
    /// its arguments (`#[prompt(scope = "review")]`). Empty: any authenticated caller may.
    /// Checked as a tool's [`scopes`](crate::tool::ToolInfo::scopes) are.
    pub scopes: &'static [&'static str],
}

/// The future a `prompts/get` runs: the messages, or a JSON-RPC error.
#[doc(hidden)] // what `#[prompt]` expands to (through `__private`); not API
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<GetPromptResult, RpcError>> + Send>>;

/// A prompt. `#[prompt]` implements this on a type named after the function; implement it by
/// hand only when a macro will not do.
pub trait Prompt: Send + Sync + 'static {
    /// The compile-time description of the prompt.
    const INFO: PromptInfo;

    /// Describes each argument (and the state it takes, and how its arguments complete).
    fn describe(prompt: &mut PromptBuilder);

    /// Takes the arguments apart and starts rendering the prompt. A missing required argument,
    /// or one that is not a string, comes back before anything runs.
    fn get(ctx: ToolContext, args: PromptArguments) -> Result<PromptFuture, ArgumentError>;
}
