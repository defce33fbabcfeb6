//! Item lifetimes ([`Ttl`]) and time sources ([`Clock`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
/// embedded store reproduces this with its [`Clock`]. The memcached backend
/// sends TTLs as absolute times on the server's own clock (so that a server
/// resuming from a pause does not expire them early), which adds up to one
/// second: there an item lives between `n − 1` and `n + 1` seconds.
///
/// ```
/// use std::time::Duration;
/// use mc_core::Ttl;
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
        let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
        Ttl::secs(u32::try_from(secs).unwrap_or(u32::MAX))
    }
}

/// Whole seconds of `d`, at least 1: the check every period, window and
/// chunk length needs, since memcached expires items in whole seconds.
/// `what` names the argument in the error ("the window slot length").
///
/// ```
/// use std::time::Duration;
/// assert_eq!(mc_core::whole_secs("the period", Duration::from_secs(60))?, 60);
/// assert!(mc_core::whole_secs("the period", Duration::from_millis(1500)).is_err());
/// # Ok::<(), mc_core::Error>(())
/// ```
pub fn whole_secs(what: &str, d: Duration) -> crate::Result<u64> {
    if d < Duration::from_secs(1) || d.subsec_nanos() != 0 {
        return Err(crate::Error::InvalidArgument(format!(
            "{what} must be a whole number of seconds, at least 1 (memcached expires in whole seconds); got {d:?}"
        )));
    }
    Ok(d.as_secs())
}

/// A source of wall-clock time, in milliseconds since the Unix epoch.
///
/// Structures that reason about time (windows, the event log, the rate
/// limiter) read a `Clock`, and so does the embedded store's expiry, so tests
/// use a [`ManualClock`] and never sleep.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;

    /// Whole seconds since the Unix epoch.
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }
}

/// The system's real time.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| {
                d.as_secs()
                    .saturating_mul(1000)
                    .saturating_add(u64::from(d.subsec_millis()))
            })
            .unwrap_or(0)
    }
}

/// The system's real time from the kernel's coarse clock
/// (`CLOCK_REALTIME_COARSE` on Linux, resolution one scheduler tick: 1 to
/// 4 ms), several times cheaper to read than [`SystemClock`]. The default
/// clock of [`MemoryStore`](crate::MemoryStore), whose expiry works in whole
/// seconds like memcached's (memcached itself ticks once a second). On other
/// systems it is [`SystemClock`].
///
/// ```
/// use mc_core::{Clock, CoarseClock, SystemClock};
///
/// let (coarse, fine) = (CoarseClock.now_ms(), SystemClock.now_ms());
/// assert!(coarse.abs_diff(fine) < 1000);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CoarseClock;

impl Clock for CoarseClock {
    #[cfg(target_os = "linux")]
    fn now_ms(&self) -> u64 {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let ms = u64::try_from(ts.tv_nsec).unwrap_or(0) / 1_000_000;
        secs.saturating_mul(1000).saturating_add(ms)
    }

    #[cfg(not(target_os = "linux"))]
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms()
    }
}

/// A clock that moves only when told to. Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use mc_core::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let view = clock.clone();
/// clock.advance(Duration::from_secs(2));
/// assert_eq!(view.now_secs(), 1_700_000_002);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock showing `unix_ms`.
    pub fn new(unix_ms: u64) -> ManualClock {
        ManualClock(Arc::new(AtomicU64::new(unix_ms)))
    }

    /// A clock showing the current system time, from which it then moves
    /// only by hand.
    pub fn starting_now() -> ManualClock {
        ManualClock::new(SystemClock.now_ms())
    }

    /// Move forward by `d`.
    pub fn advance(&self, d: Duration) {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Jump to `unix_ms` (may move backwards).
    pub fn set_ms(&self, unix_ms: u64) {
        self.0.store(unix_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

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
