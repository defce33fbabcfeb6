//! [`ViewCounter`]: a cached view counter seeded from the database.

use std::sync::Arc;

use mcds_core::{Key, Result, Scope, Store, Stored, Ttl};

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

    /// Count one view; the new total. One round trip on a hit; on a miss
    /// the loader runs and the cache is seeded with `incr_or_init` (2 round
    /// trips, also when another client seeded it first).
    pub fn view(&self, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        self.view_by(1, loader)
    }

    /// Count `delta` views; the new total.
    pub fn view_by(&self, delta: u64, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        if let Some(n) = self.store.incr(&self.key, delta)? {
            return Ok(n);
        }
        let seeded = loader()?.saturating_add(delta);
        // Seeds the cache, or counts on top of a client that seeded it first.
        self.store.incr_or_init(&self.key, delta, seeded, self.ttl)
    }

    /// The current total: the cached value, or on a miss the loader's value
    /// (which then seeds the cache with `add`).
    pub fn get(&self, loader: impl FnOnce() -> Result<u64>) -> Result<u64> {
        if let Some(item) = self.store.get(&self.key)? {
            return read_counter(Some(item), &self.key);
        }
        let loaded = loader()?;
        match self
            .store
            .add(&self.key, loaded.to_string().as_bytes(), self.ttl)?
        {
            Stored::Stored(_) => Ok(loaded),
            Stored::NotStored => read_counter(self.store.get(&self.key)?, &self.key),
        }
    }

    /// Drop the cached value (the next view reloads it).
    pub fn invalidate(&self) -> Result<()> {
        self.store.delete(&self.key).map(drop)
    }
}
