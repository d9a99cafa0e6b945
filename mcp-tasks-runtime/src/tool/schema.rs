use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3). schemars also writes
/// formats of its own (`uint32`, `int64`, `double`, `float`, `uint`, `ip`, ...), which strict
/// validators refuse or warn about (ajv's strict mode: "unknown format ... ignored"): an emitted
/// schema keeps only these. Integer ranges stay as `minimum` / `maximum`.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops a `format` that JSON Schema 2020-12 does not define, in this schema and every subschema.
pub(crate) fn standard_formats() -> impl Transform + Clone + Send + 'static {
    RecursiveTransform(|schema: &mut Schema| {
        let nonstandard = schema
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| !STANDARD_FORMATS.contains(&format));
        if nonstandard {
            schema.remove("format");
        }
    })
}

/// The generator of every schema a server emits: JSON Schema 2020-12, standard formats only.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with_transform(standard_formats())
        .into_generator()
}

/// The JSON Schema (2020-12) of `T`, computed once per type and cached.
pub fn schema_for<T: JsonSchema + 'static>() -> Arc<Value> {
    static CACHE: TypeCache<Arc<Value>> = OnceLock::new();
    cached::<T, _>(&CACHE, || {
        let mut schema = generator().into_root_schema_for::<T>().to_value();
        if let Value::Object(obj) = &mut schema {
            obj.remove("$schema");
        }
        Arc::new(schema)
    })
}

type TypeCache<V> = OnceLock<RwLock<HashMap<TypeId, V>>>;

/// The value cached for `T`, built on first use (two threads may both build it; one result wins).
fn cached<T: 'static, V: Clone>(cache: &TypeCache<V>, build: impl FnOnce() -> V) -> V {
    let cache = cache.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return hit.clone();
    }
    let value = build();
    cache
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(id)
        .or_insert(value)
        .clone()
}

/// Whether a schema describes a JSON object (what `outputSchema` and `structuredContent` need).
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The `requestedSchema` of an elicitation for `T`, computed once per type and cached: elicitation
/// allows only a flat object whose properties are strings, numbers, integers, booleans or enums of
/// strings. Anything else is refused with a message naming the offending property.
pub(crate) fn elicitation_schema<T: JsonSchema + 'static>() -> Result<Value, String> {
    static CACHE: TypeCache<Result<Value, String>> = OnceLock::new();
    cached::<T, _>(&CACHE, build_elicitation_schema::<T>)
}

fn build_elicitation_schema<T: JsonSchema>() -> Result<Value, String> {
    let mut settings = SchemaSettings::draft2020_12().with_transform(standard_formats());
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let obj = schema
        .as_object_mut()
        .ok_or("an elicitation form must be an object")?;
    obj.remove("$schema");
    obj.remove("$defs");
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "an elicitation form must be a flat object, but `{}` is not an object",
            std::any::type_name::<T>()
        ));
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            check_primitive(name, prop)?;
        }
    }
    Ok(schema)
}

fn check_primitive(name: &str, prop: &mut Value) -> Result<(), String> {
    // `Option<T>` comes out as `type: [T, "null"]`; elicitation expresses optionality with `required`.
    if let Some(Value::Array(types)) = prop.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() == 1 {
            prop["type"] = rest[0].clone();
        }
    }
    // A Rust enum whose variants have titles (or doc comments) comes out of schemars as `oneOf`
    // consts; elicitation calls that a titled single-select enum (SEP-1330).
    if let Some(options) = titled_options(prop.get("oneOf")) {
        prop["type"] = Value::String("string".into());
        prop["oneOf"] = options;
        return Ok(());
    }
    let ty = prop.get("type").and_then(Value::as_str);
    match ty {
        Some("string" | "number" | "integer" | "boolean") => Ok(()),
        Some("array") => {
            // multi-select: an array of string enums, untitled (`items.enum`) or titled
            // (`items.anyOf` of `{const, title}`, SEP-1330)
            let items = prop.get_mut("items");
            let titled = items
                .as_deref()
                .and_then(|i| titled_options(i.get("oneOf").or_else(|| i.get("anyOf"))));
            if let Some(options) = titled {
                prop["items"] = serde_json::json!({ "anyOf": options });
                return Ok(());
            }
            let untitled = prop.get("items").is_some_and(|i| {
                i.get("type").and_then(Value::as_str) == Some("string") && i.get("enum").is_some()
            });
            if untitled {
                Ok(())
            } else {
                Err(format!(
                    "elicitation property `{name}` is an array; only arrays of string enums are allowed"
                ))
            }
        }
        _ if prop.get("enum").is_some() => Ok(()),
        _ => Err(format!(
            "elicitation property `{name}` must be a string, number, integer, boolean or enum; nested objects and arrays are not allowed"
        )),
    }
}

/// The options of a titled enum as elicitation has them (`[{const, title}]`), when `options` is a
/// list of string consts (schemars' rendering of an enum with titled or documented variants). A
/// variant without a title is titled by its doc comment, else by its value.
fn titled_options(options: Option<&Value>) -> Option<Value> {
    let options = options?.as_array()?;
    if options.is_empty() {
        return None;
    }
    options
        .iter()
        .map(|o| {
            let value = o.get("const")?.as_str()?;
            let title = o
                .get("title")
                .or_else(|| o.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(value);
            Some(serde_json::json!({ "const": value, "title": title }))
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::elicitation_schema;
    use schemars::JsonSchema;

    #[allow(dead_code)]
    #[derive(JsonSchema, wire::Serialize)]
    enum Colour {
        Red,
        Green,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Flat {
        name: String,
        age: Option<u32>,
        ok: bool,
        colour: Colour,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Nested {
        inner: Flat,
    }

    #[test]
    fn a_flat_form_is_inlined_and_optional_fields_are_plain() {
        let schema = elicitation_schema::<Flat>().unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["properties"]["age"]["type"], "integer",
            "Option<u32> is an integer, not [integer, null]"
        );
        assert_eq!(
            schema["properties"]["colour"]["enum"],
            serde_json::json!(["Red", "Green"])
        );
        assert!(schema.get("$defs").is_none() && schema.get("$schema").is_none());
        assert_eq!(
            schema["required"],
            serde_json::json!(["name", "ok", "colour"])
        );
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, wire::Serialize)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        #[schemars(title = "Small cup")]
        Small,
        /// A large cup.
        Large,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, wire::Serialize)]
    struct Order {
        size: Size,
        extras: Vec<Size>,
        colours: Vec<Colour>,
        #[serde(default = "two")]
        cups: u32,
    }

    fn two() -> u32 {
        2
    }

    #[test]
    fn titled_enums_become_the_titled_enums_of_elicitation_and_defaults_are_kept() {
        let schema = elicitation_schema::<Order>().unwrap();
        let titled = serde_json::json!([
            { "const": "small", "title": "Small cup" },
            { "const": "large", "title": "A large cup." },
        ]);
        assert_eq!(
            schema["properties"]["size"],
            serde_json::json!({ "type": "string", "oneOf": titled })
        );
        assert_eq!(
            schema["properties"]["extras"],
            serde_json::json!({ "type": "array", "items": { "anyOf": titled } })
        );
        assert_eq!(
            schema["properties"]["colours"]["items"],
            serde_json::json!({ "type": "string", "enum": ["Red", "Green"] })
        );
        assert_eq!(schema["properties"]["cups"]["default"], 2);
    }

    /// Numbers of every width, and strings with formats of both kinds, down a `$ref`.
    #[allow(dead_code)]
    #[derive(JsonSchema, wire::Deserialize)]
    struct Widths {
        a: u8,
        b: i16,
        c: u32,
        d: u64,
        e: i64,
        f: f32,
        g: f64,
        h: Option<usize>,
        when: chrono_like::DateTime,
        addr: std::net::IpAddr,
        v4: std::net::Ipv4Addr,
        inner: Vec<Inner>,
    }

    #[allow(dead_code)]
    #[derive(JsonSchema, wire::Deserialize)]
    struct Inner {
        n: u16,
    }

    mod chrono_like {
        /// A string with the standard `date-time` format.
        #[derive(schemars::JsonSchema, wire::Deserialize)]
        #[schemars(extend("format" = "date-time"))]
        pub struct DateTime(#[allow(dead_code)] pub String);
    }

    /// Every `format` in `schema`, wherever it is (a property named `format` is not one).
    fn formats(schema: &serde_json::Value, out: &mut Vec<String>) {
        match schema {
            serde_json::Value::Object(obj) => {
                for (key, value) in obj {
                    match (key.as_str(), value) {
                        ("format", serde_json::Value::String(f)) => out.push(f.clone()),
                        _ => formats(value, out),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
            _ => {}
        }
    }

    #[test]
    fn emitted_schemas_carry_only_the_formats_json_schema_2020_12_defines() {
        let mut input = crate::tool::ParamsBuilder::default();
        input.property::<u32>("count", Some("How many."), true);
        input.property::<Option<f64>>("ratio", None, false);
        input.property::<Widths>("widths", None, true);
        let input = input.finish();
        let mut whole = crate::tool::ParamsBuilder::default();
        whole.whole::<Widths>();
        let whole = whole.finish();
        let output = (*super::schema_for::<Widths>()).clone();
        let mut seen = Vec::new();
        for schema in [&input, &whole, &output] {
            formats(schema, &mut seen);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen, ["date-time", "ipv4"], "{input:#}");
        // Integer ranges stay, as `minimum` / `maximum`.
        assert_eq!(input["properties"]["count"]["minimum"], 0, "{input:#}");
        let widths = &output["properties"];
        assert_eq!(
            (
                widths["a"]["minimum"].clone(),
                widths["a"]["maximum"].clone()
            ),
            (serde_json::json!(0), serde_json::json!(255))
        );
        assert_eq!(widths["b"]["minimum"], -32768);
        assert_eq!(widths["g"], serde_json::json!({ "type": "number" }));
        assert_eq!(
            output["$defs"]["Inner"]["properties"]["n"],
            serde_json::json!({ "type": "integer", "minimum": 0, "maximum": 65535 })
        );

        #[allow(dead_code)]
        #[derive(JsonSchema)]
        struct Form {
            cups: u32,
            weight: f32,
        }
        let form = elicitation_schema::<Form>().unwrap();
        assert_eq!(
            form["properties"]["cups"],
            serde_json::json!({ "type": "integer", "minimum": 0 })
        );
        assert_eq!(
            form["properties"]["weight"],
            serde_json::json!({ "type": "number" })
        );
    }

    #[test]
    fn nested_objects_and_non_objects_are_refused_with_the_field_named() {
        let err = elicitation_schema::<Nested>().unwrap_err();
        assert!(err.contains("`inner`"), "{err}");
        assert!(elicitation_schema::<String>().is_err());
        assert!(elicitation_schema::<Vec<u32>>().is_err());
    }
}
