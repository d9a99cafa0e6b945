//! The derive input, read from its tokens: the item's name, generics, `#[serde]` attributes,
//! fields and variants. Types stay token text: the generated code only repeats them.

use proc_macro::{Delimiter, Spacing, Span, TokenStream, TokenTree};

/// Why the derive refuses its input, and the token the compile error points at.
pub(crate) struct Error {
    pub(crate) message: String,
    pub(crate) span: Span,
}

impl Error {
    pub(crate) fn at(span: Span, message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            span,
        }
    }
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::at(Span::call_site(), message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::at(Span::call_site(), message)
    }
}

pub(crate) struct Item {
    pub(crate) name: String,
    pub(crate) params: Vec<Param>,
    pub(crate) attrs: Attrs,
    pub(crate) body: Body,
}

pub(crate) struct Param {
    /// `'a` or `T`.
    pub(crate) name: String,
    /// `: 'b` or `: Clone`, as written; empty without bounds.
    pub(crate) bounds: String,
    pub(crate) lifetime: bool,
}

pub(crate) enum Body {
    Struct(Fields),
    Enum(Vec<Variant>),
}

pub(crate) enum Fields {
    Named(Vec<Field>),
    Tuple(Vec<Field>),
    Unit,
}

pub(crate) struct Field {
    /// The identifier as written (`r#type` too); for a tuple field, its index.
    pub(crate) ident: String,
    /// Where the field is written, for errors.
    pub(crate) span: Span,
    pub(crate) ty: Vec<TokenTree>,
    pub(crate) attrs: Attrs,
}

pub(crate) struct Variant {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) fields: Fields,
    pub(crate) attrs: Attrs,
}

/// The `#[serde(...)]` attributes of a container, field or variant.
#[derive(Default)]
pub(crate) struct Attrs {
    pub(crate) rename: Option<String>,
    pub(crate) rename_all: Option<String>,
    /// `Some(None)`: `default`; `Some(Some(path))`: `default = "path"`.
    pub(crate) default: Option<Option<String>>,
    pub(crate) skip: bool,
    pub(crate) skip_serializing_if: Option<String>,
    pub(crate) flatten: bool,
    pub(crate) with: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) untagged: bool,
    pub(crate) transparent: bool,
}

impl Item {
    /// Every field, of every variant.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &Field> {
        let lists: Vec<&Fields> = match &self.body {
            Body::Struct(fields) => vec![fields],
            Body::Enum(variants) => variants.iter().map(|v| &v.fields).collect(),
        };
        lists.into_iter().flat_map(|fields| match fields {
            Fields::Named(f) | Fields::Tuple(f) => f.as_slice(),
            Fields::Unit => &[],
        })
    }
}

impl Field {
    /// Whether the type names `'static` (a `&'static str`, say).
    pub(crate) fn borrows_static(&self) -> bool {
        self.ty.windows(2).any(|pair| {
            matches!(pair, [TokenTree::Punct(q), TokenTree::Ident(i)]
                if q.as_char() == '\'' && i.to_string() == "static")
        })
    }

    pub(crate) fn ty(&self) -> String {
        self.ty.iter().cloned().collect::<TokenStream>().to_string()
    }

    /// `T` of a field of type `Option<T>`.
    pub(crate) fn option_inner(&self) -> Option<String> {
        match self.ty.as_slice() {
            [
                TokenTree::Ident(o),
                TokenTree::Punct(lt),
                inner @ ..,
                TokenTree::Punct(gt),
            ] if o.to_string() == "Option" && lt.as_char() == '<' && gt.as_char() == '>' => {
                Some(inner.iter().cloned().collect::<TokenStream>().to_string())
            }
            _ => None,
        }
    }

    /// Whether the field's type is a map (entries flattened one by one, without a copy).
    pub(crate) fn is_map(&self) -> bool {
        let last_segment = self
            .ty
            .iter()
            .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == '<'))
            .filter_map(|t| match t {
                TokenTree::Ident(i) => Some(i.to_string()),
                _ => None,
            })
            .last();
        matches!(
            last_segment.as_deref(),
            Some("Map" | "HashMap" | "BTreeMap")
        )
    }

    /// The name on the wire: `rename`, else the identifier under the container's `rename_all`.
    pub(crate) fn key(&self, rename_all: Option<&str>) -> String {
        if let Some(name) = &self.attrs.rename {
            return name.clone();
        }
        let ident = self.ident.trim_start_matches("r#");
        match rename_all {
            Some("camelCase") => {
                let mut out = String::new();
                for (i, part) in ident.split('_').enumerate() {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(c) if i > 0 => out.extend(c.to_uppercase().chain(chars)),
                        Some(c) => out.extend(std::iter::once(c).chain(chars)),
                        None => {}
                    }
                }
                out
            }
            Some("lowercase") => ident.to_lowercase(),
            _ => ident.to_owned(),
        }
    }
}

impl Variant {
    /// The name on the wire: `rename`, else the variant's name under the enum's `rename_all`.
    pub(crate) fn key(&self, rename_all: Option<&str>) -> String {
        if let Some(name) = &self.attrs.rename {
            return name.clone();
        }
        match rename_all {
            Some("snake_case") => {
                let mut out = String::new();
                for (i, c) in self.name.chars().enumerate() {
                    if c.is_uppercase() && i > 0 {
                        out.push('_');
                    }
                    out.extend(c.to_lowercase());
                }
                out
            }
            Some("lowercase") => self.name.to_lowercase(),
            Some("camelCase") => {
                let mut chars = self.name.chars();
                chars
                    .next()
                    .map(|c| c.to_lowercase().chain(chars).collect())
                    .unwrap_or_default()
            }
            _ => self.name.clone(),
        }
    }
}

const RENAME_ALL: &[&str] = &["camelCase", "snake_case", "lowercase"];

pub(crate) fn item(input: TokenStream) -> Result<Item, Error> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut rest = tokens.as_slice();
    let attrs = attributes(&mut rest, &["rename_all", "tag", "untagged", "transparent"])?;
    visibility(&mut rest);
    let keyword = ident(&mut rest).ok_or("expected `struct` or `enum`")?;
    let name = ident(&mut rest).ok_or("expected the type's name")?;
    let params = generics(&mut rest)?;
    if matches!(rest.first(), Some(TokenTree::Ident(i)) if i.to_string() == "where") {
        return Err(Error::from("`where` clauses are not supported"));
    }
    let body = match (keyword.as_str(), rest.first()) {
        ("struct", Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Brace => {
            Body::Struct(Fields::Named(fields(g.stream(), true)?))
        }
        ("struct", Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Parenthesis => {
            Body::Struct(Fields::Tuple(fields(g.stream(), false)?))
        }
        ("struct", _) => Body::Struct(Fields::Unit),
        ("enum", Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Brace => {
            Body::Enum(variants(g.stream())?)
        }
        _ => return Err(Error::from(format!("`{keyword}` items are not supported"))),
    };
    if let Some(style) = &attrs.rename_all
        && !RENAME_ALL.contains(&style.as_str())
    {
        return Err(Error::from(format!(
            "rename_all = {style:?} is not supported"
        )));
    }
    Ok(Item {
        name,
        params,
        attrs,
        body,
    })
}

fn ident(rest: &mut &[TokenTree]) -> Option<String> {
    match rest.first() {
        Some(TokenTree::Ident(i)) => {
            *rest = &rest[1..];
            Some(i.to_string())
        }
        _ => None,
    }
}

fn punct(rest: &mut &[TokenTree], c: char) -> bool {
    match rest.first() {
        Some(TokenTree::Punct(p)) if p.as_char() == c => {
            *rest = &rest[1..];
            true
        }
        _ => false,
    }
}

/// Skips `pub`, `pub(crate)` and the like.
fn visibility(rest: &mut &[TokenTree]) {
    if matches!(rest.first(), Some(TokenTree::Ident(i)) if i.to_string() == "pub") {
        *rest = &rest[1..];
        if matches!(rest.first(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
        {
            *rest = &rest[1..];
        }
    }
}

/// Reads the outer attributes, keeping those of `#[serde(...)]` that `allowed` names.
fn attributes(rest: &mut &[TokenTree], allowed: &[&str]) -> Result<Attrs, Error> {
    let mut attrs = Attrs::default();
    while punct(rest, '#') {
        let Some(TokenTree::Group(group)) = rest.first() else {
            return Err(Error::from("expected an attribute after `#`"));
        };
        *rest = &rest[1..];
        let inner: Vec<TokenTree> = group.stream().into_iter().collect();
        if let [TokenTree::Ident(name), TokenTree::Group(args)] = inner.as_slice()
            && name.to_string() == "serde"
        {
            for entry in split_commas(args.stream().into_iter().collect()) {
                serde_entry(&mut attrs, &entry, allowed)?;
            }
        }
    }
    Ok(attrs)
}

fn serde_entry(attrs: &mut Attrs, entry: &[TokenTree], allowed: &[&str]) -> Result<(), Error> {
    let (key, value) = match entry {
        [TokenTree::Ident(key)] => (key.to_string(), None),
        [
            TokenTree::Ident(key),
            TokenTree::Punct(eq),
            TokenTree::Literal(value),
        ] if eq.as_char() == '=' => {
            let text = value.to_string();
            let Some(unquoted) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
                return Err(Error::at(
                    key.span(),
                    format!("serde attribute `{key}` takes a string"),
                ));
            };
            (key.to_string(), Some(unquoted.to_owned()))
        }
        _ => {
            let text = entry.iter().cloned().collect::<TokenStream>().to_string();
            let span = entry.first().map_or_else(Span::call_site, TokenTree::span);
            return Err(Error::at(
                span,
                format!("unsupported serde attribute `{text}`"),
            ));
        }
    };
    let span = entry[0].span();
    if !allowed.contains(&key.as_str()) {
        return Err(Error::at(
            span,
            format!("serde attribute `{key}` is not supported here"),
        ));
    }
    let needs_value = |value: Option<String>| value.ok_or(format!("`{key}` takes `= \"...\"`"));
    match key.as_str() {
        "rename" => attrs.rename = Some(needs_value(value)?),
        "rename_all" => attrs.rename_all = Some(needs_value(value)?),
        "default" => attrs.default = Some(value),
        "skip" => attrs.skip = true,
        "skip_serializing_if" => attrs.skip_serializing_if = Some(needs_value(value)?),
        "flatten" => attrs.flatten = true,
        "with" => attrs.with = Some(needs_value(value)?),
        "tag" => attrs.tag = Some(needs_value(value)?),
        "untagged" => attrs.untagged = true,
        "transparent" => attrs.transparent = true,
        // Every lifetime of a deserialized type borrows from the input (`'de: 'a`).
        "borrow" => {}
        _ => unreachable!("checked against `allowed`"),
    }
    Ok(())
}

/// `<'a, T: Bound>` after the type's name, if any.
fn generics(rest: &mut &[TokenTree]) -> Result<Vec<Param>, Error> {
    if !punct(rest, '<') {
        return Ok(Vec::new());
    }
    let mut depth = 1;
    let mut inner = Vec::new();
    while let Some(token) = rest.first() {
        *rest = &rest[1..];
        if let TokenTree::Punct(p) = token {
            match p.as_char() {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        inner.push(token.clone());
    }
    split_commas(inner)
        .into_iter()
        .map(|param| {
            let (lifetime, name, bounds) = match param.as_slice() {
                [TokenTree::Punct(q), TokenTree::Ident(name), bounds @ ..]
                    if q.as_char() == '\'' =>
                {
                    (true, format!("'{name}"), bounds)
                }
                [TokenTree::Ident(name), bounds @ ..] if name.to_string() != "const" => {
                    (false, name.to_string(), bounds)
                }
                _ => {
                    return Err(Error::from(
                        "only lifetime and type parameters are supported",
                    ));
                }
            };
            if bounds
                .iter()
                .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '='))
            {
                return Err(Error::from("default type parameters are not supported"));
            }
            Ok(Param {
                lifetime,
                name,
                bounds: bounds.iter().cloned().collect::<TokenStream>().to_string(),
            })
        })
        .collect()
}

fn fields(stream: TokenStream, named: bool) -> Result<Vec<Field>, Error> {
    split_commas(stream.into_iter().collect())
        .into_iter()
        .enumerate()
        .map(|(index, tokens)| {
            let mut rest = tokens.as_slice();
            let attrs = attributes(
                &mut rest,
                &[
                    "rename",
                    "default",
                    "skip",
                    "skip_serializing_if",
                    "flatten",
                    "with",
                    "borrow",
                ],
            )?;
            visibility(&mut rest);
            let span = rest.first().map_or_else(Span::call_site, TokenTree::span);
            let ident = if named {
                let ident = ident(&mut rest).ok_or("expected a field name")?;
                if !punct(&mut rest, ':') {
                    return Err(Error::from(format!("expected `:` after field `{ident}`")));
                }
                ident
            } else {
                index.to_string()
            };
            Ok(Field {
                ident,
                span,
                ty: rest.to_vec(),
                attrs,
            })
        })
        .collect()
}

fn variants(stream: TokenStream) -> Result<Vec<Variant>, Error> {
    split_commas(stream.into_iter().collect())
        .into_iter()
        .map(|tokens| {
            let mut rest = tokens.as_slice();
            let attrs = attributes(&mut rest, &["rename", "rename_all"])?;
            let span = rest.first().map_or_else(Span::call_site, TokenTree::span);
            let name = ident(&mut rest).ok_or("expected a variant name")?;
            let fields = match rest.first() {
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                    Fields::Named(fields(g.stream(), true)?)
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    Fields::Tuple(fields(g.stream(), false)?)
                }
                _ => Fields::Unit,
            };
            Ok(Variant {
                name,
                span,
                fields,
                attrs,
            })
        })
        .collect()
}

/// Splits at the commas outside any `<...>` (groups are single tokens already); `->` is not a
/// closing bracket. A trailing comma leaves no empty piece.
fn split_commas(tokens: Vec<TokenTree>) -> Vec<Vec<TokenTree>> {
    let mut pieces = vec![Vec::new()];
    let mut depth = 0usize;
    let mut after_dash = false;
    for token in tokens {
        if let TokenTree::Punct(p) = &token {
            match p.as_char() {
                ',' if depth == 0 => {
                    pieces.push(Vec::new());
                    after_dash = false;
                    continue;
                }
                '<' => depth += 1,
                '>' if !after_dash => depth = depth.saturating_sub(1),
                _ => {}
            }
            after_dash = p.as_char() == '-' && p.spacing() == Spacing::Joint;
        } else {
            after_dash = false;
        }
        pieces.last_mut().expect("one piece at least").push(token);
    }
    pieces.retain(|piece| !piece.is_empty());
    pieces
}
