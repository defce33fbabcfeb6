//! # mcds-timeseries
//!
//! Time series on memcached semantics, for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached. Each type's
//! whole algorithm is in its own file:
//!
//! | type | what it keeps | write | read |
//! |---|---|---|---|
//! | [`TimeSeries`] | count, exact sum, min and max of `i64` samples per bucket (one item each), at up to 8 resolutions (1 s, 1 min, 1 h…) each with its retention | `record`: 2 round trips per server (a `get` and a `cas` of every resolution's bucket at once) | `range`, `aggregate`/`sum`/`count`/`avg`/`min`/`max`, `union`/`intersection` of series: 1 round trip per server, and 2 more per server for the loss check |
//! | [`PackedSeries`] | a dense counter per time slot, `u8`/`u16`/`u32` slots packed many to an item per period (the `BITFIELD` pattern), saturating | `incr`: 2 (CAS) | `range`/`sum`/`get`: 1 per server, and 2 more per server for the loss check |
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mcds_core::MemoryStore;
//! use mcds_timeseries::{Resolution, TimeSeries};
//!
//! let store = Arc::new(MemoryStore::new());
//! let minute = Duration::from_secs(60);
//! let bytes_sent = TimeSeries::new(store, "bytes-sent", &[
//!     Resolution::new(minute, Duration::from_secs(86_400))?,
//! ])?;
//! bytes_sent.record_now(1500)?;
//! bytes_sent.record_now(500)?;
//! let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
//! let now_ms = now.as_millis() as u64;
//! assert_eq!(bytes_sent.sum(now_ms - 60_000, now_ms, minute)?, 2000);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! Every method that reaches the store has an async twin (`record_async`,
//! `range_async`, `incr_async`, …): the same algorithm (see
//! [`Access`](mcds_core::Access)), awaiting the store instead of blocking
//! the thread.
//!
//! ## Time and retention
//!
//! Buckets and slots are aligned to Unix time and named by their number
//! (`ts / step`), so every process agrees on them when clocks are in sync,
//! and a key is never reused. Each resolution keeps its buckets for a
//! retention after they end; reads never look past it, and TTLs reach a
//! minute beyond it, so no result depends on *when* memcached expires an
//! item: TTLs only free memory. Records and reads take time from the
//! [`Scope`](mcds_core::Scope)'s [`Clock`](mcds_core::Clock) (a
//! [`ManualClock`](mcds_core::ManualClock) in tests).
//!
//! ## Guarantees, and what breaks them
//!
//! * **Concurrency**: a time series bucket and a packed period are each one
//!   item changed only by CAS, whose merge commutes: exact under any number
//!   of threads and processes, no concurrent update lost (64 attempts with
//!   backoff, then [`Error::Conflict`](mcds_core::Error::Conflict)), and a
//!   read sees each record whole or not at all.
//! * **Eviction, restart, flush** lose data without a reply that says so.
//!   A read asks each server it read from whether it lost items since the
//!   data it returns could first be written
//!   ([`Store::retention`](mcds_core::Store::retention): memcached's
//!   `stats`), and when it did, the read is
//!   [`Error::Lost`](mcds_core::Error::Lost), never a short or missing
//!   answer. That includes data from before a fresh server started (a
//!   restart looks the same) and every recent bucket of a server that
//!   keeps evicting: give time series servers the memory they need, or
//!   `-M`. `with_loss_check(false)` reads what is there. See
//!   [`TimeSeries`] for what cannot be seen (a delayed `flush_all`).
//! * **Partial failure**: a record that fails wrote nothing, or is
//!   [`Error::Ambiguous`](mcds_core::Error::Ambiguous) when some
//!   resolutions' buckets took the sample (see [`TimeSeries`]).
//! * **Garbage** under a series' keys is `Error::Corrupt`, never a panic.

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod packed;
mod period;
mod series;

pub use packed::{MAX_RANGE_SLOTS, MAX_SLOTS_PER_PERIOD, PackedSeries, Slot, SlotWidth};
pub use series::{
    BUCKET_LEN, Bucket, MAX_RANGE_BUCKETS, MAX_RESOLUTIONS, MAX_SAMPLES_PER_BUCKET, RangeIter,
    Resolution, Stats, TimeSeries,
};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
