//! `#[prompt]`: the same three stages as `#[tool]`, in their own modules (`parse` → `validate`
//! → `expand`), reusing the tool's diagnostics, paths and doc-comment handling. Parameters may
//! carry `#[complete(values = [...])]` / `#[complete(with = path)]` and `#[arg(rename = "...")]`.

mod expand;
mod model;
pub(crate) mod parse;
mod validate;

use crate::diag::Diagnostics;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// `#[prompt(args)] item`.
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "`#[prompt]` goes on an `async fn`: write `#[prompt] async fn name(...) -> String`",
            );
            let mut out = item;
            out.extend(error.into_compile_error());
            return out;
        }
    };
    let runtime_hint = crate::parse::attr::runtime_hint(&args);
    let mut diag = Diagnostics::default();
    let p = parse::function(item_fn, &mut diag);
    let attr = parse::attr(args, &mut diag);
    let spec = validate::validate(attr, &p, &mut diag);
    match (diag.finish(), spec) {
        (Ok(()), Some(spec)) => expand::emit(&spec),
        (result, _) => {
            let mut item = p.f.item;
            if item.sig.asyncness.is_some() {
                item.sig.constness = None;
            }
            if item.sig.variadic.take().is_some() && item.sig.inputs.trailing_punct() {
                item.sig.inputs.pop_punct();
            }
            let mut out = expand::fallback(&item, runtime_hint.as_ref());
            if let Err(error) = result {
                out.extend(error.into_compile_error());
            }
            out.into_token_stream()
        }
    }
}

#[cfg(test)]
mod tests;
