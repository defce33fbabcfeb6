//! The counter map's codecs, for the fuzz harnesses in `mcds-fuzz` only.
//! Behind the `fuzzing` feature and hidden from the docs: not part of the
//! API, no stability promise.

/// [`CounterMap`](crate::CounterMap)'s field registry and stored counters.
pub mod map {
    /// A decoded field registry bucket (mcds-set's text codec): the live
    /// fields in first-registration order and how many tokens no longer
    /// count; an error when a member is not a field name.
    pub fn decode_registry(bytes: &[u8]) -> Result<(Vec<String>, usize), String> {
        let decoded = mcds_set::fuzzing::text::decode(bytes);
        let fields = decoded
            .members
            .into_iter()
            .map(crate::map::field_name)
            .collect::<Result<Vec<_>, _>>()?;
        Ok((fields, decoded.dirtiness))
    }

    /// Append the registry token `+field ` (`op` `b'+'`) or `-field `
    /// (`b'-'`) to `out`.
    pub fn encode_token(op: u8, field: &str, out: &mut Vec<u8>) {
        let op = if op == b'+' {
            mcds_set::fuzzing::Op::Add
        } else {
            mcds_set::fuzzing::Op::Remove
        };
        mcds_set::fuzzing::text::encode_member(op, field.as_bytes(), out)
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
