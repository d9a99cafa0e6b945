//! Request ids, including ids beyond 64 bits kept as their digits, and [`Wire`], which writes
//! such an id back byte for byte.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

/// A request id: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
    /// An integer outside the signed 64-bit range (`18446744073709551623`), kept as the exact
    /// digits the client sent: JSON sets no limit on a number's size, and a response must carry
    /// the id as it came. Written back byte-for-byte; a [`serde_json::Value`] cannot hold it, so a
    /// message built as a `Value` carries a placeholder that the writer replaces.
    BigNumber(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::BigNumber(digits) => f.write_str(digits),
        }
    }
}

impl RequestId {
    /// Reads an id out of a message's params (`notifications/cancelled`'s `requestId`): a string,
    /// an integer, or the placeholder the message reader leaves for an integer beyond 64 bits.
    pub fn from_param(value: &Value) -> Option<RequestId> {
        if let Value::Object(m) = value
            && m.len() == 1
            && let Some(Value::String(digits)) = m.get(RAW_ID_KEY)
            && is_integer_literal(digits)
        {
            return Some(RequestId::BigNumber(digits.clone()));
        }
        serde_json::from_value(value.clone()).ok()
    }

    /// The id as it goes into a message built as a [`Value`]: a number, a string, or (for a
    /// [`BigNumber`](RequestId::BigNumber)) the placeholder object that the writer writes as the
    /// original digits. No client id is ever an object, so the placeholder cannot be mistaken for
    /// one.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
            RequestId::BigNumber(digits) => {
                let mut m = Map::new();
                m.insert(RAW_ID_KEY.into(), Value::from(digits.as_str()));
                Value::Object(m)
            }
        }
    }
}

/// The key of the placeholder a [`RequestId::BigNumber`] is in a [`Value`].
pub(super) const RAW_ID_KEY: &str = "$mcp-tasks::raw-id";

/// Whether `text` is a JSON integer literal (`-?[0-9]+`).
pub(super) fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(text) => s.serialize_str(text),
            // Exact into a writer; into a `Value`, as close as a double gets (use `to_value`).
            RequestId::BigNumber(digits) => RawValue::from_string(digits.clone())
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RequestId, E> {
                Ok(match i64::try_from(v) {
                    Ok(n) => RequestId::Number(n),
                    Err(_) => RequestId::BigNumber(v.to_string()),
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::String(v))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A message as it goes on the wire: serialises the [`Value`] as is, except that a
/// [`RequestId::BigNumber`]'s placeholder in the top-level `id` is written as the original
/// digits. Every transport writes messages through this.
#[derive(Debug, Clone, Copy)]
pub struct Wire<'a>(pub &'a Value);

impl Wire<'_> {
    /// The message as JSON text.
    #[cfg(any(feature = "http", feature = "fuzzing", test))]
    pub fn to_json(self) -> String {
        serde_json::to_string(&self).unwrap_or_default()
    }
}

impl Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let raw = match self.0 {
            Value::Object(obj) => match obj.get("id") {
                Some(Value::Object(id)) => id.get(RAW_ID_KEY).and_then(Value::as_str),
                _ => None,
            },
            _ => None,
        };
        let (Some(digits), Value::Object(obj)) = (raw, self.0) else {
            return self.0.serialize(s);
        };
        let id = RequestId::BigNumber(digits.to_owned());
        let mut map = s.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            if k == "id" {
                map.serialize_entry(k, &id)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}
