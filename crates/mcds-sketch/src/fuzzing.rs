//! The sketches' codec internals, for the fuzz harnesses in `mcds-fuzz` only.
//! Behind the `fuzzing` feature and hidden from the docs: not part of the
//! API, no stability promise.

/// HyperLogLog's stored form.
pub mod hll {
    /// Bytes of the stored form: magic plus packed registers.
    pub const ENCODED_LEN: usize = crate::hll::ENCODED_LEN;
    /// The largest rank a register can hold.
    pub const MAX_RANK: u8 = crate::hll::MAX_RANK;
}

/// The Bloom filter's block format.
pub mod bloom {
    /// Bytes of a block before its bits.
    pub const HEADER_LEN: usize = crate::bloom::HEADER_LEN;
}

/// The activity bitmap's bit layout.
pub mod bitmap {
    /// Count the set bits of `bytes` in `first..=last` (MSB first).
    pub fn count_range(bytes: &[u8], first: u64, last: u64) -> u64 {
        crate::bitmap::count_range(bytes, first, last)
    }
}
