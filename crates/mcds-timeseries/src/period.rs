//! Period numbers and retention, shared by [`TimeSeries`](crate::TimeSeries)
//! and [`PackedSeries`](crate::PackedSeries).
//!
//! A period (a bucket of a time series, an item of a packed series) of
//! length `len` ms is numbered `ts / len` from the Unix epoch, and its key
//! carries that number, so a key is never reused. Each period is readable
//! until `retention` after its end, by the reader's clock; the items are
//! written with a TTL that outlives that by [`SLACK_MS`], so no read ever
//! depends on *when* memcached expires an item: a read only looks at
//! periods whose items are certainly still there (unless evicted, flushed or
//! lost in a restart), and never at one that may be gone.

use mcds_core::{Error, Key, Ttl};

/// How long an item outlives the end of its retention: memcached's
/// one-second clock (not aligned to Unix seconds) plus room for clock skew
/// between the clients that write and the clients that read.
pub(crate) const SLACK_MS: u64 = 60_000;

/// The TTL of an item of the period ending at `end_ms` (exclusive) kept for
/// `retention_ms` after that, written at `now_ms`: until
/// `end + retention + SLACK_MS`. `None` when the period is already out of
/// retention (a read would never look at it, so nothing should be written).
pub(crate) fn ttl_for(end_ms: u64, retention_ms: u64, now_ms: u64) -> Option<Ttl> {
    let deadline = end_ms.saturating_add(retention_ms);
    if deadline <= now_ms {
        return None;
    }
    let secs = (deadline.saturating_add(SLACK_MS) - now_ms).div_ceil(1000);
    Some(Ttl::secs(u32::try_from(secs).unwrap_or(u32::MAX)))
}

/// The oldest period number (of periods `len_ms` long) still readable at
/// `now_ms`: the smallest `p` with `(p + 1) · len + retention > now`, the
/// periods for which [`ttl_for`] gives a TTL.
pub(crate) fn first_readable(len_ms: u64, retention_ms: u64, now_ms: u64) -> u64 {
    now_ms.saturating_sub(retention_ms) / len_ms
}

/// Milliseconds of a duration argument: whole milliseconds, at least 1,
/// at most about 100 years (so every sum of times fits in a `u64`).
pub(crate) fn whole_ms(what: &str, d: std::time::Duration) -> mcds_core::Result<u64> {
    const MAX_MS: u64 = 100 * 366 * 86_400_000;
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 || d.subsec_nanos() % 1_000_000 != 0 || ms > MAX_MS {
        return Err(Error::InvalidArgument(format!(
            "{what} must be a whole number of milliseconds from 1 ms to 100 years; got {d:?}"
        )));
    }
    Ok(ms)
}

/// [`Error::Corrupt`] for `key`.
pub(crate) fn corrupt(key: &Key, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        key: key.display(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_covers_retention_plus_slack_whenever_written() {
        // A 60 s period ending at 120 s, kept 600 s: readable until 720 s.
        assert_eq!(ttl_for(120_000, 600_000, 0), Some(Ttl::secs(780)));
        assert_eq!(ttl_for(120_000, 600_000, 100_500), Some(Ttl::secs(680)));
        assert_eq!(ttl_for(120_000, 600_000, 719_999), Some(Ttl::secs(61)));
        assert_eq!(ttl_for(120_000, 600_000, 720_000), None);
        assert_eq!(ttl_for(u64::MAX, u64::MAX, 0), Some(Ttl::secs(u32::MAX)));
    }

    #[test]
    fn first_readable_agrees_with_ttl_for() {
        for now in [0, 1, 59_999, 60_000, 719_999, 720_000, 1_000_000] {
            let first = first_readable(60_000, 600_000, now);
            assert!(ttl_for((first + 1) * 60_000, 600_000, now).is_some());
            if first > 0 {
                assert!(ttl_for(first * 60_000, 600_000, now).is_none(), "{now}");
            }
        }
    }

    #[test]
    fn durations_are_checked() {
        use std::time::Duration;
        assert_eq!(whole_ms("x", Duration::from_secs(2)).unwrap(), 2000);
        assert!(whole_ms("x", Duration::ZERO).is_err());
        assert!(whole_ms("x", Duration::from_micros(1500)).is_err());
        assert!(whole_ms("x", Duration::from_secs(200 * 366 * 86_400)).is_err());
    }
}
