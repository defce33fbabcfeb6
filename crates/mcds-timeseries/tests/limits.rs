//! Each structure's limits (the `# Limits` section of its docs), tested at
//! the limit and one step past it: the value at the limit works (on the
//! embedded store with a manual clock, and on real memcached where that is
//! cheap), the one past it is the documented error, and nothing was
//! written. No sleeps: time moves by hand.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::backend::item_size;
use mcds_core::{Error, Key, MAX_KEY_LEN, ManualClock, MemoryStore, Scope, Store};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use mcds_timeseries::{
    MAX_RANGE_BUCKETS, MAX_RANGE_SLOTS, MAX_RESOLUTIONS, MAX_SLOTS_PER_PERIOD, PackedSeries,
    Resolution, SlotWidth, TimeSeries,
};

/// A multiple of an hour, for the embedded store's clock.
const EPOCH_MS: u64 = 1_800_000_000_000;
const SEC: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);
/// The longest step or retention: 100 years of 366 days, in ms.
const HUNDRED_YEARS_MS: u64 = 100 * 366 * 86_400_000;

/// A manual clock, a scope on it and the hour it stands at: on the
/// embedded store, and on `server` (an hour its reads vouch for).
fn both(server: &MemcachedServer) -> Vec<(ManualClock, Scope, u64, Arc<dyn Store>)> {
    let (store, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    let real: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (real_clock, real_scope, t0) = mcds_testkit::vouched_scope(Arc::clone(&real));
    vec![
        (clock, scope, EPOCH_MS, store),
        (real_clock, real_scope, t0, real),
    ]
}

fn name(len: usize) -> String {
    "n".repeat(len)
}

fn invalid_argument<T: std::fmt::Debug>(r: mcds_core::Result<T>, hint: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains(hint), "{m}"),
        other => panic!("not InvalidArgument: {other:?}"),
    }
}

// ------------------------------------------------------------ TimeSeries

/// A series records at up to `MAX_RESOLUTIONS` (8) resolutions; 9 are
/// `InvalidArgument` from `new`, which writes nothing.
#[test]
fn a_series_records_at_eight_resolutions_and_nine_are_invalid_argument() {
    let server = MemcachedServer::start_default();
    // Steps that divide an hour: the bucket of each holding t0 starts there.
    let steps: Vec<Duration> = [1, 2, 3, 4, 5, 6, 10, 12, 15]
        .map(Duration::from_secs)
        .to_vec();
    assert_eq!(steps.len(), MAX_RESOLUTIONS + 1);
    let resolutions: Vec<Resolution> = steps
        .iter()
        .map(|&s| Resolution::new(s, DAY).unwrap())
        .collect();
    for (_clock, scope, t0, _) in both(&server) {
        let eight = TimeSeries::new(&scope, "eight", &resolutions[..MAX_RESOLUTIONS]).unwrap();
        eight.record(t0, 5).unwrap();
        for &step in &steps[..MAX_RESOLUTIONS] {
            assert_eq!(eight.sum(t0, t0, step).unwrap(), 5, "{step:?}");
        }
    }
    let (store, _, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    invalid_argument(TimeSeries::new(&scope, "nine", &resolutions), "1 to 8");
    let key = Key::new(format!("ts:nine:1000:{}", EPOCH_MS / 1000)).unwrap();
    assert!(store.get(&key).unwrap().is_none(), "nothing written");
}

/// A step and a retention are whole milliseconds up to 100 years (of 366
/// days); one millisecond more is `InvalidArgument`. A series with a
/// 100-year step records and reads (without the loss check: its one bucket
/// began in 1970, before any server started).
#[test]
fn a_resolution_of_100_years_works_and_one_ms_more_is_invalid_argument() {
    let longest = Duration::from_millis(HUNDRED_YEARS_MS);
    let past = Duration::from_millis(HUNDRED_YEARS_MS + 1);
    let century = Resolution::new(longest, longest).unwrap();
    invalid_argument(Resolution::new(past, past), "100 years");
    invalid_argument(Resolution::new(longest, past), "100 years");
    invalid_argument(Resolution::new(SEC, past), "100 years");
    let server = MemcachedServer::start_default();
    for (_clock, scope, t0, _) in both(&server) {
        let series = TimeSeries::new(&scope, "century", &[century])
            .unwrap()
            .with_loss_check(false);
        series.record(t0, 7).unwrap();
        series.record(t0, -7).unwrap();
        let stats = series.aggregate(t0, t0, longest).unwrap().unwrap();
        assert_eq!((stats.count, stats.sum, stats.min), (2, 0, -7));
    }
}

/// A series' name may take `250 − 25` bytes less the digits of its longest
/// step in ms (221 for steps up to 9 999 ms, 220 for a minute) and less the
/// prefix: room for the key of the last bucket there is. One byte more is
/// `InvalidKey` from `new`, which writes nothing.
#[test]
fn a_series_name_at_the_key_limit_works_and_one_byte_more_is_invalid_key() {
    let server = MemcachedServer::start_default();
    let longest = MAX_KEY_LEN - "ts:".len() - ":1000:".len() - u64::MAX.to_string().len();
    assert_eq!(longest, 221);
    let second = [Resolution::new(SEC, HOUR).unwrap()];
    let and_minute = [second[0], Resolution::new(MINUTE, DAY).unwrap()];
    for (_clock, scope, t0, _) in both(&server) {
        let series = TimeSeries::new(&scope, &name(longest), &second).unwrap();
        series.record(t0, 3).unwrap();
        assert_eq!(series.sum(t0, t0, SEC).unwrap(), 3);
        let series = TimeSeries::new(&scope, &name(longest - 1), &and_minute).unwrap();
        series.record(t0, 4).unwrap();
        assert_eq!(series.sum(t0, t0, MINUTE).unwrap(), 4);
        let prefixed = scope.clone().with_prefix("app/").unwrap();
        let series = TimeSeries::new(&prefixed, &name(longest - 4), &second).unwrap();
        series.record(t0, 5).unwrap();
        assert_eq!(series.sum(t0, t0, SEC).unwrap(), 5);
    }
    let (store, _, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    for r in [
        TimeSeries::new(&scope, &name(longest + 1), &second),
        TimeSeries::new(&scope, &name(longest), &and_minute),
        TimeSeries::new(
            scope.clone().with_prefix("app/").unwrap(),
            &name(longest - 3),
            &second,
        ),
    ] {
        assert!(matches!(r, Err(Error::InvalidKey { .. })), "{r:?}");
    }
    let key = Key::new(format!("ts:n:1000:{}", EPOCH_MS / 1000)).unwrap();
    assert!(store.get(&key).unwrap().is_none(), "nothing written");
}

/// One read covers at most `MAX_RANGE_BUCKETS` (10 000) buckets, over all
/// the series it reads: exactly that many read; one more is
/// `InvalidArgument`, and nothing is read.
#[test]
fn a_read_of_max_range_buckets_works_and_one_more_is_invalid_argument() {
    let server = MemcachedServer::start_default();
    let r = [Resolution::new(SEC, DAY).unwrap()];
    for (clock, scope, t0, _) in both(&server) {
        let a = TimeSeries::new(&scope, "a", &r).unwrap();
        let b = TimeSeries::new(&scope, "b", &r).unwrap();
        clock.set_ms(t0 + MAX_RANGE_BUCKETS * 1000);
        let last = t0 + (MAX_RANGE_BUCKETS - 1) * 1000;
        for ts in [t0, last] {
            a.record(ts, 1).unwrap();
            b.record(ts, 2).unwrap();
        }
        let read = a.range(t0, last + 999, SEC).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!((read[0].start_ms, read[1].start_ms), (t0, last));
        invalid_argument(a.range(t0, last + 1000, SEC), "at most 10000");
        invalid_argument(a.sum(t0, last + 1000, SEC), "at most 10000");
        // Two series of 5 000 buckets each: 10 000 in all.
        let half = t0 + MAX_RANGE_BUCKETS / 2 * 1000;
        let union = TimeSeries::union(&[&a, &b], t0, half - 1, SEC).unwrap();
        assert_eq!((union.len(), union[0].stats.sum), (1, 3));
        invalid_argument(TimeSeries::union(&[&a, &b], t0, half, SEC), "at most 10000");
        invalid_argument(
            TimeSeries::intersection(&[&a, &b], t0, half, SEC),
            "at most 10000",
        );
    }
}

/// `range_iter` pages are 1 to `MAX_RANGE_BUCKETS` buckets: a page of
/// 10 000 streams; 0 or 10 001 make the first item `InvalidArgument`, and
/// the stream then ends.
#[test]
fn a_range_page_of_zero_or_past_max_range_buckets_is_invalid_argument() {
    let (_, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    let series = TimeSeries::new(&scope, "pages", &[Resolution::new(SEC, DAY).unwrap()]).unwrap();
    clock.set_ms(EPOCH_MS + 20_000_000);
    series.record(EPOCH_MS, 1).unwrap();
    series.record(EPOCH_MS + 19_999_000, 2).unwrap();
    let end = EPOCH_MS + 19_999_999;
    let pages: Vec<_> = series
        .range_iter(EPOCH_MS, end, SEC, MAX_RANGE_BUCKETS)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages.iter().map(Vec::len).sum::<usize>(), 2);
    for page in [0, MAX_RANGE_BUCKETS + 1] {
        let mut it = series.range_iter(EPOCH_MS, end, SEC, page);
        invalid_argument(it.next().unwrap(), "a range page is 1 to 10000");
        assert!(it.next().is_none(), "then the stream ends");
    }
}

/// A sample at most the clock skew ahead of the recording client's clock
/// is taken; one millisecond more is `InvalidArgument`, and the bucket
/// does not hold it.
#[test]
fn a_sample_one_ms_past_the_clock_skew_is_invalid_argument_and_unwritten() {
    let server = MemcachedServer::start_default();
    for (clock, scope, t0, _) in both(&server) {
        let series = TimeSeries::new(&scope, "skew", &[Resolution::new(SEC, HOUR).unwrap()])
            .unwrap()
            .with_max_clock_skew(SEC);
        series.record(t0 + 1000, 10).unwrap();
        invalid_argument(series.record(t0 + 1001, 20), "when its time comes");
        clock.set_ms(t0 + 2000);
        let stats = series
            .aggregate(t0 + 1000, t0 + 1999, SEC)
            .unwrap()
            .unwrap();
        assert_eq!((stats.count, stats.sum), (1, 10), "only the first");
    }
}

/// A sample whose bucket is past retention (for a reader the clock skew
/// behind) at every resolution is dropped: `record` returns `Ok` and
/// writes nothing. The bucket just inside is written.
#[test]
fn a_sample_past_retention_is_dropped_without_an_error_or_a_write() {
    let (store, _clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    let series = TimeSeries::new(&scope, "old", &[Resolution::new(SEC, HOUR).unwrap()]).unwrap();
    // Bucket b is written while (b + 1) s + 1 h + 60 s (the skew) > now.
    let edge = EPOCH_MS - 3_600_000 - 60_000; // the first bucket written
    series.record(edge, 1).unwrap();
    series.record(edge - 1, 1).unwrap();
    let key = |ts: u64| Key::new(format!("ts:old:1000:{}", ts / 1000)).unwrap();
    assert!(store.get(&key(edge)).unwrap().is_some(), "inside: written");
    assert!(
        store.get(&key(edge - 1)).unwrap().is_none(),
        "past: dropped"
    );
}

/// A union or intersection reads all its series in one batch: series on
/// two stores are `InvalidArgument`.
#[test]
fn a_union_of_series_in_two_stores_is_invalid_argument() {
    let (_, _, one) = mcds_testkit::embedded_at(EPOCH_MS);
    let (_, _, other) = mcds_testkit::embedded_at(EPOCH_MS);
    let r = [Resolution::new(SEC, HOUR).unwrap()];
    let a = TimeSeries::new(&one, "a", &r).unwrap();
    let b = TimeSeries::new(&other, "b", &r).unwrap();
    a.record(EPOCH_MS, 1).unwrap();
    b.record(EPOCH_MS, 2).unwrap();
    invalid_argument(
        TimeSeries::union(&[&a, &b], EPOCH_MS, EPOCH_MS, SEC),
        "different stores",
    );
    invalid_argument(
        TimeSeries::intersection(&[&a, &b], EPOCH_MS, EPOCH_MS, SEC),
        "different stores",
    );
}

// ----------------------------------------------------------- PackedSeries

/// A period holds 1 to `MAX_SLOTS_PER_PERIOD` (65 536) slots: the most, of
/// `u32`s (a 256 KiB item), count and read at the period's last slot; one
/// more is `InvalidArgument` from `new`, which writes nothing.
#[test]
fn a_packed_period_of_65_536_slots_works_and_65_537_is_invalid_argument() {
    let server = MemcachedServer::start_default();
    let slots = MAX_SLOTS_PER_PERIOD as u64;
    for (clock, scope, t0, store) in both(&server) {
        let packed = PackedSeries::new(
            &scope,
            "wide",
            SEC,
            MAX_SLOTS_PER_PERIOD,
            SlotWidth::U32,
            2 * DAY,
        )
        .unwrap();
        // The last slot of the period holding t0 (at most 18 h after it).
        let last = ((t0 / 1000 / slots + 1) * slots - 1) * 1000;
        clock.set_ms(last);
        assert_eq!(packed.incr(last, u32::MAX).unwrap(), u32::MAX);
        assert_eq!(packed.incr(last - 1000, 2).unwrap(), 2);
        let read = packed.range(last - 1000, last + 1000).unwrap();
        let values: Vec<u32> = read.iter().map(|s| s.value).collect();
        assert_eq!(values, [2, u32::MAX, 0], "the next period starts at 0");
        let key = Key::new(format!("packed:wide:1000:{slots}:{}", last / 1000 / slots)).unwrap();
        let item = store.get(&key).unwrap().unwrap();
        assert_eq!(item.value.len(), 2 + 4 * MAX_SLOTS_PER_PERIOD);
    }
    let (store, _, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    invalid_argument(
        PackedSeries::new(
            &scope,
            "wide",
            SEC,
            MAX_SLOTS_PER_PERIOD + 1,
            SlotWidth::U8,
            2 * DAY,
        ),
        "1 to 65536 slots",
    );
    let key = Key::new(format!("packed:wide:1000:65537:{}", EPOCH_MS / 65_537_000)).unwrap();
    assert!(store.get(&key).unwrap().is_none(), "nothing written");
}

/// A period item (`2 + slots × width` bytes, under the key of the last
/// period there is) must fit the store's item limit: at exactly the limit
/// the series opens and counts; one byte less is `ValueTooLarge` from
/// `new`, which writes nothing.
#[test]
fn a_packed_item_at_the_item_limit_works_and_one_byte_over_is_value_too_large() {
    let longest_key = "packed:p:60000:1440:18446744073709551615".len();
    let least = item_size(longest_key, 2 + 1440);
    for (limit, fits) in [(least, true), (least - 1, false)] {
        let clock = ManualClock::new(EPOCH_MS);
        let store = Arc::new(
            MemoryStore::builder()
                .item_size_limit(limit)
                .clock(Arc::new(clock.clone()))
                .build(),
        );
        let scope = Scope::from(store.clone()).with_clock(Arc::new(clock));
        let packed = PackedSeries::new(&scope, "p", MINUTE, 1440, SlotWidth::U8, DAY);
        if fits {
            let packed = packed.unwrap();
            assert_eq!(packed.incr(EPOCH_MS, 9).unwrap(), 9);
            assert_eq!(packed.get(EPOCH_MS).unwrap(), 9);
        } else {
            assert!(
                matches!(packed, Err(Error::ValueTooLarge { .. })),
                "{packed:?}"
            );
            assert_eq!(store.len(), 0, "nothing written");
        }
    }
}

/// A packed series' name may take `250 − 30` bytes less the digits of the
/// slot length in ms and of the slots per period (211 for a minute's slots,
/// 1 440 a period) and less the prefix; one byte more is `InvalidKey`.
#[test]
fn a_packed_name_at_the_key_limit_works_and_one_byte_more_is_invalid_key() {
    let longest = MAX_KEY_LEN - "packed:".len() - ":60000:1440:".len() - 20;
    assert_eq!(longest, 211);
    let server = MemcachedServer::start_default();
    for (_clock, scope, t0, _) in both(&server) {
        let packed =
            PackedSeries::new(&scope, &name(longest), MINUTE, 1440, SlotWidth::U16, DAY).unwrap();
        assert_eq!(packed.incr(t0, 300).unwrap(), 300);
        assert_eq!(packed.get(t0).unwrap(), 300);
    }
    // `new` refuses it before it makes a key, so it cannot write one.
    let (_, _, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    let r = PackedSeries::new(
        &scope,
        &name(longest + 1),
        MINUTE,
        1440,
        SlotWidth::U16,
        DAY,
    );
    assert!(matches!(r, Err(Error::InvalidKey { .. })), "{r:?}");
}

/// One range reads at most `MAX_RANGE_SLOTS` (100 000) slots: exactly that
/// many read, zeros included; one more is `InvalidArgument`.
#[test]
fn a_packed_range_of_100_000_slots_works_and_100_001_is_invalid_argument() {
    let server = MemcachedServer::start_default();
    for (clock, scope, t0, _) in both(&server) {
        let packed = PackedSeries::new(&scope, "r", SEC, 3600, SlotWidth::U8, 2 * DAY).unwrap();
        clock.set_ms(t0 + MAX_RANGE_SLOTS * 1000);
        let last = t0 + (MAX_RANGE_SLOTS - 1) * 1000;
        packed.incr(t0, 1).unwrap();
        packed.incr(last, 2).unwrap();
        let read = packed.range(t0, last).unwrap();
        assert_eq!(read.len() as u64, MAX_RANGE_SLOTS);
        assert_eq!((read[0].value, read[read.len() - 1].value), (1, 2));
        assert_eq!(packed.sum(t0, last + 999).unwrap(), 3);
        invalid_argument(packed.range(t0, last + 1000), "at most 100000");
        invalid_argument(packed.sum(t0, last + 1000), "at most 100000");
    }
}

/// An increment of a slot whose period is past retention (for a reader
/// the clock skew behind) is `InvalidArgument` and writes nothing; the
/// period just inside counts.
#[test]
fn a_packed_increment_past_retention_is_invalid_argument_and_unwritten() {
    let (store, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    let packed = PackedSeries::new(&scope, "old", MINUTE, 60, SlotWidth::U8, HOUR).unwrap();
    // A period (an hour) is counted while its end + 1 h + 60 s > now.
    clock.set_ms(EPOCH_MS + 60_000);
    let inside = EPOCH_MS - 3_600_000; // the period [-1 h, 0)
    assert_eq!(packed.incr(inside, 4).unwrap(), 4);
    assert_eq!(packed.get(inside).unwrap(), 4);
    invalid_argument(packed.incr(inside - 1, 4), "past the retention");
    let period = (inside - 1) / 3_600_000;
    let key = Key::new(format!("packed:old:60000:60:{period}")).unwrap();
    assert!(store.get(&key).unwrap().is_none(), "nothing written");
    // And a slot more than the clock skew ahead.
    let ahead = EPOCH_MS + 60_000 + 60_000;
    assert_eq!(packed.incr(ahead, 1).unwrap(), 1);
    invalid_argument(packed.incr(ahead + 1, 1), "when its time comes");
    clock.set_ms(ahead);
    assert_eq!(packed.get(ahead).unwrap(), 1, "the refused one not counted");
}
