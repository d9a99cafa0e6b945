//! W3C Trace Context in a request's `_meta`: the client's span as `traceparent`, with the
//! `tracestate` that goes with it (SEP-414 reserves both keys, and `baggage`, un-prefixed in
//! `_meta`; the values are W3C Trace Context's). Both eras carry them in `params._meta`.
//!
//! A malformed context is never the client's error: it is ignored (a debug log says why) and the
//! request is served as if it had none, the way W3C Trace Context treats a bad `traceparent`
//! header. `baggage` is not read.

use std::fmt;

/// The longest `tracestate` kept, in bytes: W3C Trace Context asks that at least 512 be passed
/// on, and a longer one is dropped here rather than cut (a cut list could end mid-member).
const MAX_TRACESTATE: usize = 512;

/// The client's span a request names: the fields of its `traceparent`, and its `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceContext {
    /// The trace (16 bytes, not all zero).
    pub(crate) trace_id: [u8; 16],
    /// The client's span, the parent of the request's (8 bytes, not all zero).
    pub(crate) parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub(crate) flags: u8,
    /// The `tracestate`, as sent, when it is a string of at most 512 printable ASCII characters.
    pub(crate) state: Option<Box<str>>,
}

impl TraceContext {
    /// The context from a `traceparent` and a `tracestate`, the strings sent (`ReadMeta::trace_context`
    /// reads them where the reading of a `_meta` found them; a `tracestate` that is not a string
    /// comes as the empty string, which is malformed).
    pub(crate) fn from_strs(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let Some(mut context) = parse_traceparent(traceparent) else {
            let shown: String = traceparent.chars().take(64).collect();
            tracing::debug!(traceparent = %shown, "malformed `_meta.traceparent`; ignored");
            return None;
        };
        context.state = tracestate.and_then(|state| {
            if !is_tracestate(state) {
                tracing::debug!("malformed `_meta.tracestate`; ignored");
                return None;
            }
            Some(state.into())
        });
        Some(context)
    }

    /// The trace id, as the 32 lowercase hex digits of a `traceparent`.
    pub(crate) fn trace_id_hex(&self) -> impl fmt::Display + '_ {
        Hex(&self.trace_id)
    }

    /// The parent span id, as the 16 lowercase hex digits of a `traceparent`.
    pub(crate) fn parent_id_hex(&self) -> impl fmt::Display + '_ {
        Hex(&self.parent_id)
    }
}

/// A `traceparent` value: `version-traceid-parentid-flags` in lowercase hex. Version `00` is
/// exactly that (55 characters); a later version (not `ff`) is read the same way, with anything
/// after a `-` at the end ignored, as W3C Trace Context asks of a reader of version `00`.
fn parse_traceparent(text: &str) -> Option<TraceContext> {
    let b = text.as_bytes();
    if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return None;
    }
    let [version] = hex::<1>(&b[..2])?;
    let fits = match version {
        0 => b.len() == 55,
        0xff => false,
        _ => b.len() == 55 || b[55] == b'-',
    };
    if !fits {
        return None;
    }
    let trace_id = hex::<16>(&b[3..35])?;
    let parent_id = hex::<8>(&b[36..52])?;
    let [flags] = hex::<1>(&b[53..55])?;
    if trace_id == [0; 16] || parent_id == [0; 8] {
        return None;
    }
    Some(TraceContext {
        trace_id,
        parent_id,
        flags,
        state: None,
    })
}

/// `N` bytes from `2 * N` lowercase hex digits.
fn hex<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

/// Whether a `tracestate` may be kept: not empty, at most [`MAX_TRACESTATE`] bytes, printable
/// ASCII (what its list members are made of; OpenTelemetry checks the members themselves).
fn is_tracestate(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_TRACESTATE && s.bytes().all(|c| (0x20..0x7f).contains(&c))
}

/// Bytes as lowercase hex digits.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::meta::MetaCache;
    use serde_json::value::RawValue;
    use std::borrow::Cow;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn read(meta: &str) -> Option<TraceContext> {
        let text = RawValue::from_string(meta.to_owned()).unwrap();
        MetaCache::read(Cow::Owned(text)).trace_context()
    }

    #[test]
    fn a_valid_traceparent_is_read_with_its_tracestate() {
        let cx = read(&format!(
            r#"{{"progressToken":1,"traceparent":"{GOOD}","tracestate":"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"}}"#
        ))
        .expect("a context");
        assert_eq!(
            cx.trace_id_hex().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(cx.parent_id_hex().to_string(), "00f067aa0ba902b7");
        assert_eq!(cx.flags, 1);
        assert_eq!(
            cx.state.as_deref(),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        );
        // The key spelled with an escape is the same key.
        let escaped = read(&format!(r#"{{"\u0074raceparent":"{GOOD}"}}"#)).expect("a context");
        assert_eq!(escaped.trace_id, cx.trace_id);
        assert_eq!(escaped.state, None);
        // A later version: the same fields, and what follows a `-` is ignored.
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes-next";
        assert_eq!(
            read(&format!(r#"{{"traceparent":"{later}"}}"#)).map(|c| c.flags),
            Some(0)
        );
    }

    #[test]
    fn a_meta_without_a_traceparent_has_no_context() {
        assert_eq!(read(r#"{"progressToken":"traceparent"}"#), None);
        assert_eq!(read(r#"{"tracestate":"a=b"}"#), None);
        assert_eq!(read(r#"{}"#), None);
        assert_eq!(read(r#"[]"#), None);
    }

    #[test]
    fn a_malformed_traceparent_or_tracestate_is_ignored() {
        let bad = [
            // Not a string, empty, too short, too long for version 00.
            "1".to_owned(),
            r#""""#.to_owned(),
            format!("\"{}\"", &GOOD[..54]),
            format!("\"{GOOD}-00\""),
            // Upper-case hex, a bad separator, version ff, a later version glued on.
            format!("\"{}\"", GOOD.to_uppercase()),
            format!("\"{}\"", GOOD.replacen('-', "_", 1)),
            format!("\"ff{}\"", &GOOD[2..]),
            format!("\"cc{}x\"", &GOOD[2..]),
            // An all-zero trace id or parent id.
            r#""00-00000000000000000000000000000000-00f067aa0ba902b7-01""#.to_owned(),
            r#""00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01""#.to_owned(),
            // Not hex.
            r#""00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01""#.to_owned(),
            r#""00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x""#.to_owned(),
        ];
        for value in bad {
            assert_eq!(
                read(&format!(r#"{{"traceparent":{value}}}"#)),
                None,
                "{value}"
            );
        }
        // A bad tracestate loses only itself.
        for state in [
            "1",
            r#""""#,
            r#""a=\u00e9""#,
            &format!("\"{}\"", "a".repeat(513)),
        ] {
            let cx = read(&format!(
                r#"{{"traceparent":"{GOOD}","tracestate":{state}}}"#
            ));
            assert_eq!(cx.expect("the traceparent counts").state, None, "{state}");
        }
    }

    proptest::proptest! {
        /// Any text is read or ignored, never more: no panic, and what is read is exactly what
        /// the text says.
        #[test]
        fn any_text_is_read_or_ignored(text in "[-0-9a-fA-F]{0,60}|\\PC{0,80}") {
            if let Some(cx) = parse_traceparent(&text) {
                let again = format!("{}-{}-{}", cx.trace_id_hex(), cx.parent_id_hex(), hex_pair(cx.flags));
                proptest::prop_assert_eq!(&text[3..55], again);
            }
        }

        /// Every version-00 `traceparent` with ids not all zero is read as sent.
        #[test]
        fn a_well_formed_traceparent_is_read_as_sent(
            trace in proptest::prelude::any::<[u8; 16]>(),
            parent in proptest::prelude::any::<[u8; 8]>(),
            flags in proptest::prelude::any::<u8>(),
        ) {
            let text = format!("00-{}-{}-{}", Hex(&trace), Hex(&parent), hex_pair(flags));
            let read = parse_traceparent(&text).map(|cx| (cx.trace_id, cx.parent_id, cx.flags));
            let valid = trace != [0; 16] && parent != [0; 8];
            proptest::prop_assert_eq!(read, valid.then_some((trace, parent, flags)));
        }
    }

    fn hex_pair(byte: u8) -> String {
        format!("{byte:02x}")
    }
}
