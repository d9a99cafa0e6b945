//! The function under `#[tool]`, taken apart. Parsing cannot fail here: everything that is wrong
//! with the signature is judged in `validate`, which sees all of it at once.

use syn::{Attribute, Expr, ExprLit, FnArg, ItemFn, Lit, Meta};

/// The function with its documentation collected.
#[derive(Debug, Clone)]
pub struct ToolFn {
    /// The function as it will be re-emitted: parameter doc comments removed (rustc rejects doc
    /// comments on parameters), everything else as written.
    pub item: ItemFn,
    /// The function's doc comment, one entry per `#[doc]` attribute.
    pub docs: Vec<String>,
    /// Each parameter's doc comment, by position (receivers included, empty).
    pub param_docs: Vec<Vec<String>>,
}

impl ToolFn {
    /// Collects the docs and strips the parameter doc comments.
    pub fn new(mut item: ItemFn) -> Self {
        let docs = docs_of(&item.attrs);
        let param_docs = item
            .sig
            .inputs
            .iter_mut()
            .map(|arg| {
                let attrs = match arg {
                    FnArg::Receiver(r) => &mut r.attrs,
                    FnArg::Typed(t) => &mut t.attrs,
                };
                let docs = docs_of(attrs);
                attrs.retain(|a| !is_doc(a));
                docs
            })
            .collect();
        ToolFn {
            item,
            docs,
            param_docs,
        }
    }
}

fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc") && matches!(attr.meta, Meta::NameValue(_))
}

/// The text of each `#[doc = "..."]` (that is, each `///` line) among `attrs`.
pub fn docs_of(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| is_doc(a))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}
