//! # mcds
//!
//! Distributed data structures on memcached semantics, in one crate.
//!
//! A lock with fencing tokens, counters, windowed counters, a rate
//! limiter, a counter map, an event log, sets, tables, sketches (Bloom
//! filters, HyperLogLog, an activity bitmap, a leaderboard) and time
//! series. Each is written once against one [`Store`] and runs on the
//! embedded in-process store or on real memcached: one server, a pool,
//! TLS, a unix socket, or behind twemproxy.
//!
//! [`connect`] opens the store a URL names and returns a [`Client`]: the
//! one handle a program keeps, cheap to clone, taken by every structure's
//! constructor, with raw key operations of its own.
//!
//! ```
//! use std::time::Duration;
//!
//! // "memory://" is the embedded store; "memcached://127.0.0.1:11211" a server.
//! let mc = mcds::connect("memory://")?;
//!
//! let hits = mcds::Counter::new(&mc, "hits")?;
//! hits.incr(1)?;
//! assert_eq!(hits.get()?, 1);
//!
//! let lock = mcds::Lock::new(&mc, "nightly-report", Duration::from_secs(30))?;
//! if let Some(guard) = lock.try_acquire()? {
//!     // ... the work only one process may do ...
//!     guard.release()?;
//! }
//!
//! mc.set("greeting", b"hello", Duration::from_secs(60))?;
//! assert_eq!(mc.get("greeting")?.map(|item| item.value), Some(b"hello".to_vec()));
//! # Ok::<(), mcds::Error>(())
//! ```
//!
//! Every call has an `_async` twin that awaits the network instead of
//! blocking the thread. It needs no particular runtime:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcds::Error> {
//! let mc = mcds::connect("memory://")?;
//! let hits = mcds::Counter::new(&mc, "hits")?;
//! hits.incr_async(1).await?;
//! mc.set_async("k", b"v", std::time::Duration::ZERO).await?;
//! assert_eq!(hits.get_async().await?, 1);
//! # Ok(())
//! # }
//! ```
//!
//! ## Features
//!
//! All on by default. Two add stores beyond the embedded one, which is
//! always there:
//!
//! | feature | stores | URLs |
//! |---|---|---|
//! | `memcached` | [`MemcachedStore`]: memcached's meta protocol, one server or a pool, TLS, a unix socket | `memcached://`, `memcached+tls://`, `unix:` |
//! | `text` (needs `memcached`) | [`TextStore`]: the classic text protocol, to memcached or through twemproxy | `text://`, `text+tls://` |
//!
//! Without them (`default-features = false`) neither is built, nor rustls,
//! and only `memory://` opens. The others each add one structure family
//! (also published alone, as the crate in the last column):
//!
//! | feature | types | crate |
//! |---|---|---|
//! | `counter` | [`Counter`], [`ViewCounter`], [`ShadowCounter`], [`WindowCounter`], [`RateLimiter`], [`CounterMap`] | `mcds-counter` |
//! | `lock` | [`Lock`], [`Guard`] | `mcds-lock` |
//! | `set` | [`Set`], [`ShardedSet`], [`IntArray`], [`Table`] | `mcds-set` |
//! | `sketch` | [`BloomFilter`], [`ScalableBloomFilter`], [`HyperLogLog`], [`ActivityBitmap`], [`Leaderboard`] | `mcds-sketch` |
//! | `eventlog` | [`EventLog`] | `mcds-eventlog` |
//! | `timeseries` | [`TimeSeries`], [`PackedSeries`] | `mcds-timeseries` |
//!
//! The modules of the same names ([`counter`], [`lock`], …) are those
//! crates whole, for their less used types.
//!
//! The `_async` methods work on any executor (tokio, async-std, smol,
//! `futures::executor`): on memcached, each connection's helper thread
//! writes and reads for them. The `tokio` feature (off by default) makes
//! calls made on a multi-thread tokio runtime write and read their
//! connections on the runtime's own threads instead, with no thread hop
//! (one task's `incr_async` as fast as a raw socket's exchange); the
//! runtime needs its I/O and time drivers (`#[tokio::main]` and
//! `Runtime::new` have them). One exception to "any executor":
//! [`Guard::auto_extend_async`] renews the lease from a tokio task, so it
//! needs a tokio runtime (and says so if there is none).
//!
//! ## What to read next
//!
//! * What each structure guarantees, and what a restart, an eviction or a
//!   failed call does to it: each type's docs, and [`Retention`].
//! * Errors: [`Error`] says whether a failed call did not happen, or may
//!   have (`Ambiguous`).
//! * Options a URL cannot carry: [`MemcachedStore::builder`], then
//!   [`Client::from_store`].

mod client;

pub use client::{Client, Init, connect};
pub use mcds_core::{
    CasOutcome, Clock, DeleteOutcome, Error, Item, Key, ManualClock, MemoryStore, Result,
    Retention, Scope, Store, Stored, SystemClock, Ttl, UnixMs, system_time, unix_ms,
};
#[cfg(feature = "memcached")]
pub use mcds_memcached::MemcachedStore;
#[cfg(feature = "text")]
pub use mcds_text::TextStore;
pub use mcds_url::StoreUrl;

/// Counters, windowed counters, a rate limiter and a counter map: the
/// `mcds-counter` crate.
#[cfg(feature = "counter")]
pub use mcds_counter as counter;
#[cfg(feature = "counter")]
pub use mcds_counter::{
    Counter, CounterMap, Decision, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};

/// The lock: the `mcds-lock` crate.
#[cfg(feature = "lock")]
pub use mcds_lock as lock;
#[cfg(feature = "lock")]
pub use mcds_lock::{Extend, Guard, Lock, Release};

/// Sets, sharded sets, integer arrays and tables: the `mcds-set` crate.
#[cfg(feature = "set")]
pub use mcds_set as set;
#[cfg(feature = "set")]
pub use mcds_set::{IntArray, Set, ShardedSet, Table};

/// Bloom filters, HyperLogLog, an activity bitmap and a leaderboard: the
/// `mcds-sketch` crate.
#[cfg(feature = "sketch")]
pub use mcds_sketch as sketch;
#[cfg(feature = "sketch")]
pub use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};

/// The event log: the `mcds-eventlog` crate.
#[cfg(feature = "eventlog")]
pub use mcds_eventlog as eventlog;
#[cfg(feature = "eventlog")]
pub use mcds_eventlog::{Cursor, Event, EventLog};

/// Time series: the `mcds-timeseries` crate.
#[cfg(feature = "timeseries")]
pub use mcds_timeseries as timeseries;
#[cfg(feature = "timeseries")]
pub use mcds_timeseries::{PackedSeries, Resolution, SlotWidth, Stats, TimeSeries};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
