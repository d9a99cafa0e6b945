use super::*;
use serde_json::json;

/// Every byte in every place of an eight-byte word and of a 32-byte block, and around them:
/// escaped as `serde_json` escapes it.
#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    let mut texts: Vec<String> = Vec::new();
    for byte in 0u8..0x80 {
        let c = char::from(byte);
        for len in [1, 7, 8, 9, 16, 17, 31, 32, 33, 40, 64, 65] {
            for place in 0..len {
                let mut s: String = std::iter::repeat_n('a', len).collect();
                s.replace_range(place..=place, &c.to_string());
                texts.push(s);
            }
        }
    }
    texts.extend(
        [
            "",
            "é ✓ 😀 \u{7f} \u{80}",
            "ééééééééé\"ééé\\",
            "line\nline\r\n\ttab",
            "\u{0}\u{1f}\u{1b}[0m",
        ]
        .map(String::from),
    );
    texts.push("x".repeat(1000) + "\"" + &"é".repeat(300));
    for text in &texts {
        let mut out = String::new();
        push_str(&mut out, text);
        assert_eq!(out, serde_json::to_string(text).unwrap(), "{text:?}");
    }
}

#[test]
fn values_are_written_as_serde_json_writes_them() {
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-7),
        json!(u64::MAX),
        json!(1.5),
        json!(1e300),
        json!(-0.0),
        json!("a\"b"),
        json!([]),
        json!({}),
        json!([1, "x", null, [[]], {"a": {}}]),
        json!({"content": [{"type": "text", "text": "Hello\n"}], "isError": false, "z": 1, "A": [2.25]}),
        json!({"k\"ey": {"\u{1}": "v"}, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}}),
    ];
    for value in &values {
        let expected = serde_json::to_string(value).unwrap();
        assert_eq!(value_to_raw(value).get(), expected);
    }
    for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX - 1, u64::MAX] {
        let mut out = String::new();
        push_u64(&mut out, n);
        assert_eq!(out, n.to_string());
    }
}

/// A text becomes a `RawValue` as it is (`serde_json` takes `Verbatim` for one of its own).
#[test]
fn a_text_becomes_a_raw_value_as_it_is() {
    for text in ["{}", r#"{"a":[1,"x\"y"],"b":null}"#, "7", r#""s""#] {
        let raw = serde_json::value::to_raw_value(&Verbatim(text)).unwrap();
        assert_eq!(raw.get(), text);
        assert_eq!(into_raw(text.to_owned()).get(), text);
    }
}
