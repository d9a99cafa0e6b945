//! Stage 2: the raw attribute and function become a [`ToolSpec`], or errors. Every check lives
//! here, each error on the most specific token with a message that names the fix; all of them are
//! collected before anything is emitted.

use crate::diag::Diagnostics;
use crate::duration;
use crate::model::{Annotations, Fallback, Param, TaskSupport, ToolSpec, Ui, UiVisibility};
use crate::parse::{AnnotationsAttr, Kv, ToolAttr, ToolFn};
use crate::paths;
use proc_macro2::Span;
use std::collections::HashMap;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{FnArg, Pat, ReturnType, Safety, Signature};

/// Longest task time-to-live a tool may declare.
pub const MAX_TTL_MS: u64 = 30 * 86_400_000;
/// Shortest poll interval a tool may suggest.
pub const MIN_POLL_MS: u64 = 10;
/// Longest poll interval a tool may suggest.
pub const MAX_POLL_MS: u64 = 3_600_000;
/// Shortest promotion threshold a tool may declare.
pub const MIN_PROMOTE_MS: u64 = 1;
/// Longest promotion threshold a tool may declare.
pub const MAX_PROMOTE_MS: u64 = 86_400_000;
/// Longest MCP tool name.
pub const MAX_NAME_LEN: usize = 128;

/// Checks everything; `None` when anything was wrong (the errors are in `diag`).
pub fn validate(attr: Option<ToolAttr>, f: &ToolFn, diag: &mut Diagnostics) -> Option<ToolSpec> {
    let errors_before = diag.len();
    let attr = attr.unwrap_or_default();
    check_signature(&f.item.sig, diag);

    let name = tool_name(&attr, &f.item.sig.ident, diag);
    let task_support = attr
        .task_support
        .as_ref()
        .map_or_else(TaskSupport::default, |kv| kv.value);
    let ttl_ms = duration_key(attr.ttl.as_ref(), task_support, 1, MAX_TTL_MS, diag);
    let poll_interval_ms = duration_key(
        attr.poll_interval.as_ref(),
        task_support,
        MIN_POLL_MS,
        MAX_POLL_MS,
        diag,
    );
    if let (Some(ttl), Some(poll), Some(kv)) = (ttl_ms, poll_interval_ms, &attr.poll_interval)
        && poll > ttl
    {
        {
            diag.error(
                kv.span,
                format!(
                    "`poll_interval` ({}) is longer than `ttl` ({}): a finished task could be \
                     deleted before the client polls again; make `poll_interval` shorter than `ttl`",
                    duration::display(poll),
                    duration::display(ttl)
                ),
            );
        }
    }
    let defer_task = match &attr.defer_task {
        Some(kv) if kv.value && task_support == TaskSupport::Forbidden => {
            diag.error(
                kv.span,
                "`defer_task` turns a call into a task part-way, so it needs a task tool: \
                 add `task_support = \"required\"` (or \"optional\")",
            );
            false
        }
        Some(kv) => kv.value,
        None => false,
    };
    let durable = match &attr.durable {
        Some(kv) if kv.value && task_support == TaskSupport::Forbidden => {
            diag.error(
                kv.span,
                "`durable` keeps a task running across its server's restarts, so it needs a task \
                 tool: add `task_support = \"required\"` (or \"optional\")",
            );
            false
        }
        Some(kv) if kv.value && defer_task => {
            diag.error(
                kv.span,
                "`durable` runs the body again from the start as a task, and `defer_task` starts \
                 it inline: use one of them",
            );
            false
        }
        Some(kv) => kv.value,
        None => false,
    };
    let promote_after_ms = match attr.promote_after.as_ref() {
        // Promotion turns a call that may run either way into a task part-way: a `required`
        // tool is a task from the start, a `forbidden` one never becomes one.
        Some(kv) if task_support != TaskSupport::Optional => {
            diag.error(
                kv.key.span(),
                format!(
                    "`promote_after` turns a long inline call into a task, so it needs a tool that \
                     may run either way: declare `task_support = \"optional\"` ({})",
                    match task_support {
                        TaskSupport::Required => {
                            "a `required` tool runs as a task from the start"
                        }
                        _ => "this tool is `forbidden`, the default: it never runs as a task",
                    }
                ),
            );
            None
        }
        kv => duration_key(kv, task_support, MIN_PROMOTE_MS, MAX_PROMOTE_MS, diag),
    };
    let ui = ui(&attr, diag);
    let scopes = scopes(&attr, diag);
    let params = params(f, diag);
    let output = match &f.item.sig.output {
        ReturnType::Default => syn::parse_quote_spanned!(f.item.sig.ident.span()=> ()),
        ReturnType::Type(_, ty) => {
            no_impl_trait(ty, "return type", "return a concrete type", diag);
            (**ty).clone()
        }
    };
    let runtime = attr
        .krate
        .map_or_else(paths::default_runtime, |kv| kv.value);
    let title = attr.title.map(|kv| kv.value.value());
    let description = match attr.description {
        Some(kv) => Some(kv.value.value()).filter(|d| !d.trim().is_empty()),
        None => join_docs(&f.docs),
    };

    (diag.len() == errors_before).then(|| ToolSpec {
        item: f.item.clone(),
        runtime,
        name,
        title,
        description,
        task_support,
        ttl_ms,
        poll_interval_ms,
        annotations: annotations(attr.annotations.map(|kv| kv.value)),
        defer_task,
        durable,
        promote_after_ms,
        ui,
        scopes,
        params,
        output,
    })
}

/// `scope = "a b"`: OAuth scope tokens separated by spaces (RFC 6749 section 3.3: printable ASCII
/// but space, `"` and `\\`).
fn scopes(attr: &ToolAttr, diag: &mut Diagnostics) -> Vec<String> {
    match &attr.scope {
        Some(kv) => scope_list(&kv.value, kv.span, "tool", diag),
        None => Vec::new(),
    }
}

/// The scopes of `scope = "a b"` on `#[attribute(...)]` (`tool`, `resource`, `prompt`), each an
/// OAuth scope token (RFC 6749 section 3.3: printable ASCII but space, `"` and `\\`); errors at
/// `span`, the literal.
pub fn scope_list(
    lit: &syn::LitStr,
    span: Span,
    attribute: &str,
    diag: &mut Diagnostics,
) -> Vec<String> {
    let written = lit.value();
    let scopes: Vec<String> = written
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let bad = |s: &String| {
        !s.bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
    };
    if scopes.is_empty() {
        diag.error(
            span,
            format!(
                "`scope` names the OAuth scopes a caller needs, separated by spaces: write \
                 `#[{attribute}(scope = \"research\")]`, or leave it out for any authenticated caller"
            ),
        );
    } else if let Some(s) = scopes.iter().find(|s| bad(s)) {
        diag.error(
            span,
            format!(
                "`{s}` is not an OAuth scope: a scope is printable ASCII without spaces, `\"` or \
                 `\\` (RFC 6749 section 3.3); separate several with single spaces"
            ),
        );
    }
    scopes
}

/// `ui = "ui://..."` and `ui_visibility`: an MCP Apps resource is named by a `ui://` URI (the
/// ext-apps specification, `McpUiToolMeta.resourceUri`).
fn ui(attr: &ToolAttr, diag: &mut Diagnostics) -> Option<Ui> {
    let visibility = attr.ui_visibility.as_ref().and_then(|kv| {
        let written = kv.value.value();
        match written.as_str() {
            "model" => Some(UiVisibility::Model),
            "app" => Some(UiVisibility::App),
            _ => {
                let values = UiVisibility::VALUES.map(|v| format!("`{v}`")).join(" or ");
                diag.error(
                    kv.span,
                    format!(
                        "unknown `ui_visibility` value `{written}`: expected {values} \
                         (leave it out for both)"
                    ),
                );
                None
            }
        }
    });
    let Some(kv) = &attr.ui else {
        if let Some(kv) = &attr.ui_visibility {
            diag.error(
                kv.key.span(),
                "`ui_visibility` says who may call a tool with a UI, and this tool has none: \
                 add `ui = \"ui://...\"` or remove `ui_visibility`",
            );
        }
        return None;
    };
    let uri = kv.value.value();
    let rest = uri.strip_prefix("ui://").unwrap_or_default();
    if rest.is_empty() || uri.chars().any(char::is_whitespace) {
        diag.error(
            kv.span,
            format!(
                "`ui` names an MCP Apps resource by a `ui://` URI, e.g. \
                 `ui = \"ui://weather/view.html\"`; `{uri}` is not one"
            ),
        );
        return None;
    }
    Some(Ui {
        resource_uri: uri,
        visibility,
    })
}

/// The shape of the function: an `async fn`, free, concrete, safe, Rust ABI.
fn check_signature(sig: &Signature, diag: &mut Diagnostics) {
    let name = sig.ident.unraw();
    if sig.asyncness.is_none() {
        diag.error(
            sig.fn_token.span,
            format!("`#[tool]` needs an `async fn`: write `async fn {name}(...)`"),
        );
    }
    if let Some(token) = &sig.constness {
        diag.error(token.span, "a tool cannot be a `const fn`: remove `const`");
    }
    match &sig.safety {
        Safety::Unsafe(token) => diag.error(
            token.span,
            "a tool cannot be an `unsafe fn`: the server calls it and cannot uphold its safety \
             contract; remove `unsafe` and use an `unsafe` block inside",
        ),
        Safety::Safe(token) => diag.error(token.span, "a tool cannot be marked `safe`: remove it"),
        _ => {}
    }
    if let Some(abi) = &sig.abi {
        diag.error(
            abi.span(),
            "a tool cannot have an `extern` ABI: the server calls it as a Rust `async fn`; remove \
             the `extern` qualifier",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        diag.error(
            sig.generics.span(),
            "a tool cannot be generic: its input schema is computed from concrete parameter \
             types; remove the generic parameters (and `where` clause) and name concrete types",
        );
    }
    if let Some(receiver) = sig.receiver() {
        diag.error(
            receiver.self_token.span,
            format!(
                "a tool is a free function, not a method: remove `self` and declare `{name}` \
                 outside the `impl` block; take shared state as a `State<T>` parameter (registered \
                 with `Server::state(value)`) and the caller through `ToolContext`"
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        diag.error(
            variadic.dots.span(),
            "a tool cannot be variadic: remove `...`",
        );
    }
}

/// The MCP tool name: `name = "..."`, or the function's name without `r#`.
fn tool_name(attr: &ToolAttr, ident: &syn::Ident, diag: &mut Diagnostics) -> String {
    let (name, span, written) = match &attr.name {
        Some(kv) => (kv.value.value(), kv.span, true),
        None => (ident.unraw().to_string(), ident.span(), false),
    };
    if let Err(why) = check_tool_name(&name) {
        let fix = suggested_name(&name);
        let how = if written {
            format!("write `#[tool(name = \"{fix}\")]`")
        } else {
            format!("give the tool a valid name with `#[tool(name = \"{fix}\")]`")
        };
        diag.error(
            span,
            format!(
                "`{name}` is not a valid MCP tool name: {why}; tool names are 1 to 128 \
                 characters of `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`; {how}"
            ),
        );
    }
    name
}

/// Checks the MCP tool-name rules; the reason when broken.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Err(format!("it is {len} characters long"));
    }
    match name.chars().find(|c| !is_name_char(*c)) {
        Some(c) => Err(format!("it contains {c:?}")),
        None => Ok(()),
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn suggested_name(name: &str) -> String {
    let fixed: String = name
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .take(MAX_NAME_LEN)
        .collect();
    if fixed.is_empty() {
        "my_tool".to_owned()
    } else {
        fixed
    }
}

/// `ttl` or `poll_interval`: meaningful on a task tool only, a valid duration, within limits.
fn duration_key(
    kv: Option<&Kv<syn::LitStr>>,
    task_support: TaskSupport,
    min_ms: u64,
    max_ms: u64,
    diag: &mut Diagnostics,
) -> Option<u64> {
    let kv = kv?;
    let key = kv
        .key
        .get_ident()
        .map_or_else(String::new, ToString::to_string);
    if task_support == TaskSupport::Forbidden {
        diag.error(
            kv.key.span(),
            format!(
                "`{key}` only applies to tasks, and this tool never runs as one \
                 (`task_support = \"forbidden\"`, the default): remove `{key}`, or declare \
                 `task_support = \"optional\"` or `\"required\"`"
            ),
        );
        return None;
    }
    let text = kv.value.value();
    let ms = match duration::parse(&text) {
        Ok(ms) => ms,
        Err(why) => {
            diag.error(kv.span, format!("invalid `{key}`: {why}"));
            return None;
        }
    };
    let limit = if ms == 0 {
        Some("must be longer than zero".to_owned())
    } else if ms < min_ms {
        Some(format!("must be at least `{}`", duration::display(min_ms)))
    } else if ms > max_ms {
        Some(format!("can be at most `{}`", duration::display(max_ms)))
    } else {
        None
    };
    match limit {
        Some(limit) => {
            diag.error(
                kv.span,
                format!("`{key} = \"{text}\"` is out of range: `{key}` {limit}"),
            );
            None
        }
        None => Some(ms),
    }
}

/// Each parameter's name, doc and type.
fn params(f: &ToolFn, diag: &mut Diagnostics) -> Vec<Param> {
    let mut params: Vec<Param> = Vec::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    for (index, (arg, docs)) in f.item.sig.inputs.iter().zip(&f.param_docs).enumerate() {
        let FnArg::Typed(typed) = arg else { continue };
        no_impl_trait(&typed.ty, "parameter type", "name a concrete type", diag);
        let name = match &*typed.pat {
            Pat::Ident(pat) => pat.ident.unraw().to_string(),
            _ => synthetic_name(index, &f.item.sig),
        };
        // Two plain bindings of one name are already rustc's E0415 on the same token; only a
        // name this macro made up could collide unseen (none can today: `synthetic_name` avoids
        // the taken ones), so report only that case rather than a second error.
        let rustc_reports = matches!(&*typed.pat, Pat::Ident(_)) && seen_idents(&seen, &name, f);
        if seen.insert(name.clone(), typed.pat.span()).is_some() && !rustc_reports {
            diag.error(
                typed.pat.span(),
                format!("two parameters are named `{name}`: each argument needs its own name; rename one"),
            );
        }
        params.push(Param {
            name,
            doc: join_docs(docs),
            ty: (*typed.ty).clone(),
        });
    }
    params
}

/// Whether `name` is already bound by a plain identifier parameter.
fn seen_idents(seen: &HashMap<String, Span>, name: &str, f: &ToolFn) -> bool {
    seen.contains_key(name)
        && f.item.sig.inputs.iter().any(|arg| {
            matches!(arg, FnArg::Typed(t) if matches!(&*t.pat, Pat::Ident(p) if p.ident.unraw() == name))
        })
}

/// What the user's function becomes when `#[tool]` reported errors: as written, minus what rustc
/// would reject a second time for a mistake already reported (`const` on an `async fn`, `...`),
/// so each mistake is one error.
pub fn fallback(f: ToolFn, runtime: Option<syn::Path>) -> Fallback {
    let mut item = f.item;
    if item.sig.asyncness.is_some() {
        item.sig.constness = None;
    }
    if item.sig.variadic.take().is_some() && item.sig.inputs.trailing_punct() {
        item.sig.inputs.pop_punct();
    }
    Fallback {
        declare: item.sig.receiver().is_none(),
        item,
        runtime,
    }
}

/// `argN` for a parameter bound by a pattern, made unique against the other parameters' names.
fn synthetic_name(index: usize, sig: &Signature) -> String {
    let taken = |candidate: &str| {
        sig.inputs.iter().any(|arg| match arg {
            FnArg::Typed(t) => matches!(&*t.pat, Pat::Ident(p) if p.ident.unraw() == candidate),
            FnArg::Receiver(_) => false,
        })
    };
    let mut name = format!("arg{index}");
    while taken(&name) {
        name.push('_');
    }
    name
}

/// `impl Trait` has no single type to describe or decode; report it on the `impl` type.
fn no_impl_trait(ty: &syn::Type, what: &str, fix: &str, diag: &mut Diagnostics) {
    struct Find(Option<Span>);
    impl Visit<'_> for Find {
        fn visit_type_impl_trait(&mut self, node: &syn::TypeImplTrait) {
            self.0.get_or_insert(node.span());
        }
    }
    let mut find = Find(None);
    find.visit_type(ty);
    if let Some(span) = find.0 {
        diag.error(
            span,
            format!("`impl Trait` cannot be a tool's {what}: its schema is computed from the type; {fix}"),
        );
    }
}

fn annotations(attr: Option<AnnotationsAttr>) -> Annotations {
    let attr = attr.unwrap_or_default();
    let hint = |kv: Option<Kv<bool>>| kv.map(|kv| kv.value);
    Annotations {
        read_only: hint(attr.read_only),
        destructive: hint(attr.destructive),
        idempotent: hint(attr.idempotent),
        open_world: hint(attr.open_world),
    }
}

/// A doc comment as a description: the `///` lines joined with newlines, the common indentation
/// (and so the space after `///`) removed, blank lines at either end dropped. `None` when empty.
pub fn join_docs(docs: &[String]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for doc in docs {
        // A `/** ... */` block is one attribute of several lines: its first line follows `/**`
        // directly, so only the others share an indentation.
        if !doc.contains('\n') {
            lines.push(doc.clone());
            continue;
        }
        let mut block = doc.split('\n');
        lines.extend(block.next().map(|first| format!(" {}", first.trim_start())));
        lines.extend(
            dedent(&block.collect::<Vec<_>>())
                .into_iter()
                .map(|l| format!(" {l}")),
        );
    }
    let text = dedent(&lines.iter().map(String::as_str).collect::<Vec<_>>()).join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Removes the indentation common to the non-blank lines, and trailing whitespace.
fn dedent<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()).trim_end())
        .collect()
}

#[cfg(test)]
mod tests;
