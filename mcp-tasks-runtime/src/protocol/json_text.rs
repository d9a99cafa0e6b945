//! JSON text written by hand, byte for byte what `serde_json` writes (compact), for the texts
//! written once or more for every task: its wire shapes (`task::view`) and its stored result
//! (`store::frozen`).
//!
//! `serde_json`'s serializer escapes a string a byte at a time and makes a call for each piece it
//! writes (a key's quotes, its text, the colon): a task's `CreateTaskResult` took about 6,800
//! instructions to write, a result of 1 KiB about 12,000 (`bench/profile.sh`). Here constant
//! pieces are written whole and strings are scanned eight bytes at a time.

use serde_json::Value;
use serde_json::value::RawValue;

/// Appends `s` as a JSON string: quoted, with `"`, `\` and the control characters escaped as
/// `serde_json` escapes them (`\b`, `\t`, `\n`, `\f`, `\r`, the others as `\u00xx`), nothing else.
pub(crate) fn push_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    // `s[start..at]` is waiting to be copied; both are at ASCII bytes (or the ends), so on
    // character boundaries.
    let (mut start, mut at) = (0, 0);
    while at < bytes.len() {
        // Four words with one test while nothing needs escaping, then one word, then a byte.
        if let Some(block) = bytes.get(at..at + 32)
            && block_escapes(block) & HIGH == 0
        {
            at += 32;
            continue;
        }
        if let Some(word) = bytes.get(at..at + 8)
            && escapes(word_at(word)) & HIGH == 0
        {
            at += 8;
            continue;
        }
        let byte = bytes[at];
        if byte < 0x20 || byte == b'"' || byte == b'\\' {
            out.push_str(&s[start..at]);
            push_escape(out, byte);
            start = at + 1;
        }
        at += 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The first eight bytes of `bytes` (given at least eight) as a word.
fn word_at(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.first_chunk().copied().unwrap_or_default())
}

/// [`escapes`] of the four words of a 32-byte `block`, together.
fn block_escapes(block: &[u8]) -> u64 {
    block
        .chunks_exact(8)
        .fold(0, |flags, word| flags | escapes(word_at(word)))
}

/// A word whose [`HIGH`] bits are all clear exactly when none of the eight bytes of `word` is a
/// control character, `"` or `\` (exact: the tests below try every byte in every place). Each
/// test is the classic "has a byte less than n"; a borrow may set a high bit above a byte that
/// matched, never where no byte did.
fn escapes(word: u64) -> u64 {
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x;
    below(word, 0x20)
        | below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
}

fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x09 => out.push_str("\\t"),
        0x0a => out.push_str("\\n"),
        0x0c => out.push_str("\\f"),
        0x0d => out.push_str("\\r"),
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[at..] {
        out.push(char::from(digit));
    }
}

/// Appends `value` as `serde_json` writes it (compact, an object's entries in its map's order).
pub(crate) fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // Numbers are rare in results, and `serde_json` writes floats its own way.
        Value::Number(n) => out.push_str(&serde_json::to_string(n).unwrap_or_default()),
        Value::String(s) => push_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str(out, key);
                out.push(':');
                push_value(out, item);
            }
            out.push('}');
        }
    }
}

/// About how long `value`'s text is (at least, without escapes and numbers' digits): the buffer
/// it is written into is made that large at once, not grown (and copied) on the way.
fn size_hint(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 5,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(|item| size_hint(item) + 1).sum::<usize>() + 2,
        Value::Object(map) => {
            let entries = map
                .iter()
                .map(|(key, item)| key.len() + 4 + size_hint(item));
            entries.sum::<usize>() + 2
        }
    }
}

/// A text written by the functions above as a [`RawValue`], without parsing it again.
///
/// `RawValue::from_string` parses the text to check it (about as costly as writing it: a task
/// with a result of 1 KiB took 8,500 instructions more a reply), and its unchecked twin is
/// `unsafe`, which this crate forbids. So the text goes through `to_raw_value` as [`Verbatim`],
/// which `serde_json` copies as it is: one copy, no parse. Should `serde_json` ever write it
/// otherwise, the length tells, and the text is parsed after all.
pub(crate) fn into_raw(text: String) -> Box<RawValue> {
    match serde_json::value::to_raw_value(&Verbatim(&text)) {
        Ok(raw) if raw.get().len() == text.len() => raw,
        _ => RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned()),
    }
}

/// JSON text that serializes as `serde_json` serializes a [`RawValue`] (the struct and field
/// name its own `Serialize` uses): written into the output as it is.
struct Verbatim<'a>(&'a str);

impl serde::Serialize for Verbatim<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        const TOKEN: &str = "$serde_json::private::RawValue";
        let mut raw = s.serialize_struct(TOKEN, 1)?;
        raw.serialize_field(TOKEN, self.0)?;
        raw.end()
    }
}

/// `value` as JSON text: what `serde_json::value::to_raw_value` gives.
pub(crate) fn value_to_raw(value: &Value) -> Box<RawValue> {
    // At least the 128 bytes it always started with: a small result's text leaves the heap as
    // it did (bytes per stored task are measured too).
    let mut out = String::with_capacity(size_hint(value).max(128));
    push_value(&mut out, value);
    into_raw(out)
}

#[cfg(test)]
mod tests;
