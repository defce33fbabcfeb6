//! The sketches' codec internals, for the fuzz harnesses in `mcds-fuzz` only.
//! Behind the `fuzzing` feature and hidden from the docs: not part of the
//! API, no stability promise.

/// HyperLogLog's stored forms.
pub mod hll {
    /// Bytes of [`Registers::encode`](crate::hll::Registers::encode)'s
    /// blob: magic plus packed registers.
    pub const ENCODED_LEN: usize = crate::hll::ENCODED_LEN;
    /// The largest rank a register can hold.
    pub const MAX_RANK: u8 = crate::hll::MAX_RANK;

    /// A segment item's registers and log length, or why the bytes are not
    /// one.
    pub fn decode_segment(bytes: &[u8]) -> Result<(Vec<u8>, usize), String> {
        crate::hll::decode_segment(bytes)
            .map(|s| (s.registers.to_vec(), s.log))
            .map_err(|e| e.0)
    }

    /// A compacted segment item holding `registers` (1 024 of them).
    pub fn encode_segment(registers: &[u8]) -> Vec<u8> {
        crate::hll::encode_segment(registers)
    }
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
