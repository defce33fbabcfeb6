//! [`ShadowCounter`]: events in the previous period, with two keys.

use std::sync::Arc;
use std::time::Duration;

use mc_core::{Clock, Key, Result, Store, Ttl};

use crate::{CounterOptions, read_counter};

/// Counts events (visitors, say) in the previous period of `T` seconds with
/// two keys that swap roles (seed 000).
///
/// Periods are aligned to Unix time. In a period with `now mod 2T < T` key 0
/// is *current* (read) and key 1 is the *shadow* (incremented); in the next
/// period they swap. The shadow key is created with TTL `2T − now mod T`, so
/// it expires exactly at the end of the period in which it is read — just
/// before it becomes the shadow again — whatever fraction of a second it was
/// created at (the seed's corrected line 43). The value shown is constant
/// for a whole period: the count of the period before.
///
/// Keys: `<prefix>shadow:<name>:0` and `:1`.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mc_core::{ManualClock, MemoryStore};
/// use mc_counter::{CounterOptions, ShadowCounter};
///
/// let clock = ManualClock::new(1_000_000 * 1000); // a multiple of 2T
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let visitors = ShadowCounter::with_options(
///     store, "visitors", Duration::from_secs(60), CounterOptions::with_clock(Arc::new(clock.clone())))?;
/// visitors.incr(1)?;
/// visitors.incr(1)?;
/// assert_eq!(visitors.value()?, 0); // counting into the shadow
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(visitors.value()?, 2); // last period's count
/// # Ok::<(), mc_core::Error>(())
/// ```
#[derive(Clone)]
pub struct ShadowCounter {
    store: Arc<dyn Store>,
    keys: [Key; 2],
    period: u64,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ShadowCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShadowCounter")
            .field("keys", &self.keys)
            .field("period_secs", &self.period)
            .finish()
    }
}

impl ShadowCounter {
    /// A counter over periods of `period` (whole seconds, at least 1).
    pub fn new(store: Arc<dyn Store>, name: &str, period: Duration) -> Result<ShadowCounter> {
        ShadowCounter::with_options(store, name, period, CounterOptions::default())
    }

    /// With a prefix and clock.
    pub fn with_options(
        store: Arc<dyn Store>,
        name: &str,
        period: Duration,
        options: CounterOptions,
    ) -> Result<ShadowCounter> {
        Ok(ShadowCounter {
            store,
            keys: [
                Key::parts(&options.prefix, "shadow", name, 0)?,
                Key::parts(&options.prefix, "shadow", name, 1)?,
            ],
            period: mc_core::whole_secs("the shadow counter period", period)?,
            clock: options.clock,
        })
    }

    /// Index of the current (read) key at `now` seconds.
    fn active(&self, now: u64) -> usize {
        usize::from(now % (2 * self.period) >= self.period)
    }

    /// Count `delta` events in this period. One round trip.
    pub fn incr(&self, delta: u64) -> Result<u64> {
        let now = self.clock.now_secs();
        let shadow = &self.keys[1 - self.active(now)];
        let ttl = Ttl::from(Duration::from_secs(2 * self.period - now % self.period));
        self.store.incr_or_init(shadow, delta, delta, ttl)
    }

    /// The number of events in the previous period. One round trip.
    pub fn value(&self) -> Result<u64> {
        let current = &self.keys[self.active(self.clock.now_secs())];
        read_counter(self.store.get(current)?, current)
    }
}
