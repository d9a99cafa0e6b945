//! The fast path of [`Message::parse`]: a well-formed request or notification read straight
//! from its text, its params kept as text ([`Params`]), without a JSON tree.

use super::message::raw_to_value;
use super::{Message, Notification, Params, Request, RequestId};
use crate::protocol::params::ReadParams;
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

impl Message {
    /// The common case read straight from the text, without a JSON tree: a well-formed request
    /// or notification, whose `params` (an object) is kept as text ([`Params`]). `None` for
    /// anything else (a response, an error to report, a duplicate or unknown envelope key, an id
    /// beyond 64 bits, `notifications/cancelled`, a params value a tree would refuse):
    /// [`Message::parse_tree`] then reads the text as a tree, which gives the same message for
    /// what this path accepts and the precise error for what it does not.
    pub(super) fn parse_common(text: &str) -> Option<Message> {
        let mut de = serde_json::Deserializer::from_str(text);
        let envelope =
            serde::de::DeserializeSeed::deserialize(ReadEnvelope { base: text }, &mut de).ok()?;
        de.end().ok()?;
        if envelope.jsonrpc != "2.0" || envelope.method == "notifications/cancelled" {
            return None;
        }
        let (params, meta) = match envelope.params {
            Some((params, meta)) => (Some(params), meta),
            None => (None, None),
        };
        let method = envelope.method.to_owned();
        Some(match envelope.id {
            None => {
                // A notification's params stay whole, as a tree.
                let params = params.map(|params| {
                    let mut params = params.to_map();
                    if let Some(meta) = meta {
                        params.insert("_meta".into(), raw_to_value(&meta));
                    }
                    Value::Object(params)
                });
                Message::Notification(Notification { method, params })
            }
            Some(raw) => {
                let id = match serde_json::from_str::<RequestId>(raw.get()).ok()? {
                    RequestId::BigNumber(_) => return None,
                    id => id,
                };
                Message::Request(Request {
                    id,
                    method,
                    params,
                    meta,
                })
            }
        })
    }
}

/// The deepest nesting of arrays and objects a JSON text may have to be read as a tree
/// (`serde_json`'s recursion limit: 128 levels refused, 127 read).
const MAX_NESTING: usize = 127;

/// A well-formed request's or notification's envelope, read from its text (`base`) by
/// [`Message::parse_common`], its params as [`Params`]. A response, a key given twice, a key it
/// does not know (skipped, its value would not be read as a tree reads it: a number out of range
/// would pass) or a key with escapes is an error: `parse_tree` then reads the message.
struct ReadEnvelope<'b> {
    base: &'b str,
}

struct Envelope<'a> {
    jsonrpc: &'a str,
    id: Option<&'a RawValue>,
    method: &'a str,
    params: Option<(Params, Option<Box<RawValue>>)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ReadEnvelope<'_> {
    type Value = Envelope<'de>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ReadEnvelope<'_> {
    type Value = Envelope<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request or notification")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        /// Sets a field read once.
        fn once<T, E: Error>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), E> {
            match slot.replace(value) {
                None => Ok(()),
                Some(_) => Err(E::duplicate_field(name)),
            }
        }
        let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "jsonrpc" => once(&mut jsonrpc, "jsonrpc", map.next_value()?)?,
                "id" => once(&mut id, "id", map.next_value()?)?,
                "method" => once(&mut method, "method", map.next_value()?)?,
                "params" => {
                    // The envelope and the params object are two levels of nesting.
                    let read = ReadParams {
                        base: self.base,
                        max_depth: MAX_NESTING - 2,
                    };
                    once(&mut params, "params", map.next_value_seed(read)?)?
                }
                "result" | "error" => return Err(A::Error::custom("a response")),
                other => return Err(A::Error::unknown_field(other, &[])),
            }
        }
        Ok(Envelope {
            jsonrpc: jsonrpc.ok_or_else(|| A::Error::missing_field("jsonrpc"))?,
            id,
            method: method.ok_or_else(|| A::Error::missing_field("method"))?,
            params,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::RpcError;
    use serde_json::Map;

    /// The envelope read without a tree gives what the tree gives, and leaves every other case
    /// (and its precise error) to the tree.
    #[test]
    fn the_common_path_agrees_with_the_tree() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let taken = [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"t",{meta}}}}}"#
            ),
            r#"{"id":"a\"b","method":"ping","jsonrpc":"2.0"}"#.to_owned(),
            r#" {"jsonrpc":"2.0","id":-7,"method":"x","params":{ "k" : [1,{"a":null}] } } "#
                .to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m","params":{"a":1,"a":2}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":7,"b":{"_meta":1}}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"_meta":[ 2 ]}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"progressToken":"p"},"x":1}}"#
                .to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"a":1},"_met":2}}"#
                .to_owned(),
        ];
        for text in &taken {
            let fast = Message::parse_common(text);
            assert!(fast.is_some(), "{text}");
            assert_eq!(fast.map(Ok), Some(Message::parse_tree(text)), "{text}");
        }
        // A request's `_meta` is kept apart as sent (the last one, when given twice); a
        // notification's stays in its params.
        let Ok(Message::Request(req)) = Message::parse(&taken[6]) else {
            panic!("{}", taken[6])
        };
        assert_eq!(req.meta.as_deref().map(RawValue::get), Some("[ 2 ]"));
        assert_eq!(req.params.as_ref().map(Params::to_map), Some(Map::new()));
        assert_eq!(
            req.params_with_meta(),
            Some(serde_json::json!({"_meta": [2]}))
        );
        let Ok(Message::Request(req)) = Message::parse(&taken[8]) else {
            panic!("{}", taken[8])
        };
        assert_eq!(req.meta_value(), Some(serde_json::json!({"a": 1})));
        assert_eq!(
            req.params.as_ref().map(|p| Value::Object(p.to_map())),
            Some(serde_json::json!({"_met": 2}))
        );
        let Ok(Message::Notification(n)) = Message::parse(&taken[7]) else {
            panic!("{}", taken[7])
        };
        assert_eq!(
            n.params,
            Some(serde_json::json!({"_meta": {"progressToken": "p"}, "x": 1}))
        );
        let left = [
            "{",
            "[]",
            "3",
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551623,"method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"m"}"#,
            r#"{"id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":18446744073709551623}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"x","params":{},"extra":[1,{"a":null}]}"#,
        ];
        for text in left {
            assert_eq!(Message::parse_common(text), None, "{text}");
        }
    }

    /// What a tree refuses in a value kept as text or skipped (a number out of range, a lone
    /// surrogate), in params, in `_meta` or under an envelope key nobody reads, is refused with
    /// the tree's error.
    #[test]
    fn values_a_tree_refuses_are_refused() {
        for value in [
            "1e400",
            "-1E+309",
            &"9".repeat(400),
            r#""\ud800""#,
            r#"["x", {"y": "\udc00z"}]"#,
        ] {
            for text in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{value}}}}}"#),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"x":{value}}}}}}}"#
                ),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","extra":{value}}}"#),
                format!(r#"{{"jsonrpc":"2.0","extra":{value},"method":"m"}}"#),
            ] {
                let parsed = Message::parse(&text);
                assert_eq!(parsed, Message::parse_tree(&text), "{text}");
                assert_eq!(Message::parse_common(&text), None, "{text}");
                assert_eq!(
                    parsed.map_err(|r| r.error.code),
                    Err(RpcError::PARSE_ERROR),
                    "{text}"
                );
            }
        }
        for value in ["1e300", "-0.0", &"9".repeat(300), r#""\ud83d\ude00""#] {
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{value}}}}}"#);
            assert!(Message::parse_common(&text).is_some(), "{text}");
            assert_eq!(Message::parse(&text), Message::parse_tree(&text), "{text}");
            // An envelope key it does not know: read by the tree, and ignored.
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","extra":{value}}}"#);
            assert_eq!(Message::parse_common(&text), None, "{text}");
            assert!(
                matches!(Message::parse(&text), Ok(Message::Request(_))),
                "{text}"
            );
        }
    }

    /// Values kept as text nest no deeper than a tree may: the message a tree refuses is refused
    /// with the tree's error, wherever the nesting is (params kept as text, `_meta`).
    #[test]
    fn nesting_a_tree_refuses_is_refused() {
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        // The envelope and `params` are two levels: 125 more make 127, the most a tree takes.
        for (n, ok) in [(125, true), (126, false), (200, false)] {
            for text in [
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}}}}}"#,
                    nest(n)
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"x":{}}}}}}}"#,
                    nest(n - 1)
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"s":"[[[[[[","a":{}}}}}"#,
                    nest(n)
                ),
            ] {
                let parsed = Message::parse(&text);
                assert_eq!(parsed, Message::parse_tree(&text), "{n}");
                assert_eq!(parsed.is_ok(), ok, "{n}: {parsed:?}");
                if !ok {
                    assert_eq!(Message::parse_common(&text), None, "{n}");
                    let error = parsed.unwrap_err().error;
                    assert_eq!(error.code, RpcError::PARSE_ERROR, "{n}");
                    assert!(
                        error.message.contains("recursion limit"),
                        "{}",
                        error.message
                    );
                }
            }
        }
        // Brackets inside strings do not count.
        let strings = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"s":"{}\"{}"}}}}"#,
            "[".repeat(200),
            "{".repeat(200)
        );
        assert!(Message::parse_common(&strings).is_some());
    }
}
