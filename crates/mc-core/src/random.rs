//! Randomness that structures need (owner tokens), so structure crates depend
//! on `mc-core` alone.

use rand::RngExt;

/// A random 128-bit token as 32 lowercase hex digits: unique enough to name
/// the owner of a lock or a lease across every process and machine.
///
/// ```
/// let a = mc_core::random_token();
/// assert_eq!(a.len(), 32);
/// assert_ne!(a, mc_core::random_token());
/// ```
pub fn random_token() -> String {
    let n: u128 = rand::rng().random();
    format!("{n:032x}")
}
