//! Stage 3, and the driver: parse → validate → emit. Emitting reads the model only and cannot
//! fail; on any error the user's function is emitted as written (minus parameter doc comments),
//! with a stub descriptor and the errors, so the user sees exactly the errors `#[tool]` found.

mod descriptor;
mod fallback;
mod info;

use crate::diag::Diagnostics;
use crate::model::{Fallback, ToolSpec};
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
            let fallback = Fallback {
                declare: f.item.sig.receiver().is_none(),
                item: f.item,
                runtime: runtime_hint,
            };
            let mut out = fallback::Stub(&fallback).into_token_stream();
            if let Err(error) = result {
                out.extend(error.into_compile_error());
            }
            out
        }
    }
}

/// The user's function, then its descriptor.
pub fn emit(spec: &ToolSpec) -> TokenStream {
    let mut out = spec.item.to_token_stream();
    descriptor::Descriptor(spec).to_tokens(&mut out);
    out
}
