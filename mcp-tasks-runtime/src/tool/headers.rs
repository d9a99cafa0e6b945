//! Custom headers from tool parameters (SEP-2243, 2026-07-28): an `inputSchema` property marked
//! `"x-mcp-header": "Region"` travels in an `Mcp-Param-Region` header too, so intermediaries can
//! route on it without reading the body. Mark a field with
//! `#[schemars(extend("x-mcp-header" = "Region"))]`.
//!
//! Here the declarations are found and checked once, when the tool is registered; the HTTP
//! transport checks each `tools/call` against them.

use serde_json::Value;

/// One argument mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The argument's path in `arguments` (one name for a top-level argument).
    pub path: Vec<String>,
    /// The header's name without the `Mcp-Param-` prefix, as declared.
    pub name: String,
}

impl HeaderParam {
    /// The full header name: `Mcp-Param-{name}`.
    pub fn header(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The argument's value in `arguments`, if it is there and not null.
    pub fn value_in<'a>(&self, arguments: Option<&'a Value>) -> Option<&'a Value> {
        let mut at = arguments?;
        for key in &self.path {
            at = at.get(key)?;
        }
        (!at.is_null()).then_some(at)
    }
}

/// The `x-mcp-header` declarations of an input schema, checked against SEP-2243's rules: a
/// non-empty HTTP token, unique ignoring case, on a string, integer or boolean property reached
/// through `properties` only. `Err` names the property and the rule it breaks.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    walk(schema, schema, &mut Vec::new(), &mut found, 0)?;
    for (i, a) in found.iter().enumerate() {
        if let Some(b) = found[..i]
            .iter()
            .find(|b| b.name.eq_ignore_ascii_case(&a.name))
        {
            return Err(format!(
                "`x-mcp-header` values must be unique ignoring case, but `{}` and `{}` both declare `{}`",
                b.path.join("."),
                a.path.join("."),
                a.name
            ));
        }
    }
    Ok(found)
}

fn walk(
    root: &Value,
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<HeaderParam>,
    depth: usize,
) -> Result<(), String> {
    // `$ref`s into `$defs` are followed (schemars puts named types there); a cycle ends the walk.
    if depth > 32 {
        return Ok(());
    }
    let schema = resolve(root, schema);
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        let property = resolve(root, property);
        if let Some(declared) = property.get("x-mcp-header") {
            found.push(check(path, declared, property)?);
        }
        walk(root, property, path, found, depth + 1)?;
        path.pop();
    }
    Ok(())
}

/// A local `$ref` (`#/$defs/Name`), or an `anyOf` of one schema and `null` (`Option<T>`), seen
/// through to the schema it stands for.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    if let Some(Value::Array(any)) = schema.get("anyOf") {
        let non_null: Vec<&Value> = any
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [only] = non_null[..] {
            schema = only;
        }
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        return target;
    }
    schema
}

fn check(path: &[String], declared: &Value, property: &Value) -> Result<HeaderParam, String> {
    let at = path.join(".");
    let Some(name) = declared.as_str() else {
        return Err(format!("`x-mcp-header` of `{at}` must be a string"));
    };
    if name.is_empty() {
        return Err(format!("`x-mcp-header` of `{at}` must not be empty"));
    }
    if let Some(bad) = name.chars().find(|c| !is_tchar(*c)) {
        return Err(format!(
            "`x-mcp-header` of `{at}` is `{}`, which is not an HTTP field-name token (RFC 9110): {bad:?} is not allowed",
            name.escape_default()
        ));
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => vec![],
    };
    match types[..] {
        ["string" | "integer" | "boolean"] => {}
        _ => {
            return Err(format!(
                "`x-mcp-header` of `{at}` is on a property of type {}; only string, integer and boolean properties may be headers",
                if types.is_empty() {
                    "(none)".to_owned()
                } else {
                    types.join(" | ")
                }
            ));
        }
    }
    Ok(HeaderParam {
        path: path.to_vec(),
        name: name.to_owned(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Whether a header's (decoded) value says what the body's argument says: strings exactly,
/// integers and booleans by their JSON text (an integer also by value, so `+5` or `5.0` agree).
#[cfg(any(feature = "http", test))]
pub fn header_matches(header: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => header == s,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => {
            header == n.to_string()
                || header
                    .parse::<f64>()
                    .ok()
                    .zip(n.as_f64())
                    .is_some_and(|(h, v)| h == v)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(schema: Value) -> Result<Vec<(String, String)>, String> {
        header_params(&schema)
            .map(|ps| ps.into_iter().map(|p| (p.path.join("."), p.name)).collect())
    }

    #[test]
    fn declarations_are_found_through_properties_refs_and_options() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "plain": { "type": "string" },
                "target": { "anyOf": [{ "$ref": "#/$defs/Target" }, { "type": "null" }] },
            },
            "$defs": { "Target": { "type": "object", "properties": {
                "tenant": { "type": ["integer", "null"], "x-mcp-header": "Tenant-Id" },
            } } },
        });
        assert_eq!(
            params(schema).unwrap(),
            vec![
                ("region".into(), "Region".into()),
                ("target.tenant".into(), "Tenant-Id".into())
            ]
        );
    }

    #[test]
    fn bad_declarations_are_refused_naming_the_property_and_the_rule() {
        let one = |decl: Value, ty: &str| {
            params(json!({ "properties": { "p": { "type": ty, "x-mcp-header": decl } } }))
                .unwrap_err()
        };
        assert!(one(json!(""), "string").contains("must not be empty"));
        assert!(one(json!("Région"), "string").contains("not an HTTP field-name token"));
        assert!(one(json!("Region 1"), "string").contains("' '"));
        assert!(one(json!("Region\t1"), "string").contains("'\\t'"));
        assert!(one(json!(7), "string").contains("must be a string"));
        let err = one(json!("Score"), "number");
        assert!(err.contains("`p`") && err.contains("number"), "{err}");
        let err = params(json!({ "properties": {
            "a": { "type": "string", "x-mcp-header": "Region" },
            "b": { "type": "string", "x-mcp-header": "region" },
        } }))
        .unwrap_err();
        assert!(err.contains("unique ignoring case"), "{err}");
    }

    #[test]
    fn header_values_match_the_body_by_kind() {
        assert!(header_matches("Hello", &json!("Hello")));
        assert!(!header_matches("hello", &json!("Hello")));
        assert!(header_matches("42", &json!(42)));
        assert!(header_matches("42.0", &json!(42)));
        assert!(!header_matches("43", &json!(42)));
        assert!(header_matches("true", &json!(true)));
        assert!(!header_matches("1", &json!(true)));
        assert!(!header_matches("{}", &json!({})));
    }
}
