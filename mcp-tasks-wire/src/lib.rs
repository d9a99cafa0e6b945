//! Internal to mcp-tasks: serde's `Serialize` and `Deserialize` derives for the protocol types,
//! with no dependency (serde's own derive compiles `syn`, which the client must not).
//!
//! `#[derive(wire::Serialize, wire::Deserialize)]` reads the `#[serde(...)]` attributes the
//! protocol types use (see the README for the list; any other is a compile error) and writes
//! the impls as text, which the compiler then parses. The generated code names `::serde` and
//! `::serde_json`. Depend on `mcp-tasks-runtime` instead of this crate.

mod de;
mod parse;
mod ser;

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, TokenStream, TokenTree};

/// `serde::Serialize` for a struct or enum, from its `#[serde(...)]` attributes.
#[proc_macro_derive(Serialize, attributes(serde))]
pub fn derive_serialize(input: TokenStream) -> TokenStream {
    expand(input, ser::expand)
}

/// `serde::Deserialize` for a struct or enum, from its `#[serde(...)]` attributes.
#[proc_macro_derive(Deserialize, attributes(serde))]
pub fn derive_deserialize(input: TokenStream) -> TokenStream {
    expand(input, de::expand)
}

fn expand(
    input: TokenStream,
    generate: fn(&parse::Item) -> Result<String, parse::Error>,
) -> TokenStream {
    let code = parse::item(input).and_then(|item| {
        let code = generate(&item)?;
        Ok(format!(
            "#[doc(hidden)]
             #[allow(unused_qualifications, unused_mut, non_camel_case_types, clippy::all)]
             const _: () = {{ {code} }};"
        ))
    });
    match code {
        Ok(code) => code.parse().expect("the generated code is valid Rust"),
        Err(error) => compile_error(error),
    }
}

/// `::core::compile_error!("...");` on the offending token.
fn compile_error(error: parse::Error) -> TokenStream {
    let span = error.span;
    let message = format!("mcp-tasks-wire: {}", error.message);
    let mut literal = Literal::string(&message);
    literal.set_span(span);
    let punct = |c, spacing| {
        let mut p = Punct::new(c, spacing);
        p.set_span(span);
        TokenTree::Punct(p)
    };
    let ident = |name| TokenTree::Ident(Ident::new(name, span));
    let mut args = Group::new(Delimiter::Parenthesis, TokenTree::Literal(literal).into());
    args.set_span(span);
    [
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        ident("core"),
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        ident("compile_error"),
        punct('!', Spacing::Alone),
        TokenTree::Group(args),
        punct(';', Spacing::Alone),
    ]
    .into_iter()
    .collect()
}

/// The pieces of an impl header for `item`: the parameters as declared (with `extra` first,
/// e.g. `'de`), the type as named, and the where clause bounding each type parameter by `bound`.
pub(crate) struct Header {
    pub(crate) decl: String,
    pub(crate) ty: String,
    pub(crate) bounds: String,
}

impl Header {
    pub(crate) fn new(item: &parse::Item, extra: Option<&str>, bound: &str) -> Self {
        let lifetimes: Vec<&str> = item
            .params
            .iter()
            .filter(|p| p.lifetime)
            .map(|p| p.name.as_str())
            .collect();
        let mut decl: Vec<String> = Vec::new();
        if let Some(extra) = extra {
            // `'de` outlives every lifetime of the type: its fields may borrow from the input.
            if lifetimes.is_empty() {
                decl.push(extra.to_owned());
            } else {
                decl.push(format!("{extra}: {}", lifetimes.join(" + ")));
            }
        }
        decl.extend(item.params.iter().map(|p| {
            if p.bounds.is_empty() {
                p.name.clone()
            } else {
                format!("{} {}", p.name, p.bounds)
            }
        }));
        let names: Vec<&str> = item.params.iter().map(|p| p.name.as_str()).collect();
        let bounds: Vec<String> = item
            .params
            .iter()
            .filter(|p| !p.lifetime)
            .map(|p| format!("{}: {bound}", p.name))
            .collect();
        Header {
            decl: format!("<{}>", decl.join(", ")),
            ty: format!("{}<{}>", item.name, names.join(", ")),
            bounds: if bounds.is_empty() {
                String::new()
            } else {
                format!("where {}", bounds.join(", "))
            },
        }
    }
}
