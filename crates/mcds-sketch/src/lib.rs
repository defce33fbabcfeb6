//! # mcds-sketch
//!
//! Probabilistic sketches on memcached semantics (the Redis best-practices article's Redis
//! patterns), each a blob updated by CAS through [`mcds_core::Store::update`]:
//!
//! | type | Redis analogue | size | add | query |
//! |---|---|---|---|---|
//! | [`BloomFilter`] | ReBloom `BF.ADD`/`BF.EXISTS` | `−n·ln p/(ln 2)²` bits, split into blocks past the item limit | 2 round trips (1 if nothing changes) | `contains`: 1 |
//! | [`HyperLogLog`] | `PFADD`/`PFCOUNT`/`PFMERGE` | 16 384 six-bit registers in 16 items, each sparse (2 bytes a register) until dense (768 bytes), plus an append log | 1 (a `get` and a 2-byte `append` in one batch); [`HllBuffer`] flush: 2 | `count`: 1 |
//! | [`ActivityBitmap`] | `SETBIT`/`BITCOUNT` | 1 bit per time unit, 8 KiB segments | 2 (1 if already set) | `count`: 1 |
//! | [`ScalableBloomFilter`] | RedisBloom's scalable `BF.ADD`/`BF.EXISTS` | layers of [`BloomFilter`]s, each `g` times larger at half the rate, and an item naming how many | 2 (1 if already in; 4 when it grows the filter) | `contains`: 1 |
//! | [`Leaderboard`] | `ZINCRBY`/`ZREVRANGE … WITHSCORES` | up to `m` members (exact), then Space-Saving counters: ≤ 145 bytes per member, in one item up to 200 members, else in shards of 200 (up to 2^20 members) | `incr`: 2 | `top`, `score`: 1 (`top`: 2 past about 700 shards on one server) |
//!
//! Every update is a read-modify-write by CAS, except
//! [`HyperLogLog::add`], which appends a 2-byte record to its segment and
//! folds the log in by CAS now and then (see [`hll`]). For the Bloom filters,
//! HyperLogLog and the bitmap the merge commutes (OR for bits, maximum for
//! registers), so concurrent writers never lose each other's elements and a
//! retry is always safe. A leaderboard's increments are not idempotent: a
//! write that lost a race is redone on the new board, so none is lost, but
//! one whose reply was lost ([`Error::Ambiguous`](mcds_core::Error::Ambiguous))
//! is not retried (counted at most once).
//!
//! ```
//! use std::sync::Arc;
//! use mcds_core::MemoryStore;
//! use mcds_sketch::{BloomFilter, HyperLogLog};
//!
//! let store = Arc::new(MemoryStore::new());
//! let seen = BloomFilter::new(store.clone(), "seen-urls", 1_000_000, 0.01)?;
//! let unique = HyperLogLog::new(store, "unique-urls")?;
//! for url in ["/a", "/b", "/a"] {
//!     if seen.add(url)? {
//!         unique.add(url)?;
//!     }
//! }
//! assert_eq!(unique.count()?, 2);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Async API
//!
//! Every method that reaches the store has an async twin (`add_async`,
//! `contains_async`, `count_async`, …): the same algorithm (see
//! [`mcds_core::Access`]), awaiting the store and its backoff timers
//! instead of blocking the thread. Their futures are `Send` (for element
//! types that are), so they can be spawned on a multi-threaded runtime.
//!
//! ```
//! use std::sync::Arc;
//! use mcds_core::MemoryStore;
//! use mcds_sketch::HyperLogLog;
//!
//! # mcds_core::block_on(async {
//! let unique = HyperLogLog::new(Arc::new(MemoryStore::new()), "unique")?;
//! unique.add_many_async(&["/a", "/b", "/a"]).await?;
//! assert_eq!(unique.count_async().await?, 2);
//! # Ok::<(), mcds_core::Error>(())
//! # }).unwrap();
//! ```
//!
//! ## Guarantees, and what breaks them
//!
//! * **No element is lost by concurrency**: updates are CAS loops (64
//!   attempts with backoff, then [`Error::Conflict`](mcds_core::Error::Conflict)).
//! * **Eviction, restart, flush** delete a sketch (or one Bloom block,
//!   HyperLogLog segment or bitmap segment): it then reads as empty (that
//!   part of it, for a block or segment). A Bloom filter that lost a
//!   block gives false *negatives* for that block's elements; use a store
//!   with enough memory for filters that must not forget. With `-M`, a
//!   write refused for memory is [`Error::OutOfMemory`](mcds_core::Error::OutOfMemory)
//!   and leaves the block, segment or board as it was (mcds-memcached
//!   sends CAS writes and appends as text commands: memcached's meta `ms`
//!   would delete the item it cannot replace).
//! * **Accuracy**: HyperLogLog's standard error is 0.81 %; a Bloom filter's
//!   false-positive rate is about the configured one at `expected_items`
//!   and grows beyond it; a scalable filter's stays below the configured
//!   one as it grows; a leaderboard's counts are exact up to its capacity
//!   of members, then overestimate by at most `N/m` (`N_s/200` per shard of a
//!   sharded board: see [`topk`]).
//! * **Garbage** under a sketch's key (another program, or a filter reopened
//!   with other parameters) is [`Error::Corrupt`](mcds_core::Error::Corrupt),
//!   never a panic or a misread.

pub mod bitmap;
pub mod bloom;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod hll;
pub mod scalable;
pub mod topk;

pub use bitmap::ActivityBitmap;
pub use bloom::BloomFilter;
pub use hll::{HllBuffer, HyperLogLog};
pub use scalable::ScalableBloomFilter;
pub use topk::{Entry, Leaderboard};

/// CAS attempts per update before [`mcds_core::Error::Conflict`].
const MAX_ATTEMPTS: u32 = 64;

/// The change of [`update_checked`]: the new value, `None` to leave the item
/// as it is, or why the stored bytes are unreadable. `Send`, so that the
/// async API's futures are.
type CheckedChange<'a> = dyn FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>, String> + Send + 'a;

/// [`Access::update`](mcds_core::Access::update) (the store's own
/// `update` when blocking, the same loop awaited when async), with a change that may find the stored bytes
/// unreadable: `change` returns the new value, `None` to leave the item as
/// it is, or why the bytes are not what it expects
/// ([`Error::Corrupt`](mcds_core::Error::Corrupt)). Whether a new value was
/// stored.
async fn update_checked(
    access: mcds_core::Access<'_>,
    key: &mcds_core::Key,
    ttl: mcds_core::Ttl,
    change: &mut CheckedChange<'_>,
) -> mcds_core::Result<bool> {
    update_checked_with(access, key, ttl, MAX_ATTEMPTS, change).await
}

/// [`update_checked`] in up to `attempts` CAS attempts.
async fn update_checked_with(
    access: mcds_core::Access<'_>,
    key: &mcds_core::Key,
    ttl: mcds_core::Ttl,
    attempts: u32,
    change: &mut CheckedChange<'_>,
) -> mcds_core::Result<bool> {
    let mut failure = None;
    let mut f = |current: Option<&[u8]>| {
        change(current).unwrap_or_else(|reason| {
            failure = Some(reason);
            None
        })
    };
    let stored = matches!(
        access.update(key, ttl, attempts, &mut f).await?,
        mcds_core::Updated::Stored { .. }
    );
    match failure {
        Some(reason) => Err(corrupt(key, reason)),
        None => Ok(stored),
    }
}

/// The write of `value` to `key` read with CAS id `cas`: a `cas`, or an
/// `add` where the item was missing (a batch of read-modify-writes).
fn cas_or_add<'a>(
    key: &'a mcds_core::Key,
    value: &'a [u8],
    ttl: mcds_core::Ttl,
    cas: Option<u64>,
) -> mcds_core::Op<'a> {
    match cas {
        Some(cas) => mcds_core::Op::Cas {
            key,
            value,
            ttl,
            cas,
        },
        None => mcds_core::Op::Add { key, value, ttl },
    }
}

fn corrupt(key: &mcds_core::Key, reason: impl Into<String>) -> mcds_core::Error {
    mcds_core::Error::Corrupt {
        key: key.display(),
        reason: reason.into(),
    }
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
