//! Elicitation forms: the `requestedSchema` of an `elicitation/create` request read into fields,
//! each with its validation, and the answers (typed at the prompt, or given with `--answers`)
//! checked against them.
//!
//! Everything here is pure, so the rules a user meets at the prompt are the ones the unit tests
//! check; the terminal side lives in `ask.rs` and `handler.rs`.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

/// One question of a form: a property of the requested schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name (the key of the answer, and of `--answers`).
    pub name: String,
    /// What the prompt shows: the schema's `title`, else the name.
    pub label: String,
    pub description: Option<String>,
    pub required: bool,
    pub kind: Kind,
    /// The schema's `default`, already checked against the field.
    pub default: Option<Value>,
}

/// What a field accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text {
        min_len: Option<u64>,
        max_len: Option<u64>,
        format: Option<String>,
    },
    Integer {
        min: Option<f64>,
        max: Option<f64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// One of a fixed set (`enum`, `oneOf` with `const`/`title`, or legacy `enumNames`).
    Choice(Vec<Choice>),
    /// Several of a fixed set (`type: array` with `items.enum` or `items.anyOf`).
    MultiChoice {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// One option of a choice: the value sent, and the label shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// A whole form: the message and the fields, in the schema's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub fields: Vec<Field>,
}

impl Form {
    /// Reads a `requestedSchema`. A property of a type an elicitation schema cannot have is an
    /// error naming it (the question is then declined rather than answered wrongly).
    pub fn from_schema(schema: &Value) -> Result<Form, String> {
        let Some(obj) = schema.as_object() else {
            return Err("the requested schema is not a JSON object".into());
        };
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(props) = obj.get("properties") {
            let Some(props) = props.as_object() else {
                return Err("`properties` of the requested schema is not an object".into());
            };
            for (name, prop) in props {
                let mut field = field(name, prop)?;
                field.required = required.contains(&name.as_str());
                fields.push(field);
            }
        }
        Ok(Form { fields })
    }

    /// Puts the fields in the order the schema's text lists them (`order`: the property names
    /// as sent, from [`schema_orders`]); a `serde_json` map sorts its keys, so without this
    /// the fields would come alphabetically. Fields the order does not name keep their place
    /// after those it does.
    pub fn reorder(&mut self, order: &[String]) {
        self.fields.sort_by_key(|f| {
            order
                .iter()
                .position(|n| *n == f.name)
                .unwrap_or(usize::MAX)
        });
    }

    /// The property names of this form's schema in the schema's own order, picked from the
    /// orders seen on the wire: the one that names exactly these fields.
    pub fn order_from<'a>(
        &self,
        seen: impl IntoIterator<Item = &'a Vec<String>>,
    ) -> Option<&'a Vec<String>> {
        let mut mine: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        mine.sort_unstable();
        seen.into_iter().find(|order| {
            let mut theirs: Vec<&str> = order.iter().map(String::as_str).collect();
            theirs.sort_unstable();
            theirs == mine
        })
    }

    /// Checks every `--answers` value meant for a field of this form (keys of other questions
    /// are left alone): `Err` is the first that does not fit, as [`Field::check_given`] says it.
    pub fn check_given(&self, answers: &Map<String, Value>) -> Result<(), String> {
        for field in &self.fields {
            if let Some(v) = answers.get(&field.name) {
                field.check_given(v)?;
            }
        }
        Ok(())
    }

    /// The answer built from `--answers` alone (no terminal): each field takes its answer, else
    /// its default; an optional field with neither is left out. `Err` names the required fields
    /// nothing answers, or the first answer that does not fit its field.
    pub fn answer_from(&self, answers: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        let mut missing = Vec::new();
        for field in &self.fields {
            match answers.get(&field.name) {
                Some(v) => {
                    let v = field.check_given(v)?;
                    out.insert(field.name.clone(), v);
                }
                None => match &field.default {
                    Some(d) => {
                        out.insert(field.name.clone(), d.clone());
                    }
                    None if field.required => missing.push(field.name.as_str()),
                    None => {}
                },
            }
        }
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(format!(
                "no answer for required field{} {}",
                if missing.len() == 1 { "" } else { "s" },
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    }
}

/// The property names of every `requestedSchema` in a JSON message's text, each in the order
/// the text lists them (which a parsed `serde_json::Value` forgets). Not JSON: nothing.
pub fn schema_orders(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    if !text.contains("requestedSchema") {
        return found;
    }
    if let Ok(tree) = serde_json::from_str::<Ordered>(text) {
        tree.collect_orders(&mut found);
    }
    found
}

/// A JSON value that keeps its objects' key order (only what [`schema_orders`] needs).
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar,
}

impl Ordered {
    fn collect_orders(&self, found: &mut Vec<Vec<String>>) {
        match self {
            Ordered::Object(entries) => {
                for (key, value) in entries {
                    if key == "requestedSchema"
                        && let Ordered::Object(schema) = value
                        && let Some((_, Ordered::Object(props))) =
                            schema.iter().find(|(k, _)| k == "properties")
                    {
                        found.push(props.iter().map(|(k, _)| k.clone()).collect());
                    }
                    value.collect_orders(found);
                }
            }
            Ordered::Array(items) => items.iter().for_each(|i| i.collect_orders(found)),
            Ordered::Scalar => {}
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value()?));
                }
                Ok(Ordered::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

fn field(name: &str, prop: &Value) -> Result<Field, String> {
    let bad = |why: &str| Err(format!("field `{name}`: {why}"));
    let Some(p) = prop.as_object() else {
        return bad("its schema is not an object");
    };
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
    let num = |k: &str| p.get(k).and_then(Value::as_f64);
    let uint = |k: &str| p.get(k).and_then(Value::as_u64);
    let ty = p.get("type").and_then(Value::as_str);
    let kind = match ty {
        Some("string") => {
            if let Some(options) = choices(p) {
                Kind::Choice(options?)
            } else {
                Kind::Text {
                    min_len: uint("minLength"),
                    max_len: uint("maxLength"),
                    format: text("format"),
                }
            }
        }
        Some("integer") => Kind::Integer {
            min: num("minimum"),
            max: num("maximum"),
        },
        Some("number") => Kind::Number {
            min: num("minimum"),
            max: num("maximum"),
        },
        Some("boolean") => Kind::Boolean,
        Some("array") => {
            let Some(items) = p.get("items").and_then(Value::as_object) else {
                return bad("an array without `items` cannot be asked");
            };
            match choices(items) {
                Some(options) => Kind::MultiChoice {
                    options: options?,
                    min_items: uint("minItems"),
                    max_items: uint("maxItems"),
                },
                None => return bad("an array field must list its options (`items.enum`)"),
            }
        }
        None if choices(p).is_some() => Kind::Choice(choices(p).expect("checked")?),
        Some(other) => return bad(&format!("type `{other}` cannot be asked")),
        None => return bad("it has no `type`"),
    };
    let mut field = Field {
        name: name.to_owned(),
        label: text("title").unwrap_or_else(|| name.to_owned()),
        description: text("description"),
        required: false,
        kind,
        default: None,
    };
    // A default that does not fit is not offered (the server's mistake should not become the
    // user's answer).
    field.default = p.get("default").and_then(|d| field.check(d).ok());
    Ok(field)
}

/// The options of an enum-like schema: `enum` (+ legacy `enumNames`), `oneOf`/`anyOf` of
/// `{const, title}`. `None` when the schema is no enum.
fn choices(p: &Map<String, Value>) -> Option<Result<Vec<Choice>, String>> {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let names = p.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let value = v
                        .as_str()
                        .ok_or_else(|| format!("enum value {v} is not a string"))?
                        .to_owned();
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| value.clone(), str::to_owned);
                    Ok(Choice { value, label })
                })
                .collect(),
        );
    }
    let list = p
        .get("oneOf")
        .or_else(|| p.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        list.iter()
            .map(|o| {
                let value = o
                    .get("const")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("option {o} has no string `const`"))?
                    .to_owned();
                let label = o
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Ok(Choice { value, label })
            })
            .collect(),
    )
}

impl Field {
    /// Checks (and, where the meaning is plain, converts) a JSON answer: `"42"` for an integer,
    /// `"yes"` for a boolean, an option's label for its value.
    pub fn check(&self, v: &Value) -> Result<Value, String> {
        match (&self.kind, v) {
            (Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. }, Value::String(s)) => {
                self.parse_text(s)
            }
            (Kind::Integer { .. } | Kind::Number { .. }, Value::Number(n)) => {
                self.parse_text(&n.to_string())
            }
            (Kind::Boolean, Value::Bool(b)) => Ok(Value::Bool(*b)),
            (Kind::Boolean, Value::String(s)) => parse_yes_no(s)
                .map(Value::Bool)
                .ok_or_else(|| format!("expected yes or no, got {s:?}")),
            (Kind::Choice(options), Value::String(s)) => pick(options, s).map(Value::String),
            (
                Kind::MultiChoice {
                    options,
                    min_items,
                    max_items,
                },
                Value::Array(items),
            ) => {
                let mut out = Vec::new();
                for item in items {
                    let s = item
                        .as_str()
                        .ok_or_else(|| format!("expected option names, got {item}"))?;
                    out.push(Value::String(pick(options, s)?));
                }
                count_ok(out.len() as u64, *min_items, *max_items)?;
                Ok(Value::Array(out))
            }
            (Kind::MultiChoice { .. }, Value::String(s)) => {
                self.check(&json!(s.split(',').map(str::trim).collect::<Vec<_>>()))
            }
            (_, other) => Err(format!("expected {}, got {other}", self.expects())),
        }
    }

    /// Checks an `--answers` value: `Err` names the field, says what is wrong and what the field
    /// takes, e.g. `--answers "age": must be at most 150 (got 999); "age" takes a whole number
    /// (0 to 150)`.
    pub fn check_given(&self, v: &Value) -> Result<Value, String> {
        self.check(v).map_err(|why| {
            // Say what was given unless the reason already quotes it.
            let given = v.to_string();
            let got = if why.contains(&given) {
                String::new()
            } else {
                format!(" (got {given})")
            };
            format!(
                "--answers \"{name}\": {why}{got}; \"{name}\" takes {}",
                self.allowed(),
                name = self.name
            )
        })
    }

    /// What the field takes, for messages: `a whole number (0 to 150)`, `one of red, green`.
    pub fn allowed(&self) -> String {
        let mut text = self.expects();
        match &self.kind {
            Kind::Integer { .. } | Kind::Number { .. } => {
                if let Some(h) = self.hint() {
                    text.push_str(&format!(" ({h})"));
                }
            }
            Kind::Text {
                min_len, max_len, ..
            } => match (min_len, max_len) {
                (Some(a), Some(b)) => text.push_str(&format!(" of {a} to {b} characters")),
                (Some(a), None) => text.push_str(&format!(" of at least {a} characters")),
                (None, Some(b)) => text.push_str(&format!(" of at most {b} characters")),
                (None, None) => {}
            },
            Kind::MultiChoice {
                min_items,
                max_items,
                ..
            } => {
                text = format!("a list of {text}");
                match (min_items, max_items) {
                    (Some(a), Some(b)) => text.push_str(&format!(" ({a} to {b} of them)")),
                    (Some(a), None) => text.push_str(&format!(" (at least {a})")),
                    (None, Some(b)) => text.push_str(&format!(" (at most {b})")),
                    (None, None) => {}
                }
            }
            Kind::Boolean | Kind::Choice(_) => {}
        }
        text
    }

    /// Parses what was typed at the prompt for a text, integer or number field.
    pub fn parse_text(&self, s: &str) -> Result<Value, String> {
        match &self.kind {
            Kind::Text {
                min_len,
                max_len,
                format,
            } => {
                let n = s.chars().count() as u64;
                if let Some(min) = min_len
                    && n < *min
                {
                    return Err(format!("at least {min} characters, please"));
                }
                if let Some(max) = max_len
                    && n > *max
                {
                    return Err(format!("at most {max} characters, please"));
                }
                if let Some(f) = format {
                    check_format(f, s)?;
                }
                Ok(Value::String(s.to_owned()))
            }
            Kind::Integer { min, max } => {
                let t = s.trim();
                let i: i64 = t
                    .parse()
                    .map_err(|_| format!("{t:?} is not a whole number"))?;
                in_range(i as f64, *min, *max)?;
                Ok(json!(i))
            }
            Kind::Number { min, max } => {
                let t = s.trim();
                let x: f64 = t
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| format!("{t:?} is not a number"))?;
                in_range(x, *min, *max)?;
                Ok(json!(x))
            }
            Kind::Boolean => parse_yes_no(s)
                .map(Value::Bool)
                .ok_or_else(|| format!("expected yes or no, got {s:?}")),
            Kind::Choice(options) => pick(options, s).map(Value::String),
            Kind::MultiChoice { .. } => self.check(&Value::String(s.to_owned())),
        }
    }

    /// A few words for "expected ...".
    pub fn expects(&self) -> String {
        match &self.kind {
            Kind::Text {
                format: Some(f), ..
            } => format!("text ({f})"),
            Kind::Text { .. } => "text".into(),
            Kind::Integer { .. } => "a whole number".into(),
            Kind::Number { .. } => "a number".into(),
            Kind::Boolean => "yes or no".into(),
            Kind::Choice(o) | Kind::MultiChoice { options: o, .. } => format!(
                "one of {}",
                o.iter()
                    .map(|c| c.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The bounds of a numeric field as prompt text (`between 1 and 10`), if any.
    pub fn hint(&self) -> Option<String> {
        let range = |min: &Option<f64>, max: &Option<f64>| match (min, max) {
            (Some(a), Some(b)) => Some(format!("{a} to {b}")),
            (Some(a), None) => Some(format!("at least {a}")),
            (None, Some(b)) => Some(format!("at most {b}")),
            (None, None) => None,
        };
        match &self.kind {
            Kind::Integer { min, max } | Kind::Number { min, max } => range(min, max),
            Kind::Text {
                format: Some(f), ..
            } => Some(f.clone()),
            _ => None,
        }
    }
}

/// `yes`/`no` in the usual spellings.
pub fn parse_yes_no(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "true" | "1" | "on" => Some(true),
        "n" | "no" | "false" | "0" | "off" => Some(false),
        _ => None,
    }
}

fn pick(options: &[Choice], s: &str) -> Result<String, String> {
    let t = s.trim();
    options
        .iter()
        .find(|c| c.value == t)
        .or_else(|| options.iter().find(|c| c.label.eq_ignore_ascii_case(t)))
        .map(|c| c.value.clone())
        .ok_or_else(|| {
            format!(
                "{t:?} is not one of {}",
                options
                    .iter()
                    .map(|c| c.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

fn in_range(x: f64, min: Option<f64>, max: Option<f64>) -> Result<(), String> {
    if let Some(m) = min
        && x < m
    {
        return Err(format!("must be at least {m}"));
    }
    if let Some(m) = max
        && x > m
    {
        return Err(format!("must be at most {m}"));
    }
    Ok(())
}

fn count_ok(n: u64, min: Option<u64>, max: Option<u64>) -> Result<(), String> {
    if let Some(m) = min
        && n < m
    {
        return Err(format!("choose at least {m}"));
    }
    if let Some(m) = max
        && n > m
    {
        return Err(format!("choose at most {m}"));
    }
    Ok(())
}

fn check_format(format: &str, s: &str) -> Result<(), String> {
    let ok = match format {
        "email" => s
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !b.contains('@')),
        "uri" => s
            .split_once(':')
            .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        "date" => is_date(s),
        "date-time" => s
            .split_once(['T', 't', ' '])
            .is_some_and(|(d, t)| is_date(d) && t.len() >= 5),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{s:?} is not a valid {format}"))
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

#[cfg(test)]
mod tests;
