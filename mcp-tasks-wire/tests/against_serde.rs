//! Each shape the protocol types use, derived twice from one definition: by this crate
//! (`ours`) and by serde's own derive (`theirs`). Every input must read the same (the same
//! value written back, or an error with the same message) and write the same JSON.

use serde::{Serialize, de::DeserializeOwned};

/// The items, once in `mod ours` (derived by `mcp_tasks_wire`) and once in `mod theirs`.
macro_rules! twins {
    ($($item:item)*) => {
        #[allow(dead_code)]
        mod ours {
            use super::*;
            $(
                #[derive(Debug, Clone, PartialEq, mcp_tasks_wire::Serialize, mcp_tasks_wire::Deserialize)]
                $item
            )*
        }
        #[allow(dead_code)]
        mod theirs {
            use super::*;
            $(
                #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
                $item
            )*
        }
    };
}

use serde_json::{Map, Value};
use std::time::Duration;

fn three() -> u32 {
    3
}

/// A `with` module: a duration as whole milliseconds.
mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

twins! {
    #[serde(rename_all = "camelCase")]
    pub struct Tool {
        pub name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub mime_type: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub tags: Vec<String>,
        #[serde(default = "three")]
        pub tries: u32,
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<Map<String, Value>>,
        #[serde(with = "super::millis")]
        pub poll_interval: Duration,
        #[serde(skip)]
        pub local: Option<String>,
        #[serde(skip_serializing_if = "std::ops::Not::not", default)]
        pub r#async: bool,
        #[serde(flatten)]
        pub other: Map<String, Value>,
    }

    pub struct Cache {
        #[serde(rename = "ttlMs")]
        pub ttl_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub scope: Option<String>,
    }

    pub struct Listed {
        pub items: Vec<u32>,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        pub cache: Option<Cache>,
    }

    pub struct Head(String, u64, #[serde(default)] Option<String>);

    pub struct Id(pub String);

    #[serde(transparent)]
    pub struct Caps(pub Map<String, Value>);

    pub struct Empty {}

    #[serde(rename_all = "snake_case")]
    pub enum Status {
        Working,
        InputRequired,
        Completed,
    }

    #[serde(rename_all = "lowercase")]
    pub enum Level {
        Debug,
        Warning,
    }

    #[serde(rename_all = "snake_case")]
    pub enum Outcome {
        Result(Value),
        Error(Cache),
    }

    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum Content {
        Text {
            text: String,
        },
        ResourceLink {
            uri: String,
            #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
            mime_type: Option<String>,
        },
        Nothing,
    }

    #[serde(untagged)]
    pub enum Contents {
        Text {
            uri: String,
            text: String,
        },
        Blob {
            uri: String,
            blob: String,
        },
        Number(u64),
    }
}

/// An error's message without serde_json's ` at line L column C`: an internally tagged or untagged
/// enum is read whole before its variant, so its errors come without a position.
fn message(error: serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// `input` read by both derives gives the same value (written back identically) or the same error.
fn same<O, T>(input: &str)
where
    O: DeserializeOwned + Serialize + std::fmt::Debug,
    T: DeserializeOwned + Serialize + std::fmt::Debug,
{
    let ours = serde_json::from_str::<O>(input);
    let theirs = serde_json::from_str::<T>(input);
    match (ours, theirs) {
        (Ok(o), Ok(t)) => assert_eq!(
            serde_json::to_string(&o).unwrap(),
            serde_json::to_string(&t).unwrap(),
            "written back differently, from {input}"
        ),
        (Err(o), Err(t)) => assert_eq!(message(o), message(t), "errors differ on {input}"),
        (o, t) => panic!("on {input}: ours {o:?}, serde's {t:?}"),
    }
}

#[test]
fn named_fields_read_and_write_as_serde_does() {
    for input in [
        r#"{"name":"a","pollInterval":5}"#,
        r#"{"name":"a","mimeType":"text/plain","tags":["x"],"tries":7,"pollInterval":1500}"#,
        r#"{"name":"a","pollInterval":5,"_meta":{"k":1},"async":true,"extra":[1,2],"local":"x"}"#,
        r#"{"name":"a","pollInterval":5,"mimeType":null}"#,
        r#"{"pollInterval":5}"#,
        r#"{"name":"a"}"#,
        r#"{"name":"a","name":"b","pollInterval":5}"#,
        r#"{"name":1,"pollInterval":5}"#,
        r#"{"name":"a","pollInterval":"soon"}"#,
        r#"[]"#,
        r#""text""#,
        r#"{"name":"a","pollInterval":5"#,
    ] {
        same::<ours::Tool, theirs::Tool>(input);
    }
}

#[test]
fn a_flattened_struct_reads_and_writes_as_serde_does() {
    for input in [
        r#"{"items":[1]}"#,
        r#"{"items":[1],"ttlMs":30}"#,
        r#"{"items":[1],"ttlMs":30,"scope":"user","other":true}"#,
        r#"{"items":[1],"ttlMs":"no"}"#,
        r#"{"ttlMs":30}"#,
    ] {
        same::<ours::Listed, theirs::Listed>(input);
    }
}

#[test]
fn tuple_newtype_transparent_and_empty_structs_as_serde() {
    for input in [
        r#"["a",1,"b"]"#,
        r#"["a",1]"#,
        r#"["a"]"#,
        r#"["a",1,"b",2]"#,
        r#"{}"#,
    ] {
        same::<ours::Head, theirs::Head>(input);
    }
    for input in [r#""x""#, "1", "null"] {
        same::<ours::Id, theirs::Id>(input);
    }
    for input in [r#"{"a":{"b":1}}"#, r#"{}"#, "[]"] {
        same::<ours::Caps, theirs::Caps>(input);
    }
    for input in [r#"{}"#, r#"{"a":1}"#] {
        same::<ours::Empty, theirs::Empty>(input);
    }
}

#[test]
fn unit_and_newtype_enums_as_serde() {
    for input in [
        r#""working""#,
        r#""input_required""#,
        r#""InputRequired""#,
        r#""done""#,
    ] {
        same::<ours::Status, theirs::Status>(input);
    }
    for input in [r#""debug""#, r#""warning""#, r#""Warning""#] {
        same::<ours::Level, theirs::Level>(input);
    }
    for input in [
        r#"{"result":{"a":1}}"#,
        r#"{"error":{"ttlMs":4}}"#,
        r#"{"error":{"ttlMs":"x"}}"#,
        r#"{"other":1}"#,
    ] {
        same::<ours::Outcome, theirs::Outcome>(input);
    }
}

#[test]
fn internally_tagged_and_untagged_enums_as_serde() {
    for input in [
        r#"{"type":"text","text":"hi"}"#,
        r#"{"text":"hi","type":"text"}"#,
        r#"{"type":"resource_link","uri":"u","mimeType":"a/b"}"#,
        r#"{"type":"resource_link","uri":"u"}"#,
        r#"{"type":"nothing"}"#,
        r#"{"type":"image","data":""}"#,
        r#"{"text":"hi"}"#,
        r#"{"type":"text"}"#,
    ] {
        same::<ours::Content, theirs::Content>(input);
    }
    for input in [
        r#"{"uri":"u","text":"t"}"#,
        r#"{"uri":"u","blob":"b"}"#,
        "7",
        r#"{"uri":"u"}"#,
    ] {
        same::<ours::Contents, theirs::Contents>(input);
    }
}

#[test]
fn borrowed_raw_values_are_read_in_place() {
    #[derive(mcp_tasks_wire::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        id: &'a serde_json::value::RawValue,
    }
    let text = r#"{"id": 123456789012345678901234567890, "x": 1}"#;
    let raw: Raw<'_> = serde_json::from_str(text).unwrap();
    assert_eq!(raw.id.get(), "123456789012345678901234567890");
}

#[test]
fn generic_and_borrowing_types_write_as_serde() {
    #[derive(mcp_tasks_wire::Serialize)]
    struct OursPage<'a, T> {
        #[serde(flatten)]
        items: std::collections::BTreeMap<&'static str, &'a [T]>,
        #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
        next: Option<&'a str>,
    }
    #[derive(serde::Serialize)]
    struct TheirPage<'a, T> {
        #[serde(flatten)]
        items: std::collections::BTreeMap<&'static str, &'a [T]>,
        #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
        next: Option<&'a str>,
    }
    let items = [1, 2];
    for next in [None, Some("c")] {
        let ours = OursPage {
            items: [("tools", &items[..])].into(),
            next,
        };
        let theirs = TheirPage {
            items: [("tools", &items[..])].into(),
            next,
        };
        assert_eq!(
            serde_json::to_string(&ours).unwrap(),
            serde_json::to_string(&theirs).unwrap()
        );
    }
}
