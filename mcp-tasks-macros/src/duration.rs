//! `ttl = "10m"`, `poll_interval = "500ms"`: a number and a unit, or several largest first
//! (`1h30m`). Units: `ms`, `s`, `m`, `h`, `d`. Only the syntax lives here; the limits are checked
//! in `validate`, which knows which key it is.

const UNITS: [(&str, u64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// The duration in milliseconds, or what is wrong with it (for a person, without the key).
pub fn parse(text: &str) -> Result<u64, String> {
    const HINT: &str =
        "write a number and a unit (`ms`, `s`, `m`, `h`, `d`), e.g. `10m` or `1h30m`";
    if text.trim().is_empty() {
        return Err(format!("the duration is empty: {HINT}"));
    }
    let mut rest = text;
    let mut total: u64 = 0;
    // Index into UNITS of the last unit used: units must come largest first, each once.
    let mut last: Option<usize> = None;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: {HINT}"));
        }
        let (number, after) = rest.split_at(digits);
        let unit_len = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(format!("`{number}` has no unit: {HINT}"));
        }
        let Some(index) = UNITS.iter().position(|(u, _)| *u == unit) else {
            return Err(format!("unknown unit `{unit}` in `{text}`: {HINT}"));
        };
        if last.is_some_and(|l| l >= index) {
            return Err(format!(
                "`{text}` repeats a unit or puts a smaller one first: write the units largest first, each once, e.g. `1h30m`"
            ));
        }
        last = Some(index);
        let too_long = || format!("`{text}` is too long to be a duration");
        let value: u64 = number.parse().map_err(|_| too_long())?;
        let ms = value.checked_mul(UNITS[index].1).ok_or_else(too_long)?;
        total = total.checked_add(ms).ok_or_else(too_long)?;
        rest = after;
    }
    Ok(total)
}

/// `600000` → `10m`, `90000` → `1m30s`: how a limit is shown in messages.
pub fn display(mut ms: u64) -> String {
    if ms == 0 {
        return "0ms".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in UNITS {
        if ms >= size {
            out.push_str(&format!("{}{unit}", ms / size));
            ms %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{display, parse};

    #[test]
    fn accepts_each_unit_and_combinations() {
        assert_eq!(parse("500ms"), Ok(500));
        assert_eq!(parse("2s"), Ok(2_000));
        assert_eq!(parse("10m"), Ok(600_000));
        assert_eq!(parse("1h"), Ok(3_600_000));
        assert_eq!(parse("1d"), Ok(86_400_000));
        assert_eq!(parse("1h30m"), Ok(5_400_000));
        assert_eq!(parse("1m30s250ms"), Ok(90_250));
        assert_eq!(parse("0s"), Ok(0));
    }

    #[test]
    fn rejects_with_a_reason() {
        for bad in [
            "",
            " ",
            "10",
            "s",
            "10x",
            "1.5h",
            "-1s",
            "30m1h",
            "1h1h",
            "10 m",
            "99999999999999999999d",
        ] {
            let err = parse(bad).expect_err(bad);
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(parse("10").unwrap_err().contains("no unit"));
        assert!(parse("10x").unwrap_err().contains("unknown unit `x`"));
        assert!(parse("30m1h").unwrap_err().contains("largest first"));
        assert!(
            parse("18446744073709551615d")
                .unwrap_err()
                .contains("too long")
        );
    }

    #[test]
    fn displays_round_trip() {
        for ms in [1, 10, 1_000, 60_000, 5_400_000, 2_592_000_000, 90_250] {
            assert_eq!(parse(&display(ms)), Ok(ms));
        }
        assert_eq!(display(2_592_000_000), "30d");
    }
}
