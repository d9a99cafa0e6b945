//! The `list` cursors of the built-in stores: the creation sequence number of a page's last task,
//! as eight big-endian bytes in unpadded URL-safe base64. A cursor that does not decode to
//! exactly eight bytes is not one of ours ([`StoreError::InvalidCursor`](super::StoreError::InvalidCursor)).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The cursor of the page that follows the task with sequence number `seq`.
pub(super) fn encode_cursor(seq: u64) -> String {
    URL_SAFE_NO_PAD.encode(seq.to_be_bytes())
}

/// The sequence number in `cursor`, or `None` if this is not a cursor [`encode_cursor`] made.
pub(super) fn decode_cursor(cursor: &str) -> Option<u64> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_rejected() {
        for seq in [0, 1, 255, u64::MAX] {
            assert_eq!(decode_cursor(&encode_cursor(seq)), Some(seq));
        }
        for bad in ["", "!!", "AAAA", "AAAAAAAAAAAAAAAA"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
    }
}
