//! # mcds-timeseries
//!
//! Time series on memcached semantics, for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached. Each type's
//! whole algorithm is in its own file:
//!
//! | type | what it keeps | write | read |
//! |---|---|---|---|
//! | [`TimeSeries`] | count, exact sum, min and max of `i64` samples per bucket, at up to 8 resolutions (1 s, 1 min, 1 h…) each with its retention | `record`: 1 round trip per server for every resolution at once (2 when a bucket's min or max moves) | `range`, `aggregate`/`sum`/`count`/`avg`/`min`/`max`, `union`/`intersection` of series: 1 round trip per server |
//! | [`PackedSeries`] | a dense counter per time slot, `u8`/`u16`/`u32` slots packed many to an item per period (the `BITFIELD` pattern), saturating | `incr`: 2 (CAS) | `range`/`sum`/`get`: 1 per server |
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
//! * **Concurrency**: counts and sums are atomic `incr_or_init` counters,
//!   exact under any number of threads and processes; min, max and packed
//!   slots are CAS read-modify-writes whose merge commutes, so no
//!   concurrent update is lost (64 attempts with backoff, then
//!   [`Error::Conflict`](mcds_core::Error::Conflict)).
//! * **Eviction, restart, flush** lose data, and a read does not always
//!   notice: a bucket is six items that memcached loses one by one (on a
//!   pool, on different servers). A read reports
//!   [`Error::Corrupt`](mcds_core::Error::Corrupt) when a closed bucket's
//!   parts disagree, and when a bucket's count was evicted and re-created
//!   (the count carries a generation its min/max item remembers); a loss
//!   that leaves consistent parts (sums lost alone, count and min/max lost
//!   together, a pool server restarted under writers) reads as a wrong
//!   count or sum without an error. See [`TimeSeries`]. A `PackedSeries`
//!   period that memcached lost reads as zeros (an increment refused for
//!   lack of memory under `-M` is an error and keeps the period). memcached
//!   is a cache: keep the source of truth elsewhere.
//! * **Partial failure**: a record is several ops in one batch, not a
//!   transaction; one that fails reports the error, and some of its
//!   increments may have been applied (see [`TimeSeries`]).
//! * **Garbage** under a series' keys is `Error::Corrupt`, never a panic.

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod packed;
mod period;
mod series;

pub use packed::{MAX_RANGE_SLOTS, MAX_SLOTS_PER_PERIOD, PackedSeries, Slot, SlotWidth};
pub use series::{
    Bucket, MAX_RANGE_BUCKETS, MAX_RESOLUTIONS, MAX_SAMPLES_PER_BUCKET, Resolution, Stats,
    TimeSeries,
};
