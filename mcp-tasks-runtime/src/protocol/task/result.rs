//! A task's stored result written into the shapes that carry it, copied from its text value by
//! value rather than parsed into a tree.

use std::borrow::Cow;
use std::fmt;

use serde::ser::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::types::OutcomeView;

/// A result as a 2026-07-28 result: an object gets `resultType: "complete"` unless it has a
/// `resultType`. Stored text is copied, value by value, without a tree. Written by hand: a derive
/// cannot merge a key into a map it does not know.
pub(super) struct CompleteResult<'a>(pub(super) OutcomeView<'a>);

impl Serialize for CompleteResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// The entries, then `resultType` unless they have one.
        fn complete<S, K, V>(s: S, entries: &[(K, V)]) -> Result<S::Ok, S::Error>
        where
            S: serde::Serializer,
            K: AsRef<str>,
            V: Serialize,
        {
            let mut map = s.serialize_map(Some(entries.len() + 1))?;
            let mut has = false;
            for (k, v) in entries {
                has |= k.as_ref() == "resultType";
                map.serialize_entry(k.as_ref(), v)?;
            }
            if !has {
                map.serialize_entry("resultType", "complete")?;
            }
            map.end()
        }
        match self.0 {
            OutcomeView::Result(Value::Object(obj)) => {
                let mut map = s.serialize_map(Some(obj.len() + 1))?;
                for (k, v) in obj {
                    map.serialize_entry(k, v)?;
                }
                if !obj.contains_key("resultType") {
                    map.serialize_entry("resultType", "complete")?;
                }
                map.end()
            }
            OutcomeView::Result(other) => other.serialize(s),
            OutcomeView::ResultText(text) => match object_entries(text) {
                Some(entries) => complete(s, &entries),
                None => text.serialize(s),
            },
            OutcomeView::Error(error) => error.serialize(s),
        }
    }
}

impl CompleteResult<'_> {
    /// Appends the JSON text [`Serialize`] writes. A stored result's text without `resultType`
    /// (nearly every one) is copied whole, the key put before its closing brace, instead of read
    /// entry by entry: the text an [`OutcomeView::ResultText`] holds is compact, as `serde_json`
    /// writes it, so its entries are the bytes `Serialize` would copy. A text that names
    /// `resultType` anywhere, or has a `\u` escape (a key could spell it so), takes `Serialize`.
    pub(super) fn write(&self, out: &mut String) {
        if let OutcomeView::ResultText(text) = self.0 {
            let text = text.get();
            if let Some(body) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}'))
                && !text.contains("resultType")
                && !text.contains("\\u")
            {
                out.push('{');
                if !body.trim().is_empty() {
                    out.push_str(body);
                    out.push(',');
                }
                out.push_str("\"resultType\":\"complete\"}");
                return;
            }
        }
        out.push_str(&serde_json::to_string(self).unwrap_or_default());
    }
}

/// The 2025-11-25 `tasks/result` answer of a task that ended with a result: the result as the
/// call would have answered it, its `_meta` naming the task
/// (`io.modelcontextprotocol/related-task`). Stored text is copied, value by value, without a tree
/// (written by hand: a derive cannot merge a key into a map it does not know).
#[derive(Debug, Clone, Copy)]
pub struct RelatedResult<'a> {
    /// The result ([`OutcomeView::Result`] or [`OutcomeView::ResultText`]).
    pub result: OutcomeView<'a>,
    /// The task's id.
    pub task_id: &'a str,
}

impl RelatedResult<'_> {
    /// The JSON text.
    pub fn to_text(self) -> Box<RawValue> {
        // Every key is a string, so writing cannot fail.
        serde_json::value::to_raw_value(&self).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

/// `{"taskId": id}`.
#[derive(wire::Serialize)]
struct TaskRef<'a> {
    #[serde(rename = "taskId")]
    task_id: &'a str,
}

impl Serialize for RelatedResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let related = TaskRef {
            task_id: self.task_id,
        };
        let text = match self.result {
            OutcomeView::ResultText(text) => text,
            OutcomeView::Result(result) => {
                // A tree (a store that does not keep text): set the key in a copy.
                let mut result = result.clone();
                if let Value::Object(obj) = &mut result {
                    let m = obj.entry("_meta").or_insert_with(|| Map::new().into());
                    if let Value::Object(m) = m {
                        let related = serde_json::to_value(&related).map_err(S::Error::custom)?;
                        m.insert(crate::protocol::meta::RELATED_TASK.into(), related);
                    }
                }
                return result.serialize(s);
            }
            OutcomeView::Error(error) => return error.serialize(s),
        };
        let Some(entries) = object_entries(text) else {
            return text.serialize(s);
        };
        /// The result's `_meta` entries with the related task set (replacing one it had).
        struct Meta<'a, 'b>(&'b [(Cow<'a, str>, &'a RawValue)], &'b TaskRef<'b>);
        impl Serialize for Meta<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let key = crate::protocol::meta::RELATED_TASK;
                let mut map = s.serialize_map(Some(self.0.len() + 1))?;
                for (k, v) in self.0 {
                    if k != key {
                        map.serialize_entry(k.as_ref(), v)?;
                    }
                }
                map.serialize_entry(key, self.1)?;
                map.end()
            }
        }
        let mut map = s.serialize_map(Some(entries.len() + 1))?;
        let mut had_meta = false;
        for (k, v) in &entries {
            if k != "_meta" {
                map.serialize_entry(k.as_ref(), v)?;
                continue;
            }
            had_meta = true;
            match object_entries(v) {
                Some(meta) => map.serialize_entry("_meta", &Meta(&meta, &related))?,
                // Not an object: left as it is, as the tree leaves it.
                None => map.serialize_entry("_meta", v)?,
            }
        }
        if !had_meta {
            map.serialize_entry("_meta", &Meta(&[], &related))?;
        }
        map.end()
    }
}

/// The top-level entries of an object's JSON text, values left as text; `None` if it is not an
/// object. Keys are borrowed unless they hold escapes.
fn object_entries(text: &RawValue) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    use crate::protocol::params::Key;
    struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> Deserialize<'de> for Entries<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Entries<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut access: A,
                ) -> Result<Entries<'de>, A::Error> {
                    let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(4));
                    while let Some(Key(key)) = access.next_key()? {
                        entries.push((key, access.next_value()?));
                    }
                    Ok(Entries(entries))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    if !text.get().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Entries<'_>>(text.get())
        .ok()
        .map(|e| e.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::json_eq::assert_same_json;
    use serde_json::json;

    /// A stored result's text copied whole with `resultType` put in is what `Serialize` writes,
    /// byte for byte.
    #[test]
    fn a_complete_result_from_text_is_what_serialize_writes() {
        let results = [
            json!({"content": [{"type": "text", "text": "hi \"there\" \u{1}"}], "isError": true}),
            json!({"resultType": "x", "_meta": {"k": 1}, "a": null}),
            json!({"a": {"resultType": 1}}),
            json!({"a": "resultType"}),
            json!({"k\u{1}ey": 1, "é": [2]}),
            json!({}),
            json!([1, {"b": 2}]),
            json!("text"),
            json!(7),
        ];
        for result in &results {
            let text = serde_json::value::to_raw_value(result).unwrap();
            let complete = CompleteResult(OutcomeView::ResultText(&text));
            let mut out = String::new();
            complete.write(&mut out);
            assert_eq!(out, serde_json::to_string(&complete).unwrap(), "{result}");
        }
        // Spaces (a text `serde_json` did not write) change nothing but the spaces.
        for text in ["{ }", r#"{ "a" : 1 }"#] {
            let text = RawValue::from_string(text.to_owned()).unwrap();
            let complete = CompleteResult(OutcomeView::ResultText(&text));
            let mut out = String::new();
            complete.write(&mut out);
            assert_same_json(&out, &serde_json::to_string(&complete).unwrap());
        }
    }

    /// The legacy `tasks/result` answer written from stored text is what setting the key in the
    /// result's tree writes.
    #[test]
    fn a_related_result_from_text_is_the_tree_with_the_key_set() {
        let related = json!({"taskId": "t\"1"});
        let results = [
            json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
            json!({"_meta": {"a": 1, "io.modelcontextprotocol/related-task": 0, "z": [2]}, "b": 1}),
            json!({"_meta": {"io.zzz": 1, "A": 2}}),
            json!({"_meta": 7, "x": 1}),
            json!({"A": 1, "_a": 2, "a\"": 3}),
            json!({}),
            json!([1, {"_meta": 1}]),
            json!("text"),
        ];
        for result in results {
            let mut tree = result.clone();
            if let Value::Object(obj) = &mut tree {
                let m = obj.entry("_meta").or_insert_with(|| json!({}));
                if let Value::Object(m) = m {
                    m.insert(crate::protocol::meta::RELATED_TASK.into(), related.clone());
                }
            }
            let tree = serde_json::to_string(&tree).unwrap();
            let text = serde_json::value::to_raw_value(&result).unwrap();
            for view in [OutcomeView::Result(&result), OutcomeView::ResultText(&text)] {
                let written = RelatedResult {
                    result: view,
                    task_id: "t\"1",
                };
                assert_same_json(written.to_text().get(), &tree);
            }
        }
    }
}
