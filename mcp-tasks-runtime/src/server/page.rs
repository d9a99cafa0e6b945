//! Pagination of the server's lists (`tools/list`, and the resource and prompt lists): a list is
//! served in pages of [`ServerConfig::page_size`](super::ServerConfig::page_size) items, each
//! but the last with a `nextCursor` the client sends back for the next page (2025-11-25 and
//! 2026-07-28, `utilities/pagination`).
//!
//! A cursor is opaque to clients: here the offset of the page's first item, as eight big-endian
//! bytes in unpadded URL-safe base64. The lists are fixed while the server runs (what is
//! registered at build), so an offset names the same item on every instance of a server. A cursor
//! that is not one of ours, or points past the end, is `-32602` ("Invalid cursors SHOULD result in
//! an error with code -32602").

use crate::protocol::Params;
use crate::protocol::jsonrpc::RpcError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::ops::Range;

/// Which items of a list of `len` go on the page `params.cursor` asks for, and the cursor of the
/// page after it (`None` on the last page).
pub(crate) fn page(
    params: &Params,
    len: usize,
    page_size: usize,
) -> Result<(Range<usize>, Option<String>), RpcError> {
    let start = match params.value("cursor") {
        None => 0,
        Some(serde_json::Value::String(cursor)) => decode(&cursor)
            .filter(|&start| start < len)
            .ok_or_else(|| invalid_cursor(&cursor))?,
        Some(_) => return Err(RpcError::invalid_params("`cursor` must be a string")),
    };
    let end = start.saturating_add(page_size.max(1)).min(len);
    let next = (end < len).then(|| encode(end));
    Ok((start..end, next))
}

fn invalid_cursor(cursor: &str) -> RpcError {
    let mut shown: String = cursor.chars().take(64).collect();
    if shown.len() < cursor.len() {
        shown.push('…');
    }
    RpcError::invalid_params(format!(
        "invalid cursor `{shown}`: not a `nextCursor` of this list (start again without a cursor)"
    ))
}

fn encode(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode((offset as u64).to_be_bytes())
}

fn decode(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    usize::try_from(u64::from_be_bytes(bytes.try_into().ok()?)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: serde_json::Value) -> Params {
        Params::from_map(v.as_object().expect("an object"))
    }

    #[test]
    fn pages_follow_their_cursors_to_the_end() {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let p = match &cursor {
                None => params(json!({})),
                Some(c) => params(json!({ "cursor": c })),
            };
            let (range, next) = page(&p, 10, 3).expect("a page");
            seen.extend(range);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn one_page_has_no_cursor_and_an_empty_list_is_one_empty_page() {
        assert_eq!(page(&params(json!({})), 3, 3).unwrap(), (0..3, None));
        assert_eq!(page(&params(json!({})), 0, 3).unwrap(), (0..0, None));
    }

    #[test]
    fn a_foreign_or_stale_cursor_is_invalid_params() {
        for bad in [json!("!!"), json!(""), json!(encode(10)), json!(encode(99))] {
            let err = page(&params(json!({ "cursor": bad })), 10, 3).expect_err("refused");
            assert_eq!(err.code, RpcError::INVALID_PARAMS, "{bad}");
            assert!(err.message.contains("invalid cursor"), "{}", err.message);
        }
        let err = page(&params(json!({ "cursor": 3 })), 10, 3).expect_err("refused");
        assert_eq!(err.message, "`cursor` must be a string");
    }
}
