//! Stage 2 for `#[resource]`: attribute and function become a [`ResourceSpec`], or errors, each
//! on the most specific token and naming the fix.

use super::attr::ResourceAttr;
use super::model::{Param, ResourceSpec};
use super::template;
use crate::complete::{self, CompleteAttr};
use crate::diag::Diagnostics;
use crate::parse::ToolFn;
use crate::paths;
use crate::validate::{join_docs, scope_list};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{FnArg, Pat, ReturnType};

/// Checks everything; `None` when anything was wrong (the errors are in `diag`).
pub fn validate(
    attr: Option<ResourceAttr>,
    f: &ToolFn,
    completes: &[Option<(CompleteAttr, Span)>],
    diag: &mut Diagnostics,
) -> Option<ResourceSpec> {
    let errors_before = diag.len();
    // When the attribute did not parse, its error is reported; a missing `uri` would only echo it.
    let parsed = attr.is_some();
    let attr = attr.unwrap_or_default();
    crate::signature::check(&f.item.sig, "resource", "resource", diag);
    let (uri, vars) = match &attr.uri {
        None if !parsed => (String::new(), Vec::new()),
        None => {
            diag.error(
                Span::call_site(),
                "`#[resource]` needs a `uri`: write `#[resource(uri = \"notes://{title}\")]` for a \
                 template, or `#[resource(uri = \"config://app\")]` for one fixed resource",
            );
            (String::new(), Vec::new())
        }
        Some(lit) => {
            let uri = lit.value();
            let vars = match template::variables(&uri) {
                Ok(vars) => vars,
                Err(why) => {
                    diag.error(lit.span(), format!("invalid URI template `{uri}`: {why}"));
                    Vec::new()
                }
            };
            if !template::has_scheme(&uri) {
                diag.error(
                    lit.span(),
                    format!(
                        "`{uri}` is not an absolute URI: it needs a scheme, as in \
                         `notes://{{title}}` or `file:///path`"
                    ),
                );
            }
            (uri, vars)
        }
    };
    let template = !vars.is_empty();
    let params = params(f, &vars, completes, attr.uri.as_ref(), diag);
    if let Some(lit) = &attr.uri {
        for var in &vars {
            if !params.iter().any(|p| &p.name == var) {
                diag.error(
                    lit.span(),
                    format!(
                        "template variable `{var}` has no parameter: add `{var}: String` (or any \
                         type that deserializes from its text) to `{}`",
                        f.item.sig.ident.unraw()
                    ),
                );
            }
        }
    }
    let mime_type = attr.mime_type.as_ref().map(|lit| {
        let mime = lit.value();
        if !template::is_mime_type(&mime) {
            diag.error(
                lit.span(),
                format!(
                    "`{mime}` is not a MIME type: write `type/subtype`, as in \
                     `mime_type = \"text/markdown\"` or `\"application/json\"`"
                ),
            );
        }
        mime
    });
    let size = attr.size.as_ref().map(|size| {
        if template {
            diag.error(
                size.span(),
                "`size` is for a fixed resource; a template stands for many resources of \
                 different sizes: remove `size` (a `list` function can give each its own)",
            );
        }
        **size
    });
    let list = attr.list.as_ref().map(|list| {
        if !template {
            diag.error(
                list.span(),
                "`list` enumerates the resources a template stands for; this `uri` has no \
                 variables, so it is listed as it is: remove `list`",
            );
        }
        (**list).clone()
    });
    let name = match &attr.name {
        Some(lit) if lit.value().trim().is_empty() => {
            diag.error(lit.span(), "a resource's `name` cannot be empty");
            String::new()
        }
        Some(lit) => lit.value(),
        None => f.item.sig.ident.unraw().to_string(),
    };
    let output = match &f.item.sig.output {
        ReturnType::Default => syn::parse_quote_spanned!(f.item.sig.ident.span()=> ()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let description = match &attr.description {
        Some(lit) => Some(lit.value()).filter(|d| !d.trim().is_empty()),
        None => join_docs(&f.docs),
    };
    let scopes = (attr.scope.as_ref()).map_or_else(Vec::new, |lit| {
        scope_list(lit, lit.span(), "resource", diag)
    });
    (diag.len() == errors_before).then(|| ResourceSpec {
        item: f.item.clone(),
        runtime: attr.krate.clone().unwrap_or_else(paths::default_runtime),
        uri,
        template,
        name,
        title: attr.title.as_ref().map(syn::LitStr::value),
        description,
        mime_type,
        size,
        list,
        scopes,
        params,
        output,
    })
}

/// Each parameter, whether it is a template variable, and how it completes: `#[complete]` goes
/// on a template variable only (an error on the attribute otherwise).
fn params(
    f: &ToolFn,
    vars: &[String],
    completes: &[Option<(CompleteAttr, Span)>],
    uri: Option<&syn::LitStr>,
    diag: &mut Diagnostics,
) -> Vec<Param> {
    let mut params = Vec::new();
    for (index, (arg, attr)) in f.item.sig.inputs.iter().zip(completes).enumerate() {
        let FnArg::Typed(typed) = arg else { continue };
        // A pattern (`_`, `State(x)`) names no variable: the parameter must be injected.
        let name = match &*typed.pat {
            Pat::Ident(pat) => pat.ident.unraw().to_string(),
            _ => format!("arg{index}"),
        };
        let var = matches!(&*typed.pat, Pat::Ident(_)) && vars.contains(&name);
        let complete = attr.as_ref().and_then(|attr| {
            let span = attr.1;
            if uri.is_some() && vars.is_empty() {
                diag.error(
                    span,
                    "`#[complete]` completes a resource template's variable, and this `uri` has \
                     no variables: remove `#[complete(...)]`, or make the `uri` a template \
                     (`notes://{title}`)",
                );
                return None;
            }
            if !var && uri.is_some() {
                diag.error(
                    span,
                    format!(
                        "`#[complete]` goes on a template variable, and `{name}` is not a variable \
                         of `{}` (it is injected by the server): move `#[complete(...)]` to a \
                         variable's parameter",
                        uri.map(syn::LitStr::value).unwrap_or_default()
                    ),
                );
                return None;
            }
            complete::validate(attr, diag)
        });
        params.push(Param {
            var,
            name,
            ty: (*typed.ty).clone(),
            complete,
        });
    }
    params
}
