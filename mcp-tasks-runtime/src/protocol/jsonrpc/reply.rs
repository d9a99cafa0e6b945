//! Outgoing responses: [`Reply`] and its [`Payload`], written straight to text.

use super::{RequestId, RpcError, error_message, result_message};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A response on its way out, kept as its parts until it is written: [`Serialize`] writes it
/// straight to text, with the bytes [`Wire`] writes for [`Reply::into_value`] (keys in the same
/// order, the id byte-for-byte), but without building the envelope as a tree.
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
    /// [`Rendered::with_server_info`](crate::protocol::task::Rendered::with_server_info)). Written as a
    /// tree would write it (compact, keys sorted), so that a reply's bytes do not depend on
    /// which form its result took.
    Text(Box<RawValue>),
    /// A `tools/call` result, written as its tree would be (keys sorted) without building it; a
    /// 2026-07-28 reply shapes it as it writes it, like a tree.
    Tool(crate::protocol::CallToolResult),
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
                        meta.insert(
                            crate::protocol::meta::SERVER_INFO.into(),
                            Value::clone(info),
                        );
                    }
                }
                result_message(&self.id, result)
            }
            Err(error) => error_message(Some(&self.id), &error),
        }
    }
}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // Keys in the order a tree (sorted keys) writes them.
        let mut map = s.serialize_map(Some(3))?;
        match &self.outcome {
            Ok(result) => {
                map.serialize_entry("id", &self.id)?;
                map.serialize_entry("jsonrpc", "2.0")?;
                match (&self.server_info, result) {
                    (_, Payload::Text(text)) => map.serialize_entry("result", text)?,
                    (info, Payload::Tool(result)) => map.serialize_entry(
                        "result",
                        &SortedToolResult {
                            result,
                            info: info.as_deref(),
                        },
                    )?,
                    (Some(info), Payload::Tree(Value::Object(obj))) => {
                        map.serialize_entry("result", &Shaped { obj, info })?
                    }
                    (_, Payload::Tree(result)) => map.serialize_entry("result", result)?,
                }
            }
            Err(error) => {
                map.serialize_entry("error", &ErrorObject(error))?;
                map.serialize_entry("id", &self.id)?;
                map.serialize_entry("jsonrpc", "2.0")?;
            }
        }
        map.end()
    }
}

/// An error object with its keys sorted, as a tree writes it.
pub(crate) struct ErrorObject<'a>(pub(crate) &'a RpcError);

impl Serialize for ErrorObject<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("code", &self.0.code)?;
        if let Some(data) = &self.0.data {
            map.serialize_entry("data", data)?;
        }
        map.serialize_entry("message", &self.0.message)?;
        map.end()
    }
}

/// A 2026-07-28 result object as [`Reply::into_value`] shapes it, written without copying it:
/// the object's entries with `_meta` and `resultType` merged in, in sorted key order.
struct Shaped<'a> {
    obj: &'a Map<String, Value>,
    info: &'a Value,
}

impl Serialize for Shaped<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        // The two keys shaping adds, in sorted order ("_" sorts before lowercase letters).
        let mut added = ["_meta", "resultType"].into_iter().peekable();
        let write_added =
            |map: &mut S::SerializeMap, key: &str, own: Option<&Value>| match (key, own) {
                ("_meta", Some(Value::Object(meta))) => map.serialize_entry(
                    key,
                    &MetaWith {
                        meta,
                        info: self.info,
                    },
                ),
                ("_meta", Some(other)) => map.serialize_entry(key, other),
                ("_meta", None) => map.serialize_entry(
                    key,
                    &MetaWith {
                        meta: &Map::new(),
                        info: self.info,
                    },
                ),
                (_, Some(own)) => map.serialize_entry(key, own),
                (_, None) => map.serialize_entry(key, "complete"),
            };
        for (key, value) in self.obj {
            while let Some(next) = added.next_if(|a| *a < key.as_str()) {
                write_added(&mut map, next, None)?;
            }
            if added.next_if(|a| *a == key.as_str()).is_some() {
                write_added(&mut map, key, Some(value))?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        for next in added {
            write_added(&mut map, next, None)?;
        }
        map.end()
    }
}

/// A `CallToolResult` as its tree writes it (keys sorted; the derive writes them in field order),
/// shaped for 2026-07-28 (`_meta` with the `serverInfo`, `resultType`) when `info` is given.
/// Every field is named in the patterns below, so a field added to these types fails to compile
/// here until it is written.
struct SortedToolResult<'a> {
    result: &'a crate::protocol::CallToolResult,
    info: Option<&'a Value>,
}

impl Serialize for SortedToolResult<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let crate::protocol::CallToolResult {
            content,
            structured_content,
            is_error,
            meta,
        } = self.result;
        let mut map = s.serialize_map(None)?;
        match (self.info, meta) {
            (Some(info), meta) => {
                let empty = Map::new();
                let meta = meta.as_ref().unwrap_or(&empty);
                map.serialize_entry("_meta", &MetaWith { meta, info })?;
            }
            (None, Some(meta)) => map.serialize_entry("_meta", meta)?,
            (None, None) => {}
        }
        map.serialize_entry("content", &SortedContents(content))?;
        if *is_error {
            map.serialize_entry("isError", &true)?;
        }
        if self.info.is_some() {
            map.serialize_entry("resultType", "complete")?;
        }
        if let Some(structured) = structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.end()
    }
}

/// Content blocks, each with its keys sorted.
struct SortedContents<'a>(&'a [crate::protocol::Content]);

impl Serialize for SortedContents<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use crate::protocol::{Content, ResourceContents};
        use serde::ser::{SerializeMap, SerializeSeq};
        struct Block<'a>(&'a Content);
        impl Serialize for Block<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                match self.0 {
                    Content::Text { text } => {
                        map.serialize_entry("text", text)?;
                        map.serialize_entry("type", "text")?;
                    }
                    Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                        let kind = match self.0 {
                            Content::Image { .. } => "image",
                            _ => "audio",
                        };
                        map.serialize_entry("data", data)?;
                        map.serialize_entry("mimeType", mime_type)?;
                        map.serialize_entry("type", kind)?;
                    }
                    Content::ResourceLink { uri, name } => {
                        map.serialize_entry("name", name)?;
                        map.serialize_entry("type", "resource_link")?;
                        map.serialize_entry("uri", uri)?;
                    }
                    Content::Resource { resource } => {
                        map.serialize_entry("resource", &Resource(resource))?;
                        map.serialize_entry("type", "resource")?;
                    }
                }
                map.end()
            }
        }
        struct Resource<'a>(&'a ResourceContents);
        impl Serialize for Resource<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                let (uri, mime_type, key, body) = match self.0 {
                    ResourceContents::Text {
                        uri,
                        mime_type,
                        text,
                    } => (uri, mime_type, "text", text),
                    ResourceContents::Blob {
                        uri,
                        mime_type,
                        blob,
                    } => (uri, mime_type, "blob", blob),
                };
                if key == "blob" {
                    map.serialize_entry(key, body)?;
                }
                if let Some(mime_type) = mime_type {
                    map.serialize_entry("mimeType", mime_type)?;
                }
                if key == "text" {
                    map.serialize_entry(key, body)?;
                }
                map.serialize_entry("uri", uri)?;
                map.end()
            }
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for block in self.0 {
            seq.serialize_element(&Block(block))?;
        }
        seq.end()
    }
}

/// A result's `_meta` object with the server's `serverInfo` set in it, in sorted key order.
struct MetaWith<'a> {
    meta: &'a Map<String, Value>,
    info: &'a Value,
}

impl Serialize for MetaWith<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let key = crate::protocol::meta::SERVER_INFO;
        let mut map = s.serialize_map(None)?;
        let mut pending = true;
        for (k, v) in self.meta {
            if pending && key <= k.as_str() {
                map.serialize_entry(key, self.info)?;
                pending = false;
            }
            if k != key {
                map.serialize_entry(k, v)?;
            }
        }
        if pending {
            map.serialize_entry(key, self.info)?;
        }
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": info}`: the `_meta` a 2026-07-28 result without one
/// of its own gets.
pub(crate) struct ServerInfoMeta<'a>(pub(crate) &'a Value);

impl Serialize for ServerInfoMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        MetaWith {
            meta: &Map::new(),
            info: self.0,
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::Wire;

    /// A reply written from its parts is byte-for-byte the reply written as a tree.
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
                    assert_eq!(direct, tree, "{result:?}");
                }
            }
            for reply in replies {
                let direct = serde_json::to_string(&reply).unwrap();
                assert_eq!(direct, Wire(&reply.into_value()).to_json());
            }
        }
    }

    /// `CallToolResult`s with every kind of content and every optional field.
    fn tool_results() -> Vec<crate::protocol::CallToolResult> {
        use crate::protocol::{CallToolResult, Content, ResourceContents};
        let every_block = vec![
            Content::text("a \"b\" \u{1}"),
            Content::image(b"png", "image/png"),
            Content::audio(b"wav", "audio/wav"),
            Content::ResourceLink {
                uri: "file:///x".into(),
                name: "x".into(),
            },
            Content::resource(ResourceContents::text("file:///t", "text/plain", "t")),
            Content::resource(ResourceContents::blob("file:///b", "app/x", b"b")),
            Content::resource(ResourceContents::Text {
                uri: "u".into(),
                mime_type: None,
                text: "t".into(),
            }),
            Content::resource(ResourceContents::Blob {
                uri: "u".into(),
                mime_type: None,
                blob: "AA==".into(),
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
