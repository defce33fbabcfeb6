//! The time series' stored forms, for the fuzz harnesses in `mcds-fuzz`
//! only. Behind the `fuzzing` feature and hidden from the docs: not part of
//! the API, no stability promise.

/// A [`TimeSeries`](crate::TimeSeries) bucket item.
pub mod series {
    use crate::Stats;
    pub use crate::series::{BUCKET_LEN, decode_bucket, encode_bucket};

    /// The aggregates records of each of `samples` into one bucket leave,
    /// merged sample by sample as a record does; `None` for no sample.
    pub fn record(samples: &[i64]) -> Option<Stats> {
        let mut stats: Option<Stats> = None;
        for &value in samples {
            let one = Stats::of(value);
            match &mut stats {
                None => stats = Some(one),
                Some(s) => s.merge(&one),
            }
        }
        stats
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
