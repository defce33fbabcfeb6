//! # mcds-counter
//!
//! Counters on memcached semantics, for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached. Each type's whole
//! algorithm is in its own file:
//!
//! | type | what it counts | round trips |
//! |---|---|---|
//! | [`Counter`] | an exact total: `incr` never loses an increment | incr 1, get 1 |
//! | [`ViewCounter`] | views of an object whose true total lives in a database: the cache is seeded from a loader with `incr_or_init`, never `set` | 1 (2 on a miss) |
//! | [`ShadowCounter`] | events in the previous period T (two keys swapping roles) | incr 1, value 1 |
//! | [`WindowCounter`] | events in the last N−1 slots of length p (e.g. users online in 5 minutes) | incr 1, value 1 |
//! | [`RateLimiter`] | requests per window: fixed window, or a sliding-window estimate | check 1, peek 1 |
//! | [`CounterMap`] | named signed counters listed together (Redis `HINCRBY`/`HINCRBYFLOAT`, fixed-point [`Decimal`]s without float drift) | incr 1 (2 on a field's first touch), get 1, get_all 2, fields 1, remove 1 |
//!
//! ```
//! use std::sync::Arc;
//! use mcds_core::MemoryStore;
//! use mcds_counter::Counter;
//!
//! let store = Arc::new(MemoryStore::new());
//! let downloads = Counter::new(store, "downloads")?;
//! downloads.incr(1)?;
//! downloads.incr(41)?;
//! assert_eq!(downloads.get()?, 42);
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Async
//!
//! Every method that reaches the store has an async twin (`incr_async`,
//! `value_async`, `check_async`, `get_all_async`, …): the same algorithm,
//! written once (see [`Access`](mcds_core::Access)), awaiting the store
//! instead of blocking the thread. Their futures are `Send`
//! ([`ViewCounter`]'s when its async loader is).
//!
//! ## Time
//!
//! Time-based counters read their [`Scope`](mcds_core::Scope)'s [`Clock`](mcds_core::Clock) (the system clock by
//! default; a [`ManualClock`](mcds_core::ManualClock) in tests, shared with the
//! embedded store so expiry follows it). Windows are aligned to Unix time,
//! so every process agrees on them when clocks are in sync.
//!
//! No count depends on *when* an item expires. memcached expires items in
//! whole seconds on its own clock, whose ticks are not aligned to Unix
//! seconds: a key written with a TTL ending on a boundary can live up to a
//! second past it. So every time-based counter names its keys by period
//! number (`now / T`: `shadow:<name>:<period>`, `window:<name>:<slot>`,
//! `rate:<name>:<window>`), never reusing a key, and gives them a TTL that
//! outlasts every read of them with slack. Expiry only frees memory.
//!
//! ## Guarantees, and what breaks them
//!
//! * `Counter::incr` and every other increment is one atomic
//!   `incr_or_init`: no increment is lost to a race, and the first touch
//!   needs no separate create.
//! * **Eviction, restart and flush** lose counts: the key simply disappears
//!   and counting starts again from zero (from the loader for
//!   `ViewCounter`). memcached is a cache: keep the source of truth for
//!   counts that must survive (a database) and use these for the fast path.
//! * An increment that fails with [`Error::Ambiguous`](mcds_core::Error) may or
//!   may not have been counted (`Io`, `Timeout` and `ServerDown` were not):
//!   through kills, freezes and timeouts a counter satisfies
//!   `acknowledged ≤ value ≤ acknowledged + ambiguous`, counting the
//!   increments since its item was last created (a restart, eviction or
//!   flush starts it over). Shown by `crates/mcds-stress/tests/faults.rs` and
//!   listed in RELIABILITY.md.
//! * Clock skew between clients moves window boundaries by the skew: an
//!   event counts in the period its client's clock says.
//! * Window and shadow counts equal the acknowledged increments of their
//!   periods exactly (no fault), on the embedded store and on memcached,
//!   whatever the phase of the server's clock ticks.

mod counter;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod map;
mod rate;
mod shadow;
mod view;
mod window;

pub use counter::Counter;
pub use map::{
    CounterMap, Decimal, FieldsIter, GetAllIter, MAX_FIELD_LEN, MAX_SCALE, MAX_VALUE, MIN_VALUE,
};
pub use rate::{Decision, RateLimiter, Window};
pub use shadow::ShadowCounter;
pub use view::ViewCounter;
pub use window::WindowCounter;

/// Read a stored counter: 0 when absent, `Corrupt` when not a number.
pub(crate) fn read_counter(
    item: Option<mcds_core::Item>,
    key: &mcds_core::Key,
) -> mcds_core::Result<u64> {
    match item {
        None => Ok(0),
        Some(item) => item.counter().ok_or_else(|| mcds_core::Error::Corrupt {
            key: key.display(),
            reason: format!(
                "expected a decimal counter, found {} bytes that are not one",
                item.value.len()
            ),
        }),
    }
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
