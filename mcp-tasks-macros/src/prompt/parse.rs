//! Stage 1 for `#[prompt]`: the attribute (darling, with its own did-you-mean errors on the key),
//! and each parameter's helper attributes (`#[complete(...)]`, `#[arg(...)]`), taken off the
//! function so that rustc never sees them. Parameter doc comments are collected by
//! [`ToolFn`](crate::parse::ToolFn), as for tools.

use crate::complete::{self, CompleteAttr};
use crate::diag::Diagnostics;
use crate::key::Key;
use crate::parse::ToolFn;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{FnArg, Meta};

/// Everything `#[prompt(...)]` accepts. Field names are the attribute keys.
#[derive(Debug, Default, FromMeta)]
pub struct PromptAttr {
    /// `name = "..."`: the prompt's name.
    pub name: Option<Key<syn::LitStr>>,
    /// `title = "..."`.
    pub title: Option<Key<syn::LitStr>>,
    /// `description = "..."`: overrides the doc comment.
    pub description: Option<Key<syn::LitStr>>,
    /// `scope = "review"`: the OAuth scopes a caller's token must grant.
    pub scope: Option<Key<syn::LitStr>>,
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
