//! Stage 1 for `#[prompt]`: the attribute (darling, with its own did-you-mean errors on the key),
//! and each parameter's helper attributes (`#[complete(...)]`, `#[arg(...)]`), taken off the
//! function so that rustc never sees them. Parameter doc comments are collected by
//! [`ToolFn`](crate::parse::ToolFn), as for tools.

use crate::complete::{self, CompleteAttr};
use crate::diag::Diagnostics;
use crate::parse::ToolFn;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, FnArg, Lit, Meta};

/// Everything `#[prompt(...)]` accepts. Field names are the attribute keys.
#[derive(Debug, Default, FromMeta)]
pub struct PromptAttr {
    /// `name = "..."`: the prompt's name.
    pub name: Option<Key<syn::LitStr>>,
    /// `title = "..."`.
    pub title: Option<Key<syn::LitStr>>,
    /// `description = "..."`: overrides the doc comment.
    pub description: Option<Key<syn::LitStr>>,
    /// `crate = "path"`: where the runtime is.
    #[darling(rename = "crate")]
    pub krate: Option<Key<syn::Path>>,
}

/// `#[arg(...)]` on a parameter.
#[derive(Debug, Default, FromMeta)]
pub struct ArgAttr {
    /// `rename = "resourceUri"`: the argument's name on the wire.
    pub rename: Option<Key<syn::LitStr>>,
}

/// A parameter's helper attributes, as written.
#[derive(Debug, Default)]
pub struct ParamAttrs {
    /// `#[complete(...)]`, with the span of its name.
    pub complete: Option<(CompleteAttr, Span)>,
    /// `#[arg(...)]`.
    pub arg: ArgAttr,
}

/// The function under `#[prompt]`: as `#[tool]` takes it apart, and each parameter's helper
/// attributes (by position, receivers included).
#[derive(Debug)]
pub struct PromptFn {
    /// Docs collected, parameter docs and helper attributes stripped.
    pub f: ToolFn,
    /// Each parameter's helper attributes, by position.
    pub attrs: Vec<ParamAttrs>,
}

/// Parses the attribute's arguments.
pub fn attr(args: TokenStream, diag: &mut Diagnostics) -> Option<PromptAttr> {
    if args.is_empty() {
        return Some(PromptAttr::default());
    }
    let items = diag.handle(NestedMeta::parse_meta_list(args).map_err(Into::into))?;
    diag.handle(PromptAttr::from_list(&items))
}

/// Takes the function apart and the helper attributes off its parameters.
pub fn function(mut item: syn::ItemFn, diag: &mut Diagnostics) -> PromptFn {
    let mut attrs = Vec::new();
    for arg in &mut item.sig.inputs {
        let list = match arg {
            FnArg::Receiver(r) => &mut r.attrs,
            FnArg::Typed(t) => &mut t.attrs,
        };
        let mut found = ParamAttrs::default();
        list.retain(|a| {
            let helper = a.path().is_ident("complete") || a.path().is_ident("arg");
            if !helper {
                return true;
            }
            helper_attr(a, &mut found, diag);
            false
        });
        attrs.push(found);
    }
    PromptFn {
        f: ToolFn::new(item),
        attrs,
    }
}

fn helper_attr(attr: &syn::Attribute, found: &mut ParamAttrs, diag: &mut Diagnostics) {
    if attr.path().is_ident("complete") {
        return complete::parse(attr, &mut found.complete, diag);
    }
    let Meta::List(list) = &attr.meta else {
        diag.error(
            attr.path().span(),
            "expected a list of keys: write `#[arg(rename = \"argName\")]`",
        );
        return;
    };
    let items = match NestedMeta::parse_meta_list(list.tokens.clone()) {
        Ok(items) => items,
        Err(err) => return diag.push(err),
    };
    if let Some(arg) = diag.handle(ArgAttr::from_list(&items)) {
        found.arg = arg;
    }
}

/// One `key = value`, keeping the key and the value's span.
#[derive(Debug, Clone)]
pub struct Key<T> {
    /// The key as written.
    pub key: syn::Path,
    /// The parsed value.
    pub value: T,
    /// The value's span.
    pub span: Span,
}

impl<T: PromptValue> FromMeta for Key<T> {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().clone();
        let span = match meta {
            Meta::NameValue(nv) => nv.value.span(),
            _ => meta.span(),
        };
        let name = key
            .get_ident()
            .map_or_else(|| "key".to_owned(), ToString::to_string);
        match T::from_meta(meta) {
            Ok(value) => Ok(Key { key, value, span }),
            Err(_) => Err(darling::Error::custom(format!(
                "`{name}` expects {}: write `{}`",
                T::EXPECTED,
                example(&name)
            ))
            .with_span(&span)),
        }
    }
}

/// A value type of `#[prompt]` and its helper attributes, with what an error says it expects.
pub trait PromptValue: FromMeta {
    /// "a string literal", ...
    const EXPECTED: &'static str;
}

impl PromptValue for syn::LitStr {
    const EXPECTED: &'static str = "a string literal";
}

impl PromptValue for syn::Path {
    const EXPECTED: &'static str = "a path in a string literal";
}

/// `["a", "b"]`.
#[derive(Debug, Clone)]
pub struct Values(pub Vec<syn::LitStr>);

impl FromMeta for Values {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Array(array) = expr else {
            return Err(darling::Error::unexpected_expr_type(expr));
        };
        array
            .elems
            .iter()
            .map(|e| match e {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Ok(s.clone()),
                other => Err(darling::Error::unexpected_expr_type(other)),
            })
            .collect::<darling::Result<_>>()
            .map(Values)
    }
}

impl PromptValue for Values {
    const EXPECTED: &'static str = "a list of string literals";
}

/// `path::to::function` (bare, or in a string literal).
#[derive(Debug, Clone)]
pub struct FnPath(pub syn::Path);

impl FromMeta for FnPath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.qself.is_none() => Ok(FnPath(p.path.clone())),
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => s.parse().map(FnPath).map_err(Into::into),
            other => Err(darling::Error::unexpected_expr_type(other)),
        }
    }
}

impl PromptValue for FnPath {
    const EXPECTED: &'static str = "the path of an `async fn`";
}

/// A correct use of each key, for error messages.
pub fn example(key: &str) -> &'static str {
    match key {
        "name" => "#[prompt(name = \"code_review\")]",
        "title" => "#[prompt(title = \"Review code\")]",
        "description" => "#[prompt(description = \"Reviews code.\")]",
        "crate" => "#[prompt(crate = \"::mcp_tasks_runtime\")]",
        "values" => "#[complete(values = [\"rust\", \"python\"])]",
        "with" => "#[complete(with = complete_language)]",
        "rename" => "#[arg(rename = \"resourceUri\")]",
        _ => "#[prompt(...)]",
    }
}
