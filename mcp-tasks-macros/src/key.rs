//! One `key = value` of `#[prompt]` and of the parameter attributes `#[complete]` and `#[arg]`
//! (which `#[resource]` shares), with the value's span and an error that names the key and shows
//! a correct use. Apart from both users so that `complete.rs` and `prompt/parse.rs` do not import
//! each other.

use darling::FromMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta};

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

impl<T: KeyValue> FromMeta for Key<T> {
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

/// A value type of `#[prompt]`, `#[complete]` and `#[arg]`, with what an error says it expects.
pub trait KeyValue: FromMeta {
    /// "a string literal", ...
    const EXPECTED: &'static str;
}

impl KeyValue for syn::LitStr {
    const EXPECTED: &'static str = "a string literal";
}

impl KeyValue for syn::Path {
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

impl KeyValue for Values {
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

impl KeyValue for FnPath {
    const EXPECTED: &'static str = "the path of an `async fn`";
}

/// A correct use of each key, for error messages.
pub fn example(key: &str) -> &'static str {
    match key {
        "name" => "#[prompt(name = \"code_review\")]",
        "title" => "#[prompt(title = \"Review code\")]",
        "description" => "#[prompt(description = \"Reviews code.\")]",
        "scope" => "#[prompt(scope = \"review\")]",
        "crate" => "#[prompt(crate = \"::mcp_tasks_runtime\")]",
        "values" => "#[complete(values = [\"rust\", \"python\"])]",
        "with" => "#[complete(with = complete_language)]",
        "rename" => "#[arg(rename = \"resourceUri\")]",
        _ => "#[prompt(...)]",
    }
}
