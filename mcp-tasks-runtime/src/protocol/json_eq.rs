//! The oracle of the writers' tests and fuzz targets: two JSON texts are the same when they parse
//! to the same tree, no object in either repeats a key, and the top-level `id` (a JSON-RPC
//! message's) is written with the same text: an integer id of any size is kept digit for digit,
//! where a tree would round it or refuse it. Key order is not compared: each writer puts keys in
//! whatever order it writes them quickest.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// Panics unless `written` and `expected` are the same JSON (see the module).
#[track_caller]
pub(crate) fn assert_same_json(written: &str, expected: &str) {
    let tree = |text: &str| {
        let mut de = serde_json::Deserializer::from_str(text);
        let top = Strict { top: true };
        match top.deserialize(&mut de).and_then(|t| de.end().map(|()| t)) {
            Ok(tree) => tree,
            Err(e) => panic!("{e}: {text}"),
        }
    };
    assert_eq!(tree(written), tree(expected), "\n{written}\n{expected}");
}

/// Reads a JSON tree so that a key given twice is an error (a tree keeps the last one). At the
/// top level, an `id` is kept as the text it is written in, as a string `id:<text>`.
#[derive(Clone, Copy)]
struct Strict {
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict { top: false })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if self.top && key == "id" {
                let raw: Box<RawValue> = map.next_value()?;
                Value::String(format!("id:{}", raw.get()))
            } else {
                map.next_value_seed(Strict { top: false })?
            };
            if entries.contains_key(&key) {
                return Err(A::Error::custom(format!("the key {key:?} is given twice")));
            }
            entries.insert(key, value);
        }
        Ok(Value::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "given twice")]
    fn a_key_given_twice_is_not_the_same() {
        assert_same_json(r#"{"a":1,"a":1}"#, r#"{"a":1}"#);
    }

    #[test]
    #[should_panic]
    fn ids_differ_in_their_digits() {
        assert_same_json(
            r#"{"jsonrpc":"2.0","id":18446744073709551623,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551622,"result":{}}"#,
        );
    }

    #[test]
    fn an_id_beyond_a_double_is_compared_by_its_digits() {
        let id = "1".repeat(400);
        let message = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        assert_same_json(&message, &message);
        let result = std::panic::catch_unwind(|| {
            assert_same_json(&message, &message.replace(&id, &format!("{id}2")));
        });
        assert!(result.is_err(), "ids of different digits read as the same");
    }

    #[test]
    fn key_order_does_not_matter() {
        assert_same_json(
            r#"{"b":[1,{"d":2,"c":3}],"a":null}"#,
            r#"{"a":null,"b":[1,{"c":3,"d":2}]}"#,
        );
    }
}
