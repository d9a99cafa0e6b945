//! A request's params, kept as JSON text with an index of its fields.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// A request's params object, kept as the JSON text the client sent with an index of its
/// top-level fields other than `_meta` (which [`Request::meta`](super::jsonrpc::Request::meta)
/// holds).
///
/// A method reads the fields it needs straight from the text: [`str`](Self::str) borrows a
/// string, [`raw`](Self::raw) gives a value's text, and only the values a method needs as trees
/// (a tool's `arguments`, a `tasks/update`'s answers) become trees, through
/// [`value`](Self::value). Reading a request builds no tree of its params: they cost one copy of
/// their text and the index.
///
/// A key sent twice: the last one counts, as in a [`Map`].
#[derive(Clone, Default)]
pub struct Params {
    /// The text of the params object (as sent, or written from a tree), from its first field to
    /// its last; empty for none.
    text: String,
    fields: Vec<Field>,
}

#[derive(Clone)]
struct Field {
    key: FieldKey,
    /// The value's text.
    value: Range<usize>,
}

#[derive(Clone)]
enum FieldKey {
    /// The key is the text there (between its quotes: it has no escapes).
    At(Range<usize>),
    /// A key that had escapes, unescaped.
    Owned(Box<str>),
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
            params
                .text
                .push(if params.text.is_empty() { '{' } else { ',' });
            let start = params.text.len();
            // A `str` and a `Value` always serialize.
            params
                .text
                .push_str(&serde_json::to_string(key).unwrap_or_default());
            let key = if params.text[start + 1..params.text.len() - 1] == **key {
                FieldKey::At(start + 1..params.text.len() - 1)
            } else {
                FieldKey::Owned(key.as_str().into())
            };
            params.text.push(':');
            let start = params.text.len();
            params
                .text
                .push_str(&serde_json::to_string(value).unwrap_or_default());
            let value = start..params.text.len();
            params.fields.push(Field { key, value });
        }
        if !params.text.is_empty() {
            params.text.push('}');
        }
        params
    }

    /// The last field named `key`.
    fn field(&self, key: &str) -> Option<&Field> {
        self.fields.iter().rev().find(|f| self.key_of(f) == key)
    }

    fn key_of<'a>(&'a self, field: &'a Field) -> &'a str {
        match &field.key {
            FieldKey::At(at) => &self.text[at.clone()],
            FieldKey::Owned(key) => key,
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

    /// Whether the params have no fields (`_meta` aside).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The params as a tree, without `_meta` (a key sent twice: the last value).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for f in &self.fields {
            map.insert(
                self.key_of(f).to_owned(),
                parse(&self.text[f.value.clone()]),
            );
        }
        map
    }

    /// [`ReadParams`] on a text of its own.
    #[cfg(test)]
    pub(crate) fn read(
        text: &str,
        max_depth: usize,
    ) -> Result<(Params, Option<Box<RawValue>>), serde_json::Error> {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(text);
        let read = ReadParams {
            base: text,
            max_depth,
        }
        .deserialize(&mut de)?;
        de.end()?;
        Ok(read)
    }
}

/// Reads a params object from a deserializer reading `base` (the whole message): the fields
/// indexed, `_meta` apart (its text). Each value is read as a tree would read it, nested at most
/// `max_depth` deep: text a tree of the whole message refuses (a number out of range, a lone
/// surrogate in a `\u` escape, nesting past `serde_json`'s limit) is refused here too. The params
/// keep a copy of the part of `base` their fields span.
pub(crate) struct ReadParams<'b> {
    pub(crate) base: &'b str,
    pub(crate) max_depth: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for ReadParams<'_> {
    type Value = (Params, Option<Box<RawValue>>);
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ReadParams<'_> {
    type Value = (Params, Option<Box<RawValue>>);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        // Where a piece of text the deserializer lent is in `base`.
        let base = self.base.as_ptr() as usize;
        let at = |piece: &str| {
            (piece.as_ptr() as usize)
                .checked_sub(base)
                .filter(|at| at + piece.len() <= self.base.len())
                .map(|at| at..at + piece.len())
                .ok_or_else(|| A::Error::custom("params read from another text"))
        };
        let (mut fields, mut meta) = (Vec::new(), None);
        let (mut start, mut end) = (usize::MAX, 0);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            let text = value.get();
            if key == "_meta" {
                check_meta(text, self.max_depth).map_err(A::Error::custom)?;
                meta = Some(value.to_owned());
                continue;
            }
            check(text, self.max_depth).map_err(A::Error::custom)?;
            let key = match key {
                Cow::Borrowed(key) => FieldKey::At(at(key)?),
                Cow::Owned(key) => FieldKey::Owned(key.into()),
            };
            let value = at(text)?;
            if let FieldKey::At(key) = &key {
                start = start.min(key.start);
            }
            start = start.min(value.start);
            end = end.max(value.end);
            fields.push(Field { key, value });
        }
        if fields.is_empty() {
            return Ok((Params::new(), meta));
        }
        // One copy of the text from the first field to the last (`_meta` included, when it is
        // between them), the fields' places counted from its start.
        let shift = |r: &mut Range<usize>| *r = r.start - start..r.end - start;
        for field in &mut fields {
            if let FieldKey::At(key) = &mut field.key {
                shift(key);
            }
            shift(&mut field.value);
        }
        let text = self.base[start..end].to_owned();
        Ok((Params { text, fields }, meta))
    }
}

/// Checks a value as [`ReadParams`] does.
fn check(text: &str, max_depth: usize) -> Result<(), String> {
    if !nesting_within(text, max_depth) {
        return Err("recursion limit exceeded".into());
    }
    serde_json::from_str::<Checked>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// [`check`], for the same `_meta` as the last one checked on this thread nothing more (the
/// cache is [`MetaCache`](super::meta::MetaCache)'s).
fn check_meta(text: &str, max_depth: usize) -> Result<(), String> {
    super::meta::MetaCache::checked(text, max_depth, || check(text, max_depth))
}

/// Whether the arrays and objects of `text` (JSON: only brackets outside strings count) nest at
/// most `max` deep. A text too short to nest deeper, or with at most `max` opening brackets, is
/// not scanned.
pub(crate) fn nesting_within(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() <= 2 * max + 1
        || bytes.iter().filter(|&&b| b == b'[' || b == b'{').count() <= max
    {
        return true;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
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
        f.debug_map()
            .entries(
                self.fields
                    .iter()
                    .map(|field| (self.key_of(field), &self.text[field.value.clone()])),
            )
            .finish()
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

/// An object's key, borrowed from the text when it has no escapes.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

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
        Params::read(params, 125).expect("an object").0
    }

    /// Each field reads from the text as it reads from the tree, `_meta` kept apart.
    #[test]
    fn fields_read_as_the_tree_reads_them() {
        let text = r#"{ "taskId" : "t-1", "n": 3, "nil": null, "o": {"a": [1, "x"]},
            "esc": "a\"b\\c\u00e9", "_meta": {"progressToken": 1}, "k\u0065y": true }"#;
        let (params, meta) = Params::read(text, 125).expect("an object");
        assert_eq!(
            meta.as_deref().map(RawValue::get),
            Some(r#"{"progressToken": 1}"#)
        );
        let mut tree: Map<String, Value> = serde_json::from_str(text).expect("json");
        tree.remove("_meta");
        assert_eq!(params.to_map(), tree);
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
        assert_eq!(Params::from_map(&map).value("a\"b"), Some(json!(1)));
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

    /// A value is refused as a tree refuses it, nested at most as deep as asked; `_meta` too,
    /// whether it was checked before on this thread or not.
    #[test]
    fn values_are_checked_as_a_tree_reads_them() {
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(Params::read(&format!(r#"{{"a":{}}}"#, nest(10)), 10).is_ok());
        assert!(Params::read(&format!(r#"{{"a":{}}}"#, nest(11)), 10).is_err());
        assert!(Params::read(&format!(r#"{{"s":"{}","a":1}}"#, "[".repeat(50)), 10).is_ok());
        for bad in ["1e400", r#""\udc00""#, r#"{"k": [0, 1E999]}"#] {
            assert!(
                Params::read(&format!(r#"{{"a":{bad}}}"#), 125).is_err(),
                "{bad}"
            );
            let meta = format!(r#"{{"_meta":{{"x":{bad}}}}}"#);
            for _ in 0..2 {
                assert!(Params::read(&meta, 125).is_err(), "{bad}");
            }
        }
        let meta = format!(r#"{{"_meta":{{"x":{}}}}}"#, nest(9));
        for _ in 0..2 {
            assert!(Params::read(&meta, 10).is_ok());
            assert!(
                Params::read(&meta, 9).is_err(),
                "the depth counts, not only the text"
            );
        }
    }

    /// No fields, from the text or from a tree.
    #[test]
    fn empty_params_are_an_empty_object() {
        for params in [
            read("{}"),
            read(r#"{"_meta": {}}"#),
            Params::new(),
            Params::from_map(&Map::new()),
        ] {
            assert!(params.is_empty());
            assert_eq!(params.to_map(), Map::new());
            assert_eq!(params.raw("x"), None);
        }
        assert!(Params::read("[]", 125).is_err());
        assert!(Params::read("{} x", 125).is_err());
    }
}
