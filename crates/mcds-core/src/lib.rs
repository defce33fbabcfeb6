//! # mcds-core
//!
//! The foundation of **mcds**, distributed data structures on memcached
//! semantics: the [`Store`] trait every structure is written against, the
//! validated [`Key`], [`Ttl`] and [`Clock`] types, the one [`Error`] type,
//! the embedded [`MemoryStore`] (memcached semantics in process, the
//! default backend), [`CountingStore`] for round-trip accounting, the
//! shared [`Backoff`], and [`Access`], through which each structure's one
//! algorithm serves both the blocking and the async API.
//!
//! The real-memcached backend lives in the `mcds-memcached` crate; structures
//! (locks, counters, sets, the event log) live in their own crates and
//! depend on this one only.
//!
//! ```
//! use mcds_core::{Key, MemoryStore, Store, Ttl};
//!
//! let store = MemoryStore::new();
//! let hits = Key::new("page:/index:hits")?;
//! for _ in 0..3 {
//!     store.incr_or_init(&hits, 1, 1, Ttl::secs(3600))?;
//! }
//! assert_eq!(store.get(&hits)?.unwrap().counter(), Some(3));
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Guarantees and what breaks them
//!
//! A store guarantees memcached's per-key atomicity: each operation on one
//! key is applied whole or not at all, CAS ids change on every
//! modification, and `incr_or_init`/`add` never lose a concurrent update.
//! Nothing survives eviction (memory pressure), expiry, a server restart or
//! `flush_all`: structures built on a store document what each of these
//! does to them.

mod access;
pub mod backend;
mod backoff;
mod clock;
mod counting;
mod error;
mod item;
mod key;
mod memory;
mod op;
mod quorum;
mod random;
mod retention;
mod scope;
mod store;
pub mod traffic;
mod ttl;

pub use access::{Access, BoxFuture, Io, SendUpdateFn, block_on, in_block_on};
pub use backoff::Backoff;
pub use clock::{Clock, CoarseClock, ManualClock, SystemClock, UnixMs, system_time, unix_ms};
pub use counting::{CountingStore, OpStats};
pub use error::{Error, Result};
pub use item::{CasOutcome, DEFAULT_ITEM_SIZE_LIMIT, DeleteOutcome, Item, Stored, Updated};
pub use key::{Key, MAX_KEY_LEN, escape_name, is_key_byte};
/// **One definition, both APIs.** On an `async fn x_io(.., io: Io, ..)` in
/// an `impl` block, `#[blocking_and_async(vis)]` keeps that function and
/// adds two with visibility `vis` and the same other parameters:
///
/// * `x`, the blocking form: `block_on(self.x_io(Io::Blocking, ..))`,
///   with the doc comment written on `x_io`;
/// * `x_async`, the async form: `self.x_io(Io::Async, ..).await`,
///   documented as "`x` without blocking the thread".
///
/// The algorithm reaches the store through [`Access`] with the `io` it is
/// given (see [`access`](Access)), so the blocking form never waits on a
/// future and pays nothing for the async one. Other attributes are copied
/// to both forms. Each parameter must be a plain name; a method without
/// `self` calls `Self::x_io`.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::{Access, Io, Key, MemoryStore, Result, Store, Ttl, blocking_and_async};
///
/// struct Hits {
///     store: Arc<dyn Store>,
///     key: Key,
/// }
///
/// impl Hits {
///     /// Count one hit; the new total. One round trip.
///     #[blocking_and_async(pub)]
///     async fn hit_io(&self, io: Io, by: u64) -> Result<u64> {
///         Access::new(&*self.store, io)
///             .incr_or_init(&self.key, by, by, Ttl::Never)
///             .await
///     }
/// }
///
/// let hits = Hits { store: Arc::new(MemoryStore::new()), key: Key::new("hits")? };
/// assert_eq!(hits.hit(2)?, 2);
/// assert_eq!(block_on(hits.hit_async(3))?, 5);
/// # use mcds_core::block_on;
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub use mcds_macros::blocking_and_async;
pub use memory::{Eviction, MemoryStore, MemoryStoreBuilder};
pub use op::{Op, OpArg, OpArgs, OpFields, OpKind, OwnedOp, Reply, run_pipeline};
pub use quorum::{MAX_QUORUM, MIN_QUORUM, QuorumMember, QuorumStore};
pub use random::{random_token, random_u64, stable_hash, stable_hash128};
pub use retention::Retention;
pub use scope::Scope;
pub use store::{Store, UpdateFn};
pub use ttl::{MAX_PERIOD_SECS, MAX_RELATIVE_TTL_SECS, Ttl, whole_secs};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
