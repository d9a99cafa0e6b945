//! `#[tool(...)]`, parsed declaratively with darling: unknown and duplicate keys, and did-you-mean
//! suggestions, come for free and land on the key. Each value keeps its key and span ([`Kv`]) so
//! that validation can point at the exact token.

use crate::diag::Diagnostics;
use crate::model::TaskSupport;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::Meta;
use syn::spanned::Spanned;

/// Everything `#[tool(...)]` accepts. Field names are the attribute keys.
#[derive(Debug, Default, FromMeta)]
pub struct ToolAttr {
    /// `name = "..."`: the MCP tool name.
    pub name: Option<Kv<syn::LitStr>>,
    /// `title = "..."`.
    pub title: Option<Kv<syn::LitStr>>,
    /// `description = "..."`: overrides the doc comment.
    pub description: Option<Kv<syn::LitStr>>,
    /// `task_support = "forbidden" | "optional" | "required"`.
    pub task_support: Option<Kv<TaskSupport>>,
    /// `ttl = "10m"`.
    pub ttl: Option<Kv<syn::LitStr>>,
    /// `poll_interval = "2s"`.
    pub poll_interval: Option<Kv<syn::LitStr>>,
    /// `annotations(read_only, destructive = false, ...)`.
    pub annotations: Option<Kv<AnnotationsAttr>>,
    /// `defer_task = true`: start inline, become a task at `ctx.start_task()`.
    pub defer_task: Option<Kv<bool>>,
    /// `durable` (or `durable = true`): the task survives its process, its body runs again on
    /// another instance.
    pub durable: Option<Kv<bool>>,
    /// `promote_after = "30s"`: an inline call still running this long becomes a task.
    pub promote_after: Option<Kv<syn::LitStr>>,
    /// `ui = "ui://..."`: the MCP Apps UI resource a host renders for this tool.
    pub ui: Option<Kv<syn::LitStr>>,
    /// `ui_visibility = "model" | "app"`: who may call it (default both).
    pub ui_visibility: Option<Kv<syn::LitStr>>,
    /// `scope = "research write"`: the OAuth scopes a caller's token must grant.
    pub scope: Option<Kv<syn::LitStr>>,
    /// `crate = "path"`: where the runtime is.
    #[darling(rename = "crate")]
    pub krate: Option<Kv<syn::Path>>,
}

/// `annotations(...)`.
#[derive(Debug, Default, FromMeta)]
pub struct AnnotationsAttr {
    /// `read_only = true`.
    pub read_only: Option<Kv<bool>>,
    /// `destructive = true`.
    pub destructive: Option<Kv<bool>>,
    /// `idempotent = true`.
    pub idempotent: Option<Kv<bool>>,
    /// `open_world = true`.
    pub open_world: Option<Kv<bool>>,
}

/// Parses the attribute's arguments; problems go to `diag`, and whatever parsed is kept.
pub fn parse(args: TokenStream, diag: &mut Diagnostics) -> Option<ToolAttr> {
    if args.is_empty() {
        return Some(ToolAttr::default());
    }
    let items = diag.handle(NestedMeta::parse_meta_list(args).map_err(Into::into))?;
    diag.handle(ToolAttr::from_list(&items))
}

/// One `key = value` (or bare `key`, or `key(...)`), keeping the key and the value's span.
#[derive(Debug, Clone)]
pub struct Kv<T> {
    /// The key as written.
    pub key: syn::Path,
    /// The parsed value.
    pub value: T,
    /// The value's span (the literal), or the key's when there is no `= value`.
    pub span: Span,
}

impl<T: AttrValue> FromMeta for Kv<T> {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let key = meta.path().clone();
        let span = match meta {
            Meta::NameValue(nv) => nv.value.span(),
            _ => meta.span(),
        };
        match T::from_meta(meta) {
            Ok(value) => Ok(Kv { key, value, span }),
            Err(err) => Err(T::reword(&key_name(&key), meta, err).unwrap_or_else(|err| err)),
        }
    }
}

/// A value type of the attribute: its parse errors are reworded to name the key and show the
/// corrected form (darling's "Unexpected literal type `int`" says neither).
pub trait AttrValue: FromMeta {
    /// Replaces darling's error (`Ok`) or keeps it (`Err`).
    fn reword(
        key: &str,
        meta: &Meta,
        err: darling::Error,
    ) -> Result<darling::Error, darling::Error> {
        let _ = err;
        Ok(expected(key, meta, "a string literal"))
    }
}

impl AttrValue for syn::LitStr {}

impl AttrValue for syn::Path {
    fn reword(key: &str, meta: &Meta, _: darling::Error) -> Result<darling::Error, darling::Error> {
        Ok(expected(key, meta, "a path in a string literal"))
    }
}

impl AttrValue for bool {
    fn reword(key: &str, meta: &Meta, _: darling::Error) -> Result<darling::Error, darling::Error> {
        Ok(expected(key, meta, "`true` or `false`"))
    }
}

impl AttrValue for AnnotationsAttr {
    fn reword(
        key: &str,
        meta: &Meta,
        err: darling::Error,
    ) -> Result<darling::Error, darling::Error> {
        match meta {
            // Errors inside the list (an unknown hint, a bad value) are already precise.
            Meta::List(_) => Err(err),
            _ => Ok(expected(key, meta, "a list of hints")),
        }
    }
}

impl AttrValue for TaskSupport {
    fn reword(key: &str, meta: &Meta, _: darling::Error) -> Result<darling::Error, darling::Error> {
        let written = match meta {
            Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        };
        let values = TaskSupport::VALUES.map(|v| format!("`{v}`")).join(", ");
        let message = match written {
            Some(value) => match did_you_mean(&value, &TaskSupport::VALUES) {
                Some(close) => format!(
                    "unknown `{key}` value `{value}`: did you mean `{close}`? \
                     Expected one of {values}; write `#[tool({key} = \"{close}\")]`"
                ),
                None => format!(
                    "unknown `{key}` value `{value}`: expected one of {values}, \
                     e.g. `#[tool({key} = \"optional\")]`"
                ),
            },
            None => format!(
                "`{key}` expects one of {values} as a string literal, \
                 e.g. `#[tool({key} = \"optional\")]`"
            ),
        };
        Ok(darling::Error::custom(message).with_span(&value_span(meta)))
    }
}

/// "`ttl` expects a string literal: write `ttl = "10m"`".
fn expected(key: &str, meta: &Meta, what: &str) -> darling::Error {
    let message = format!("`{key}` expects {what}: write `{}`", example(key));
    darling::Error::custom(message).with_span(&value_span(meta))
}

/// The value of `key = value`, or the whole item for other shapes.
fn value_span(meta: &Meta) -> Span {
    match meta {
        Meta::NameValue(nv) => nv.value.span(),
        _ => meta.span(),
    }
}

/// A correct use of each key, for error messages.
pub fn example(key: &str) -> &'static str {
    match key {
        "name" => "#[tool(name = \"search_docs\")]",
        "title" => "#[tool(title = \"Search the docs\")]",
        "description" => "#[tool(description = \"Searches the docs.\")]",
        "task_support" => "#[tool(task_support = \"optional\")]",
        "ttl" => "#[tool(ttl = \"10m\")]",
        "poll_interval" => "#[tool(poll_interval = \"2s\")]",
        "annotations" => "#[tool(annotations(read_only = true))]",
        "defer_task" => "#[tool(task_support = \"required\", defer_task = true)]",
        "durable" => "#[tool(task_support = \"required\", durable)]",
        "promote_after" => "#[tool(task_support = \"optional\", promote_after = \"30s\")]",
        "ui" => "#[tool(ui = \"ui://weather/view.html\")]",
        "ui_visibility" => "#[tool(ui = \"ui://weather/view.html\", ui_visibility = \"app\")]",
        "scope" => "#[tool(scope = \"research\")]",
        "crate" => "#[tool(crate = \"::mcp_tasks_runtime\")]",
        "read_only" => "annotations(read_only = true)",
        "destructive" => "annotations(destructive = false)",
        "idempotent" => "annotations(idempotent = true)",
        "open_world" => "annotations(open_world = false)",
        _ => "#[tool(...)]",
    }
}

fn key_name(path: &syn::Path) -> String {
    path.get_ident()
        .map_or_else(|| "key".to_owned(), ToString::to_string)
}

/// The closest candidate, if it is close enough to be what was meant (darling's threshold).
pub fn did_you_mean<'a>(written: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(&written.to_ascii_lowercase(), c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The runtime path read from the raw arguments even when the rest of the attribute is wrong, so
/// the fallback can still declare a stub `impl Tool`; `None` when it cannot be known.
pub fn runtime_hint(args: &TokenStream) -> Option<syn::Path> {
    let items = NestedMeta::parse_meta_list(args.clone()).ok()?;
    let mut runtime = crate::paths::default_runtime();
    for item in &items {
        if let NestedMeta::Meta(meta) = item
            && meta.path().is_ident("crate")
        {
            runtime = syn::Path::from_meta(meta).ok()?;
        }
    }
    Some(runtime)
}
