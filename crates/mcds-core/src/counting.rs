//! [`CountingStore`]: round trips and commands per operation.

use std::collections::BTreeMap;

use parking_lot::Mutex;

use crate::error::Result;
use crate::key::Key;
use crate::op::{Op, Reply};
use crate::store::Store;
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
/// It is for tests and accounting, and blocking: its async methods are the
/// defaults of [`Store`] (the blocking method, run when first polled), so
/// that its counts stay per thread. Around a store that does I/O, an async
/// caller through it blocks its thread.
///
/// ```
/// use mcds_core::{CountingStore, Key, MemoryStore, Store, Ttl};
///
/// let store = CountingStore::new(MemoryStore::new());
/// let k = Key::new("hits")?;
/// store.incr_or_init(&k, 1, 1, Ttl::Never)?;
/// store.get(&k)?;
/// assert_eq!(store.total().round_trips, 2);
/// assert_eq!(store.stats("incr_or_init").calls, 1);
/// store.reset();
/// assert_eq!(store.total().round_trips, 0);
/// # Ok::<(), mcds_core::Error>(())
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

/// Every op is counted under its name ([`Op::name`]: "get", "incr_or_init",
/// …) and every batch as "pipeline"; a typed method such as `get` counts as
/// its op, and [`Store::update`] as the `get` and `cas`/`add` it runs.
impl<S: Store> Store for CountingStore<S> {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        self.count(op.name(), |s| s.execute(op))
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
    fn quorum(&self) -> Option<&crate::QuorumStore> {
        self.inner.quorum()
    }
    fn retention(&self, key: &Key) -> Result<crate::Retention> {
        self.inner.retention(key)
    }
    fn retention_async<'a>(
        &'a self,
        key: &'a Key,
    ) -> crate::BoxFuture<'a, Result<crate::Retention>> {
        self.inner.retention_async(key)
    }
}
