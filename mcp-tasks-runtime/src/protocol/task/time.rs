//! The timestamp format of both eras.

use std::time::{SystemTime, UNIX_EPOCH};

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
#[cfg(test)]
fn timestamp(at: SystemTime) -> String {
    // Every byte is an ASCII digit or separator.
    String::from_utf8(timestamp_bytes(at).to_vec()).unwrap_or_default()
}

pub(super) fn timestamp_bytes(at: SystemTime) -> [u8; 24] {
    // Written digit by digit: every task rendering formats two or three of these, and `format!`
    // with padding was a visible share of a `tasks/get` (see the benchmark's profile).
    let t = Civil::from(at);
    let mut out = [0u8; 24];
    let mut put = |at: usize, value: u32, digits: u32| {
        let mut value = value;
        for i in (0..digits as usize).rev() {
            out[at + i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, t.year, 4);
    put(5, t.month, 2);
    put(8, t.day, 2);
    put(11, t.hour, 2);
    put(14, t.minute, 2);
    put(17, t.second, 2);
    put(20, t.millisecond, 3);
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

/// A time's UTC calendar date and time of day, to the millisecond (rounded down). The year is
/// clamped to `0..=9999`, the years a four-digit timestamp can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millisecond: u32,
}

impl From<SystemTime> for Civil {
    fn from(at: SystemTime) -> Self {
        // Milliseconds since 1970-01-01T00:00:00Z, rounded down (also before it), in 64 bits (an
        // `i128` division is a call of its own): a time over 285 million years away counts as one
        // that far, whose year is clamped either way.
        const MAX_SECS: u64 = 9_000_000_000_000_000 / 1_000;
        let millis: i64 = match at.duration_since(UNIX_EPOCH) {
            Ok(after) => {
                (after.as_secs().min(MAX_SECS) * 1_000 + u64::from(after.subsec_millis())) as i64
            }
            Err(before) => {
                let d = before.duration();
                let up = u64::from(d.subsec_nanos().div_ceil(1_000_000));
                -((d.as_secs().min(MAX_SECS) * 1_000 + up) as i64)
            }
        };
        let days = millis.div_euclid(86_400_000);
        let of_day = millis.rem_euclid(86_400_000) as u32;
        // Howard Hinnant's `civil_from_days` (http://howardhinnant.github.io/date_algorithms.html):
        // the proleptic Gregorian calendar in 400-year eras of 146,097 days, from March 1.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097); // [0, 146096]
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
        let mp = (5 * doy + 2) / 153; // [0, 11], from March
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Civil {
            year: year.clamp(0, 9999) as u32,
            month,
            day,
            hour: of_day / 3_600_000,
            minute: of_day / 60_000 % 60,
            second: of_day / 1_000 % 60,
            millisecond: of_day % 1_000,
        }
    }
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
        // Known dates: leap days, a century that is not a leap year, the 32-bit rollover, the
        // last writable millisecond, and times before 1970 (rounded down, as after it).
        let at = |secs: i64, millis: u64| match u64::try_from(secs) {
            Ok(secs) => UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis),
            Err(_) => {
                UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
                    + Duration::from_millis(millis)
            }
        };
        for (secs, millis, expected) in [
            (951_782_400, 0, "2000-02-29T00:00:00.000Z"),
            (1_709_208_000, 5, "2024-02-29T12:00:00.005Z"),
            (4_107_542_400, 0, "2100-03-01T00:00:00.000Z"),
            (4_107_542_399, 999, "2100-02-28T23:59:59.999Z"),
            (2_147_483_648, 0, "2038-01-19T03:14:08.000Z"),
            (253_402_300_799, 999, "9999-12-31T23:59:59.999Z"),
            (-86_400, 0, "1969-12-31T00:00:00.000Z"),
            (-1, 999, "1969-12-31T23:59:59.999Z"),
            (-2_208_988_800, 0, "1900-01-01T00:00:00.000Z"),
        ] {
            assert_eq!(timestamp(at(secs, millis)), expected, "{secs}");
        }
        assert_eq!(
            timestamp(UNIX_EPOCH - Duration::from_nanos(1)),
            "1969-12-31T23:59:59.999Z"
        );
    }

    /// Day by day from 1900 to 2500, the date moves as the calendar does: the next day of the
    /// month, or the first of the next month after the month's last day (29 days in February of
    /// a leap year: divisible by 4, and not by 100 unless by 400).
    #[test]
    fn every_day_follows_the_calendar() {
        let days_in = |year: u32, month: u32| match month {
            2 if year.is_multiple_of(4)
                && (!year.is_multiple_of(100) || year.is_multiple_of(400)) =>
            {
                29
            }
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut at =
            UNIX_EPOCH - Duration::from_secs(2_208_988_800) + Duration::from_millis(86_399_999);
        let mut prev = Civil::from(at);
        assert_eq!((prev.year, prev.month, prev.day), (1900, 1, 1));
        while prev.year < 2500 {
            at += Duration::from_secs(86_400);
            let next = Civil::from(at);
            let expected = if prev.day < days_in(prev.year, prev.month) {
                (prev.year, prev.month, prev.day + 1)
            } else if prev.month < 12 {
                (prev.year, prev.month + 1, 1)
            } else {
                (prev.year + 1, 1, 1)
            };
            assert_eq!((next.year, next.month, next.day), expected, "{prev:?}");
            assert_eq!(
                (next.hour, next.minute, next.second, next.millisecond),
                (23, 59, 59, 999)
            );
            prev = next;
        }
    }
}
