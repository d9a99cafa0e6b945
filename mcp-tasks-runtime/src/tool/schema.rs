use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::Value;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// The JSON Schema (2020-12) of `T`, computed once per type and cached.
pub fn schema_for<T: JsonSchema + 'static>() -> Arc<Value> {
    static CACHE: OnceLock<RwLock<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return hit.clone();
    }
    let mut schema = generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(obj) = &mut schema {
        obj.remove("$schema");
    }
    let schema = Arc::new(schema);
    cache
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(id)
        .or_insert(schema)
        .clone()
}

/// Whether a schema describes a JSON object (what `outputSchema` and `structuredContent` need).
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The `requestedSchema` of an elicitation for `T`: elicitation allows only a flat object whose
/// properties are strings, numbers, integers, booleans or enums of strings. Anything else is refused
/// with a message naming the offending property.
pub(crate) fn elicitation_schema<T: JsonSchema + 'static>() -> Result<Value, String> {
    let mut settings = SchemaSettings::draft2020_12();
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
    let ty = prop.get("type").and_then(Value::as_str);
    match ty {
        Some("string" | "number" | "integer" | "boolean") => Ok(()),
        Some("array") => {
            // multi-select: an array of string enums
            let items_ok = prop.get("items").is_some_and(|i| {
                i.get("type").and_then(Value::as_str) == Some("string")
                    && (i.get("enum").is_some()
                        || i.get("anyOf").is_some()
                        || i.get("oneOf").is_some())
            });
            if items_ok {
                Ok(())
            } else {
                Err(format!(
                    "elicitation property `{name}` is an array; only arrays of string enums are allowed"
                ))
            }
        }
        _ if prop.get("enum").is_some() || prop.get("oneOf").is_some() => Ok(()),
        _ => Err(format!(
            "elicitation property `{name}` must be a string, number, integer, boolean or enum; nested objects and arrays are not allowed"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::elicitation_schema;
    use schemars::JsonSchema;

    #[allow(dead_code)]
    #[derive(JsonSchema)]
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

    #[test]
    fn nested_objects_and_non_objects_are_refused_with_the_field_named() {
        let err = elicitation_schema::<Nested>().unwrap_err();
        assert!(err.contains("`inner`"), "{err}");
        assert!(elicitation_schema::<String>().is_err());
        assert!(elicitation_schema::<Vec<u32>>().is_err());
    }
}
