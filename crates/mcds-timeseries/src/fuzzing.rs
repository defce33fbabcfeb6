//! The time series' stored forms, for the fuzz harnesses in `mcds-fuzz`
//! only. Behind the `fuzzing` feature and hidden from the docs: not part of
//! the API, no stability promise.

/// A [`TimeSeries`](crate::TimeSeries) bucket's six items: the count `n`,
/// the sum halves `p0 p1 m0 m1`, the min/max item `x`, in that order.
pub mod series {
    use mcds_core::{Item, Key, Result};

    use crate::Stats;
    pub use crate::series::{
        Decoded, EXTREMES_LEN, EXTREMES_V1_LEN, Extremes, GENERATION_SHIFT, decode_extremes,
        encode_extremes,
    };
    use crate::series::{PARTS, sum_halves};

    /// A bucket's parts: `parts` items, in the order above.
    pub const PARTS_LEN: usize = PARTS.len();

    /// What a bucket's items say, as a read decodes them (the keys in its
    /// messages are those of bucket 0 of series `fuzz`, step 1000 ms).
    pub fn decode_bucket(items: &[Option<Item>; PARTS_LEN]) -> Result<Decoded> {
        let keys = PARTS
            .iter()
            .map(|p| Key::new(format!("ts:fuzz:1000:0:{}", p.tag())))
            .collect::<Result<Vec<_>>>()?;
        crate::series::decode_bucket(&keys, items)
    }

    /// The generation [`record`] gives the buckets it builds.
    pub const GENERATION: u32 = 0x5eed;

    /// The items a bucket holds after [`record`](crate::TimeSeries::record)
    /// of each of `samples` into it (counters as memcached writes them, the
    /// count with generation [`GENERATION`], halves that were never
    /// incremented absent), and their aggregates computed sample by sample;
    /// `None` for no sample.
    pub fn record(samples: &[i64]) -> ([Option<Item>; PARTS_LEN], Option<Stats>) {
        let mut counters = [0u64; PARTS_LEN];
        counters[0] = u64::from(GENERATION) << GENERATION_SHIFT;
        let mut written = [false; PARTS_LEN];
        let mut stats: Option<Stats> = None;
        for &value in samples {
            counters[0] += 1;
            written[0] = true;
            for (part, delta) in sum_halves(value) {
                if delta > 0 {
                    counters[part as usize] += delta;
                    written[part as usize] = true;
                }
            }
            let one = Stats::of(value);
            match &mut stats {
                None => stats = Some(one),
                Some(s) => s.merge(&one),
            }
        }
        let item = |value: Vec<u8>| Item {
            value,
            flags: 0,
            cas: 1,
        };
        let mut items: [Option<Item>; PARTS_LEN] = Default::default();
        for (i, slot) in items.iter_mut().enumerate().take(PARTS_LEN - 1) {
            if written[i] {
                *slot = Some(item(counters[i].to_string().into_bytes()));
            }
        }
        items[PARTS_LEN - 1] = stats.map(|s| item(encode_extremes(s.min, s.max, GENERATION)));
        (items, stats)
    }
}

/// A [`PackedSeries`](crate::PackedSeries) period item.
pub mod packed {
    use std::sync::Arc;
    use std::time::Duration;

    use mcds_core::MemoryStore;

    pub use crate::packed::HEADER;
    use crate::{PackedSeries, SlotWidth};

    /// The period item layout of a series of `slots` slots of `width`.
    #[derive(Debug)]
    pub struct Period {
        series: PackedSeries,
        width: SlotWidth,
    }

    impl Period {
        /// The layout of `slots` (1 to
        /// [`MAX_SLOTS_PER_PERIOD`](crate::MAX_SLOTS_PER_PERIOD)) slots of
        /// `width`; panics on a slot count out of that range.
        pub fn new(width: SlotWidth, slots: usize) -> Period {
            let series = PackedSeries::new(
                Arc::new(MemoryStore::new()),
                "fuzz",
                Duration::from_millis(1),
                slots,
                width,
                Duration::from_secs(3600),
            )
            .expect("a valid shape");
            Period { series, width }
        }

        /// The item a period's first increment creates: every slot 0.
        pub fn fresh(&self) -> Vec<u8> {
            self.series.fresh_item()
        }

        /// The slot values of an item, or why it is not a period item of
        /// this layout.
        pub fn decode(&self, bytes: &[u8]) -> Result<Vec<u32>, String> {
            let slots = self.series.check(bytes)?;
            Ok((0..slots.len() / self.width.bytes())
                .map(|i| self.series.slot_value(slots, i))
                .collect())
        }

        /// Add `delta` to slot `i` of a decoded item as an increment does,
        /// saturating: the slot's old and new values.
        pub fn add(&self, item: &mut [u8], i: usize, delta: u32) -> (u32, u32) {
            self.series.add(item, i, delta)
        }
    }
}
