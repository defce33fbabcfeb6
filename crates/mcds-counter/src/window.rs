//! [`WindowCounter`]: events in the last N−1 slots.

use std::time::Duration;

use mcds_core::{Access, Error, Io, Key, Result, Scope, Ttl, blocking_and_async};

use crate::read_counter;

/// Counts events over a sliding window of `slots − 1` slots of `slot`
/// seconds each (the online-users counter of the design sources: 6 slots of
/// a minute count the last 5 minutes).
///
/// Slots are aligned to Unix time and numbered from the epoch: slot number
/// `now / p`. An event increments the key of its slot number, creating it
/// with a TTL of `(N + 1) · p`, long enough to outlive every read that
/// counts it. The value is the sum of the *other* N−1 slots (the current
/// one is still filling), read in one `get_multi`.
///
/// A key is never reused: slot 1000 and slot 1006 are different keys. So no
/// count depends on *when* memcached expires an item. (Keys per slot index,
/// reused every N slots, did: memcached's clock ticks are not aligned to Unix
/// seconds, so a slot key created just after the server's tick outlives its
/// slot by up to a second, and the next cycle's increments land in the old
/// item and vanish with it.) Expiry only frees memory.
///
/// Keys: `<prefix>window:<name>:<slot number>`.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::{ManualClock, MemoryStore, Scope};
/// use mcds_counter::WindowCounter;
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let scope = Scope::from(store).with_clock(Arc::new(clock.clone()));
/// let online = WindowCounter::new(&scope, "online", Duration::from_secs(60), 6)?;
/// online.incr(1)?;
/// assert_eq!(online.value()?, 0); // the current minute is not shown yet
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(online.value()?, 1);
/// clock.advance(Duration::from_secs(5 * 60));
/// assert_eq!(online.value()?, 0); // out of the 5-minute window
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses slot items: the window counts only
/// what the surviving slots hold. No read can tell a lost slot from an
/// empty one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 222 bytes, less the scope's prefix (the key adds `window:`, `:` and a slot number of up to 20 digits to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from [`new`](WindowCounter::new) | no |
/// | slots: 2 to 1000 (`value` reads the N−1 complete ones in one `get_multi`) | [`Error::InvalidArgument`] from [`new`](WindowCounter::new) | no |
/// | slot length: whole seconds, at least 1 | [`Error::InvalidArgument`] from [`new`](WindowCounter::new) | no |
/// | slot length: at most [`MAX_PERIOD_SECS`](mcds_core::MAX_PERIOD_SECS) (100 years) | [`Error::InvalidArgument`](mcds_core::Error::InvalidArgument) from `new` | nothing |
/// | TTL ((N + 1)·p): up to `u32::MAX` seconds | saturates there; beyond 30 days it is sent as an absolute time, which memcached caps at January 2038 | — |
/// | a slot's count: up to `u64::MAX` | `incr` wraps modulo 2^64, as memcached's `incr` does: no error | yes, the wrapped value |
/// | the window's sum: up to `u64::MAX` | saturates at `u64::MAX`: no error | — (a read) |
#[derive(Clone, Debug)]
pub struct WindowCounter {
    scope: Scope,
    name: String,
    slots: u64,
    slot: u64,
}

impl WindowCounter {
    /// `slots` slots (2 to 1000) of `slot` (whole seconds, at least 1), in
    /// `scope` (a store, or a [`Scope`] with a key prefix and a clock).
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        slot: Duration,
        slots: usize,
    ) -> Result<WindowCounter> {
        let scope = scope.into();
        if !(2..=1000).contains(&slots) {
            return Err(Error::InvalidArgument(format!(
                "a window counter needs 2 to 1000 slots (one filling, the rest counted); got {slots}"
            )));
        }
        let counter = WindowCounter {
            scope,
            name: name.to_string(),
            slots: slots as u64,
            slot: mcds_core::whole_secs("the window slot length", slot)?,
        };
        counter.key(u64::MAX)?; // the longest key fits
        Ok(counter)
    }

    fn key(&self, number: u64) -> Result<Key> {
        self.scope.key("window", &self.name, number)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(self.scope.store().as_ref(), io)
    }

    /// Count `delta` events now. One round trip.
    #[blocking_and_async(pub)]
    async fn incr_io(&self, io: Io, delta: u64) -> Result<u64> {
        let number = self.scope.clock().now_secs() / self.slot;
        let ttl = Ttl::from(Duration::from_secs((self.slots + 1) * self.slot));
        let key = self.key(number)?;
        self.access(io).incr_or_init(&key, delta, delta, ttl).await
    }

    /// The events of the last N−1 complete slots. One round trip.
    #[blocking_and_async(pub)]
    async fn value_io(&self, io: Io) -> Result<u64> {
        let current = self.scope.clock().now_secs() / self.slot;
        let others: Vec<Key> = (1..self.slots)
            .filter_map(|back| current.checked_sub(back))
            .map(|number| self.key(number))
            .collect::<Result<_>>()?;
        let items = self.access(io).get_multi(&others).await?;
        let mut sum: u64 = 0;
        for (item, key) in items.into_iter().zip(&others) {
            sum = sum.saturating_add(read_counter(item, key)?);
        }
        Ok(sum)
    }
}
