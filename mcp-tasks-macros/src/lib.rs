//! Internal: the `#[tool]`, `#[resource]` and `#[prompt]` attributes of mcp-tasks. Depend on
//! `mcp-tasks-runtime`, which re-exports them as `mcp_tasks_runtime::{tool, resource, prompt}`.
//!
//! Each macro works on `proc_macro2` in three stages, each with its own types: `parse` (the raw
//! attribute and function, with spans) → `validate` (a model that is valid by construction, every
//! error collected) → `expand` (declarations only; it cannot fail). `#[resource]`'s and
//! `#[prompt]`'s stages live in their modules, `#[tool]`'s at the root.

mod complete;
mod diag;
mod duration;
mod expand;
mod key;
mod model;
mod parse;
mod paths;
mod prompt;
mod resource;
mod signature;
mod validate;

use proc_macro::TokenStream;

#[doc = include_str!("tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

#[doc = include_str!("resource.md")]
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    resource::resource(args.into(), item.into()).into()
}

#[doc = include_str!("prompt.md")]
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    prompt::prompt(args.into(), item.into()).into()
}
