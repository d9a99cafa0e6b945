//! The timestamp format of both eras.

use std::time::SystemTime;

use serde::Serialize;

/// A time as [`timestamp`] writes it, serialized without a `String` on the way.
pub(super) struct Timestamp(pub(super) SystemTime);

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = timestamp_bytes(self.0);
        // Every byte is an ASCII digit or separator.
        s.serialize_str(std::str::from_utf8(&bytes).unwrap_or_default())
    }
}

/// A time as ISO 8601 / RFC 3339 in UTC with millisecond precision: `2025-11-25T10:30:00.000Z`.
pub fn timestamp(at: SystemTime) -> String {
    // Every byte is an ASCII digit or separator.
    String::from_utf8(timestamp_bytes(at).to_vec()).unwrap_or_default()
}

fn timestamp_bytes(at: SystemTime) -> [u8; 24] {
    // Written digit by digit: every task rendering formats two or three of these, and `format!`
    // with padding was a visible share of a `tasks/get` (see the benchmark's profile).
    let t = time::OffsetDateTime::from(at);
    let year = u32::try_from(t.year()).unwrap_or(0).min(9999);
    let mut out = [0u8; 24];
    let mut put = |at: usize, value: u32, digits: u32| {
        let mut value = value;
        for i in (0..digits as usize).rev() {
            out[at + i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, year, 4);
    put(5, u32::from(u8::from(t.month())), 2);
    put(8, u32::from(t.day()), 2);
    put(11, u32::from(t.hour()), 2);
    put(14, u32::from(t.minute()), 2);
    put(17, u32::from(t.second()), 2);
    put(20, u32::from(t.millisecond()), 3);
    for (at, byte) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        out[at] = byte;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// 2025-11-25T10:30:00Z.
    fn t0() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
    }

    #[test]
    fn timestamps_are_utc_with_z_and_milliseconds() {
        assert_eq!(timestamp(t0()), "2025-11-25T10:30:00.000Z");
        assert_eq!(
            timestamp(t0() + Duration::from_micros(1_234_567)),
            "2025-11-25T10:30:01.234Z"
        );
        assert_eq!(
            timestamp(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
        // Every field at its widest and narrowest, against the obvious `format!` rendering.
        let mut at = SystemTime::UNIX_EPOCH;
        for _ in 0..5_000 {
            at += Duration::from_millis(7_919_999_937);
            let t = time::OffsetDateTime::from(at);
            let expected = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                t.year(),
                u8::from(t.month()),
                t.day(),
                t.hour(),
                t.minute(),
                t.second(),
                t.millisecond()
            );
            assert_eq!(timestamp(at), expected);
        }
    }
}
