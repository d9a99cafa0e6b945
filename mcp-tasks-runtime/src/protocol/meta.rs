//! Reserved `_meta` keys.

/// Request: the protocol version (2026-07-28).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Request: the client capabilities for this request (2026-07-28).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Request: the least severe log level the client wants `notifications/message` for, on this
/// request only (2026-07-28; absent: no log messages).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Request: client name and version (2026-07-28).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Result: server name and version (2026-07-28).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Legacy tasks: the task a message belongs to (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Progress token.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// Notification: the `subscriptions/listen` request it is delivered for (its JSON-RPC id;
/// 2026-07-28).
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The keys of a request's `_meta` the runtime reads, each as the JSON text the client sent, read
/// from `_meta`'s text without building a tree of it ([`Request::meta`]). A key given twice: the
/// last one counts, as in a [`serde_json::Map`]; other keys are skipped.
///
/// [`Request::meta`]: super::jsonrpc::Request::meta
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RequestMeta<'a> {
    /// [`PROTOCOL_VERSION`].
    pub protocol_version: Option<&'a RawValue>,
    /// [`CLIENT_CAPABILITIES`].
    pub client_capabilities: Option<&'a RawValue>,
    /// [`CLIENT_INFO`].
    pub client_info: Option<&'a RawValue>,
    /// [`LOG_LEVEL`].
    pub log_level: Option<&'a RawValue>,
    /// [`PROGRESS_TOKEN`].
    pub progress_token: Option<&'a RawValue>,
    /// [`RELATED_TASK`].
    pub related_task: Option<&'a RawValue>,
}

impl<'a> RequestMeta<'a> {
    /// Reads `_meta`'s text. `None` when it is not a JSON object.
    pub fn read(meta: &'a RawValue) -> Option<RequestMeta<'a>> {
        serde_json::from_str(meta.get()).ok()
    }

    /// Whether it names a protocol version or client capabilities: what makes a request a
    /// 2026-07-28 one.
    pub fn is_modern(&self) -> bool {
        self.protocol_version.is_some() || self.client_capabilities.is_some()
    }
}

/// The string a JSON text holds, if it is one (borrowed unless it has escapes).
pub fn as_str(value: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(value.get()) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(value.get())
            .ok()
            .map(Cow::Owned),
    }
}

/// Whether a JSON text is an object.
pub fn is_object(value: &RawValue) -> bool {
    value.get().trim_start().starts_with('{')
}

impl<'de> Deserialize<'de> for RequestMeta<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const KEYS: [&str; 6] = [
            PROTOCOL_VERSION,
            CLIENT_CAPABILITIES,
            CLIENT_INFO,
            LOG_LEVEL,
            PROGRESS_TOKEN,
            RELATED_TASK,
        ];
        /// A key, as its index in `KEYS` (`None`: one of no interest).
        struct Key;
        impl<'de> DeserializeSeed<'de> for Key {
            type Value = Option<usize>;
            fn deserialize<D: serde::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.deserialize_str(self)
            }
        }
        impl Visitor<'_> for Key {
            type Value = Option<usize>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Option<usize>, E> {
                Ok(KEYS.iter().position(|k| *k == key))
            }
        }
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = RequestMeta<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key_seed(Key)? {
                    let slot = match key {
                        Some(0) => &mut meta.protocol_version,
                        Some(1) => &mut meta.client_capabilities,
                        Some(2) => &mut meta.client_info,
                        Some(3) => &mut meta.log_level,
                        Some(4) => &mut meta.progress_token,
                        Some(_) => &mut meta.related_task,
                        None => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value()?);
                }
                Ok(meta)
            }
        }
        d.deserialize_map(Visit)
    }
}
