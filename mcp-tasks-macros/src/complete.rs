//! `#[complete(values = [...])]` / `#[complete(with = path)]` on a parameter, shared by
//! `#[prompt]` (its arguments) and `#[resource]` (a template's variables): parsed (darling, on
//! the key), checked (exactly one of the two), and expanded to a `Completer`.

use crate::diag::Diagnostics;
use crate::key::{FnPath, Key, Values};
use crate::paths::Rt;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Meta;
use syn::spanned::Spanned;

/// `#[complete(...)]` on a parameter, as written.
#[derive(Debug, Default, FromMeta)]
pub struct CompleteAttr {
    /// `values = ["a", "b"]`: a fixed list.
    pub values: Option<Key<Values>>,
    /// `with = path::to::function`: an `async fn(String, CompletionContext)`.
    pub with: Option<Key<FnPath>>,
}

/// How a parameter completes, checked.
#[derive(Debug, Clone)]
pub enum Complete {
    /// `values = [...]`.
    Values(Vec<syn::LitStr>),
    /// `with = path`.
    With(syn::Path),
}

/// Reads one `#[complete(...)]` attribute into `found` (with the span of its name); a second
/// one on the same parameter is an error.
pub fn parse(
    attr: &syn::Attribute,
    found: &mut Option<(CompleteAttr, Span)>,
    diag: &mut Diagnostics,
) {
    let Meta::List(list) = &attr.meta else {
        diag.error(
            attr.path().span(),
            "expected a list of keys: write `#[complete(values = [\"a\", \"b\"])]` or \
             `#[complete(with = my_fn)]`",
        );
        return;
    };
    let items = match NestedMeta::parse_meta_list(list.tokens.clone()) {
        Ok(items) => items,
        Err(err) => return diag.push(err),
    };
    if found.is_some() {
        diag.error(
            attr.path().span(),
            "a parameter takes one `#[complete(...)]`: merge them or remove one",
        );
        return;
    }
    if let Some(complete) = diag.handle(CompleteAttr::from_list(&items)) {
        *found = Some((complete, attr.path().span()));
    }
}

/// Takes every `#[complete(...)]` off each parameter of `item` (so that rustc never sees them),
/// by position, receivers included.
pub fn take(item: &mut syn::ItemFn, diag: &mut Diagnostics) -> Vec<Option<(CompleteAttr, Span)>> {
    let mut all = Vec::new();
    for arg in &mut item.sig.inputs {
        let list = match arg {
            syn::FnArg::Receiver(r) => &mut r.attrs,
            syn::FnArg::Typed(t) => &mut t.attrs,
        };
        let mut found = None;
        list.retain(|a| {
            if !a.path().is_ident("complete") {
                return true;
            }
            parse(a, &mut found, diag);
            false
        });
        all.push(found);
    }
    all
}

/// `values = [...]` or `with = path`: exactly one of the two.
pub fn validate(attr: &(CompleteAttr, Span), diag: &mut Diagnostics) -> Option<(Complete, Span)> {
    let (attr, span) = attr;
    match (&attr.values, &attr.with) {
        (Some(values), None) => {
            if values.value.0.is_empty() {
                diag.error(
                    values.span,
                    "`values` is empty: list the values to offer, e.g. `#[complete(values = [\"rust\", \"python\"])]`",
                );
            }
            Some((Complete::Values(values.value.0.clone()), *span))
        }
        (None, Some(with)) => Some((Complete::With(with.value.0.clone()), *span)),
        (Some(_), Some(with)) => {
            diag.error(
                with.key.span(),
                "`#[complete]` takes either `values = [...]` (a fixed list) or `with = function` \
                 (computed), not both: remove one",
            );
            None
        }
        (None, None) => {
            diag.error(
                *span,
                "`#[complete]` needs what to offer: write `#[complete(values = [\"a\", \"b\"])]` \
                 or `#[complete(with = my_completion_fn)]`",
            );
            None
        }
    }
}

/// `Completer::Values(&[...])`, or `Completer::With(|v, c| complete_with(path(v, c)))` with the
/// call at the path's span (a function of the wrong shape is reported there).
pub struct Completer<'a>(pub &'a Complete);

impl ToTokens for Completer<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(match self.0 {
            Complete::Values(values) => quote!(#Rt::Completer::Values(&[#(#values),*])),
            Complete::With(path) => {
                let value = syn::Ident::new("value", Span::mixed_site());
                let context = syn::Ident::new("context", Span::mixed_site());
                let call = quote_spanned! {path.span()=>
                    #Rt::complete_with(#path(#value, #context))
                };
                quote!(#Rt::Completer::With(|#value, #context| #call))
            }
        });
    }
}
