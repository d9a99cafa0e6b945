//! A request's params, kept as JSON text with an index of its fields.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// A request's params object (without `_meta`), kept as JSON text with an index of its top-level
/// fields.
///
/// A method reads the fields it needs straight from the text: [`str`](Self::str) borrows a
/// string, [`raw`](Self::raw) gives a value's text, and only the values a method needs as trees
/// (a tool's `arguments`, a `tasks/update`'s answers) become trees, through
/// [`value`](Self::value). Reading a request builds no tree of its params, and the params of a
/// `tasks/get` cost one copy of their text.
///
/// A key sent twice: the last one counts, as in a [`Map`].
#[derive(Clone, Default)]
pub struct Params {
    /// `{"key":value,...}`: each key as sent (or written escaped, when it needs escapes), each
    /// value as sent; empty for no fields.
    text: String,
    fields: Vec<Field>,
}

#[derive(Clone)]
struct Field {
    /// The key's text, between its quotes.
    key: Range<usize>,
    /// Whether the key's text is escaped (the key has a `"`, a `\` or a control character): it
    /// is then not the key itself.
    escaped: bool,
    /// The value's text.
    value: Range<usize>,
}

impl Params {
    /// Params with no fields.
    pub fn new() -> Self {
        Params::default()
    }

    /// Params holding the fields of `map` (its `_meta` too, if it has one).
    pub fn from_map(map: &Map<String, Value>) -> Self {
        let mut params = Params::new();
        for (key, value) in map {
            // A `Value` always serializes.
            let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
            params.push(key, &text);
        }
        params.finish()
    }

    /// Adds a field (`value`: valid JSON text); [`finish`](Self::finish) closes the object.
    fn push(&mut self, key: &str, value: &str) {
        self.text.push(if self.text.is_empty() { '{' } else { ',' });
        let escaped = key.chars().any(|c| matches!(c, '"' | '\\') || c < ' ');
        let start = self.text.len() + 1;
        if escaped {
            // A `str` always serializes.
            self.text
                .push_str(&serde_json::to_string(key).unwrap_or_default());
        } else {
            self.text.push('"');
            self.text.push_str(key);
            self.text.push('"');
        }
        let key = start..self.text.len() - 1;
        self.text.push(':');
        let start = self.text.len();
        self.text.push_str(value);
        self.fields.push(Field {
            key,
            escaped,
            value: start..self.text.len(),
        });
    }

    /// Closes the object after the last [`push`](Self::push).
    fn finish(mut self) -> Self {
        if !self.text.is_empty() {
            self.text.push('}');
        }
        self
    }

    /// The last field named `key`.
    fn field(&self, key: &str) -> Option<&Field> {
        self.fields.iter().rev().find(|f| self.key_is(f, key))
    }

    fn key_is(&self, field: &Field, key: &str) -> bool {
        if field.escaped {
            self.key_of(field) == key
        } else {
            self.text[field.key.clone()] == *key
        }
    }

    fn key_of(&self, field: &Field) -> Cow<'_, str> {
        let text = &self.text[field.key.clone()];
        if field.escaped {
            let quoted = &self.text[field.key.start - 1..field.key.end + 1];
            Cow::Owned(serde_json::from_str(quoted).unwrap_or_else(|_| text.to_owned()))
        } else {
            Cow::Borrowed(text)
        }
    }

    /// The JSON text of the value of `key`, when the params have it.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.field(key).map(|f| &self.text[f.value.clone()])
    }

    /// Whether the params have `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.field(key).is_some()
    }

    /// Whether the params have `key` with a value other than `null`.
    pub fn has_non_null(&self, key: &str) -> bool {
        self.raw(key).is_some_and(|v| v != "null")
    }

    /// The value of `key` as a tree.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).map(parse)
    }

    /// The value of `key` when it is a string (borrowed from the text unless it has escapes):
    /// `None` when the params lack `key`, `Some(None)` when its value is not a string.
    pub fn str(&self, key: &str) -> Option<Option<Cow<'_, str>>> {
        let raw = self.raw(key)?;
        Some(match raw.as_bytes() {
            [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => {
                Some(Cow::Borrowed(&raw[1..raw.len() - 1]))
            }
            [b'"', ..] => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
            _ => None,
        })
    }

    /// Whether the params have no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The params as JSON text (`{}` when empty).
    pub fn text(&self) -> &str {
        if self.text.is_empty() {
            "{}"
        } else {
            &self.text
        }
    }

    /// The params as a tree (a key sent twice: the last value).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for f in &self.fields {
            map.insert(
                self.key_of(f).into_owned(),
                parse(&self.text[f.value.clone()]),
            );
        }
        map
    }
}

/// A value's text, checked by the parser that produced it, as a tree.
fn parse(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// Equal when the trees are ([`to_map`](Params::to_map)).
impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self.to_map() == other.to_map()
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Params({})", self.text())
    }
}

/// A request's params object read from its text: `_meta` kept apart, as its text, and the other
/// fields as [`Params`]. Only deserializes from text it borrows (`serde_json::from_str`).
///
/// Each value is read as a tree would read it ([`Checked`]): text a tree refuses (a number out of
/// range, a lone surrogate in a `\u` escape) is refused here too. Nesting is the caller's to
/// check: it counts from the top of the message.
pub(crate) struct SplitParams {
    pub(crate) params: Params,
    pub(crate) meta: Option<Box<RawValue>>,
}

impl<'de> Deserialize<'de> for SplitParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = SplitParams;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SplitParams, A::Error> {
                let mut split = SplitParams {
                    params: Params::new(),
                    meta: None,
                };
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    // Kept as text, but refused as a tree would refuse it.
                    serde_json::from_str::<Checked>(value.get())
                        .map_err(serde::de::Error::custom)?;
                    if key == "_meta" {
                        split.meta = Some(value.to_owned());
                    } else {
                        split.params.push(&key, value.get());
                    }
                }
                split.params = split.params.finish();
                Ok(split)
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A JSON value read through as a tree would be (numbers converted, strings unescaped), but
/// without building anything.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Checked;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Checked, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisit;
        impl<'de> serde::de::Visitor<'de> for KeyVisit {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        d.deserialize_str(KeyVisit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(params: &str) -> Params {
        let split: SplitParams = serde_json::from_str(params).expect("an object");
        split.params
    }

    /// Each field reads from the text as it reads from the tree, `_meta` kept apart.
    #[test]
    fn fields_read_as_the_tree_reads_them() {
        let text = r#"{ "taskId" : "t-1", "n": 3, "nil": null, "o": {"a": [1, "x"]},
            "esc": "a\"b\\c\u00e9", "_meta": {"progressToken": 1}, "k\u0065y": true }"#;
        let split: SplitParams = serde_json::from_str(text).expect("an object");
        assert_eq!(
            split.meta.as_deref().map(RawValue::get),
            Some(r#"{"progressToken": 1}"#)
        );
        let params = split.params;
        let mut tree: Map<String, Value> = serde_json::from_str(text).expect("json");
        tree.remove("_meta");
        assert_eq!(params.to_map(), tree);
        assert_eq!(
            serde_json::from_str::<Value>(params.text()).ok(),
            Some(Value::Object(tree))
        );
        assert_eq!(params.str("taskId"), Some(Some(Cow::Borrowed("t-1"))));
        assert!(matches!(params.str("taskId"), Some(Some(Cow::Borrowed(_)))));
        assert_eq!(params.str("esc"), Some(Some(Cow::Owned("a\"b\\cé".into()))));
        assert_eq!(params.str("n"), Some(None));
        assert_eq!(params.str("absent"), None);
        assert_eq!(params.raw("o"), Some(r#"{"a": [1, "x"]}"#));
        assert_eq!(params.value("o"), Some(json!({"a": [1, "x"]})));
        assert_eq!(params.value("key"), Some(json!(true)));
        assert!(params.contains_key("nil") && !params.has_non_null("nil"));
        assert!(params.has_non_null("n") && !params.has_non_null("absent"));
        assert!(!params.contains_key("_meta"));
    }

    /// A key sent twice: the last one counts, as in a tree.
    #[test]
    fn the_last_of_a_repeated_key_counts() {
        let params = read(r#"{"taskId": "a", "x": 1, "taskId": 7}"#);
        assert_eq!(params.str("taskId"), Some(None));
        assert_eq!(
            params.to_map(),
            serde_json::from_str::<Map<String, Value>>(r#"{"x":1,"taskId":7}"#).unwrap()
        );
    }

    /// Keys that need escapes are written escaped, and read back as sent.
    #[test]
    fn keys_with_escapes_round_trip() {
        let params = read(r#"{"a\"b": 1, "c\\d": 2, "e\nf": 3, "plain": 4}"#);
        assert_eq!(params.value("a\"b"), Some(json!(1)));
        assert_eq!(params.value("c\\d"), Some(json!(2)));
        assert_eq!(params.value("e\nf"), Some(json!(3)));
        assert_eq!(params.value("plain"), Some(json!(4)));
        let map = params.to_map();
        assert_eq!(Params::from_map(&map).to_map(), map);
        assert_eq!(
            serde_json::from_str::<Map<String, Value>>(params.text()).ok(),
            Some(map)
        );
    }

    /// Params made from a tree (a message only a tree reads) hold exactly its values: a float
    /// written and read again is the same float (`serde_json`'s `float_roundtrip`), so both ways
    /// of reading a message give a tool the same arguments.
    #[test]
    fn params_from_a_tree_keep_its_floats() {
        let text = r#"{"a": 18000000000000000E00000000184, "b": 0.1, "c": 2.2250738585072011e-308,
            "d": -0.0, "e": 18446744073709551616, "f": 1.7976931348623157e308}"#;
        let tree: Map<String, Value> = serde_json::from_str(text).expect("json");
        assert_eq!(Params::from_map(&tree).to_map(), tree);
        assert_eq!(read(text).to_map(), tree);
    }

    /// No fields: `{}`, from the text or from a tree.
    #[test]
    fn empty_params_are_an_empty_object() {
        for params in [
            read("{}"),
            read(r#"{"_meta": {}}"#),
            Params::new(),
            Params::from_map(&Map::new()),
        ] {
            assert!(params.is_empty());
            assert_eq!(params.text(), "{}");
            assert_eq!(params.raw("x"), None);
        }
        assert!(serde_json::from_str::<SplitParams>("[]").is_err());
    }
}
