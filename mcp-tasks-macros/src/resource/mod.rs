//! `#[resource]`: the same stages as `#[tool]`. `attr` reads the attribute (darling), `template`
//! checks the URI template, `validate` turns attribute and function into a [`ResourceSpec`] or
//! errors, `expand` emits the descriptor. On error the user's function is emitted as written,
//! with a stub descriptor and the errors.

mod attr;
mod expand;
mod model;
mod template;
mod validate;

#[cfg(test)]
mod tests;

use crate::diag::Diagnostics;
use crate::parse::ToolFn;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// `#[resource(args)] item`.
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "`#[resource]` goes on an `async fn`: write \
                 `#[resource(uri = \"...\")] async fn name(...) -> String { ... }`",
            );
            let mut out = item;
            out.extend(error.into_compile_error());
            return out;
        }
    };
    let mut item_fn = item_fn;
    let mut diag = Diagnostics::default();
    let completes = crate::complete::take(&mut item_fn, &mut diag);
    let f = ToolFn::new(item_fn);
    let runtime_hint = crate::parse::attr::runtime_hint(&args);
    let attr = attr::parse(args, &mut diag);
    let spec = validate::validate(attr, &f, &completes, &mut diag);
    match (diag.finish(), spec) {
        (Ok(()), Some(spec)) => expand::emit(&spec),
        (result, _) => {
            let fallback = crate::validate::fallback(f, runtime_hint);
            let mut out = expand::Stub(&fallback).into_token_stream();
            if let Err(error) = result {
                out.extend(error.into_compile_error());
            }
            out
        }
    }
}
