//! Paths the expansion uses. Everything reaches the runtime through one alias of
//! `<crate>::__private`, declared inside the generated `const _` block, so the expansion never
//! depends on the user's imports or prelude (a user `struct Box;` or `type Result` changes nothing).

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};

/// The default runtime path, for `#[tool]` without `crate = "..."`.
pub fn default_runtime() -> syn::Path {
    syn::parse_quote!(::mcp_tasks_runtime)
}

/// `__mcp_tasks`: the alias of `<crate>::__private` inside the generated block.
#[derive(Debug, Clone, Copy)]
pub struct Rt;

impl Rt {
    /// The alias as an identifier (mixed-site, so it never meets a user name).
    pub fn ident() -> syn::Ident {
        syn::Ident::new("__mcp_tasks", Span::mixed_site())
    }

    /// `use <crate>::__private as __mcp_tasks;`
    pub fn import(runtime: &syn::Path) -> TokenStream {
        let alias = Self::ident();
        quote!(use #runtime::__private as #alias;)
    }
}

impl ToTokens for Rt {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        Self::ident().to_tokens(tokens);
    }
}

/// A generated name: `__mcp_tasks_<what>`, mixed-site.
pub fn generated(what: &str) -> syn::Ident {
    syn::Ident::new(&format!("__mcp_tasks_{what}"), Span::mixed_site())
}

/// The generated constant that checks a function's parameter `index` (`__mcp_tasks_argN`).
pub fn param_const(index: usize) -> syn::Ident {
    generated(&format!("arg{index}"))
}

/// The generated constant that checks a function's output type (`__mcp_tasks_output`).
pub fn output_const() -> syn::Ident {
    generated("output")
}

/// A generated local (mixed-site), or `_` when it goes unused.
pub fn local(name: &str, used: bool) -> TokenStream {
    if used {
        syn::Ident::new(name, Span::mixed_site()).into_token_stream()
    } else {
        quote!(_)
    }
}
