//! The shape `#[prompt]` and `#[resource]` need of their function: an `async fn`, free, concrete,
//! safe, Rust ABI. (`#[tool]` checks the same in `validate.rs`, with messages that say more about
//! why a tool cannot be otherwise.)

use crate::diag::Diagnostics;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Safety, Signature};

/// Reports every way `sig` is not that shape; `attribute` is the macro's name (`prompt`), `noun`
/// what it declares (`prompt`).
pub fn check(sig: &Signature, attribute: &str, noun: &str, diag: &mut Diagnostics) {
    let name = sig.ident.unraw();
    if sig.asyncness.is_none() {
        diag.error(
            sig.fn_token.span,
            format!("`#[{attribute}]` needs an `async fn`: write `async fn {name}(...)`"),
        );
    }
    if let Some(token) = &sig.constness {
        diag.error(
            token.span,
            format!("a {noun} cannot be a `const fn`: remove `const`"),
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        diag.error(
            token.span,
            format!(
                "a {noun} cannot be an `unsafe fn`: remove `unsafe` and use an `unsafe` block inside"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        diag.error(
            abi.span(),
            format!("a {noun} cannot have an `extern` ABI: remove it"),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        diag.error(
            sig.generics.span(),
            format!(
                "a {noun} cannot be generic: remove the generic parameters and name concrete types"
            ),
        );
    }
    if let Some(receiver) = sig.receiver() {
        diag.error(
            receiver.self_token.span,
            format!(
                "a {noun} is a free function, not a method: remove `self` and declare `{name}` \
                 outside the `impl` block; take shared state as a `State<T>` parameter"
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        diag.error(
            variadic.dots.span(),
            format!("a {noun} cannot be variadic: remove `...`"),
        );
    }
}
