//! Stage 2 for `#[prompt]`: the raw attribute and function become a [`PromptSpec`], or errors,
//! each on the most specific token.

use super::model::{Param, PromptSpec};
use super::parse::{PromptAttr, PromptFn};
use crate::diag::Diagnostics;
use crate::paths;
use crate::validate::{join_docs, scope_list};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Pat, ReturnType};

/// Checks everything; `None` when anything was wrong (the errors are in `diag`).
pub fn validate(
    attr: Option<PromptAttr>,
    p: &PromptFn,
    diag: &mut Diagnostics,
) -> Option<PromptSpec> {
    let errors_before = diag.len();
    let attr = attr.unwrap_or_default();
    let item = &p.f.item;
    crate::signature::check(&item.sig, "prompt", "prompt", diag);
    let name = match &attr.name {
        Some(kv) => {
            let name = kv.value.value();
            if name.trim().is_empty() {
                diag.error(
                    kv.span,
                    "a prompt's name cannot be empty: write `#[prompt(name = \"code_review\")]`",
                );
            }
            name
        }
        None => item.sig.ident.unraw().to_string(),
    };
    let params = params(p, diag);
    let output = match &item.sig.output {
        ReturnType::Default => {
            diag.error(
                item.sig.ident.span(),
                "a prompt returns its messages: add a return type such as `-> String` (one user \
                 message) or `-> Vec<PromptMessage>`",
            );
            syn::parse_quote!(())
        }
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let runtime = attr
        .krate
        .map_or_else(paths::default_runtime, |kv| kv.value);
    let title = attr.title.map(|kv| kv.value.value());
    let scopes = (attr.scope.as_ref()).map_or_else(Vec::new, |kv| {
        scope_list(&kv.value, kv.span, "prompt", diag)
    });
    let description = match attr.description {
        Some(kv) => Some(kv.value.value()).filter(|d| !d.trim().is_empty()),
        None => join_docs(&p.f.docs),
    };
    (diag.len() == errors_before).then(|| PromptSpec {
        item: item.clone(),
        runtime,
        name,
        title,
        description,
        scopes,
        params,
        output,
    })
}

/// Each parameter's name, doc, type and completion; duplicate names are errors on the second.
fn params(p: &PromptFn, diag: &mut Diagnostics) -> Vec<Param> {
    let mut params = Vec::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    let inputs = p.f.item.sig.inputs.iter();
    for (index, ((arg, docs), attrs)) in inputs.zip(&p.f.param_docs).zip(&p.attrs).enumerate() {
        let FnArg::Typed(typed) = arg else { continue };
        let (name, span, renamed) = match &attrs.arg.rename {
            Some(kv) => (kv.value.value(), kv.span, true),
            None => match &*typed.pat {
                Pat::Ident(pat) => (pat.ident.unraw().to_string(), pat.span(), false),
                _ => (format!("arg{index}"), typed.pat.span(), false),
            },
        };
        if renamed && name.is_empty() {
            diag.error(
                span,
                "an argument's name cannot be empty: write `#[arg(rename = \"argName\")]`",
            );
        }
        // Two plain bindings of one name are already rustc's error; a rename can collide unseen.
        if seen.insert(name.clone(), span).is_some()
            && (renamed || !matches!(&*typed.pat, Pat::Ident(_)))
        {
            diag.error(
                span,
                format!("two arguments are named `{name}`: each prompt argument needs its own name; rename one"),
            );
        }
        params.push(Param {
            name,
            doc: join_docs(docs),
            ty: (*typed.ty).clone(),
            complete: attrs
                .complete
                .as_ref()
                .and_then(|c| crate::complete::validate(c, diag)),
        });
    }
    params
}
