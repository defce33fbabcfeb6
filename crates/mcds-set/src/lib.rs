//! # mcds-set
//!
//! Sets on memcached semantics (Dustin Sallings' set post and the memcached data-structures article), for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached:
//!
//! | type | what | round trips |
//! |---|---|---|
//! | [`Codec`] | how a set's log is stored: the `+a -b ` text codec (compatible with Dustin Sallings' encoding, `%XX` escapes) or a length-prefixed binary codec | — |
//! | [`Set`] | a set in one item: append-only adds and removes, compaction by CAS on read | add/remove 1, members 1 (2 when compacting) |
//! | [`ShardedSet`] | K items by a stable hash of the member: larger sets, spread over a pool | 1 append per shard touched, members 1 `get_multi` |
//! | [`IntArray`] | the codec over integers | as `Set` |
//! | [`Table`] | O(1) `has` through a key per member, plus the member list as a `Set`; a map with values | has/get 1, set/delete 2 |
//!
//! ## Guarantees, and what breaks them
//!
//! * Concurrent adds and removes never lose each other: each is one atomic
//!   append, and the decoded set is the replay of every append in the
//!   server's order.
//! * Compaction rewrites the log only if it is unchanged since it was read
//!   (CAS), so it never destroys a concurrent append.
//! * A set item is limited to 1 MiB: an add that does not fit (even after
//!   compaction) is [`ValueTooLarge`](mcds_core::Error::ValueTooLarge), never
//!   dropped silently. Shard big sets.
//! * **Eviction, expiry, restart or flush** drop a whole set item (or a
//!   shard of it). memcached is a cache: rebuild sets that must survive from
//!   their source of truth.
//! * Garbage written under a set's key by another program decodes as
//!   whatever `+`/`-` tokens it contains (text codec; other tokens are
//!   ignored and compacted away) or is [`Corrupt`](mcds_core::Error::Corrupt)
//!   (binary codec).

mod codec;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod intarray;
mod set;
mod sharded;
mod table;

pub use codec::Decoded;
pub use intarray::IntArray;
pub use set::{Codec, Compaction, Set};
pub use sharded::ShardedSet;
pub use table::Table;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
