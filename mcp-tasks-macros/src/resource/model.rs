//! The validated resource: defaults filled in, every value checked.

use crate::complete::Complete;
use proc_macro2::Span;

/// One parameter: a template variable, or injected by the server.
#[derive(Debug, Clone)]
pub struct Param {
    /// The binding's name (without `r#`).
    pub name: String,
    /// The parameter type as written.
    pub ty: syn::Type,
    /// Whether the URI template has a variable of this name.
    pub var: bool,
    /// `#[complete(...)]` (template variables only), with the attribute's span.
    pub complete: Option<(Complete, Span)>,
}

/// A `#[resource]` function, ready to expand.
#[derive(Debug, Clone)]
pub struct ResourceSpec {
    /// The user's function (parameter doc comments stripped).
    pub item: syn::ItemFn,
    /// Path of the runtime crate.
    pub runtime: syn::Path,
    /// The URI or URI template.
    pub uri: String,
    /// Whether `uri` has variables.
    pub template: bool,
    /// The resource's name.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Size in bytes.
    pub size: Option<u64>,
    /// A template's `list` function.
    pub list: Option<syn::Path>,
    /// The OAuth scopes a caller needs (`scope = "a b"`), each checked as `#[tool(scope)]`'s.
    pub scopes: Vec<String>,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// The output type (`()` at the function name when omitted).
    pub output: syn::Type,
}
