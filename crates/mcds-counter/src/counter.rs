//! [`Counter`]: an exact, shared counter.

use std::sync::Arc;

use mcds_core::{Access, Error, Io, Key, Op, Reply, Result, Scope, Store, Ttl, blocking_and_async};

use crate::read_counter;

/// An exact counter shared by every process that uses the same store and
/// name. Key: `<prefix>counter:<name>:value`.
///
/// * `incr(δ)` is one `incr_or_init(δ, initial δ)`: atomic, one round trip
///   including the first touch, never loses an increment.
/// * `decr(δ)` stops at 0; on a missing counter it returns 0 and creates
///   nothing.
/// * `get()` is 0 when the counter does not exist.
/// * Every method has an async twin (`incr_async`, …): the same algorithm
///   (see [`Access`]), awaiting the store instead of blocking the thread.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_counter::Counter;
///
/// let c = Counter::new(Arc::new(MemoryStore::new()), "jobs")?;
/// assert_eq!(c.get()?, 0);
/// assert_eq!(c.incr(5)?, 5);
/// assert_eq!(c.decr(7)?, 0);
/// c.reset()?;
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart of the counter's server, or an eviction of its one item,
/// loses the count: the next `incr` creates the item again from its delta,
/// and reads count from there (0 before). No read can tell a lost counter
/// from one never written: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 236 bytes, less the scope's prefix (the key adds `counter:` and `:value` to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`] from [`new`](Counter::new) | no |
/// | name bytes: not empty, no spaces or control bytes | [`Error::InvalidKey`] from [`new`](Counter::new) | no |
/// | value: up to `u64::MAX` | `incr` wraps modulo 2^64, as memcached's `incr` does: no error | yes, the wrapped value |
/// | value: 0 at least | `decr` stops at 0: no error | yes, 0 |
/// | value on memcached: below 2^63 | memcached 1.6 (1.6.18 included) may refuse to `incr`/`decr` a counter of 2^63 or more with [`Error::NonNumeric`], depending on the bytes after the item in its memory (see [`CounterMap`](crate::CounterMap)'s bounds); the embedded store never does | no |
/// | [`incr_many`](Counter::incr_many): counters on one store | [`Error::InvalidArgument`] for every counter | no |
#[derive(Clone, Debug)]
pub struct Counter {
    store: Arc<dyn Store>,
    key: Key,
    ttl: Ttl,
}

impl Counter {
    /// The counter `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix), never expiring.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<Counter> {
        let scope = scope.into();
        Ok(Counter {
            key: scope.key("counter", name, "value")?,
            store: Arc::clone(scope.store()),
            ttl: Ttl::Never,
        })
    }

    /// The counter kept under exactly `key`, with no `counter:` naming and
    /// no prefix: for a counter another application already uses, such as
    /// PHP code calling `Memcached::increment("hits")`. memcached's counters
    /// are decimal text whoever writes them, so increments from both sides
    /// add up; on a pool, both sides must place the key on the same server
    /// (a single server, or the same distribution, such as ketama).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcds_core::{Key, MemoryStore, Store};
    /// use mcds_counter::Counter;
    ///
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let hits = Counter::with_key(Arc::clone(&store), Key::new("hits")?);
    /// hits.incr(2)?;
    /// assert_eq!(store.get(&Key::new("hits")?)?.unwrap().value, b"2");
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn with_key(store: Arc<dyn Store>, key: Key) -> Counter {
        Counter {
            store,
            key,
            ttl: Ttl::Never,
        }
    }

    /// Give the counter a TTL, applied when an increment creates it.
    pub fn with_ttl(mut self, ttl: Ttl) -> Counter {
        self.ttl = ttl;
        self
    }

    /// The key the counter lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Add `delta`; the new value. One round trip.
    pub fn incr(&self, delta: u64) -> Result<u64> {
        // The one store call of `incr_io`, made directly: no future to
        // build and poll on the hottest path of the embedded store.
        self.store.incr_or_init(&self.key, delta, delta, self.ttl)
    }

    /// [`incr`](Counter::incr) without blocking the thread.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_counter::Counter;
    /// # mcds_core::block_on(async {
    /// let c = Counter::new(Arc::new(MemoryStore::new()), "jobs")?;
    /// assert_eq!(c.incr_async(2).await?, 2);
    /// assert_eq!(c.get_async().await?, 2);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn incr_async(&self, delta: u64) -> Result<u64> {
        self.incr_io(Io::Async, delta).await
    }

    async fn incr_io(&self, io: Io, delta: u64) -> Result<u64> {
        self.access(io)
            .incr_or_init(&self.key, delta, delta, self.ttl)
            .await
    }

    /// Add to many counters at once: one pipelined batch, so one round trip
    /// per server however many counters. One result per counter, in order
    /// (the increments are independent: one failing does not undo the
    /// others). Every counter must use the same store, else
    /// [`Error::InvalidArgument`] for all.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcds_core::{MemoryStore, Store};
    /// use mcds_counter::Counter;
    ///
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let views = Counter::new(store.clone(), "views")?;
    /// let clicks = Counter::new(store.clone(), "clicks")?;
    /// let new = Counter::incr_many(&[(&views, 10), (&clicks, 1), (&views, 5)]);
    /// let new: Vec<u64> = new.into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(new, [10, 1, 15]);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    #[blocking_and_async(pub)]
    async fn incr_many_io(io: Io, counters: &[(&Counter, u64)]) -> Vec<Result<u64>> {
        let Some((first, _)) = counters.first() else {
            return Vec::new();
        };
        let thin = |c: &Counter| Arc::as_ptr(&c.store).cast::<()>();
        if counters.iter().any(|(c, _)| thin(c) != thin(first)) {
            return counters
                .iter()
                .map(|_| {
                    Err(Error::InvalidArgument(
                        "Counter::incr_many needs counters on the same store; group them by store"
                            .into(),
                    ))
                })
                .collect();
        }
        let ops: Vec<Op<'_>> = counters
            .iter()
            .map(|(c, delta)| Op::IncrOrInit {
                key: &c.key,
                delta: *delta,
                initial: *delta,
                ttl: c.ttl,
            })
            .collect();
        first
            .access(io)
            .pipeline(&ops)
            .await
            .into_iter()
            .map(|r| r.and_then(Reply::value))
            .collect()
    }

    /// Subtract `delta`, stopping at 0; the new value (0 if the counter does
    /// not exist). One round trip.
    #[blocking_and_async(pub)]
    async fn decr_io(&self, io: Io, delta: u64) -> Result<u64> {
        Ok(self.access(io).decr(&self.key, delta).await?.unwrap_or(0))
    }

    /// The current value, 0 if the counter does not exist. One round trip.
    #[blocking_and_async(pub)]
    async fn get_io(&self, io: Io) -> Result<u64> {
        read_counter(self.access(io).get(&self.key).await?, &self.key)
    }

    /// Delete the counter (it reads as 0 again).
    #[blocking_and_async(pub)]
    async fn reset_io(&self, io: Io) -> Result<()> {
        self.access(io).delete(&self.key).await.map(drop)
    }
}
