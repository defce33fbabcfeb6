//! [`CountingStore`]: round trips and commands per operation.

use std::collections::BTreeMap;

use parking_lot::Mutex;

use crate::error::Result;
use crate::key::Key;
use crate::pipeline::{Op, Reply};
use crate::store::{CasOutcome, DeleteOutcome, Item, Store, Stored, UpdateFn, Updated};
use crate::time::Ttl;
use crate::traffic::{self, Traffic};

/// Calls, round trips and commands of one operation kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    /// How many times the operation was called.
    pub calls: u64,
    /// Network round trips those calls caused (for the embedded store: one
    /// per operation, as if it were a server).
    pub round_trips: u64,
    /// Commands those calls sent.
    pub commands: u64,
}

/// A wrapper that counts, per [`Store`] operation, the calls, round trips
/// and commands, so "how many round trips does `Set::add` cost?" is answered
/// by a number.
///
/// Round trips are read from the thread-local [`traffic`](crate::traffic)
/// counters that backends update, so the count is the real number of network
/// exchanges of the wrapped backend (a fallback loop on an old memcached
/// shows up as more than one), and it stays exact when several threads share
/// the store.
///
/// ```
/// use mc_core::{CountingStore, Key, MemoryStore, Store, Ttl};
///
/// let store = CountingStore::new(MemoryStore::new());
/// let k = Key::new("hits")?;
/// store.incr_or_init(&k, 1, 1, Ttl::Never)?;
/// store.get(&k)?;
/// assert_eq!(store.total().round_trips, 2);
/// assert_eq!(store.stats("incr_or_init").calls, 1);
/// store.reset();
/// assert_eq!(store.total().round_trips, 0);
/// # Ok::<(), mc_core::Error>(())
/// ```
#[derive(Debug)]
pub struct CountingStore<S> {
    inner: S,
    stats: Mutex<BTreeMap<&'static str, OpStats>>,
}

impl<S: Store> CountingStore<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> CountingStore<S> {
        CountingStore {
            inner,
            stats: Mutex::new(BTreeMap::new()),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The counts for one operation ("get", "incr_or_init", ...).
    pub fn stats(&self, op: &str) -> OpStats {
        self.stats.lock().get(op).copied().unwrap_or_default()
    }

    /// The counts of every operation called so far, by name.
    pub fn all(&self) -> BTreeMap<&'static str, OpStats> {
        self.stats.lock().clone()
    }

    /// The sum over all operations.
    pub fn total(&self) -> OpStats {
        self.stats
            .lock()
            .values()
            .fold(OpStats::default(), |mut acc, s| {
                acc.calls += s.calls;
                acc.round_trips += s.round_trips;
                acc.commands += s.commands;
                acc
            })
    }

    /// Forget all counts.
    pub fn reset(&self) {
        self.stats.lock().clear();
    }

    fn count<T>(&self, op: &'static str, f: impl FnOnce(&S) -> T) -> T {
        let (out, t): (T, Traffic) = traffic::measure(|| f(&self.inner));
        let mut stats = self.stats.lock();
        let s = stats.entry(op).or_default();
        s.calls += 1;
        s.round_trips += t.round_trips;
        s.commands += t.commands;
        out
    }
}

impl<S: Store> Store for CountingStore<S> {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }
    fn get(&self, key: &Key) -> Result<Option<Item>> {
        self.count("get", |s| s.get(key))
    }
    fn get_multi(&self, keys: &[Key]) -> Result<Vec<Option<Item>>> {
        self.count("get_multi", |s| s.get_multi(keys))
    }
    fn set(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<u64> {
        self.count("set", |s| s.set(key, value, ttl))
    }
    fn add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        self.count("add", |s| s.add(key, value, ttl))
    }
    fn replace(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<Stored> {
        self.count("replace", |s| s.replace(key, value, ttl))
    }
    fn cas(&self, key: &Key, value: &[u8], ttl: Ttl, cas: u64) -> Result<CasOutcome> {
        self.count("cas", |s| s.cas(key, value, ttl, cas))
    }
    fn append(&self, key: &Key, value: &[u8]) -> Result<bool> {
        self.count("append", |s| s.append(key, value))
    }
    fn prepend(&self, key: &Key, value: &[u8]) -> Result<bool> {
        self.count("prepend", |s| s.prepend(key, value))
    }
    fn append_or_add(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
        self.count("append_or_add", |s| s.append_or_add(key, value, ttl))
    }
    fn incr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.count("incr", |s| s.incr(key, delta))
    }
    fn decr(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.count("decr", |s| s.decr(key, delta))
    }
    fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        self.count("incr_or_init", |s| s.incr_or_init(key, delta, initial, ttl))
    }
    fn delete(&self, key: &Key) -> Result<bool> {
        self.count("delete", |s| s.delete(key))
    }
    fn delete_cas(&self, key: &Key, cas: u64) -> Result<DeleteOutcome> {
        self.count("delete_cas", |s| s.delete_cas(key, cas))
    }
    fn touch(&self, key: &Key, ttl: Ttl) -> Result<bool> {
        self.count("touch", |s| s.touch(key, ttl))
    }
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        self.count("update", |s| s.update(key, ttl, max_attempts, f))
    }
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        self.count("pipeline", |s| s.pipeline(ops))
    }
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        self.inner.supports_cas(key)
    }
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        self.inner.colocated(a, b)
    }
    fn item_size_limit(&self) -> usize {
        self.inner.item_size_limit()
    }
}
