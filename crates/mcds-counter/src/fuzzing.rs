//! The counter map's codecs, for the fuzz harnesses in `mcds-fuzz` only.
//! Behind the `fuzzing` feature and hidden from the docs: not part of the
//! API, no stability promise.

/// [`CounterMap`](crate::CounterMap)'s field registry and stored counters.
pub mod map {
    /// A decoded field registry: the live fields in first-registration
    /// order, and how many tokens no longer count.
    pub fn decode_registry(bytes: &[u8]) -> Result<(Vec<String>, usize), String> {
        crate::map::decode_registry(bytes).map(|r| (r.fields, r.dirt))
    }

    /// Append the registry token `+field ` (`op` `b'+'`) or `-field `
    /// (`b'-'`) to `out`.
    pub fn encode_token(op: u8, field: &str, out: &mut Vec<u8>) {
        crate::map::encode_token(op, field, out)
    }

    /// The stored counter of a value in
    /// [`MIN_VALUE`](crate::MIN_VALUE)..=[`MAX_VALUE`](crate::MAX_VALUE).
    pub fn encode_value(value: i64) -> u64 {
        crate::map::encode_value(value)
    }

    /// The value of a stored counter.
    pub fn decode_value(stored: u64) -> i64 {
        crate::map::decode_value(stored)
    }

    /// `text` as units of `10^-scale`: exact, or (`round`) rounded half away
    /// from zero at the last place, as the map's decimal increments parse
    /// their amounts.
    pub fn parse_units(text: &str, scale: u32, round: bool) -> mcds_core::Result<i64> {
        crate::map::parse_units(text, scale, round)
    }
}
