//! Item lifetimes: [`Ttl`], and [`whole_secs`] for period lengths.

use std::time::Duration;

/// memcached reads an exptime above this many seconds (30 days) as an
/// absolute Unix time. [`Ttl`] hides that rule: backends convert.
pub const MAX_RELATIVE_TTL_SECS: u32 = 30 * 24 * 60 * 60;

/// How long an item lives.
///
/// Either [`Ttl::Never`] or a whole number of seconds, at least one. There is
/// no zero: memcached reads exptime 0 as "never", and mcds does not let that
/// happen by accident — [`Ttl::secs(0)`](Ttl::secs) is one second.
/// A TTL longer than 30 days keeps its meaning: the memcached backend sends it
/// as an absolute time, so `Ttl::secs(40 * 86400)` means 40 days.
///
/// memcached's clock ticks in whole seconds, so an item with `Ttl::secs(1)`
/// lives between 0 and 1 seconds (the "1-second granularity trap"). The
/// embedded store reproduces this with its [`Clock`](crate::Clock). The memcached backend
/// sends TTLs as absolute times on the server's own clock (so that a server
/// resuming from a pause does not expire them early), which adds up to one
/// second: there an item lives between `n − 1` and `n + 1` seconds.
///
/// ```
/// use std::time::Duration;
/// use mcds_core::Ttl;
///
/// assert_eq!(Ttl::secs(30).as_secs(), Some(30));
/// assert_eq!(Ttl::secs(0), Ttl::secs(1));
/// assert_eq!(Ttl::from(Duration::from_millis(1500)), Ttl::secs(2));
/// assert_eq!(Ttl::Never.as_secs(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ttl {
    /// The item never expires (it can still be evicted).
    Never,
    /// The item expires this many seconds after the write (at least 1).
    Secs(std::num::NonZeroU32),
}

impl Ttl {
    /// `n` seconds; `0` is rounded up to one second.
    pub const fn secs(n: u32) -> Ttl {
        match std::num::NonZeroU32::new(n) {
            Some(n) => Ttl::Secs(n),
            None => Ttl::Secs(std::num::NonZeroU32::MIN),
        }
    }

    /// The number of seconds, or `None` for [`Ttl::Never`].
    pub const fn as_secs(self) -> Option<u32> {
        match self {
            Ttl::Never => None,
            Ttl::Secs(n) => Some(n.get()),
        }
    }

    /// The exptime to send to memcached at `now_unix_secs`: 0 for never, the
    /// seconds for up to 30 days, an absolute Unix time beyond that.
    pub fn to_memcached_exptime(self, now_unix_secs: u64) -> u32 {
        match self {
            Ttl::Never => 0,
            Ttl::Secs(n) if n.get() <= MAX_RELATIVE_TTL_SECS => n.get(),
            Ttl::Secs(n) => {
                let at = now_unix_secs.saturating_add(u64::from(n.get()));
                // memcached parses the token as a signed 32-bit number.
                u32::try_from(at.min(i32::MAX as u64)).unwrap_or(i32::MAX as u32)
            }
        }
    }
}

impl From<Duration> for Ttl {
    /// Rounds up to whole seconds; saturates at `u32::MAX` seconds.
    fn from(d: Duration) -> Ttl {
        let secs = d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0));
        Ttl::secs(u32::try_from(secs).unwrap_or(u32::MAX))
    }
}

/// Whole seconds of `d`, at least 1: the check every period, window and
/// chunk length needs, since memcached expires items in whole seconds.
/// `what` names the argument in the error ("the window slot length").
///
/// ```
/// use std::time::Duration;
/// assert_eq!(mcds_core::whole_secs("the period", Duration::from_secs(60))?, 60);
/// assert!(mcds_core::whole_secs("the period", Duration::from_millis(1500)).is_err());
/// assert!(mcds_core::whole_secs("the period", Duration::from_secs(u64::MAX)).is_err());
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub fn whole_secs(what: &str, d: Duration) -> crate::Result<u64> {
    if d < Duration::from_secs(1) || d.subsec_nanos() != 0 || d.as_secs() > MAX_PERIOD_SECS {
        return Err(crate::Error::InvalidArgument(format!(
            "{what} must be a whole number of seconds, from 1 (memcached expires in whole seconds) to {MAX_PERIOD_SECS} (100 years); got {d:?}"
        )));
    }
    Ok(d.as_secs())
}

/// The longest period [`whole_secs`] takes: 100 years of 366 days. It
/// bounds what the structures built on it multiply a period by (slots,
/// chunks, milliseconds) well inside a `u64`.
pub const MAX_PERIOD_SECS: u64 = 100 * 366 * 24 * 3600;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_ttls_become_absolute() {
        let now = 1_800_000_000;
        assert_eq!(Ttl::Never.to_memcached_exptime(now), 0);
        assert_eq!(Ttl::secs(60).to_memcached_exptime(now), 60);
        assert_eq!(
            Ttl::secs(MAX_RELATIVE_TTL_SECS).to_memcached_exptime(now),
            MAX_RELATIVE_TTL_SECS
        );
        let forty_days = 40 * 86_400;
        assert_eq!(
            Ttl::secs(forty_days).to_memcached_exptime(now),
            (now + u64::from(forty_days)) as u32
        );
        assert_eq!(
            Ttl::secs(u32::MAX).to_memcached_exptime(now),
            i32::MAX as u32
        );
    }
}
