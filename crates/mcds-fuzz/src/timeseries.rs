//! The time series' stored forms (`mcds-timeseries`): targets
//! `timeseries_buckets` and `packed_periods`.

use mcds_core::{Error, Item};
use mcds_timeseries::SlotWidth;
use mcds_timeseries::fuzzing::packed::{HEADER, Period};
use mcds_timeseries::fuzzing::series::{
    Decoded, EXTREMES_LEN, EXTREMES_V1_LEN, Extremes, PARTS_LEN, decode_bucket, decode_extremes,
    encode_extremes, record,
};
use mcds_timeseries::{MAX_SAMPLES_PER_BUCKET, Stats};

/// A little-endian number from up to 8 bytes (missing ones are 0).
fn le_u64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0, |v, &b| (v << 8) | u64::from(b))
}

/// A sample from fuzz bytes: a shift byte, then up to 8 bytes of a signed
/// number shifted right by it (so small and huge magnitudes both occur).
fn sample(bytes: &[u8]) -> i64 {
    let (shift, rest) = bytes.split_first().unwrap_or((&0, &[]));
    (le_u64(rest) as i64) >> (shift % 64)
}

/// Six bucket items from fuzz bytes: per part a mode byte (low 2 bits:
/// absent, raw bytes of length `mode >> 2`, a decimal number of 8 bytes
/// shifted by `mode >> 2`, or for the min/max part an item of two such
/// numbers and a generation of 1 to 4, which a count's generation may or
/// may not match), then what it needs. The rest of the bytes.
fn bucket_items(data: &[u8]) -> ([Option<Item>; PARTS_LEN], &[u8]) {
    let mut items: [Option<Item>; PARTS_LEN] = Default::default();
    let mut rest = data;
    for (part, slot) in items.iter_mut().enumerate() {
        let Some((&mode, tail)) = rest.split_first() else {
            break;
        };
        let arg = usize::from(mode >> 2);
        let take = |n: usize| tail.split_at(n.min(tail.len()));
        let (value, tail) = match mode & 3 {
            0 => (None, tail),
            1 => {
                let (raw, tail) = take(arg);
                (Some(raw.to_vec()), tail)
            }
            _ if part == PARTS_LEN - 1 => {
                let (numbers, tail) = take(16);
                let (a, b) = numbers.split_at(numbers.len().min(8));
                let (a, b) = ((le_u64(a) as i64) >> arg, (le_u64(b) as i64) >> arg);
                let (min, max) = if mode & 3 == 2 { (a, b) } else { (b, a) };
                let generation = 1 + u32::from(mode >> 2) % 4;
                (Some(encode_extremes(min, max, generation)), tail)
            }
            _ => {
                let (n, tail) = take(8);
                let n = le_u64(n) >> arg;
                let text = if mode & 3 == 2 {
                    n.to_string()
                } else {
                    format!(" {n}  ") // as decr leaves it, space-padded
                };
                (Some(text.into_bytes()), tail)
            }
        };
        *slot = value.map(|value| Item {
            value,
            flags: 0,
            cas: 1,
        });
        rest = tail;
    }
    (items, rest)
}

/// Aggregates a read accepts: at least one sample, min ≤ max, and a sum
/// the min and max allow.
fn assert_consistent(s: &Stats) {
    assert!(
        (1..=MAX_SAMPLES_PER_BUCKET).contains(&s.count),
        "count {}",
        s.count
    );
    assert!(s.min <= s.max, "{s:?}");
    let rest = i128::from(s.count) - 1;
    let lower = i128::from(s.max) + rest * i128::from(s.min);
    let upper = i128::from(s.min) + rest * i128::from(s.max);
    assert!(lower <= s.sum && s.sum <= upper, "{s:?} outside the bounds");
}

/// A [`TimeSeries`](mcds_timeseries::TimeSeries) bucket's items: the
/// min/max item decodes or is refused without panicking, and what decodes
/// re-encodes to the same bytes (an `x2` item; an `x1` item of the first
/// format holds the same numbers); six arbitrary items (counters, sum
/// halves, min/max) decode without panicking to empty, `Corrupt`, suspect,
/// lost (generations that differ), or aggregates that are consistent
/// (count ≥ 1, min ≤ max, the sum within `[max + (n−1)·min, min +
/// (n−1)·max]`); the items that records of the remaining bytes' samples
/// leave decode to the samples' aggregates.
pub fn timeseries_buckets(data: &[u8]) {
    if let Ok(Extremes {
        min,
        max,
        generation,
    }) = decode_extremes(data)
    {
        assert!(min <= max);
        match generation {
            Some(generation) => {
                assert_eq!(data.len(), EXTREMES_LEN);
                assert_ne!(generation, 0);
                assert_eq!(
                    encode_extremes(min, max, generation),
                    data,
                    "decode/encode must round-trip"
                );
            }
            None => {
                assert_eq!(data.len(), EXTREMES_V1_LEN);
                let v2 = encode_extremes(min, max, 1);
                assert_eq!(data[2..], v2[2..EXTREMES_V1_LEN], "x1 holds min and max");
            }
        }
    }
    let (items, rest) = bucket_items(data);
    match decode_bucket(&items) {
        Ok(Decoded::Empty) => assert!(items.iter().all(Option::is_none)),
        Ok(Decoded::Stats(s)) => assert_consistent(&s),
        Ok(Decoded::Suspect { as_read, .. }) => {
            if let Some(s) = as_read {
                assert!(s.count >= 1 && s.min <= s.max, "{s:?}");
            }
        }
        Ok(Decoded::Lost(_)) | Err(Error::Corrupt { .. }) => {}
        Err(e) => panic!("a bucket's items gave {e}"),
    }
    let samples: Vec<i64> = rest.chunks(9).map(sample).collect();
    let (items, expected) = record(&samples);
    match (decode_bucket(&items), expected) {
        (Ok(Decoded::Empty), None) => {}
        (Ok(Decoded::Stats(s)), Some(expected)) => {
            assert_eq!(s, expected, "records of {samples:?} must read back");
            assert_consistent(&s);
        }
        (other, _) => panic!("records of {samples:?} read as {other:?}"),
    }
}

/// A [`PackedSeries`](mcds_timeseries::PackedSeries) period item: a width
/// and a slot count from the first bytes; the rest as an item decodes or
/// is refused without panicking, and what decodes has the layout's length
/// and slots within the width, and is rebuilt from its slot values by
/// increments of a fresh item; the rest read as increments (a slot byte, a
/// delta of up to 4 bytes) agrees with a saturating model at every step.
pub fn packed_periods(data: &[u8]) {
    let [width, slots, rest @ ..] = data else {
        return;
    };
    let width = [SlotWidth::U8, SlotWidth::U16, SlotWidth::U32][usize::from(*width % 3)];
    let slots = usize::from(*slots % 64) + 1;
    let period = Period::new(width, slots);
    if let Ok(values) = period.decode(rest) {
        assert_eq!(rest.len(), HEADER + slots * width.bytes());
        assert_eq!(values.len(), slots);
        let mut rebuilt = period.fresh();
        for (i, &v) in values.iter().enumerate() {
            assert!(v <= width.max_value());
            assert_eq!(period.add(&mut rebuilt, i, v), (0, v));
        }
        assert_eq!(rebuilt, rest, "decode/encode must round-trip");
    }
    let mut item = period.fresh();
    let mut model = vec![0u32; slots];
    assert_eq!(period.decode(&item).as_ref(), Ok(&model));
    for op in rest.chunks(5) {
        let (slot, delta) = op.split_first().unwrap_or((&0, &[]));
        let (i, delta) = (usize::from(*slot) % slots, le_u64(delta) as u32);
        let new = model[i].saturating_add(delta).min(width.max_value());
        assert_eq!(period.add(&mut item, i, delta), (model[i], new));
        model[i] = new;
        assert_eq!(period.decode(&item).as_ref(), Ok(&model));
    }
}
