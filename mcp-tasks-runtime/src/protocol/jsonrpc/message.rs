//! Incoming messages: [`Message`] and its parts, read through a JSON tree ([`Message::parse_tree`],
//! every message and every error); the common case takes the fast path in `fast.rs` first.

use super::id::is_integer_literal;
use super::{Params, RequestId, RpcError, json_kind};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// One incoming message, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request (has an id and a method).
    Request(Request),
    /// A notification (a method, no id).
    Notification(Notification),
    /// A response to a request this side sent.
    Response(Response),
}

/// A request.
///
/// Its params' `_meta` is kept apart, as the JSON text the client sent
/// ([`meta`](Self::meta)), and not in [`params`](Self::params): a server reads the few keys it
/// needs straight from the text (`RequestMeta`) instead of building a
/// tree of it for every request. [`params_with_meta`](Self::params_with_meta) puts it back.
#[derive(Debug, Clone)]
pub struct Request {
    /// Its id.
    pub id: RequestId,
    /// Its method.
    pub method: String,
    /// Its params (an object, when present), without `_meta`, as text with an index of its
    /// fields.
    pub params: Option<Params>,
    /// Its params' `_meta`, as sent (any JSON value: the server, not the reader, refuses one that
    /// is not an object).
    pub meta: Option<Box<RawValue>>,
}

impl Request {
    /// The params' `_meta` as a JSON tree.
    pub fn meta_value(&self) -> Option<Value> {
        self.meta.as_deref().map(raw_to_value)
    }

    /// The params as sent: [`params`](Self::params) with `_meta` back in.
    pub fn params_with_meta(self) -> Option<Value> {
        let Some(meta) = self.meta.as_deref().map(raw_to_value) else {
            return self.params.map(|p| Value::Object(p.to_map()));
        };
        let mut params = self.params.map(|p| p.to_map()).unwrap_or_default();
        params.insert("_meta".into(), meta);
        Some(Value::Object(params))
    }
}

/// Equal when the id, method, params and `_meta` are (`_meta` compared as JSON, not as text).
impl PartialEq for Request {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.method == other.method
            && self.params == other.params
            && self.meta_value() == other.meta_value()
    }
}

/// A JSON text already checked by the parser that produced it, as a tree.
pub(super) fn raw_to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Its method.
    pub method: String,
    /// Its params.
    pub params: Option<Value>,
}

/// A response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Value, RpcError>,
}

/// A message that could not be taken as JSON-RPC: what to answer (an id when one could be read).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The id, if the message had a readable one.
    pub id: Option<RequestId>,
    /// The error to answer with.
    pub error: RpcError,
}

impl Message {
    /// Parses one JSON text into a message, or says precisely why it is not one.
    pub fn parse(text: &str) -> Result<Message, Rejected> {
        match Self::parse_common(text) {
            Some(message) => Ok(message),
            None => Self::parse_tree(text),
        }
    }

    /// [`Message::parse`] through a JSON tree of the whole message: every message, every error.
    pub(crate) fn parse_tree(text: &str) -> Result<Message, Rejected> {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            // An integer id too long for even a double (`1e309` and up: serde_json says "number
            // out of range"): the fields one by one, the id kept as its digits. Only then: a
            // message too deep for a tree must not pass by being read a level at a time.
            Err(e) => {
                let out_of_range = e.to_string().starts_with("number out of range");
                return match out_of_range.then(|| huge_ids(text)).flatten() {
                    Some((value, id)) => Self::classify(value, id),
                    None => Err(Rejected {
                        id: None,
                        error: RpcError::new(RpcError::PARSE_ERROR, format!("Parse error: {e}")),
                    }),
                };
            }
        };
        // An integer id beyond 64 bits parsed as a double: read its digits again from the text
        // (rare, so the common path pays nothing).
        let big = matches!(value.get("id"), Some(Value::Number(n)) if n.is_f64());
        let raw_id = big
            .then(|| {
                #[derive(wire::Deserialize)]
                struct IdOnly<'a> {
                    #[serde(borrow)]
                    id: &'a RawValue,
                }
                let raw = serde_json::from_str::<IdOnly<'_>>(text).ok()?;
                let digits = raw.id.get().trim();
                is_integer_literal(digits).then(|| RequestId::BigNumber(digits.to_owned()))
            })
            .flatten();
        let mut message = Self::classify(value, raw_id)?;
        // `notifications/cancelled` names a request by its id: one beyond 64 bits keeps its digits
        // the same way (as the placeholder of `RequestId::to_value`, which `RequestId::from_param`
        // reads).
        if let Message::Notification(n) = &mut message
            && n.method == "notifications/cancelled"
            && let Some(params) = n.params.as_mut().and_then(Value::as_object_mut)
            && matches!(params.get("requestId"), Some(Value::Number(x)) if x.is_f64())
        {
            #[derive(wire::Deserialize)]
            struct Params<'a> {
                #[serde(borrow, rename = "requestId")]
                request_id: &'a RawValue,
            }
            #[derive(wire::Deserialize)]
            struct Cancelled<'a> {
                #[serde(borrow)]
                params: Params<'a>,
            }
            if let Ok(raw) = serde_json::from_str::<Cancelled<'_>>(text) {
                let digits = raw.params.request_id.get().trim();
                if is_integer_literal(digits) {
                    let id = RequestId::BigNumber(digits.to_owned());
                    params.insert("requestId".into(), id.to_value());
                }
            }
        }
        Ok(message)
    }

    /// Classifies a parsed JSON value.
    pub fn from_value(value: Value) -> Result<Message, Rejected> {
        Self::classify(value, None)
    }

    /// `big_id`: the id, when it is an integer too large for `value` to hold exactly.
    fn classify(value: Value, big_id: Option<RequestId>) -> Result<Message, Rejected> {
        let mut obj = match value {
            Value::Object(obj) => obj,
            Value::Array(_) => {
                return Err(Rejected {
                    id: None,
                    error: RpcError::invalid_request(
                        "Invalid Request: batches are not supported; send one message at a time",
                    ),
                });
            }
            other => {
                return Err(Rejected {
                    id: None,
                    error: RpcError::invalid_request(format!(
                        "Invalid Request: a message must be a JSON object, found {}",
                        json_kind(&other)
                    )),
                });
            }
        };
        let id = match obj.remove("id") {
            None => None,
            Some(_) if big_id.is_some() => big_id,
            Some(v) => match serde_json::from_value::<RequestId>(v.clone()) {
                Ok(id) => Some(id),
                Err(_) if v.is_null() => {
                    return Err(Rejected {
                        id: None,
                        error: RpcError::invalid_request("Invalid Request: `id` must not be null"),
                    });
                }
                Err(_) => {
                    return Err(Rejected {
                        id: None,
                        error: RpcError::invalid_request(
                            "Invalid Request: `id` must be a string or an integer",
                        ),
                    });
                }
            },
        };
        let reject = |id: &Option<RequestId>, msg: &str| Rejected {
            id: id.clone(),
            error: RpcError::invalid_request(msg),
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(reject(&id, "Invalid Request: `jsonrpc` must be \"2.0\""));
        }
        match obj.remove("method") {
            Some(Value::String(method)) => {
                let params = obj.remove("params");
                if let Some(p) = &params
                    && !p.is_object()
                {
                    return Err(reject(&id, "Invalid Request: `params` must be an object"));
                }
                Ok(match id {
                    Some(id) => {
                        let (params, meta) = split_meta(params);
                        Message::Request(Request {
                            id,
                            method,
                            params,
                            meta,
                        })
                    }
                    None => Message::Notification(Notification { method, params }),
                })
            }
            Some(_) => Err(reject(&id, "Invalid Request: `method` must be a string")),
            None => {
                let Some(id) = id else {
                    return Err(reject(
                        &id,
                        "Invalid Request: a message needs a `method` (or an `id` and a `result`/`error`)",
                    ));
                };
                let outcome = if let Some(result) = obj.remove("result") {
                    Ok(result)
                } else if let Some(error) = obj.remove("error") {
                    Err(serde_json::from_value(error).map_err(|_| {
                        reject(
                            &Some(id.clone()),
                            "Invalid Request: malformed `error` object",
                        )
                    })?)
                } else {
                    return Err(reject(
                        &Some(id),
                        "Invalid Request: a response needs `result` or `error`",
                    ));
                };
                Ok(Message::Response(Response { id, outcome }))
            }
        }
    }
}

/// A request's params tree split as [`ReadParams`] splits the text (`params`: an object).
fn split_meta(params: Option<Value>) -> (Option<Params>, Option<Box<RawValue>>) {
    match params {
        Some(Value::Object(mut map)) => {
            let meta = map
                .remove("_meta")
                .and_then(|m| serde_json::value::to_raw_value(&m).ok());
            (Some(Params::from_map(&map)), meta)
        }
        _ => (None, None),
    }
}

/// A message that does not parse as a tree because a number in it is out of a double's range:
/// read again field by field (each as raw text, which keeps any number as written), taking an
/// integer `id` as its digits (`RequestId::BigNumber`), and a `notifications/cancelled`'s integer
/// `requestId` too (as the placeholder `RequestId::from_param` reads). `None` when some other
/// field is still out of range, or the text is not a JSON object at all: a parse error.
fn huge_ids(text: &str) -> Option<(Value, Option<RequestId>)> {
    let fields: Vec<(String, Box<RawValue>)> = serde_json::from_str::<RawFields>(text).ok()?.0;
    let cancelled = fields
        .iter()
        .any(|(k, v)| k == "method" && v.get().trim() == r#""notifications/cancelled""#);
    let mut id = None;
    let mut obj = serde_json::Map::new();
    for (key, raw) in fields {
        let digits = raw.get().trim();
        if key == "id" && is_integer_literal(digits) {
            id = Some(RequestId::BigNumber(digits.to_owned()));
            obj.insert(key, Value::Null);
            continue;
        }
        if key == "id" {
            id = None;
        }
        let value = match serde_json::from_str::<Value>(raw.get()) {
            Ok(value) => value,
            Err(_) if key == "params" && cancelled => {
                let mut params = serde_json::Map::new();
                for (k, v) in serde_json::from_str::<RawFields>(raw.get()).ok()?.0 {
                    let digits = v.get().trim();
                    let v = if k == "requestId" && is_integer_literal(digits) {
                        RequestId::BigNumber(digits.to_owned()).to_value()
                    } else {
                        serde_json::from_str(v.get()).ok()?
                    };
                    params.insert(k, v);
                }
                Value::Object(params)
            }
            Err(_) => return None,
        };
        obj.insert(key, value);
    }
    Some((Value::Object(obj), id))
}

/// A JSON object's fields in order, each value as its raw text (a key sent twice is there twice;
/// inserted into a map in order, the last one counts, as in a tree).
struct RawFields(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for RawFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RawFields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawFields, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push(field);
                }
                Ok(RawFields(fields))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_beyond_a_double_keeps_its_digits() {
        let digits = "9".repeat(400);
        let text = format!(r#"{{"jsonrpc":"2.0","id":{digits},"method":"ping","params":{{}}}}"#);
        match Message::parse(&text) {
            Ok(Message::Request(r)) => {
                assert_eq!(r.id, RequestId::BigNumber(digits));
                assert_eq!(r.method, "ping");
            }
            other => panic!("{other:?}"),
        }
        // A cancellation names such a request by the same digits.
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":-{digits}}}}}"#,
            digits = "1".repeat(400)
        );
        match Message::parse(&cancel) {
            Ok(Message::Notification(n)) => {
                let params = n.params.expect("params");
                assert_eq!(
                    RequestId::from_param(&params["requestId"]),
                    Some(RequestId::BigNumber(format!("-{}", "1".repeat(400))))
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_number_out_of_range_elsewhere_is_still_a_parse_error() {
        let huge = "9".repeat(400);
        for text in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"n":{huge}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{huge}.5,"method":"ping"}}"#),
            format!(r#"[{huge}]"#),
            format!(r#"{{"jsonrpc":"2.0","id":{huge},"method":"ping""#),
        ] {
            let err = Message::parse(&text).expect_err(&text);
            assert_eq!(err.error.code, RpcError::PARSE_ERROR, "{text}");
            assert_eq!(err.id, None);
        }
    }
}
