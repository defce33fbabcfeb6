//! # mcds-set
//!
//! Sets on memcached semantics (Dustin Sallings' set post and the memcached data-structures article), for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached:
//!
//! | type | what | round trips |
//! |---|---|---|
//! | [`Codec`] | how a set's logs are stored: the `+a -b ` text codec (compatible with Dustin Sallings' encoding, `%XX` escapes) or a length-prefixed binary codec | — |
//! | [`Set`] | a set in buckets of about 4 KiB that split as they fill: append-only adds and removes, compaction by CAS on read | add/remove 1, contains 1, members 1 (per 512 buckets) |
//! | [`ShardedSet`] | K sets by a stable hash of the member (each growing like a `Set`), to spread writes | 1 append per shard touched, members 1 batch |
//! | [`IntArray`] | the codec over integers | as `Set` |
//! | [`Table`] | O(1) `has` through a key per member, plus the member list as a `Set`; a map with values | has/get 1, set/delete 1 |
//!
//! ## Guarantees, and what breaks them
//!
//! * Concurrent adds and removes never lose each other: each is one atomic
//!   append to the member's bucket, and a bucket decodes as the replay of
//!   every append in the server's order.
//! * A bucket splits in two by copying its live members into its children
//!   and then deleting it by CAS: an append that races the split fails on
//!   the deleted bucket and is sent again to the right child, so no member
//!   is lost or listed twice (the argument: [`Set`]'s docs and the
//!   `buckets` module). Checked from 4 processes against a model while
//!   buckets split hundreds of times, on one server and on a pool of 3
//!   (`mcds-stress`, `growing_structures`).
//! * Compaction rewrites a bucket only if it is unchanged since it was
//!   read (CAS), so it never destroys a concurrent append.
//! * No size wall: a set grows by splitting buckets. The limits left are
//!   one member's size (its token must fit one item, 1 MiB by default:
//!   [`ValueTooLarge`](mcds_core::Error::ValueTooLarge) before anything is
//!   sent) and the directory, about 60 bytes per split in one item (see
//!   [`Set`]'s limits).
//! * **Eviction, restart or flush** of a bucket is detected (the directory
//!   lists it): reads and writes of it fail with
//!   [`Lost`](mcds_core::Error::Lost) until the set is cleared. A lost
//!   directory is not detectable: the set reads as empty.
//! * Garbage written under a bucket's key by another program decodes as
//!   whatever `+`/`-` tokens it contains (text codec; other tokens are
//!   ignored and compacted away) or is [`Corrupt`](mcds_core::Error::Corrupt)
//!   (binary codec); a directory that is not one is `Corrupt`.

mod buckets;
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
pub use set::{Codec, Compaction, MembersIter, Set};
pub use sharded::ShardedSet;
pub use table::{EntriesIter, Table};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
