//! The oracle of the writers' tests and fuzz targets: two JSON texts are the same when they parse
//! to the same tree, no object in either repeats a key, and, when they are JSON-RPC messages,
//! their ids are the same digit for digit (an id beyond 64 bits is kept as its digits). Key order
//! is not compared: each writer puts keys in whatever order it writes them quickest.

use super::jsonrpc::Message;
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Panics unless `written` and `expected` are the same JSON (see the module).
#[track_caller]
pub(crate) fn assert_same_json(written: &str, expected: &str) {
    let tree = |text: &str| match serde_json::from_str::<Strict>(text) {
        Ok(Strict(tree)) => tree,
        Err(e) => panic!("{e}: {text}"),
    };
    assert_eq!(tree(written), tree(expected), "\n{written}\n{expected}");
    if let (Ok(Message::Response(a)), Ok(Message::Response(b))) =
        (Message::parse(written), Message::parse(expected))
    {
        assert_eq!(a.id, b.id, "\n{written}\n{expected}");
    }
}

/// A JSON tree read so that a key given twice is an error (a tree keeps the last one).
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Strict;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Strict, E> {
                Ok(Strict(Value::Null))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
                Ok(Strict(v.into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
                let mut items = Vec::new();
                while let Some(Strict(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Strict(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
                let mut entries = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let Strict(value) = map.next_value()?;
                    if entries.contains_key(&key) {
                        return Err(A::Error::custom(format!("the key {key:?} is given twice")));
                    }
                    entries.insert(key, value);
                }
                Ok(Strict(Value::Object(entries)))
            }
        }
        d.deserialize_any(Visit)
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
    fn key_order_does_not_matter() {
        assert_same_json(
            r#"{"b":[1,{"d":2,"c":3}],"a":null}"#,
            r#"{"a":null,"b":[1,{"c":3,"d":2}]}"#,
        );
    }
}
