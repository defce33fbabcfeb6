//! The time series' stored forms (`mcds-timeseries`): targets
//! `timeseries_buckets` and `packed_periods`.

use mcds_timeseries::SlotWidth;
use mcds_timeseries::fuzzing::packed::{HEADER, Period};
use mcds_timeseries::fuzzing::series::{BUCKET_LEN, decode_bucket, encode_bucket, record};
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

/// Aggregates a read accepts: at least one sample and at most the limit,
/// min ≤ max, and a sum the min and max allow.
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

/// A [`TimeSeries`](mcds_timeseries::TimeSeries) bucket item: arbitrary
/// bytes decode without panicking to aggregates that are consistent
/// (count 1 to the limit, min ≤ max, the sum within
/// `[max + (n−1)·min, min + (n−1)·max]`) and re-encode to the same bytes,
/// or are refused; the bytes read as samples, merged as records do, encode
/// to a bucket that decodes to their aggregates.
pub fn timeseries_buckets(data: &[u8]) {
    if let Ok(stats) = decode_bucket(data) {
        assert_eq!(data.len(), BUCKET_LEN);
        assert_consistent(&stats);
        assert_eq!(encode_bucket(&stats), data, "decode/encode must round-trip");
    }
    let samples: Vec<i64> = data.chunks(9).map(sample).collect();
    if let Some(expected) = record(&samples) {
        let bytes = encode_bucket(&expected);
        assert_eq!(
            decode_bucket(&bytes),
            Ok(expected),
            "records of {samples:?} must read back"
        );
        assert_consistent(&expected);
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
