//! URI templates (RFC 6570, levels 1 to 3): parsed once at registration, then matched against
//! the URIs clients read. Matching is expansion run backwards: a URI matches when some values of
//! the variables expand to exactly it; the values found are percent-decoded.
//!
//! Level 3 covers every operator (`+ # . / ; ? &`) and several variables in one expression
//! (`{x,y}`); the level 4 modifiers (a prefix `:3`, an explode `*`) are refused, since a matched
//! value could not be mapped back onto them without guessing.

use std::collections::HashMap;
use std::fmt;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Op, Vec<String>),
}

/// An expression's operator (RFC 6570 §3.2.1), `Simple` for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    Param,
    Query,
    Continuation,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::Param,
            '?' => Op::Query,
            '&' => Op::Continuation,
            _ => return None,
        })
    }

    /// What an expansion starts with when any variable is defined.
    fn first(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::Param => ";",
            Op::Query => "?",
            Op::Continuation => "&",
        }
    }

    fn separator(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::Param => ';',
            Op::Query | Op::Continuation => '&',
        }
    }

    /// Whether values come as `name=value`.
    fn named(self) -> bool {
        matches!(self, Op::Param | Op::Query | Op::Continuation)
    }

    /// Whether reserved characters pass through unencoded.
    fn allows_reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Byte offset in the template where the problem is.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.at)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text.char_indices().peekable();
        let mut seen: Vec<String> = Vec::new();
        while let Some((at, c)) = rest.next() {
            match c {
                '{' => {
                    let close = text[at..].find('}').map(|i| at + i).ok_or(TemplateError {
                        at,
                        message: "unclosed `{`: every expression ends with `}`".into(),
                    })?;
                    let body = &text[at + 1..close];
                    if let Some(nested) = body.find('{') {
                        return Err(TemplateError {
                            at: at + 1 + nested,
                            message: "`{` inside an expression".into(),
                        });
                    }
                    let (op, names) = parse_expr(body, at + 1)?;
                    for name in &names {
                        if seen.contains(name) {
                            return Err(TemplateError {
                                at: at + 1,
                                message: format!("variable `{name}` appears twice"),
                            });
                        }
                        seen.push(name.clone());
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Expr(op, names));
                    while rest.peek().is_some_and(|(i, _)| *i <= close) {
                        rest.next();
                    }
                }
                '}' => {
                    return Err(TemplateError {
                        at,
                        message: "`}` with no `{` before it".into(),
                    });
                }
                c if c.is_control()
                    || c == ' '
                    || matches!(c, '"' | '\'' | '<' | '>' | '\\' | '^' | '`' | '|') =>
                {
                    return Err(TemplateError {
                        at,
                        message: format!("{c:?} is not allowed in a URI template"),
                    });
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(UriTemplate { parts })
    }

    /// Whether the template has any expression (a template without one names a single URI).
    pub fn has_variables(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Expr(..)))
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr(_, names) => names.as_slice(),
                Part::Literal(_) => &[],
            })
            .map(String::as_str)
    }

    /// The template with its variable names erased: two templates of one shape match the same
    /// URIs, so a server that registered both could never reach the second.
    pub(crate) fn shape(&self) -> String {
        let mut shape = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(l) => shape.push_str(l),
                Part::Expr(op, names) => {
                    shape.push_str(&format!("{{{op:?}{}}}", names.len()));
                }
            }
        }
        shape
    }

    /// The variables' values if `uri` is an expansion of this template (percent-decoded; a
    /// variable the URI leaves undefined is absent), `None` otherwise.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut found = HashMap::new();
        match_parts(&self.parts, uri, &mut found).then_some(found)
    }
}

fn parse_expr(body: &str, at: usize) -> Result<(Op, Vec<String>), TemplateError> {
    let mut chars = body.chars();
    let (op, list) = match chars.next() {
        None => {
            return Err(TemplateError {
                at,
                message: "empty expression `{}`: name a variable, as in `{id}`".into(),
            });
        }
        Some(c) => match Op::from_char(c) {
            Some(op) => (op, &body[1..]),
            None if matches!(c, '=' | ',' | '!' | '@' | '|') => {
                return Err(TemplateError {
                    at,
                    message: format!(
                        "`{c}` is a reserved operator in RFC 6570; the operators are `+ # . / ; ? &`"
                    ),
                });
            }
            None => (Op::Simple, body),
        },
    };
    let mut names = Vec::new();
    for name in list.split(',') {
        if name.ends_with('*') || name.contains(':') {
            return Err(TemplateError {
                at,
                message: format!(
                    "`{name}` uses a level 4 modifier (`*` or `:n`); only levels 1 to 3 are supported"
                ),
            });
        }
        let valid = !name.is_empty()
            && name.split('.').all(|piece| {
                !piece.is_empty()
                    && piece
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%')
            });
        if !valid {
            return Err(TemplateError {
                at,
                message: format!(
                    "`{name}` is not a variable name (letters, digits and `_`, as in `{{id}}`)"
                ),
            });
        }
        names.push(name.to_owned());
    }
    Ok((op, names))
}

fn match_parts(parts: &[Part], uri: &str, found: &mut HashMap<String, String>) -> bool {
    let Some((part, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match part {
        Part::Literal(l) => uri
            .strip_prefix(l.as_str())
            .is_some_and(|tail| match_parts(rest, tail, found)),
        Part::Expr(op, names) => {
            // Longest first: a value runs as far as the rest of the template allows.
            for end in (0..=uri.len()).rev() {
                if !uri.is_char_boundary(end) {
                    continue;
                }
                let mut values = HashMap::new();
                if read_expr(*op, names, &uri[..end], &mut values)
                    && match_parts(rest, &uri[end..], found)
                {
                    found.extend(values);
                    return true;
                }
            }
            false
        }
    }
}

/// Whether `text` is an expansion of `{op names}`; the values into `values`.
fn read_expr(op: Op, names: &[String], text: &str, values: &mut HashMap<String, String>) -> bool {
    if text.is_empty() {
        return true; // every variable undefined
    }
    let Some(body) = text.strip_prefix(op.first()) else {
        return false;
    };
    let pieces: Vec<&str> = body.split(op.separator()).collect();
    if op.named() {
        let mut next = 0;
        for piece in pieces {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            // Named values come in the template's order, each at most once.
            let Some(at) = names[next..].iter().position(|n| n == name) else {
                return false;
            };
            next += at + 1;
            let Some(value) = decode(value, op.allows_reserved()) else {
                return false;
            };
            values.insert(name.to_owned(), value);
        }
        true
    } else {
        if pieces.len() > names.len() {
            return false;
        }
        for (name, piece) in names.iter().zip(pieces) {
            let Some(value) = decode(piece, op.allows_reserved()) else {
                return false;
            };
            values.insert(name.clone(), value);
        }
        true
    }
}

/// Percent-decodes `text` if every character is one an expansion could have produced.
fn decode(text: &str, reserved: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
            continue;
        }
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        let reserved_char = b":/?#[]@!$&'()*+,;=".contains(&b);
        if !(unreserved || (reserved && reserved_char)) {
            return None;
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let t = UriTemplate::parse(template).expect("parses");
        t.matches(uri).map(|found| {
            let mut v: Vec<_> = found.into_iter().collect();
            v.sort();
            v
        })
    }

    fn kv(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        let mut v: Vec<_> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        v.sort();
        Some(v)
    }

    #[test]
    fn level_1_simple_strings_are_decoded_and_stop_at_reserved_characters() {
        assert_eq!(
            m("notes://{title}", "notes://hello%20world"),
            kv(&[("title", "hello world")])
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            kv(&[("id", "123")])
        );
        assert_eq!(m("notes://{title}", "notes://a/b"), None);
        assert_eq!(m("notes://{title}", "other://a"), None);
        assert_eq!(m("notes://{title}", "notes://"), kv(&[]));
    }

    #[test]
    fn level_2_reserved_and_fragment() {
        assert_eq!(
            m("file://{+path}", "file:///etc/hosts"),
            kv(&[("path", "/etc/hosts")])
        );
        assert_eq!(
            m("doc://x{#section}", "doc://x#intro"),
            kv(&[("section", "intro")])
        );
        assert_eq!(m("doc://x{#section}", "doc://x"), kv(&[]));
    }

    #[test]
    fn level_3_operators_and_several_variables() {
        assert_eq!(m("map://{x,y}", "map://1,2"), kv(&[("x", "1"), ("y", "2")]));
        assert_eq!(
            m("repo://{owner}{/name,branch}", "repo://me/app/main"),
            kv(&[("branch", "main"), ("name", "app"), ("owner", "me")])
        );
        assert_eq!(m("file://f{.ext}", "file://f.txt"), kv(&[("ext", "txt")]));
        assert_eq!(
            m("s://x{;a,b}", "s://x;a=1;b=2"),
            kv(&[("a", "1"), ("b", "2")])
        );
        assert_eq!(
            m("search://q{?q,lang}", "search://q?q=rust&lang=en"),
            kv(&[("lang", "en"), ("q", "rust")])
        );
        assert_eq!(
            m("search://q{?q,lang}", "search://q?lang=en"),
            kv(&[("lang", "en")])
        );
        assert_eq!(
            m("search://q{?q}{&page}", "search://q?q=a&page=2"),
            kv(&[("page", "2"), ("q", "a")])
        );
        assert_eq!(m("search://q{?q,lang}", "search://q?zz=1"), None);
    }

    #[test]
    fn malformed_templates_say_what_and_where() {
        for (bad, says) in [
            ("notes://{title", "unclosed"),
            ("notes://title}", "no `{`"),
            ("notes://{}", "empty expression"),
            ("notes://{=x}", "reserved operator"),
            ("notes://{x*}", "level 4"),
            ("notes://{x:3}", "level 4"),
            ("notes://{a-b}", "not a variable name"),
            ("notes://{a}/{a}", "appears twice"),
            ("notes://a b", "not allowed"),
        ] {
            let err = UriTemplate::parse(bad).expect_err(bad);
            assert!(err.message.contains(says), "{bad}: {}", err.message);
        }
    }

    #[test]
    fn shapes_ignore_variable_names() {
        let a = UriTemplate::parse("notes://{title}").unwrap();
        let b = UriTemplate::parse("notes://{name}").unwrap();
        let c = UriTemplate::parse("notes://{+name}").unwrap();
        assert_eq!(a.shape(), b.shape());
        assert_ne!(a.shape(), c.shape());
    }
}
