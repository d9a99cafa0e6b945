//! Outgoing responses: [`Reply`] and its [`Payload`], written straight to text.

use super::{RequestId, RpcError, error_message, result_message};
use crate::protocol::meta::SERVER_INFO;
use crate::protocol::{CallToolResult, Content};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A response on its way out, kept as its parts until it is written: [`Serialize`] writes it
/// straight to text, the JSON [`Wire`](super::Wire) writes for [`Reply::into_value`] (the id
/// byte-for-byte), but without building the envelope as a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Payload, RpcError>,
    /// The server's `serverInfo`, for a 2026-07-28 result: an object result
    /// ([`Payload::Tree`]) then also carries `resultType` (`"complete"` unless it has one) and
    /// `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub server_info: Option<std::sync::Arc<Value>>,
}

/// A reply's result.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A tree; a 2026-07-28 reply shapes it as it writes it (see [`Reply::server_info`]).
    Tree(Value),
    /// JSON text already in its final shape, written as it is: for a 2026-07-28 reply, with its
    /// `resultType` and the `serverInfo` in `_meta` (a task rendered with
    /// [`Rendered::with_server_info`](crate::protocol::task::Rendered::with_server_info)).
    Text(Box<RawValue>),
    /// A `tools/call` result, written without building its tree; a 2026-07-28 reply shapes it as
    /// it writes it, like a tree.
    Tool(CallToolResult),
}

impl Payload {
    /// The result as a tree (text is parsed).
    pub fn into_value(self) -> Value {
        match self {
            Payload::Tree(value) => value,
            Payload::Text(text) => serde_json::from_str(text.get()).unwrap_or(Value::Null),
            Payload::Tool(result) => serde_json::to_value(result).unwrap_or(Value::Null),
        }
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Payload::Tree(value)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Payload::Tree(a), Payload::Tree(b)) => a == b,
            (Payload::Text(a), Payload::Text(b)) => a.get() == b.get(),
            (Payload::Tool(a), Payload::Tool(b)) => a == b,
            _ => false,
        }
    }
}

impl Reply {
    /// The response as a JSON tree (what [`Serialize`] writes, as a [`Value`] for [`Wire`]).
    pub fn into_value(self) -> Value {
        match self.outcome {
            Ok(Payload::Text(text)) => result_message(&self.id, Payload::Text(text).into_value()),
            Ok(Payload::Tool(result)) => Reply {
                outcome: Ok(Payload::Tree(Payload::Tool(result).into_value())),
                ..self
            }
            .into_value(),
            Ok(Payload::Tree(mut result)) => {
                if let (Some(info), Value::Object(obj)) = (&self.server_info, &mut result) {
                    obj.entry("resultType")
                        .or_insert_with(|| Value::String("complete".into()));
                    let meta = obj
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(meta) = meta {
                        meta.insert(SERVER_INFO.into(), Value::clone(info));
                    }
                }
                result_message(&self.id, result)
            }
            Err(error) => error_message(Some(&self.id), &error),
        }
    }
}

impl Reply {
    /// Appends the reply's JSON text to `out`: what [`Serialize`] writes. A result that is text
    /// already (a task) is copied in between the envelope's two halves, without the serializer.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        if let Ok(Payload::Text(text)) = &self.outcome {
            out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            serde_json::to_writer(&mut *out, &self.id)?;
            out.extend_from_slice(br#","result":"#);
            out.extend_from_slice(text.get().as_bytes());
            out.push(b'}');
            return Ok(());
        }
        serde_json::to_writer(out, self)
    }
}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (id, jsonrpc) = (&self.id, "2.0");
        let result = match (&self.outcome, self.server_info.as_deref()) {
            (Err(error), _) => return Failure { jsonrpc, id, error }.serialize(s),
            (Ok(Payload::Text(text)), _) => Out::Text(text),
            (Ok(Payload::Tool(result)), None) => Out::Tool(result),
            (Ok(Payload::Tool(result)), Some(info)) => {
                Out::ModernTool(ModernToolResult::new(result, info))
            }
            (Ok(Payload::Tree(Value::Object(obj))), Some(info)) => {
                Out::Shaped(Shaped { obj, info })
            }
            (Ok(Payload::Tree(result)), _) => Out::Tree(result),
        };
        Success {
            jsonrpc,
            id,
            result,
        }
        .serialize(s)
    }
}

/// A success response as it is written.
#[derive(wire::Serialize)]
struct Success<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: Out<'a>,
}

/// An error response as it is written.
#[derive(wire::Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    error: &'a RpcError,
}

/// A result as it is written: as it is, or shaped for 2026-07-28 (see [`Reply::server_info`]).
#[derive(wire::Serialize)]
#[serde(untagged)]
enum Out<'a> {
    Text(&'a RawValue),
    Tree(&'a Value),
    Tool(&'a CallToolResult),
    ModernTool(ModernToolResult<'a>),
    Shaped(Shaped<'a>),
}

/// A 2026-07-28 result object as [`Reply::into_value`] shapes it, written without copying it:
/// the object's entries with `_meta` and `resultType` merged in. Written by hand: a derive cannot
/// merge keys into a map it does not know.
struct Shaped<'a> {
    obj: &'a Map<String, Value>,
    info: &'a Value,
}

impl Serialize for Shaped<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let info = self.info;
        let mut map = s.serialize_map(None)?;
        for (key, value) in self.obj {
            match (key.as_str(), value) {
                ("_meta", Value::Object(meta)) => map.serialize_entry(
                    key,
                    &MetaWith {
                        meta: Some(meta),
                        info,
                    },
                )?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        if !self.obj.contains_key("_meta") {
            map.serialize_entry("_meta", &MetaWith { meta: None, info })?;
        }
        if !self.obj.contains_key("resultType") {
            map.serialize_entry("resultType", "complete")?;
        }
        map.end()
    }
}

/// A `CallToolResult` shaped for 2026-07-28: `_meta` with the `serverInfo`, `resultType`.
#[derive(wire::Serialize)]
#[serde(rename_all = "camelCase")]
struct ModernToolResult<'a> {
    #[serde(rename = "_meta")]
    meta: MetaWith<'a>,
    content: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    result_type: &'static str,
}

impl<'a> ModernToolResult<'a> {
    fn new(result: &'a CallToolResult, info: &'a Value) -> Self {
        // Every field named: a field added to `CallToolResult` fails to compile here until it is
        // written.
        let CallToolResult {
            content,
            structured_content,
            is_error,
            meta,
        } = result;
        ModernToolResult {
            meta: MetaWith {
                meta: meta.as_ref(),
                info,
            },
            content,
            structured_content: structured_content.as_ref(),
            is_error: *is_error,
            result_type: "complete",
        }
    }
}

/// A result's `_meta` object (or none) with the server's `serverInfo` set in it (replacing one
/// it had). Written by hand: a derive cannot merge a key into a map.
struct MetaWith<'a> {
    meta: Option<&'a Map<String, Value>>,
    info: &'a Value,
}

impl Serialize for MetaWith<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.meta.into_iter().flatten() {
            if k != SERVER_INFO {
                map.serialize_entry(k, v)?;
            }
        }
        map.serialize_entry(SERVER_INFO, self.info)?;
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": info}`: the `_meta` a 2026-07-28 result without one
/// of its own gets.
#[derive(wire::Serialize)]
pub(crate) struct ServerInfoMeta<'a> {
    /// The server's `serverInfo`.
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) info: &'a Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::json_eq::assert_same_json;
    use crate::protocol::jsonrpc::Wire;

    /// A reply written from its parts is the reply written as a tree (the same JSON, the id digit for
    /// digit).
    #[test]
    fn a_reply_writes_what_its_tree_writes() {
        let info = std::sync::Arc::new(serde_json::json!({"name": "s", "version": "1"}));
        let ids = [
            RequestId::Number(-3),
            RequestId::String("a\"b".into()),
            RequestId::BigNumber("18446744073709551623".into()),
        ];
        let results = [
            serde_json::json!({}),
            serde_json::json!({"content": [{"type": "text", "text": "hi"}], "isError": false}),
            serde_json::json!({"A": 1, "_a": 2, "_meta": {"a": 1, "z": 2}, "resultType": "task", "s": 3}),
            serde_json::json!({"_meta": {"io.modelcontextprotocol/serverInfo": 0, "io.z": 1}}),
            serde_json::json!({"_meta": {"io.a": 1}, "zz": null}),
            serde_json::json!({"_meta": 7, "q": 1, "resultTypf": 2}),
            serde_json::json!([1, 2]),
            serde_json::json!("text"),
        ];
        let errors = [
            RpcError::invalid_params("bad"),
            RpcError::limit_reached("tasks", 3, "tasks in flight"),
        ];
        for id in &ids {
            let mut replies = Vec::new();
            for result in &results {
                for server_info in [None, Some(info.clone())] {
                    replies.push(Reply {
                        id: id.clone(),
                        outcome: Ok(result.clone().into()),
                        server_info,
                    });
                }
            }
            for error in &errors {
                replies.push(Reply {
                    id: id.clone(),
                    outcome: Err(error.clone()),
                    server_info: Some(info.clone()),
                });
            }
            for result in tool_results() {
                for server_info in [None, Some(info.clone())] {
                    let tree = Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Tree(serde_json::to_value(&result).unwrap())),
                        server_info: server_info.clone(),
                    };
                    let tree = serde_json::to_string(&tree).unwrap();
                    replies.push(Reply {
                        id: id.clone(),
                        outcome: Ok(Payload::Tool(result.clone())),
                        server_info,
                    });
                    let direct = serde_json::to_string(replies.last().unwrap()).unwrap();
                    assert_same_json(&direct, &tree);
                }
            }
            for result in &results {
                replies.push(Reply {
                    id: id.clone(),
                    outcome: Ok(Payload::Text(
                        serde_json::value::to_raw_value(result).unwrap(),
                    )),
                    server_info: Some(info.clone()),
                });
            }
            for reply in replies {
                let direct = serde_json::to_string(&reply).unwrap();
                // What the transports write is what `Serialize` writes, byte for byte.
                let mut written = Vec::new();
                reply.write_to(&mut written).unwrap();
                assert_eq!(String::from_utf8(written).unwrap(), direct);
                assert_same_json(&direct, &Wire(&reply.into_value()).to_json());
            }
        }
    }

    /// `CallToolResult`s with every kind of content and every optional field.
    fn tool_results() -> Vec<CallToolResult> {
        use crate::protocol::{CallToolResult, Content, ResourceContents};
        let every_block = vec![
            Content::text("a \"b\" \u{1}"),
            Content::image(b"png", "image/png"),
            Content::audio(b"wav", "audio/wav"),
            Content::ResourceLink {
                uri: "file:///x".into(),
                name: "x".into(),
                mime_type: None,
                size: None,
            },
            Content::ResourceLink {
                uri: "task://t/x".into(),
                name: "x".into(),
                mime_type: Some("text/plain".into()),
                size: Some(3),
            },
            Content::resource(ResourceContents::text("file:///t", "text/plain", "t")),
            Content::resource(ResourceContents::blob("file:///b", "app/x", b"b")),
            Content::resource(ResourceContents::Text {
                uri: "u".into(),
                mime_type: None,
                text: "t".into(),
                meta: None,
            }),
            Content::resource(ResourceContents::Blob {
                uri: "u".into(),
                mime_type: None,
                blob: "AA==".into(),
                meta: None,
            }),
        ];
        let meta = |pairs: Value| pairs.as_object().cloned();
        vec![
            CallToolResult::text("hi"),
            CallToolResult::empty(),
            CallToolResult::error("no"),
            CallToolResult::structured(serde_json::json!({"b": [1, 2.5], "a": null})),
            CallToolResult {
                structured_content: Some(Value::Null),
                is_error: true,
                meta: meta(serde_json::json!({})),
                ..CallToolResult::from_content(every_block)
            },
            CallToolResult {
                meta: meta(
                    serde_json::json!({"a": 1, "io.modelcontextprotocol/serverInfo": 2, "z": [3]}),
                ),
                ..CallToolResult::text("m")
            },
            CallToolResult {
                meta: meta(serde_json::json!({"io.z": 1, "A": 0})),
                ..CallToolResult::text("m")
            },
        ]
    }
}
