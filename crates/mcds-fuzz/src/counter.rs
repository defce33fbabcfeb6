//! The counter map's codecs (`mcds-counter`): targets `countermap_registry`
//! and `countermap_values`.

use mcds_counter::fuzzing::map::{
    decode_registry, decode_value, encode_token, encode_value, parse_units,
};
use mcds_counter::{Decimal, MAX_FIELD_LEN, MAX_SCALE, MAX_VALUE, MIN_VALUE};

/// Read `data` as registry operations: a byte for the op (low bit:
/// register/remove), a byte for the field length (0–15), then the field
/// (lossy UTF-8; empty fields are skipped, as a map refuses them).
fn ops(data: &[u8]) -> Vec<(u8, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < data.len() {
        let op = if data[i] & 1 == 0 { b'+' } else { b'-' };
        let len = usize::from(data[i + 1] & 15);
        let end = (i + 2 + len).min(data.len());
        let field = String::from_utf8_lossy(&data[i + 2..end]).into_owned();
        if !field.is_empty() {
            out.push((op, field));
        }
        i = end;
    }
    out
}

/// The [`CounterMap`](mcds_counter::CounterMap) field registry (a bucket
/// of mcds-set's text codec: `+f -f` tokens, `%XX` escapes): arbitrary
/// bytes decode or are refused without
/// panicking, to unique fields of 1 to `MAX_FIELD_LEN` bytes that a
/// compaction (their `+` tokens) keeps as they are; the same bytes read as
/// registrations and removals replay like a naive ordered model.
pub fn countermap_registry(data: &[u8]) {
    if let Ok((fields, dirt)) = decode_registry(data) {
        let mut sorted: Vec<&String> = fields.iter().collect();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), fields.len(), "registered fields are unique");
        assert!(
            fields
                .iter()
                .all(|f| (1..=MAX_FIELD_LEN).contains(&f.len()))
        );
        // Tokens as the text codec splits them: on ASCII whitespace.
        let tokens = data
            .split(|&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
            .filter(|t| !t.is_empty())
            .count();
        assert_eq!(fields.len() + dirt, tokens);
        let mut compacted = Vec::new();
        for f in &fields {
            encode_token(b'+', f, &mut compacted);
        }
        assert_eq!(decode_registry(&compacted), Ok((fields, 0)));
    }
    let ops = ops(data);
    let mut log = Vec::new();
    let mut model: Vec<String> = Vec::new();
    for (op, field) in &ops {
        encode_token(*op, field, &mut log);
        let pos = model.iter().position(|f| f == field);
        match (op, pos) {
            (b'+', None) => model.push(field.clone()),
            (b'-', Some(i)) => {
                model.remove(i);
            }
            _ => {}
        }
    }
    let (fields, dirt) = decode_registry(&log).expect("a log a map writes decodes");
    assert_eq!(fields, model, "the registry must replay to the model");
    assert_eq!(dirt, ops.len() - model.len());
}

/// The counter map's numbers: every value in `MIN_VALUE..=MAX_VALUE`
/// maps to a stored counter below 2^62 and back, and any stored counter
/// decodes without panicking (saturating past `i64`); [`Decimal::parse`]
/// of arbitrary text at an arbitrary scale never panics, and what parses
/// displays as text that parses to the same value (also when rounding),
/// as does any `Decimal` of arbitrary units.
pub fn countermap_values(data: &[u8]) {
    let Some((scale, rest)) = data.split_first() else {
        return;
    };
    let scale = u32::from(*scale) % (MAX_SCALE + 1);
    for chunk in rest.chunks(8) {
        let n = chunk
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        let value = (n as i64).rem_euclid(MAX_VALUE - MIN_VALUE + 1) + MIN_VALUE;
        let stored = encode_value(value);
        assert!(stored < 1 << 62, "{value} stored as {stored}");
        assert_eq!(decode_value(stored), value);
        let any = decode_value(n);
        if n <= i64::MAX as u64 {
            assert_eq!(encode_value(any), n);
        } else {
            assert_eq!(any, decode_value(i64::MAX as u64));
        }
        let d = Decimal {
            units: n as i64,
            scale,
        };
        assert_eq!(Decimal::parse(&d.to_string(), scale).ok(), Some(d));
        let _ = d.to_f64();
    }
    let text = String::from_utf8_lossy(rest);
    if let Ok(d) = Decimal::parse(&text, scale) {
        assert_eq!(d.scale, scale);
        assert_eq!(Decimal::parse(&d.to_string(), scale).ok(), Some(d));
        assert_eq!(
            parse_units(&text, scale, true).ok(),
            Some(d.units),
            "exact is rounded"
        );
    }
    if let Ok(units) = parse_units(&text, scale, true) {
        let d = Decimal { units, scale };
        assert_eq!(Decimal::parse(&d.to_string(), scale).ok(), Some(d));
    }
}
