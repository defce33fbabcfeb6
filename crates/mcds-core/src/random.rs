//! Randomness (owner tokens) and a stable hash, so structure crates depend on
//! `mcds-core` alone.

use rand::RngExt;

/// A random 128-bit token as 32 lowercase hex digits: unique enough to name
/// the owner of a lock or a lease across every process and machine.
///
/// ```
/// let a = mcds_core::random_token();
/// assert_eq!(a.len(), 32);
/// assert_ne!(a, mcds_core::random_token());
/// ```
pub fn random_token() -> String {
    let n: u128 = rand::rng().random();
    format!("{n:032x}")
}

/// A random 64-bit number, for structures that stamp what they create
/// (the random part of a new fencing counter) so that a re-created item
/// can be told from the one it replaced.
///
/// ```
/// assert_ne!(mcds_core::random_u64(), mcds_core::random_u64());
/// ```
pub fn random_u64() -> u64 {
    rand::rng().random()
}

/// The stable 64-bit hash mcds uses wherever a hash must agree across
/// processes, languages and compiler versions (shard placement, server
/// routing, frame checksums): XXH3-64 with seed 0.
///
/// ```
/// assert_eq!(mcds_core::stable_hash(b""), 0x2D06800538D394C2);
/// ```
pub fn stable_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// A stable 128-bit hash (XXH3-128, seed 0), for naming keys after
/// arbitrary bytes where a 64-bit collision would be too likely.
pub fn stable_hash128(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}
