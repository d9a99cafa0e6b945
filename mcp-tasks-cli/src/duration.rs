//! Durations on the command line: `--timeout` and `--task-timeout` read, and shown back.

use std::time::Duration;

/// `--timeout`: a duration, or `none` (no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

pub fn parse_timeout(text: &str) -> Result<RequestTimeout, String> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(RequestTimeout(None));
    }
    parse_duration(text).map(|d| RequestTimeout(Some(d)))
}

/// `1.5s`, `500ms`, `2m`, `1h`, or a number of seconds; more than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (like 30s, 500ms, 2m)"))?;
    let seconds = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ms, s, m or h)"
            ));
        }
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `2s`, `1.5s`, `250ms`.
pub fn show_duration(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
