//! [`ViewCounter`]: a cached view counter seeded from the database.

use std::future::Future;
use std::sync::Arc;

use mcds_core::{Access, Io, Key, Result, Scope, Store, Stored, Ttl, block_on, blocking_and_async};

use crate::read_counter;

/// A view counter whose true total lives elsewhere (a database), cached in
/// memcached for real-time display (the "Web, caching and memcached" series).
///
/// `view(loader)` increments the cached count; when the key is missing it
/// calls `loader` for the stored total and seeds the cache with
/// `incr_or_init` — never `set` — so two first views at once are both
/// counted: the loser of the race increments the winner's value instead of
/// overwriting it.
/// Key: `<prefix>views:<name>:value`.
///
/// Every method has an async twin (`view_async`, …): the same algorithm
/// (see [`Access`]), awaiting the store instead of blocking the thread. The
/// twins take an *async* loader (a closure returning a future, such as an
/// async database query), so loading does not block the thread either; the
/// twin's future is `Send` when the loader and its future are.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_counter::ViewCounter;
///
/// let views = ViewCounter::new(Arc::new(MemoryStore::new()), "photo:9")?;
/// let from_db = || Ok(1000); // SELECT views FROM photos WHERE id = 9
/// assert_eq!(views.view(from_db)?, 1001);
/// assert_eq!(views.view(from_db)?, 1002); // no database call on a hit
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses the cached total; the next `view` or
/// `get` misses and seeds it from the loader again. So the total is right
/// when the loader is the source of truth (the design: a cache in front of
/// the database), and short by the views counted since the loader's value
/// was taken when it is not. A read cannot tell a lost total from one never
/// cached: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 238 bytes, less the scope's prefix (the key adds `views:` and `:value` to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from [`new`](ViewCounter::new) | no |
/// | name bytes: not empty, no spaces or control bytes | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from [`new`](ViewCounter::new) | no |
/// | seeded total: the loader's value plus the delta, up to `u64::MAX` | saturates at `u64::MAX`: no error | yes, `u64::MAX` |
/// | cached total: up to `u64::MAX` | a view wraps it modulo 2^64, as memcached's `incr` does: no error | yes, the wrapped value |
/// | cached total on memcached: below 2^63 | memcached 1.6 (1.6.18 included) may refuse to `incr` a counter of 2^63 or more with [`Error::NonNumeric`](mcds_core::Error::NonNumeric), depending on the bytes after the item in its memory (see [`CounterMap`](crate::CounterMap)'s bounds) | no |
/// | a loader error | returned as it is | no |
#[derive(Clone, Debug)]
pub struct ViewCounter {
    store: Arc<dyn Store>,
    key: Key,
    ttl: Ttl,
}

impl ViewCounter {
    /// The view counter `name` in `scope` (a store, or a [`Scope`] with a
    /// key prefix), cached without expiry.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<ViewCounter> {
        let scope = scope.into();
        Ok(ViewCounter {
            key: scope.key("views", name, "value")?,
            store: Arc::clone(scope.store()),
            ttl: Ttl::Never,
        })
    }

    /// Let the cached value expire (and be reloaded) after `ttl`.
    pub fn with_ttl(mut self, ttl: Ttl) -> ViewCounter {
        self.ttl = ttl;
        self
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Count one view; the new total. One round trip on a hit; on a miss
    /// the loader runs and the cache is seeded with `incr_or_init` (2 round
    /// trips, also when another client seeded it first).
    pub fn view(&self, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        self.view_by(1, loader)
    }

    /// [`view`](ViewCounter::view) without blocking the thread; `loader`
    /// is async (see the [type docs](ViewCounter)).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_counter::ViewCounter;
    /// # mcds_core::block_on(async {
    /// let views = ViewCounter::new(Arc::new(MemoryStore::new()), "photo:9")?;
    /// let from_db = || async { Ok(1000) }; // an async database query
    /// assert_eq!(views.view_async(from_db).await?, 1001);
    /// assert_eq!(views.view_async(from_db).await?, 1002);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn view_async<L, F>(&self, loader: L) -> Result<u64>
    where
        L: FnOnce() -> F,
        F: Future<Output = Result<u64>>,
    {
        self.view_by_async(1, loader).await
    }

    /// Count `delta` views; the new total.
    pub fn view_by(&self, delta: u64, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        block_on(self.view_by_io(Io::Blocking, delta, || std::future::ready(loader())))
    }

    /// [`view_by`](ViewCounter::view_by) without blocking the thread;
    /// `loader` is async (see the [type docs](ViewCounter)).
    pub async fn view_by_async<L, F>(&self, delta: u64, loader: L) -> Result<u64>
    where
        L: FnOnce() -> F,
        F: Future<Output = Result<u64>>,
    {
        self.view_by_io(Io::Async, delta, loader).await
    }

    async fn view_by_io<L, F>(&self, io: Io, delta: u64, loader: L) -> Result<u64>
    where
        L: FnOnce() -> F,
        F: Future<Output = Result<u64>>,
    {
        let access = self.access(io);
        if let Some(n) = access.incr(&self.key, delta).await? {
            return Ok(n);
        }
        let seeded = loader().await?.saturating_add(delta);
        // Seeds the cache, or counts on top of a client that seeded it first.
        access
            .incr_or_init(&self.key, delta, seeded, self.ttl)
            .await
    }

    /// The current total: the cached value, or on a miss the loader's value
    /// (which then seeds the cache with `add`).
    pub fn get(&self, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        block_on(self.get_io(Io::Blocking, || std::future::ready(loader())))
    }

    /// [`get`](ViewCounter::get) without blocking the thread; `loader` is
    /// async (see the [type docs](ViewCounter)).
    pub async fn get_async<L, F>(&self, loader: L) -> Result<u64>
    where
        L: FnOnce() -> F,
        F: Future<Output = Result<u64>>,
    {
        self.get_io(Io::Async, loader).await
    }

    async fn get_io<L, F>(&self, io: Io, loader: L) -> Result<u64>
    where
        L: FnOnce() -> F,
        F: Future<Output = Result<u64>>,
    {
        let access = self.access(io);
        if let Some(item) = access.get(&self.key).await? {
            return read_counter(Some(item), &self.key);
        }
        let loaded = loader().await?;
        match access
            .add(&self.key, loaded.to_string().as_bytes(), self.ttl)
            .await?
        {
            Stored::Stored(_) => Ok(loaded),
            Stored::NotStored => read_counter(access.get(&self.key).await?, &self.key),
        }
    }

    /// Drop the cached value (the next view reloads it).
    #[blocking_and_async(pub)]
    async fn invalidate_io(&self, io: Io) -> Result<()> {
        self.access(io).delete(&self.key).await.map(drop)
    }
}
