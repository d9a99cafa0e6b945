//! The validated prompt: defaults filled in, every value checked; `expand` only reads it.

use crate::complete::Complete;
use proc_macro2::Span;

/// One parameter of the prompt function, in order.
#[derive(Debug, Clone)]
pub struct Param {
    /// The argument name (`#[arg(rename)]`, or the binding's name without `r#`).
    pub name: String,
    /// From the parameter's doc comment.
    pub doc: Option<String>,
    /// The parameter type as written.
    pub ty: syn::Type,
    /// `#[complete(...)]`, with the attribute's span.
    pub complete: Option<(Complete, Span)>,
}

/// A `#[prompt]` function, ready to expand.
#[derive(Debug, Clone)]
pub struct PromptSpec {
    /// The user's function, parameter docs and helper attributes stripped.
    pub item: syn::ItemFn,
    /// Path of the runtime crate.
    pub runtime: syn::Path,
    /// The prompt's name.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description, from `description = "..."` or the doc comment.
    pub description: Option<String>,
    /// The OAuth scopes a caller needs (`scope = "a b"`), each checked as `#[tool(scope)]`'s.
    pub scopes: Vec<String>,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// The `async fn`'s output type (`()` at the function name when omitted).
    pub output: syn::Type,
}
