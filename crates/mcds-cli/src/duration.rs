//! Durations on the command line: `1.5` (seconds), `500ms`, `10s`, `5m`,
//! `2h`, `1d`, or a sum such as `1m30s`.
//!
//! Hand-written rather than humantime's parser: that one rejects a bare
//! number and fractions (`1.5`, `1.5m`), which flock(1) users type for
//! `-w`. The grammar is one or more `<decimal>[unit]` terms, with no unit
//! meaning seconds only when the whole argument is one bare number.

use std::time::Duration;

/// The largest duration accepted: 100 years, far beyond any TTL memcached
/// keeps (30 days as a relative TTL) or any wait worth asking for, and small
/// enough that no arithmetic on it overflows.
const MAX_NANOS: u128 = 100 * 365 * 86_400 * 1_000_000_000;

/// One term's nanoseconds: `number` (digits, at most one `.`) times
/// `scale_ns`, exactly (the fraction rounded to the nanosecond). Integer
/// arithmetic, so whole milliseconds stay whole: `365d7ms` is exactly
/// 31 536 000 007 ms, where adding `f64` seconds gave a fraction of one.
fn term_nanos(number: &str, scale_ns: u128) -> Option<u128> {
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if frac.contains('.') || (whole.is_empty() && frac.is_empty()) {
        return None;
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut nanos = whole.checked_mul(scale_ns)?;
    // Digits past the 18th are below an attosecond of any unit here.
    let frac = &frac[..frac.len().min(18)];
    if !frac.is_empty() {
        let digits: u128 = frac.parse().ok()?;
        let denominator = 10u128.pow(u32::try_from(frac.len()).ok()?);
        nanos = nanos.checked_add((digits * scale_ns + denominator / 2) / denominator)?;
    }
    Some(nanos)
}

/// Parse a duration as described in the module docs; the error says what
/// was wrong and gives examples.
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let help = || {
        format!(
            "invalid duration {text:?}: use seconds (1.5) or a number with a unit: 500ms, 10s, 5m, 2h, 1d, or a sum such as 1m30s"
        )
    };
    let s = text.trim();
    if s.is_empty() {
        return Err(help());
    }
    let too_long = || format!("duration {text:?} is too long (at most 100 years)");
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        if number.is_empty() {
            return Err(help());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale_ns: u128 = match unit {
            // A bare number is seconds, but only as the whole argument:
            // "1m30" is more likely a typo than 1 min 30 s.
            "" if rest.len() == s.len() => 1_000_000_000,
            "ms" => 1_000_000,
            "s" | "sec" | "secs" => 1_000_000_000,
            "m" | "min" | "mins" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            _ => return Err(help()),
        };
        // A number too long for u128 is too long a duration.
        let nanos = match term_nanos(number, scale_ns) {
            Some(nanos) => nanos,
            None if number.bytes().filter(|&b| b == b'.').count() <= 1 && number != "." => {
                return Err(too_long());
            }
            None => return Err(help()),
        };
        total = total.saturating_add(nanos);
        rest = next;
    }
    if total > MAX_NANOS {
        return Err(too_long());
    }
    Ok(Duration::from_nanos(
        u64::try_from(total).map_err(|_| too_long())?,
    ))
}

/// A duration as a person reads it: `1.5s`, `500ms`, `2m30s`.
pub(crate) fn show(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if ms < 60_000 {
        let secs = d.as_secs_f64();
        return if ms % 1000 == 0 {
            format!("{}s", ms / 1000)
        } else {
            format!("{secs:.1}s")
        };
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_operators_type() {
        let ok = |s: &str, ms: u64| assert_eq!(parse(s), Ok(Duration::from_millis(ms)), "{s}");
        ok("1.5", 1500);
        ok("0", 0);
        ok("30", 30_000);
        ok("500ms", 500);
        ok("10s", 10_000);
        ok("5m", 300_000);
        ok("1.5m", 90_000);
        ok("2h", 7_200_000);
        ok("1d", 86_400_000);
        ok("1m30s", 90_000);
        ok(" 2s ", 2000);
        ok("1min", 60_000);
        ok(".5s", 500);
        // Whole milliseconds stay whole (f64 seconds made these fractions).
        ok("365d7ms", 31_536_000_007);
        ok("1000d3ms", 86_400_000_003);
        assert_eq!(
            parse("0.1234567891s"),
            Ok(Duration::from_nanos(123_456_789))
        );
    }

    #[test]
    fn refuses_the_rest_with_examples() {
        for bad in [
            "", "-1", "abc", "5x", "1m30", ".", "1..5", "s", "1e3", "inf", "NaN",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(e.contains("500ms"), "{bad}: {e}");
        }
        assert!(parse("99999999999d").unwrap_err().contains("too long"));
    }

    #[test]
    fn shows_durations_briefly() {
        assert_eq!(show(Duration::from_millis(250)), "250ms");
        assert_eq!(show(Duration::from_millis(1500)), "1.5s");
        assert_eq!(show(Duration::from_secs(30)), "30s");
        assert_eq!(show(Duration::from_secs(150)), "2m30s");
        assert_eq!(show(Duration::from_secs(3600)), "1h");
    }
}
