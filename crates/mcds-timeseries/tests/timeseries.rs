//! mcds-timeseries on the embedded store with a manual clock (no sleeps),
//! on real memcached, and on a pool of 3 real memcached servers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mcds_core::{
    Clock, CountingStore, Error, Key, ManualClock, MemoryStore, Scope, Store, Ttl, traffic,
};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};
use mcds_timeseries::{
    Bucket, MAX_RANGE_BUCKETS, PackedSeries, Resolution, SlotWidth, Stats, TimeSeries,
};
use rand::RngExt;

/// A multiple of an hour: buckets of every step start there.
const EPOCH_MS: u64 = 1_800_000_000_000;
const SEC: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

/// 1 s kept an hour, 1 min kept a day, 1 h kept 30 days.
fn three_resolutions() -> Vec<Resolution> {
    vec![
        Resolution::new(SEC, HOUR).unwrap(),
        Resolution::new(MINUTE, DAY).unwrap(),
        Resolution::new(HOUR, 30 * DAY).unwrap(),
    ]
}

/// The embedded store and a scope on it, both on one manual clock.
fn memory() -> (Arc<dyn Store>, ManualClock, Scope) {
    mcds_testkit::embedded_at(EPOCH_MS)
}

fn stats(count: u64, sum: i128, min: i64, max: i64) -> Stats {
    Stats {
        count,
        sum,
        min,
        max,
    }
}

/// The naive model: every sample kept, aggregated per bucket on demand.
#[derive(Default)]
struct Model(Vec<(u64, i64)>);

impl Model {
    fn buckets(&self, step_ms: u64, from_ms: u64, to_ms: u64) -> Vec<Bucket> {
        let mut per: BTreeMap<u64, Stats> = BTreeMap::new();
        for &(ts, v) in &self.0 {
            let b = ts / step_ms;
            if b < from_ms / step_ms || b > to_ms / step_ms {
                continue;
            }
            per.entry(b)
                .and_modify(|s| s.merge(&Stats::of(v)))
                .or_insert(Stats::of(v));
        }
        per.into_iter()
            .map(|(b, stats)| Bucket {
                start_ms: b * step_ms,
                stats,
            })
            .collect()
    }
}

#[test]
fn records_and_reads_at_three_resolutions_on_memory() {
    let (_, clock, scope) = memory();
    let series = TimeSeries::new(&scope, "latency", &three_resolutions()).unwrap();
    let t0 = EPOCH_MS;
    let samples = [
        (t0, 10),
        (t0 + 999, -4),
        (t0 + 1_000, 7),
        (t0 + 61_000, i64::MAX),
        (t0 + 3_600_000, i64::MIN),
    ];
    let mut model = Model::default();
    for (ts, v) in samples {
        clock.set_ms(ts); // recorded as they happen
        series.record(ts, v).unwrap();
        model.0.push((ts, v));
    }
    clock.set_ms(t0 + 3_600_500); // every 1 s bucket still within its hour
    for (step, from, to) in [
        (SEC, t0, t0 + 3_600_999),
        (MINUTE, t0, t0 + 3_600_000),
        (HOUR, t0, t0 + 3_600_000),
    ] {
        let got = series.range(from, to, step).unwrap();
        assert_eq!(
            got,
            model.buckets(step.as_millis() as u64, from, to),
            "{step:?}"
        );
    }
    let seconds = series.range(t0, t0 + 1_999, SEC).unwrap();
    assert_eq!(
        seconds,
        [
            Bucket {
                start_ms: t0,
                stats: stats(2, 6, -4, 10)
            },
            Bucket {
                start_ms: t0 + 1_000,
                stats: stats(1, 7, 7, 7)
            }
        ]
    );
    let hour = series.aggregate(t0, t0, HOUR).unwrap().unwrap();
    assert_eq!(hour, stats(4, 13 + i128::from(i64::MAX), -4, i64::MAX));
    assert_eq!(series.count(t0, t0 + 3_600_000, HOUR).unwrap(), 5);
    assert_eq!(series.sum(t0, t0 + 3_600_000, HOUR).unwrap(), 13 - 1);
    assert_eq!(
        series.min(t0, t0 + 3_600_000, HOUR).unwrap(),
        Some(i64::MIN)
    );
    assert_eq!(series.max(t0, t0 + 59_999, MINUTE).unwrap(), Some(10));
    assert_eq!(series.avg(t0, t0 + 999, SEC).unwrap(), Some(3.0));
    assert_eq!(series.avg(t0 + 5_000, t0 + 5_000, SEC).unwrap(), None);
    assert_eq!(series.count(t0 + 2_000, t0 + 60_000, SEC).unwrap(), 0);
    assert!(series.range(t0 + 1_000, t0, SEC).unwrap().is_empty());
}

#[test]
fn retention_follows_the_readers_clock_not_expiry() {
    let (store, clock, scope) = memory();
    let ten_s = Duration::from_secs(10);
    let series = TimeSeries::new(&scope, "r", &[Resolution::new(SEC, ten_s).unwrap()]).unwrap();
    let t0 = EPOCH_MS;
    series.record(t0, 5).unwrap();
    let count_key = Key::new(format!("ts:r:1000:{}", t0 / 1000)).unwrap();
    // The bucket [t0, t0+1 s) is readable until t0 + 11 s...
    clock.set_ms(t0 + 10_999);
    assert_eq!(series.count(t0, t0, SEC).unwrap(), 1);
    // ...and not after, though its item lives on for the clock skew (60 s,
    // for a reader whose clock is behind) and a minute more.
    clock.set_ms(t0 + 11_000);
    assert_eq!(series.count(t0, t0, SEC).unwrap(), 0);
    assert!(store.get(&count_key).unwrap().is_some(), "TTL has slack");
    clock.set_ms(t0 + 130_999);
    assert!(store.get(&count_key).unwrap().is_some(), "TTL has slack");
    clock.set_ms(t0 + 131_000);
    assert!(store.get(&count_key).unwrap().is_none(), "TTL frees memory");
    // A sample whose bucket is past retention, even for a reader 60 s
    // behind, writes nothing.
    let old = t0 + 60_000;
    series.record(old, 1).unwrap();
    let old_key = Key::new(format!("ts:r:1000:{}", old / 1000)).unwrap();
    assert!(store.get(&old_key).unwrap().is_none());
    // A late sample within retention is written with a TTL to match.
    series.record(t0 + 125_000, 2).unwrap();
    assert_eq!(series.sum(t0 + 125_000, t0 + 125_000, SEC).unwrap(), 2);
}

#[test]
fn union_and_intersection_merge_buckets() {
    let (store, _, scope) = memory();
    let res = [Resolution::new(SEC, HOUR).unwrap()];
    let a = TimeSeries::new(&scope, "a", &res).unwrap();
    let b = TimeSeries::new(&scope, "b", &res).unwrap();
    // Another prefix on the same store is fine.
    let other_scope = scope.clone().with_prefix("other/").unwrap();
    let c = TimeSeries::new(&other_scope, "c", &res).unwrap();
    let t0 = EPOCH_MS;
    a.record(t0, 1).unwrap();
    a.record(t0 + 1_000, 2).unwrap();
    b.record(t0 + 1_000, -5).unwrap();
    b.record(t0 + 2_000, 9).unwrap();
    c.record(t0 + 1_500, 100).unwrap();
    let all = [&a, &b, &c];
    let (union, t) = traffic::measure(|| TimeSeries::union(&all, t0, t0 + 2_999, SEC).unwrap());
    assert_eq!(t.round_trips, 1, "one get_multi for every series");
    assert_eq!(
        union,
        [
            Bucket {
                start_ms: t0,
                stats: stats(1, 1, 1, 1)
            },
            Bucket {
                start_ms: t0 + 1_000,
                stats: stats(3, 97, -5, 100)
            },
            Bucket {
                start_ms: t0 + 2_000,
                stats: stats(1, 9, 9, 9)
            },
        ]
    );
    let both = TimeSeries::intersection(&all, t0, t0 + 2_999, SEC).unwrap();
    assert_eq!(
        both,
        [Bucket {
            start_ms: t0 + 1_000,
            stats: stats(3, 97, -5, 100)
        }]
    );
    assert!(
        TimeSeries::intersection(&[&a, &b], t0, t0 + 999, SEC)
            .unwrap()
            .is_empty()
    );
    assert!(TimeSeries::union(&[], t0, t0, SEC).unwrap().is_empty());
    let elsewhere = TimeSeries::new(Arc::new(MemoryStore::new()), "d", &res).unwrap();
    assert!(matches!(
        TimeSeries::union(&[&a, &elsewhere], t0, t0, SEC),
        Err(Error::InvalidArgument(_))
    ));
    drop(store);
}

#[test]
fn lost_or_damaged_buckets_are_errors_not_wrong_sums() {
    let clock = ManualClock::new(EPOCH_MS);
    let memory = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    let store: Arc<dyn Store> = memory.clone();
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let series = TimeSeries::new(&scope, "lossy", &[Resolution::new(SEC, HOUR).unwrap()]).unwrap();
    let t0 = EPOCH_MS;
    let key = |at: u64| Key::new(format!("ts:lossy:1000:{}", at / 1000)).unwrap();
    let fill = |at: u64| {
        for v in [3, 4, 5] {
            series.record(at, v).unwrap();
        }
    };
    fill(t0);
    clock.set_ms(t0 + 61_000);
    assert_eq!(
        series.aggregate(t0, t0, SEC).unwrap(),
        Some(stats(3, 12, 3, 5))
    );

    // The store lost everything (a flush; memcached: a restart too). The
    // bucket would read as empty, then as only what is recorded since: a
    // read says it cannot vouch for it instead.
    memory.flush_all();
    let e = series.aggregate(t0, t0, SEC).unwrap_err();
    assert!(matches!(e, Error::Lost { .. }), "{e}");
    assert!(e.to_string().contains("may have lost data"), "{e}");
    series.record(t0 + 1, 9).unwrap();
    assert!(
        series.range(t0, t0, SEC).is_err(),
        "re-created after the loss"
    );
    // Buckets that start 2 minutes after the loss are whole again.
    let later = t0 + 61_000 + 120_000 + 1_000;
    clock.set_ms(later);
    fill(later);
    assert_eq!(
        series.aggregate(later, later, SEC).unwrap(),
        Some(stats(3, 12, 3, 5))
    );
    // Off, the check reads what is there: short, without an error.
    let unchecked = series.clone().with_loss_check(false);
    assert_eq!(
        unchecked.aggregate(t0, t0, SEC).unwrap(),
        Some(stats(1, 9, 9, 9))
    );

    // A bucket another program deleted reads as empty (undetectable,
    // documented).
    store.delete(&key(later)).unwrap();
    assert_eq!(series.count(later, later, SEC).unwrap(), 0);

    // Garbage (another program's bytes, impossible aggregates) is
    // Corrupt, for reads and records alike, never a panic.
    let impossible = |count: u64, sum: i128, min: i64, max: i64| {
        let mut bytes = b"t1".to_vec();
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes.extend_from_slice(&min.to_le_bytes());
        bytes.extend_from_slice(&max.to_le_bytes());
        bytes
    };
    for garbage in [
        b"many".to_vec(),
        b"t1 too short".to_vec(),
        vec![0xff; 42],
        impossible(0, 0, 0, 0),
        impossible(1, 17, 3, 5),
        impossible(2, 100, 3, 5),
        impossible(2, 8, 5, 3),
    ] {
        store.set(&key(later), &garbage, Ttl::Never).unwrap();
        let e = series.range(later, later, SEC).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{garbage:?}: {e}");
        let e = series.record(later, 1_000).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{garbage:?}: {e}");
    }
    store
        .set(&key(later), &impossible(2, 8, 3, 5), Ttl::Never)
        .unwrap();
    assert_eq!(
        series.aggregate(later, later, SEC).unwrap(),
        Some(stats(2, 8, 3, 5))
    );
}

/// A sample more than 60 s ahead of the recording client's clock is
/// refused (reads rely on it to tell lost data); up to 60 s is taken.
#[test]
fn samples_from_the_future_are_refused() {
    let (_, _, scope) = memory();
    let series = TimeSeries::new(&scope, "ahead", &[Resolution::new(SEC, HOUR).unwrap()]).unwrap();
    series.record(EPOCH_MS + 60_000, 1).unwrap();
    match series.record(EPOCH_MS + 60_001, 1) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("when its time comes"), "{m}"),
        other => panic!("{other:?}"),
    }
    let packed = PackedSeries::new(&scope, "ahead", SEC, 60, SlotWidth::U8, HOUR).unwrap();
    assert!(matches!(
        packed.incr(EPOCH_MS + 61_000, 1),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn bad_arguments_say_what_to_do() {
    let (_, _, scope) = memory();
    let invalid = |r: Result<_, Error>, hint: &str| match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains(hint), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    };
    invalid(
        Resolution::new(Duration::ZERO, HOUR).map(|_| ()),
        "from 1 ms",
    );
    invalid(
        Resolution::new(Duration::from_micros(1500), HOUR).map(|_| ()),
        "whole number",
    );
    invalid(Resolution::new(MINUTE, SEC).map(|_| ()), "raise it");
    invalid(TimeSeries::new(&scope, "x", &[]).map(|_| ()), "1 to 8");
    let twice = [
        Resolution::new(SEC, HOUR).unwrap(),
        Resolution::new(SEC, DAY).unwrap(),
    ];
    invalid(TimeSeries::new(&scope, "x", &twice).map(|_| ()), "twice");
    let series = TimeSeries::new(&scope, "x", &three_resolutions()).unwrap();
    invalid(
        series
            .range(0, EPOCH_MS, Duration::from_secs(2))
            .map(|_| ()),
        "its steps",
    );
    invalid(
        series
            .range(EPOCH_MS, EPOCH_MS + 20_000_000, SEC)
            .map(|_| ()),
        "split the range",
    );
    // Out of retention, the same range is short enough.
    assert!(
        series
            .range(0, EPOCH_MS - 3_600_000, SEC)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        TimeSeries::new(&scope, &"n".repeat(240), &three_resolutions()),
        Err(Error::InvalidKey { .. })
    ));
    // An hour of seconds is one read; MAX_RANGE_BUCKETS + 1 buckets are not.
    series.range(EPOCH_MS - 3_599_000, EPOCH_MS, SEC).unwrap();
    invalid(
        series
            .range(EPOCH_MS, EPOCH_MS + MAX_RANGE_BUCKETS * 1_000, SEC)
            .map(|_| ()),
        "at most 10000",
    );

    invalid(
        PackedSeries::new(&scope, "p", MINUTE, 0, SlotWidth::U8, DAY).map(|_| ()),
        "slots per item",
    );
    invalid(
        PackedSeries::new(&scope, "p", MINUTE, 1440, SlotWidth::U8, HOUR).map(|_| ()),
        "raise it",
    );
    let small = Scope::new(Arc::new(
        MemoryStore::builder().item_size_limit(1000).build(),
    ));
    assert!(matches!(
        PackedSeries::new(small, "p", MINUTE, 1440, SlotWidth::U8, DAY),
        Err(Error::ValueTooLarge { .. })
    ));
    let packed = PackedSeries::new(&scope, "p", MINUTE, 60, SlotWidth::U8, HOUR).unwrap();
    invalid(
        packed.incr(EPOCH_MS - 3 * 3_600_000, 1).map(|_| ()),
        "retention",
    );
    invalid(packed.range(0, u64::MAX).map(|_| ()), "split the range");
}

#[test]
fn packed_slots_saturate_and_span_periods_on_memory() {
    let (_, clock, scope) = memory();
    let t0 = EPOCH_MS;
    for (width, cap) in [
        (SlotWidth::U8, 255u32),
        (SlotWidth::U16, 65_535),
        (SlotWidth::U32, u32::MAX),
    ] {
        let name = format!("p{}", width.bytes());
        // 4 slots of a minute per period: a 10-minute range spans 3 periods.
        let packed = PackedSeries::new(&scope, &name, MINUTE, 4, width, HOUR).unwrap();
        assert_eq!(width.max_value(), cap);
        assert_eq!(packed.incr(t0, 1).unwrap(), 1);
        assert_eq!(packed.incr(t0 + 30_000, cap).unwrap(), cap, "saturates");
        assert_eq!(packed.incr(t0, 5).unwrap(), cap, "stays saturated");
        clock.set_ms(t0 + 9 * 60_000); // as they happen
        assert_eq!(packed.incr(t0 + 5 * 60_000, 7).unwrap(), 7);
        assert_eq!(packed.incr(t0 + 9 * 60_000, 0).unwrap(), 0);
        clock.set_ms(t0);
        let slots = packed.range(t0, t0 + 9 * 60_000).unwrap();
        assert_eq!(slots.len(), 10);
        assert_eq!(slots[5].start_ms, t0 + 5 * 60_000);
        let values: Vec<u32> = slots.iter().map(|s| s.value).collect();
        assert_eq!(values, [cap, 0, 0, 0, 0, 7, 0, 0, 0, 0]);
        assert_eq!(packed.sum(t0, t0 + 9 * 60_000).unwrap(), u64::from(cap) + 7);
        assert_eq!(packed.get(t0 + 5 * 60_000 + 59_999).unwrap(), 7);
    }
    // Retention: the first period ([t0, t0+4 min)) is readable until
    // t0 + 4 min + 1 h; the range then starts at the next period.
    let packed = PackedSeries::new(&scope, "p1", MINUTE, 4, SlotWidth::U8, HOUR).unwrap();
    clock.set_ms(t0 + 64 * 60_000 - 1);
    assert_eq!(packed.get(t0).unwrap(), 255);
    clock.set_ms(t0 + 64 * 60_000);
    assert_eq!(packed.get(t0).unwrap(), 0);
    let slots = packed.range(t0, t0 + 9 * 60_000).unwrap();
    assert_eq!(slots.first().unwrap().start_ms, t0 + 4 * 60_000);
    assert_eq!(slots.len(), 6);
}

/// Round trips per op on `store` (a store that counts: `CountingStore`);
/// a read adds `check` for its loss check (0 on the embedded store, 2 on
/// memcached: its loss record and its `stats`; the first read also writes
/// the record, once).
fn round_trips(store: Arc<dyn Store>, label: &str, check: u64) {
    let (_clock, scope, t0) = mcds_testkit::vouched_scope(Arc::clone(&store));
    let rt = |f: &dyn Fn()| traffic::measure(f).1.round_trips;
    store.get(&Key::new("warm").unwrap()).unwrap(); // warm the connection
    // The first loss check of a fresh server writes its record: once.
    let _ = store.retention(&Key::new("warm").unwrap()).unwrap();
    let one = TimeSeries::new(&scope, "rt1", &[Resolution::new(SEC, HOUR).unwrap()]).unwrap();
    let three = TimeSeries::new(&scope, "rt3", &three_resolutions()).unwrap();
    let rows = [
        (
            "record, 1 resolution, new bucket",
            rt(&|| one.record(t0, 5).unwrap()),
            2,
        ),
        (
            "record, 1 resolution",
            rt(&|| one.record(t0, 9).unwrap()),
            2,
        ),
        (
            "record, 3 resolutions, new buckets",
            rt(&|| three.record(t0, -5).unwrap()),
            2,
        ),
        (
            "record, 3 resolutions",
            rt(&|| three.record(t0, -6).unwrap()),
            2,
        ),
        (
            "range, 1 resolution",
            rt(&|| {
                one.range(t0, t0 + 59_999, SEC).unwrap();
            }),
            1 + check,
        ),
        (
            "aggregate, 1 h step",
            rt(&|| {
                three.aggregate(t0, t0, HOUR).unwrap();
            }),
            1 + check,
        ),
        (
            "union of 2 series",
            rt(&|| {
                TimeSeries::union(&[&one, &three], t0, t0 + 9_999, SEC).unwrap();
            }),
            1 + check,
        ),
        (
            "range without the loss check",
            rt(&|| {
                one.clone()
                    .with_loss_check(false)
                    .range(t0, t0 + 59_999, SEC)
                    .unwrap();
            }),
            1,
        ),
    ];
    let packed = PackedSeries::new(&scope, "rtp", MINUTE, 1440, SlotWidth::U8, DAY).unwrap();
    let packed_rows = [
        (
            "packed incr, new period",
            rt(&|| {
                packed.incr(t0, 1).unwrap();
            }),
            2,
        ),
        (
            "packed incr",
            rt(&|| {
                packed.incr(t0, 254).unwrap();
            }),
            2,
        ),
        (
            "packed incr, saturated slot",
            rt(&|| {
                packed.incr(t0, 1).unwrap();
            }),
            1,
        ),
        (
            "packed get",
            rt(&|| {
                packed.get(t0).unwrap();
            }),
            1 + check,
        ),
        (
            "packed range, 2 periods",
            rt(&|| {
                packed.range(t0, t0 + DAY.as_millis() as u64).unwrap();
            }),
            1 + check,
        ),
    ];
    for (what, got, want) in rows.iter().chain(&packed_rows) {
        println!("{label}: {what}: {got} round trip(s)");
        assert_eq!(got, want, "{label}: {what}");
    }
    assert_eq!(
        three.aggregate(t0, t0, HOUR).unwrap(),
        Some(stats(2, -11, -6, -5))
    );
}

/// A bucket still being written when its server loses everything (`lose`:
/// a flush, a restart), then re-created by later records: it would read
/// as only the samples since, and reads as lost instead; a bucket that
/// starts after the loss reads exactly. `clock` drives the scope (and the
/// embedded store); no clock skew is allowed (one machine).
fn a_bucket_lost_while_written_reads_as_lost(
    store: Arc<dyn Store>,
    clock: ManualClock,
    label: &str,
    lose: &dyn Fn(),
) {
    let t0 = clock.now_ms();
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let series = TimeSeries::new(&scope, "evicted", &[Resolution::new(SEC, HOUR).unwrap()])
        .unwrap()
        .with_max_clock_skew(Duration::ZERO);
    for v in [3, 4, 5] {
        series.record(t0, v).unwrap();
    }
    assert_eq!(
        series.aggregate(t0, t0, SEC).unwrap(),
        Some(stats(3, 12, 3, 5))
    );
    lose();
    series.record(t0, 3).unwrap();
    series.record(t0, 5).unwrap();
    // Before the check this read count 2, sum 8, min 3, max 5: consistent,
    // and wrong.
    let e = series.aggregate(t0, t0, SEC).unwrap_err();
    println!("{label}: a bucket written across a loss reads as: {e}");
    assert!(matches!(e, Error::Lost { .. }), "{label}: {e}");
    assert!(e.to_string().contains("may have lost data"), "{label}: {e}");
    clock.set_ms(t0 + 3_000);
    assert!(series.aggregate(t0, t0, SEC).is_err(), "{label}: later too");
    // A bucket that starts after the loss is whole.
    let later = if label == "memory" {
        t0 + 5_000
    } else {
        mcds_testkit::a_second_after_now()
    };
    clock.set_ms(later);
    series.record(later, 7).unwrap();
    assert_eq!(
        series.aggregate(later, later, SEC).unwrap(),
        Some(stats(1, 7, 7, 7)),
        "{label}"
    );
}

#[test]
fn a_bucket_lost_while_written_reads_as_lost_on_memory() {
    let clock = ManualClock::new(EPOCH_MS);
    let memory = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    let lost = Arc::clone(&memory);
    a_bucket_lost_while_written_reads_as_lost(memory, clock, "memory", &move || lost.flush_all());
}

#[test]
fn a_bucket_lost_while_written_reads_as_lost_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let clock = ManualClock::new(mcds_testkit::a_second_after_now());
    a_bucket_lost_while_written_reads_as_lost(store, clock, "memcached, flush_all", &|| {
        let reply = server.raw(b"flush_all\r\n", |_| true);
        assert_eq!(reply.first().map(String::as_str), Some("OK"), "{reply:?}");
    });
    let server = std::sync::Mutex::new(MemcachedServer::start_default());
    let addr = server.lock().unwrap().addr();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addr).unwrap());
    let clock = ManualClock::new(mcds_testkit::a_second_after_now());
    a_bucket_lost_while_written_reads_as_lost(store, clock, "memcached, restart", &|| {
        let mut server = server.lock().unwrap();
        server.kill();
        server.restart();
    });
}

#[test]
fn round_trips_on_memory() {
    let (store, _, _) = memory();
    round_trips(Arc::new(CountingStore::new(store)), "memory", 0);
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    round_trips(store.clone(), "memcached", 2);
    println!("memcached commands: {:?}", store.all());
}

/// On a pool of 3, a range read is one batch, one round trip per server
/// whatever the number of buckets, then two more per server for its loss
/// check; a record is two round trips per server it touches.
#[test]
fn range_is_one_round_trip_per_server_on_a_pool_of_3() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let counting = Arc::new(CountingStore::new(
        MemcachedStore::connect(&pool.servers_arg()).unwrap(),
    ));
    let store: Arc<dyn Store> = counting.clone();
    let (clock, scope, t0) = mcds_testkit::vouched_scope(Arc::clone(&store));
    let series = TimeSeries::new(&scope, "pooled", &three_resolutions()).unwrap();
    for s in 0..120u64 {
        clock.set_ms(t0 + s * 1_000);
        series.record(t0 + s * 1_000, s as i64).unwrap();
    }
    // A record at 3 resolutions: a get of each bucket, then a CAS of each,
    // every server's share sent at once: 2 round trips per server touched.
    let (_, t) = traffic::measure(|| series.record(t0 + 30_000, 30).unwrap());
    println!("pool of 3: record at 3 resolutions: {t:?}");
    assert!((2..=6).contains(&t.round_trips), "{t:?}");
    assert_eq!(t.commands, 6, "a get and a cas per resolution");
    clock.set_ms(t0 + 180_000);
    // The first loss check of each fresh server writes its record: once.
    series.range(t0, t0 + 119_999, SEC).unwrap();
    counting.reset();
    let (buckets, t) = traffic::measure(|| series.range(t0, t0 + 119_999, SEC).unwrap());
    println!(
        "pool of 3: range of 120 one-second buckets: {t:?}; per op: {:?}",
        counting.all()
    );
    assert_eq!(buckets.len(), 120);
    // One round trip per server for the gets, and two for its loss
    // record and its stats.
    assert_eq!(t.round_trips, 9, "three round trips per server");
    assert!(t.commands >= 120);
    assert_eq!(buckets[30].stats, stats(2, 60, 30, 30));
    let (total, t) = traffic::measure(|| series.aggregate(t0, t0, HOUR).unwrap().unwrap());
    assert!(t.round_trips <= 3, "one bucket: one server, {t:?}");
    assert_eq!(total, stats(121, (0..120).sum::<i128>() + 30, 0, 119));
    let other = TimeSeries::new(&scope, "pooled-2", &three_resolutions()).unwrap();
    other.record(t0, 1_000).unwrap();
    let (merged, t) =
        traffic::measure(|| TimeSeries::union(&[&series, &other], t0, t0 + 119_999, SEC).unwrap());
    assert_eq!(t.round_trips, 9, "union: three round trips per server");
    assert_eq!(merged[0].stats, stats(2, 1_000, 0, 1_000));
}

/// `THREADS` threads record random samples into the same few buckets at 3
/// resolutions; then every bucket's count, sum, min and max equal those of
/// the acknowledged records.
fn exact_under_threads(store: Arc<dyn Store>, label: &str) {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 1_500;
    let (_clock, scope, t0) = mcds_testkit::vouched_scope(store);
    let series = TimeSeries::new(&scope, "exact", &three_resolutions()).unwrap();
    let base_seed: u64 = mcds_testkit::seed::rng(label).random();
    let failures = AtomicU64::new(0);
    let writing = AtomicBool::new(true);
    let mut concurrent_reads = (0, 0);
    let acknowledged: Vec<Vec<(u64, i64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (series, failures) = (&series, &failures);
                s.spawn(move || {
                    use rand::SeedableRng;
                    let mut rng = rand::rngs::StdRng::seed_from_u64(base_seed ^ thread);
                    let mut done = Vec::new();
                    for _ in 0..PER_THREAD {
                        let ts = t0 + rng.random_range(0..4_000);
                        let v: i64 = match rng.random_range(0..100) {
                            0..70 => rng.random_range(-1_000..1_000),
                            70..95 => rng.random_range(-(1 << 45)..(1 << 45)),
                            _ => rng.random(),
                        };
                        match series.record(ts, v) {
                            Ok(()) => done.push((ts, v)),
                            Err(e) => {
                                eprintln!("{label}: record failed: {e}");
                                failures.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    done
                })
            })
            .collect();
        // A reader races the writers: the buckets are open, so a record
        // seen in part is shown as read, never an error.
        let reader = s.spawn(|| {
            let (mut reads, mut errors) = (0u64, 0u64);
            while writing.load(Ordering::Relaxed) {
                match series.aggregate(t0, t0 + 3_999, SEC) {
                    Ok(_) => reads += 1,
                    Err(e) => {
                        eprintln!("{label}: concurrent read failed: {e}");
                        errors += 1;
                    }
                }
            }
            (reads, errors)
        });
        let done = handles.into_iter().map(|h| h.join().unwrap()).collect();
        writing.store(false, Ordering::Relaxed);
        concurrent_reads = reader.join().unwrap();
        done
    });
    assert_eq!(failures.load(Ordering::Relaxed), 0, "no fault was injected");
    println!(
        "{label}: {} reads during the records, {} failed",
        concurrent_reads.0, concurrent_reads.1
    );
    assert_eq!(concurrent_reads.1, 0, "reads of open buckets never fail");
    let model = Model(acknowledged.into_iter().flatten().collect());
    for step in [SEC, MINUTE, HOUR] {
        let got = series.range(t0, t0 + 3_999, step).unwrap();
        let want = model.buckets(step.as_millis() as u64, t0, t0 + 3_999);
        assert_eq!(got, want, "{label}: step {step:?}");
    }
    let total = series.aggregate(t0, t0 + 3_999, SEC).unwrap().unwrap();
    let true_min = model.0.iter().map(|s| s.1).min().unwrap();
    let true_max = model.0.iter().map(|s| s.1).max().unwrap();
    let true_sum: i128 = model.0.iter().map(|s| i128::from(s.1)).sum();
    println!(
        "{label}: {THREADS} threads x {PER_THREAD} records acknowledged {}; read back at 1 s: count {} sum {} min {} max {} (true sum {true_sum}, min {true_min}, max {true_max}); 1 min and 1 h buckets equal too",
        model.0.len(),
        total.count,
        total.sum,
        total.min,
        total.max
    );
    assert_eq!(
        total,
        stats(THREADS * PER_THREAD, true_sum, true_min, true_max)
    );
    assert_eq!(series.aggregate(t0, t0, HOUR).unwrap(), Some(total));
}

#[test]
fn eight_threads_exact_on_memory() {
    let (store, _, _) = memory();
    exact_under_threads(store, "memory");
}

#[test]
fn eight_threads_exact_on_memcached() {
    let server = MemcachedServer::start_default();
    exact_under_threads(
        Arc::new(MemcachedStore::connect(&server.addr()).unwrap()),
        "memcached",
    );
}

#[test]
fn eight_threads_exact_on_a_pool_of_3() {
    let pool = ServerPool::start(3, ServerOptions::default());
    exact_under_threads(
        Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap()),
        "pool of 3",
    );
}

#[test]
fn packed_counts_are_exact_under_eight_threads_on_memcached() {
    const THREADS: u32 = 8;
    const PER_THREAD: u32 = 200;
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (_clock, scope, t0) = mcds_testkit::vouched_scope(store);
    let packed = PackedSeries::new(&scope, "dense", SEC, 3600, SlotWidth::U16, DAY).unwrap();
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let packed = &packed;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    let slot = u64::from((thread + i) % 10);
                    packed.incr(t0 + slot * 1_000, 1).unwrap();
                }
            });
        }
    });
    let slots = packed.range(t0, t0 + 9_999).unwrap();
    let total: u32 = slots.iter().map(|s| s.value).sum();
    println!(
        "packed, memcached, {THREADS} threads x {PER_THREAD} incr over 10 slots: {:?} (total {total})",
        slots.iter().map(|s| s.value).collect::<Vec<_>>()
    );
    assert_eq!(total, THREADS * PER_THREAD);
    assert!(slots.iter().all(|s| s.value == THREADS * PER_THREAD / 10));
}

/// A pool server dies during a record: the record is an error, and once
/// the server is back (empty) the bucket it held reads as lost rather than
/// as the samples since.
#[test]
fn a_record_that_fails_as_its_server_dies_is_an_error_and_then_detected() {
    let mut pool = ServerPool::start(3, ServerOptions::default());
    let addrs = pool.addrs();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    // Real time, no skew allowed: the loss check times the restart by the
    // real clock.
    let ts = mcds_testkit::a_second_after_now();
    let clock = ManualClock::new(ts);
    let scope = Scope::new(store).with_clock(Arc::new(clock.clone()));
    let name = "partial";
    let key = format!("ts:{name}:1000:{}", ts / 1_000);
    let dead = mcds_memcached::route(key.as_bytes(), &addrs);
    let resolution = [Resolution::new(SEC, HOUR).unwrap()];
    let series = TimeSeries::new(&scope, name, &resolution)
        .unwrap()
        .with_max_clock_skew(Duration::ZERO);
    series.record(ts, 5).unwrap();
    pool.servers[dead].kill();
    let e = series.record(ts, 7).unwrap_err();
    println!("record with server {dead} of 3 down: {e}");
    assert!(!e.is_invalid_input(), "{e}");
    pool.servers[dead].restart();
    let fresh: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let reader = TimeSeries::new(
        Scope::new(fresh).with_clock(Arc::new(clock.clone())),
        name,
        &resolution,
    )
    .unwrap()
    .with_max_clock_skew(Duration::ZERO);
    reader.record(ts, 9).unwrap();
    let e = reader.aggregate(ts, ts, SEC).unwrap_err();
    println!("read after the restart: {e}");
    assert!(matches!(e, Error::Lost { .. }), "{e}");
}

mod model {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = i64> {
        prop_oneof![-20i64..20, any::<i64>(), Just(i64::MIN), Just(i64::MAX)]
    }

    proptest! {
        #![proptest_config(mcds_testkit::seed::proptest_config(file!(), 64))]

        /// Random records at steps of 1 s and 7 s, and random packed
        /// increments, read back equal to a naive model.
        #[test]
        fn reads_equal_a_naive_model(
            records in proptest::collection::vec((0u64..20_000, value()), 0..60),
            incrs in proptest::collection::vec((0u64..20_000, 0u32..200), 0..60),
            from in 0u64..20_000,
            len in 0u64..20_000,
        ) {
            let (_, clock, scope) = memory();
            let steps = [SEC, Duration::from_secs(7)];
            let resolutions: Vec<Resolution> =
                steps.iter().map(|&s| Resolution::new(s, HOUR).unwrap()).collect();
            let series = TimeSeries::new(&scope, "m", &resolutions).unwrap();
            let packed = PackedSeries::new(&scope, "m", SEC, 7, SlotWidth::U8, HOUR).unwrap();
            let mut model = Model::default();
            let mut slots: BTreeMap<u64, u32> = BTreeMap::new();
            for &(at, v) in &records {
                series.record(EPOCH_MS + at, v).unwrap();
                model.0.push((EPOCH_MS + at, v));
            }
            for &(at, d) in &incrs {
                let slot = slots.entry(at / 1_000).or_default();
                *slot = (*slot + d).min(255);
                prop_assert_eq!(packed.incr(EPOCH_MS + at, d).unwrap(), *slot);
            }
            clock.set_ms(EPOCH_MS + 200_000);
            let (from, to) = (EPOCH_MS + from, EPOCH_MS + from + len);
            for step in steps {
                let want = model.buckets(step.as_millis() as u64, from, to);
                prop_assert_eq!(series.range(from, to, step).unwrap(), want.clone());
                let total = want.iter().map(|b| b.stats).reduce(|mut a, b| { a.merge(&b); a });
                prop_assert_eq!(series.aggregate(from, to, step).unwrap(), total);
            }
            let got: Vec<(u64, u32)> =
                packed.range(from, to).unwrap().iter().map(|s| (s.start_ms, s.value)).collect();
            let want: Vec<(u64, u32)> = (from / 1_000..=to / 1_000)
                .map(|i| (i * 1_000, slots.get(&(i - EPOCH_MS / 1_000)).copied().unwrap_or(0)))
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}

/// A range of 100,000 buckets (ten times what one `range` reads) as a
/// stream: `range_iter` reads it 10,000 buckets a page, every bucket once,
/// oldest first, holding one page at a time.
#[test]
fn a_range_of_100_000_buckets_streams_a_page_at_a_time() {
    let (_, clock, scope) = memory();
    let sec = Duration::from_secs(1);
    let series = TimeSeries::new(
        &scope,
        "long",
        &[Resolution::new(sec, Duration::from_secs(200_000)).unwrap()],
    )
    .unwrap();
    let start = EPOCH_MS;
    clock.advance(Duration::from_secs(100_000));
    for i in 0..100_000u64 {
        series.record(start + i * 1000, i as i64).unwrap();
    }
    let end = start + 100_000 * 1000 - 1;
    assert!(
        series.range(start, end, sec).is_err(),
        "one read stops at MAX_RANGE_BUCKETS"
    );
    let mut pages = 0;
    let mut next = 0i64;
    for page in series.range_iter(start, end, sec, MAX_RANGE_BUCKETS) {
        let page = page.unwrap();
        assert!(page.len() as u64 <= MAX_RANGE_BUCKETS);
        for bucket in page {
            assert_eq!(bucket.stats.sum, i128::from(next), "in order, once each");
            next += 1;
        }
        pages += 1;
    }
    assert_eq!((pages, next), (10, 100_000));
}
