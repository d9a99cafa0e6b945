//! The URI template checked at compile time (RFC 6570 levels 1 to 3): its syntax and its
//! variable names. The runtime parses it again to match URIs (`resource/template.rs`); a proc
//! macro crate cannot share code with the crate that depends on it, and the check here is the
//! small half of that parser.

/// A template's variables, in order; or why it is not a template.
pub fn variables(text: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("`}` with no `{` before it".into());
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or("unclosed `{`: every expression ends with `}`")?;
        let body = &after[..close];
        if body.contains('{') {
            return Err("`{` inside an expression".into());
        }
        let list = match body.chars().next() {
            None => return Err("empty expression `{}`: name a variable, as in `{id}`".into()),
            Some('+' | '#' | '.' | '/' | ';' | '?' | '&') => &body[1..],
            Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
                return Err(format!(
                    "`{c}` is a reserved operator in RFC 6570; the operators are `+ # . / ; ? &`"
                ));
            }
            Some(_) => body,
        };
        for name in list.split(',') {
            if name.ends_with('*') || name.contains(':') {
                return Err(format!(
                    "`{name}` uses a level 4 modifier (`*` or `:n`); only levels 1 to 3 are supported"
                ));
            }
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`{name}` is not a variable name: a template variable is a Rust identifier \
                     (letters, digits and `_`), since it names a parameter"
                ));
            }
            if names.iter().any(|n| n == name) {
                return Err(format!(
                    "variable `{name}` appears twice; each variable is one parameter"
                ));
            }
            names.push(name.to_owned());
        }
        rest = &after[close + 1..];
    }
    Ok(names)
}

/// Whether `uri` starts with a scheme (`notes:`, `file:`, `ui:`).
pub fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Whether `mime` is `type/subtype` (with optional `; parameters`) of RFC 6838 token characters.
pub fn is_mime_type(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    matches!(essence.split_once('/'), Some((t, s)) if token(t) && token(s))
}
