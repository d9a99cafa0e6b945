//! Stage 3, and the driver: parse → validate → emit. Emitting reads the model only and cannot
//! fail; on any error the user's function is emitted as written (minus parameter doc comments),
//! with a stub descriptor and the errors, so the user sees exactly the errors `#[tool]` found.

mod descriptor;
mod fallback;
mod info;

use crate::diag::Diagnostics;
use crate::model::ToolSpec;
use crate::{parse, validate};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// `#[tool(args)] item`.
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "`#[tool]` goes on an `async fn`: write `#[tool] async fn name(...) { ... }`",
            );
            let mut out = item;
            out.extend(error.into_compile_error());
            return out;
        }
    };
    let f = parse::ToolFn::new(item_fn);
    let mut diag = Diagnostics::default();
    let runtime_hint = parse::attr::runtime_hint(&args);
    let attr = parse::attr::parse(args, &mut diag);
    let spec = validate::validate(attr, &f, &mut diag);
    match (diag.finish(), spec) {
        (Ok(()), Some(spec)) => emit(&spec),
        (result, _) => {
            let fallback = validate::fallback(f, runtime_hint);
            let mut out = fallback::Stub(&fallback).into_token_stream();
            if let Err(error) = result {
                out.extend(error.into_compile_error());
            }
            out
        }
    }
}

/// The user's function, then its descriptor.
///
/// The one addition to the function is `#[allow(clippy::unused_async)]`: `#[tool]` requires
/// `async`, so a tool whose body does not await would otherwise trip that pedantic lint for
/// something the user cannot change.
pub fn emit(spec: &ToolSpec) -> TokenStream {
    let mut item = spec.item.clone();
    item.attrs
        .push(syn::parse_quote!(#[allow(clippy::unused_async)]));
    let mut out = item.to_token_stream();
    descriptor::Descriptor(spec).to_tokens(&mut out);
    out
}

#[cfg(test)]
mod snapshots;
