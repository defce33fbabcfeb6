//! Time sources: the [`Clock`] trait, the system clocks and a
//! [`ManualClock`] for tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant: milliseconds since the Unix epoch (UTC), as every mcds API
/// takes and returns one (arguments and fields named `…_ms`).
///
/// A plain `u64` rather than a newtype, on purpose: it is the same number
/// the C ABI, Python, PHP, the command line (`--at-ms`) and the stored
/// items use, and literals and arithmetic work on it unwrapped. Spans are
/// [`Duration`]s. [`unix_ms`] and [`system_time`] convert from and to
/// [`SystemTime`].
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use mcds_core::{UnixMs, system_time, unix_ms};
///
/// let at: UnixMs = unix_ms(UNIX_EPOCH + Duration::from_millis(1_767_225_600_000));
/// assert_eq!(at, 1_767_225_600_000);
/// assert_eq!(system_time(at), UNIX_EPOCH + Duration::from_millis(at));
/// assert_eq!(unix_ms(UNIX_EPOCH - Duration::from_secs(1)), 0); // before 1970: 0
/// ```
pub type UnixMs = u64;

/// `t` as [`UnixMs`]: 0 for an instant before 1970, `u64::MAX` past
/// what a `u64` of milliseconds holds.
pub fn unix_ms(t: SystemTime) -> UnixMs {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` as a [`SystemTime`] (saturating at the latest one it can hold).
pub fn system_time(ms: UnixMs) -> SystemTime {
    UNIX_EPOCH
        .checked_add(Duration::from_millis(ms))
        .unwrap_or_else(|| UNIX_EPOCH + Duration::from_secs(i64::MAX as u64 / 2))
}

/// A source of wall-clock time, in milliseconds since the Unix epoch.
///
/// Structures that reason about time (windows, the event log, the rate
/// limiter) read a `Clock`, and so does the embedded store's expiry, so tests
/// use a [`ManualClock`] and never sleep.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> UnixMs;

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
/// use mcds_core::{Clock, CoarseClock, SystemClock};
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
/// use mcds_core::{Clock, ManualClock};
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
