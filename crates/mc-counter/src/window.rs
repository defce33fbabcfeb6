//! [`WindowCounter`]: events in the last N−1 slots.

use std::sync::Arc;
use std::time::Duration;

use mc_core::{Clock, Error, Key, Result, Store, Ttl};

use crate::{CounterOptions, read_counter};

/// Counts events over a sliding window of `slots − 1` slots of `slot`
/// seconds each (seed 004's online-users counter: 6 slots of a minute count
/// the last 5 minutes).
///
/// Slots are aligned to Unix time. An event increments slot
/// `(now / p) mod N`, creating it with TTL `N·p − now mod p` so that it
/// expires exactly when the slot comes round again (the 1-second trap of
/// seed 000 applied to slots). The value is the sum of the *other* N−1
/// slots — the current one is still filling — read in one `get_multi`.
///
/// Keys: `<prefix>window:<name>:<slot index>`.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mc_core::{ManualClock, MemoryStore};
/// use mc_counter::{CounterOptions, WindowCounter};
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let online = WindowCounter::with_options(
///     store, "online", Duration::from_secs(60), 6, CounterOptions::with_clock(Arc::new(clock.clone())))?;
/// online.incr(1)?;
/// assert_eq!(online.value()?, 0); // the current minute is not shown yet
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(online.value()?, 1);
/// clock.advance(Duration::from_secs(5 * 60));
/// assert_eq!(online.value()?, 0); // out of the 5-minute window
/// # Ok::<(), mc_core::Error>(())
/// ```
#[derive(Clone)]
pub struct WindowCounter {
    store: Arc<dyn Store>,
    keys: Vec<Key>,
    slot: u64,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for WindowCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowCounter")
            .field("slot_secs", &self.slot)
            .field("slots", &self.keys.len())
            .finish()
    }
}

impl WindowCounter {
    /// `slots` slots (2 to 1000) of `slot` (whole seconds, at least 1).
    pub fn new(
        store: Arc<dyn Store>,
        name: &str,
        slot: Duration,
        slots: usize,
    ) -> Result<WindowCounter> {
        WindowCounter::with_options(store, name, slot, slots, CounterOptions::default())
    }

    /// With a prefix and clock.
    pub fn with_options(
        store: Arc<dyn Store>,
        name: &str,
        slot: Duration,
        slots: usize,
        options: CounterOptions,
    ) -> Result<WindowCounter> {
        if !(2..=1000).contains(&slots) {
            return Err(Error::InvalidArgument(format!(
                "a window counter needs 2 to 1000 slots (one filling, the rest counted); got {slots}"
            )));
        }
        Ok(WindowCounter {
            store,
            keys: (0..slots)
                .map(|i| Key::parts(&options.prefix, "window", name, i))
                .collect::<Result<_>>()?,
            slot: mc_core::whole_secs("the window slot length", slot)?,
            clock: options.clock,
        })
    }

    fn current(&self, now: u64) -> usize {
        ((now / self.slot) % self.keys.len() as u64) as usize
    }

    /// Count `delta` events now. One round trip.
    pub fn incr(&self, delta: u64) -> Result<u64> {
        let now = self.clock.now_secs();
        let n = self.keys.len() as u64;
        let ttl = Ttl::from(Duration::from_secs(n * self.slot - now % self.slot));
        self.store
            .incr_or_init(&self.keys[self.current(now)], delta, delta, ttl)
    }

    /// The events of the last N−1 complete slots. One round trip.
    pub fn value(&self) -> Result<u64> {
        let current = self.current(self.clock.now_secs());
        let others: Vec<Key> = self
            .keys
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != current)
            .map(|(_, k)| k.clone())
            .collect();
        let items = self.store.get_multi(&others)?;
        let mut sum: u64 = 0;
        for (item, key) in items.into_iter().zip(&others) {
            sum = sum.saturating_add(read_counter(item, key)?);
        }
        Ok(sum)
    }
}
