//! [`ShadowCounter`]: events in the previous period, with two keys.

use std::time::Duration;

use mcds_core::{Access, Io, Key, Result, Scope, Ttl, blocking_and_async};

use crate::read_counter;

/// Counts events (visitors, say) in the previous period of `T` seconds
/// (the two-key "shadow" counter of the design sources).
///
/// Periods are aligned to Unix time and numbered from the epoch: period
/// number `now / T`. Events increment the key of the current period (the
/// shadow); the value shown is the key of the previous period, constant for
/// a whole period. Keys are created with a TTL of `3T`, long enough to be
/// read for the whole next period.
///
/// A key is never reused, so no count depends on *when* memcached expires
/// an item. (Two keys swapping roles, each created with a TTL ending on a
/// period boundary, did: memcached's clock ticks are not aligned to Unix
/// seconds, so a key can outlive its boundary by up to a second and mix two
/// periods' counts.)
///
/// Keys: `<prefix>shadow:<name>:<period number>`.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::{ManualClock, MemoryStore, Scope};
/// use mcds_counter::ShadowCounter;
///
/// let clock = ManualClock::new(1_000_000 * 1000); // a multiple of 2T
/// let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
/// let scope = Scope::from(store).with_clock(Arc::new(clock.clone()));
/// let visitors = ShadowCounter::new(&scope, "visitors", Duration::from_secs(60))?;
/// visitors.incr(1)?;
/// visitors.incr(1)?;
/// assert_eq!(visitors.value()?, 0); // counting into the shadow
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(visitors.value()?, 2); // last period's count
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses a period's item: that period counts
/// only the events after the loss (0 if none came). No read can tell a lost
/// period from a quiet one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 222 bytes, less the scope's prefix (the key adds `shadow:`, `:` and a period number of up to 20 digits to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from [`new`](ShadowCounter::new) | no |
/// | period: whole seconds, at least 1 | [`Error::InvalidArgument`](mcds_core::Error::InvalidArgument) from [`new`](ShadowCounter::new) | no |
/// | period: at most [`MAX_PERIOD_SECS`](mcds_core::MAX_PERIOD_SECS) (100 years) | [`Error::InvalidArgument`](mcds_core::Error::InvalidArgument) from `new` | nothing |
/// | TTL (3T): up to `u32::MAX` seconds | saturates there; beyond 30 days it is sent as an absolute time, which memcached caps at January 2038 | — |
/// | a period's count: up to `u64::MAX` | `incr` wraps modulo 2^64, as memcached's `incr` does: no error | yes, the wrapped value |
#[derive(Clone, Debug)]
pub struct ShadowCounter {
    scope: Scope,
    name: String,
    period: u64,
}

impl ShadowCounter {
    /// A counter over periods of `period` (whole seconds, at least 1), in
    /// `scope` (a store, or a [`Scope`] with a key prefix and a clock).
    pub fn new(scope: impl Into<Scope>, name: &str, period: Duration) -> Result<ShadowCounter> {
        let counter = ShadowCounter {
            scope: scope.into(),
            name: name.to_string(),
            period: mcds_core::whole_secs("the shadow counter period", period)?,
        };
        counter.key(u64::MAX)?; // the longest key fits
        Ok(counter)
    }

    fn key(&self, number: u64) -> Result<Key> {
        self.scope.key("shadow", &self.name, number)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(self.scope.store().as_ref(), io)
    }

    /// Count `delta` events in this period. One round trip.
    #[blocking_and_async(pub)]
    async fn incr_io(&self, io: Io, delta: u64) -> Result<u64> {
        let number = self.scope.clock().now_secs() / self.period;
        let ttl = Ttl::from(Duration::from_secs(3 * self.period));
        let key = self.key(number)?;
        self.access(io).incr_or_init(&key, delta, delta, ttl).await
    }

    /// The number of events in the previous period. One round trip.
    #[blocking_and_async(pub)]
    async fn value_io(&self, io: Io) -> Result<u64> {
        let Some(previous) = (self.scope.clock().now_secs() / self.period).checked_sub(1) else {
            return Ok(0);
        };
        let key = self.key(previous)?;
        read_counter(self.access(io).get(&key).await?, &key)
    }
}
