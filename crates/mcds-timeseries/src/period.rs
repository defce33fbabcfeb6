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

use mcds_core::{Access, Error, Key, Result, Retention, Ttl};

/// How long an item outlives the last moment any reader may read it:
/// memcached's one-second clock (not aligned to Unix seconds, and up to 2 s
/// behind real time) with room to spare. Clock skew between clients is
/// added on top (see [`ttl_for`]).
pub(crate) const SLACK_MS: u64 = 60_000;

/// The TTL of an item of the period ending at `end_ms` (exclusive) kept for
/// `retention_ms` after that, written at `now_ms` by a client whose clock
/// may differ from its readers' by up to `skew_ms`: until
/// `end + retention + skew + SLACK_MS` by the writer's clock, so that a
/// reader whose clock is `skew` behind still finds it for the whole
/// retention. `None` when no reader can look at the period any more
/// (`end + retention + skew` has passed), so nothing should be written.
pub(crate) fn ttl_for(end_ms: u64, retention_ms: u64, now_ms: u64, skew_ms: u64) -> Option<Ttl> {
    let deadline = end_ms.saturating_add(retention_ms).saturating_add(skew_ms);
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
pub(crate) fn whole_ms(what: &str, d: std::time::Duration) -> Result<u64> {
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

/// The default bound on how far apart the clocks of a series' clients
/// are: a sample may lie at most this far ahead of the recording client's
/// clock, and a read vouches for a period only if it starts twice this
/// long after its server's last loss (see [`check_retained`]).
pub(crate) const DEFAULT_SKEW_MS: u64 = SLACK_MS;

/// [`Error::InvalidArgument`] for a sample at `ts_ms` that lies more than
/// `skew_ms` after `now_ms`.
pub(crate) fn refuse_early(
    what: &str,
    name: &str,
    ts_ms: u64,
    now_ms: u64,
    skew_ms: u64,
) -> Result<()> {
    if ts_ms > now_ms.saturating_add(skew_ms) {
        return Err(Error::InvalidArgument(format!(
            "time {ts_ms} ms is {} ms ahead of this client's clock ({now_ms} ms); {what} {name} takes times at most {skew_ms} ms ahead, its clock skew (reads rely on it to tell lost data) — record it when its time comes",
            ts_ms - now_ms
        )));
    }
    Ok(())
}

/// One period a read returns: its key, its start (Unix ms), and how to
/// name it in an error.
pub(crate) struct Read<'k> {
    pub(crate) key: &'k Key,
    pub(crate) start_ms: u64,
    pub(crate) what: String,
}

/// Check that the server behind each of `periods` has lost no item since
/// before the period could first be written: `2 · skew_ms` before its
/// start (a sample is recorded at most `skew_ms` early by its recorder's
/// clock, which is at most `skew_ms` from the clock that timed the loss).
/// Its items are then all there, and an absent one was never written. Asked after the items were read, so that any loss before the
/// read is counted. One [`Access::retention`] per server (found with
/// [`Store::colocated`](mcds_core::Store::colocated)). The first period
/// that cannot be vouched for is the error: [`Error::Lost`] when its
/// server lost items since, [`Error::Unsupported`] when the store cannot
/// tell.
pub(crate) async fn check_retained(
    access: Access<'_>,
    op: &'static str,
    periods: &[Read<'_>],
    skew_ms: u64,
) -> Result<()> {
    let margin = skew_ms.saturating_mul(2);
    // (a key of the server, the earliest period there)
    let mut servers: Vec<(&Key, usize)> = Vec::new();
    for (i, p) in periods.iter().enumerate() {
        match servers
            .iter_mut()
            .find(|(key, _)| access.store().colocated(key, p.key))
        {
            Some((_, earliest)) if periods[*earliest].start_ms > p.start_ms => *earliest = i,
            Some(_) => {}
            None => servers.push((p.key, i)),
        }
    }
    for (key, earliest) in servers {
        let since = match access.retention(key).await? {
            Retention::Complete => continue,
            Retention::Since(ms) => ms,
            Retention::Unknown(_) => {
                return Err(Error::Unsupported {
                    op,
                    backend: access.store().backend_name(),
                    hint: "a time series read asks each server whether it lost items (a restart, flush or eviction) since the data was written, which this store cannot say (a proxy); connect to memcached directly, or turn the check off with with_loss_check(false) and accept reads that may be short",
                });
            }
        };
        let p = &periods[earliest];
        if p.start_ms < since.saturating_add(margin) {
            let when = if p.start_ms < since {
                "before that".to_string()
            } else {
                format!(
                    "only {} ms after it, less than twice the clock skew allowed ({margin} ms)",
                    p.start_ms - since
                )
            };
            return Err(Error::Lost {
                key: p.key.display(),
                reason: format!(
                    "{} may have lost data: its server last lost items (a restart, flush_all or eviction) at {since} ms by the clock of the client that saw it, and the period starts at {} ms, {when}, so what it held then may be gone and what it holds may be only part — read from {} ms on, and give time series servers the memory they need (or -M)",
                    p.what,
                    p.start_ms,
                    since.saturating_add(margin)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_covers_retention_plus_slack_whenever_written() {
        // A 60 s period ending at 120 s, kept 600 s: readable until 720 s.
        assert_eq!(ttl_for(120_000, 600_000, 0, 0), Some(Ttl::secs(780)));
        assert_eq!(ttl_for(120_000, 600_000, 100_500, 0), Some(Ttl::secs(680)));
        assert_eq!(ttl_for(120_000, 600_000, 719_999, 0), Some(Ttl::secs(61)));
        assert_eq!(ttl_for(120_000, 600_000, 720_000, 0), None);
        assert_eq!(ttl_for(u64::MAX, u64::MAX, 0, 0), Some(Ttl::secs(u32::MAX)));
        // A reader up to 30 s behind reads until 750 s of the writer's clock.
        assert_eq!(ttl_for(120_000, 600_000, 0, 30_000), Some(Ttl::secs(810)));
        assert_eq!(
            ttl_for(120_000, 600_000, 749_999, 30_000),
            Some(Ttl::secs(61))
        );
        assert_eq!(ttl_for(120_000, 600_000, 750_000, 30_000), None);
    }

    #[test]
    fn first_readable_agrees_with_ttl_for() {
        for now in [0, 1, 59_999, 60_000, 719_999, 720_000, 1_000_000] {
            let first = first_readable(60_000, 600_000, now);
            assert!(ttl_for((first + 1) * 60_000, 600_000, now, 0).is_some());
            if first > 0 {
                assert!(ttl_for(first * 60_000, 600_000, now, 0).is_none(), "{now}");
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
