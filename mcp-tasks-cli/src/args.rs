//! `--args`: JSON objects, `@FILE` and `KEY=VALUE` pairs, the pairs typed by the tool's input
//! schema.

use serde_json::{Map, Value};

/// `--args`, read: the JSON objects merged, and the `KEY=VALUE` pairs, typed once the tool's
/// schema is known ([`ArgSpec::resolve`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgSpec {
    pub object: Map<String, Value>,
    pub pairs: Vec<(String, String)>,
}

impl ArgSpec {
    /// Reads each `--args` value: `{...}`, `@FILE` or `KEY=VALUE`.
    pub fn parse(values: &[String]) -> Result<ArgSpec, String> {
        let mut spec = ArgSpec::default();
        for v in values {
            let t = v.trim_start();
            if let Some(path) = t.strip_prefix('@') {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--args @{path}: cannot read it: {e}"))?;
                let obj = json_object(&format!("--args @{path}"), &text)?;
                spec.pairs.retain(|(k, _)| !obj.contains_key(k));
                spec.object.extend(obj);
            } else if t.starts_with('{') || t.starts_with('[') || !t.contains('=') {
                if !(t.starts_with('{') || t.starts_with('[')) {
                    return Err(format!(
                        "--args {v:?} is neither a JSON object, @FILE nor KEY=VALUE"
                    ));
                }
                let obj = json_object("--args", t)?;
                spec.pairs.retain(|(k, _)| !obj.contains_key(k));
                spec.object.extend(obj);
            } else {
                let (key, value) = t.split_once('=').expect("checked");
                if key.is_empty() {
                    return Err(format!("--args {v:?}: the key before `=` is empty"));
                }
                spec.object.remove(key);
                spec.pairs.retain(|(k, _)| k != key);
                spec.pairs.push((key.to_owned(), value.to_owned()));
            }
        }
        Ok(spec)
    }

    /// The arguments, each `KEY=VALUE` typed by the tool's input schema (`properties.KEY.type`):
    /// a string as written, a number, integer or boolean parsed (a value that does not parse is
    /// an error naming the key and the type), an array or object as JSON; a key the schema does
    /// not type is JSON if it parses, else text.
    pub fn resolve(&self, schema: Option<&Value>) -> Result<Map<String, Value>, String> {
        let mut out = self.object.clone();
        for (key, text) in &self.pairs {
            let prop = schema
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(key));
            let types: Vec<&str> = match prop.and_then(|p| p.get("type")) {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            out.insert(key.clone(), typed(key, text, &types)?);
        }
        Ok(out)
    }
}

fn typed(key: &str, text: &str, types: &[&str]) -> Result<Value, String> {
    let json = serde_json::from_str::<Value>(text).ok();
    let fits = |v: &Value, t: &str| match t {
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    };
    if types.is_empty() {
        return Ok(json.unwrap_or_else(|| Value::String(text.to_owned())));
    }
    if let Some(v) = &json
        && types.iter().any(|t| fits(v, t))
    {
        return Ok(v.clone());
    }
    if types.contains(&"string") {
        return Ok(Value::String(text.to_owned()));
    }
    Err(format!(
        "--args {key}={text}: `{key}` takes {} (from the tool's input schema)",
        types
            .iter()
            .map(|t| match *t {
                "integer" => "an integer",
                "number" => "a number",
                "boolean" => "true or false",
                "array" => "a JSON array",
                "object" => "a JSON object",
                "null" => "null",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" or ")
    ))
}

/// A JSON object given on the command line, or a message naming the flag.
pub fn json_object(flag: &str, text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "{flag} must be a JSON object, like '{{\"key\": 1}}'; got {}",
            kind(&other)
        )),
        Err(e) => Err(format!("{flag} is not valid JSON: {e}")),
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
