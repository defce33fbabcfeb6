//! # mcds-fuzz
//!
//! Fuzz harnesses for **mcds**'s codecs (not published). The targets in
//! `fuzz/fuzz_targets/` (a cargo-fuzz workspace of its own, built with
//! `cargo +nightly fuzz`) are one-line calls to these functions, and
//! `tests/fuzz_regressions.rs` replays the seed corpus in `fuzz/seeds/` and
//! every input in `fuzz/regressions/` through them on stable Rust.
//!
//! Each harness checks two things on any input: decoding arbitrary bytes
//! never panics and gives sane output, and the same bytes read as a
//! *structured* input (a sequence of operations or events) round-trip:
//! `decode(encode(x)) == x`, compared against a naive model.
//!
//! | target | harness | what it decodes |
//! |---|---|---|
//! | `set_text` | [`set_text_codec`] | `mcds-set`'s text codec (`+a -b `, `%XX` escapes) |
//! | `set_binary` | [`set_binary_codec`] | `mcds-set`'s length-prefixed binary codec |
//! | `event_frames` | [`event_frames`] | `mcds-eventlog`'s checksummed frames |
//! | `hll_registers` | [`hll_registers`] | `mcds-sketch`'s HyperLogLog registers and segment items (sparse or dense base, append log) |
//! | `bloom_blocks` | [`bloom_blocks`] | `mcds-sketch`'s Bloom filter blocks |
//! | `bitmap_bits` | [`bitmap_bits`] | `mcds-sketch`'s activity bitmap bits |
//! | `topk_board` | [`topk_board`] | `mcds-sketch`'s leaderboard board (Space-Saving counters, checksummed) |
//! | `timeseries_buckets` | [`timeseries_buckets`] | `mcds-timeseries`'s bucket item (count, `i128` sum, min, max): consistent or refused, re-encoded to the same bytes, and records read back |
//! | `packed_periods` | [`packed_periods`] | `mcds-timeseries`'s packed period items (`u8`/`u16`/`u32` slots), against a saturating model |
//! | `countermap_registry` | [`countermap_registry`] | `mcds-counter`'s field registry (`+f -f`, `%XX` escapes) |
//! | `countermap_values` | [`countermap_values`] | `mcds-counter`'s stored counters (`v + 2^61`) and `Decimal` parse/display |
//! | `memcached_replies` | [`memcached_replies`] | `mcds-memcached`'s reply decoder: arbitrary server bytes for every op kind, alone and in a pipeline; a reply is never attributed to the wrong op |
//! | `memcached_reply_parser` | [`memcached_reply_parser`] | `mcds-memcached`'s allocation-free meta reply parser, differentially against the `memcache` crate's `parse_header` + `parse_meta_result` |
//! | `c_abi_calls` | [`c_abi_calls`] | libmcds's exported functions, called as a careless C program would: NULL handles and outputs, non-UTF-8 names, empty and long buffers, absurd counts, TTLs and amounts, store URLs of any bytes (embedded store only); every call returns a code of the result table, never `MCDS_PANIC`, and leaves a message when it fails |
//! | `text_replies` | [`text_replies`] | `mcds-text`'s text-protocol reply parser (status lines, `VALUE` listings): arbitrary server or proxy bytes read as a connection reads them; every reply that parses, written out again, parses to itself |
//!
//! The codecs are private to their crates. Each crate opens them to this one
//! through a cargo feature named `fuzzing` (a `#[doc(hidden)]` module
//! `fuzzing`, not part of its API), which only this crate (and the codec
//! benchmark) enables. This crate sits above the structure crates, and
//! nothing depends on it, so the test kit need not depend on them.
//!
//! ## Adding a target
//!
//! 1. The harness: a `pub fn(&[u8])` here, or in the crate under test
//!    behind its `fuzzing` feature and re-exported here.
//! 2. Its entry in [`TARGETS`].
//! 3. `fuzz/fuzz_targets/<target>.rs`, a one-line call to the harness, and
//!    its `[[bin]]` in `fuzz/Cargo.toml`.
//! 4. A seed corpus in `fuzz/seeds/<target>/`.
//!
//! `tests/fuzz_regressions.rs` fails when a target misses any of 2 to 4.

mod counter;
mod eventlog;
mod set;
mod sketch;
mod timeseries;

pub use counter::{countermap_registry, countermap_values};
pub use eventlog::event_frames;
pub use set::{set_binary_codec, set_text_codec};
pub use sketch::{bitmap_bits, bloom_blocks, hll_registers, topk_board};
pub use timeseries::{packed_periods, timeseries_buckets};

/// `mcds-memcached`'s codec harness: arbitrary bytes as a server's replies to
/// each op kind, alone and inside a pipeline. It checks that decoding never
/// panics, that replies to the ops before the arbitrary bytes decode
/// exactly, and that no op takes a reply tagged for another.
pub use mcds_memcached::fuzzing::replies as memcached_replies;

/// `mcds-memcached`'s reply parser against the `memcache` crate's, on
/// arbitrary bytes read as a stream of meta replies: both accept and reject
/// the same replies, with the same errors and fields, and stop at the same
/// byte.
pub use mcds_memcached::fuzzing::reply_parser as memcached_reply_parser;

/// Read a stream of valid meta replies as a connection reads them, its
/// line buffer `line` reused (for the allocation count test): the number
/// of replies and of data blocks.
pub use mcds_memcached::fuzzing::read_valid_replies;

/// `mcds-text`'s reply parser on arbitrary bytes from a server or proxy:
/// never a panic or an allocation a reply only claims; a listing holds at
/// most the values asked for; every parsed reply, written out again,
/// parses to itself.
pub use mcds_text::fuzzing::replies as text_replies;

/// libmcds's C ABI called through its exported functions with arbitrary
/// arguments (see the table above).
pub use mcds_ffi::fuzzing::calls as c_abi_calls;

/// A harness: checks one input, panicking on a bug.
pub type Harness = fn(&[u8]);

/// Every fuzz target by name (its file in `fuzz/fuzz_targets/` and its
/// directories in `fuzz/seeds/` and `fuzz/regressions/`) and its harness.
pub const TARGETS: &[(&str, Harness)] = &[
    ("set_text", set_text_codec),
    ("set_binary", set_binary_codec),
    ("event_frames", event_frames),
    ("hll_registers", hll_registers),
    ("bloom_blocks", bloom_blocks),
    ("bitmap_bits", bitmap_bits),
    ("topk_board", topk_board),
    ("timeseries_buckets", timeseries_buckets),
    ("packed_periods", packed_periods),
    ("countermap_registry", countermap_registry),
    ("countermap_values", countermap_values),
    ("memcached_replies", memcached_replies),
    ("memcached_reply_parser", memcached_reply_parser),
    ("text_replies", text_replies),
    ("c_abi_calls", c_abi_calls),
];
