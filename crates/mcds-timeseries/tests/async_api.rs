//! The async API of `TimeSeries` and `PackedSeries`, on the embedded store
//! and on real memcached: every `_async` method runs in a `tokio::spawn`ed
//! task on a multi-thread runtime (so its future is `Send`), and 16 tasks
//! recording at once leave counts, sums, min and max (and packed slots)
//! equal to the acknowledged records.

use mcds_testkit::runtime;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{ManualClock, Scope, Store};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use mcds_timeseries::{Bucket, PackedSeries, Resolution, SlotWidth, Stats, TimeSeries};
use rand::{RngExt, SeedableRng};

/// A multiple of an hour: buckets of every step start there.
const EPOCH_MS: u64 = 1_800_000_000_000;
const SEC: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);
const TASKS: u64 = 16;
const PER_TASK: u64 = 200;

fn resolutions() -> Vec<Resolution> {
    vec![
        Resolution::new(SEC, HOUR).unwrap(),
        Resolution::new(MINUTE, DAY).unwrap(),
    ]
}

/// The embedded store on a manual clock at `EPOCH_MS`: a scope, its clock,
/// and the hour's start.
fn memory() -> (ManualClock, Scope, u64) {
    let (_, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    (clock, scope, EPOCH_MS)
}

fn memcached() -> (MemcachedServer, Arc<dyn Store>) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    (server, store)
}

/// Run `tasks` concurrently as `tokio::spawn`ed tasks on `rt` (so their
/// futures are `Send`), and collect their outputs in order.
fn run_spawned<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>>,
) -> Vec<T> {
    rt.block_on(async {
        let handles: Vec<_> = tasks.into_iter().map(tokio::spawn).collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    })
}

fn stats(count: u64, sum: i128, min: i64, max: i64) -> Stats {
    Stats {
        count,
        sum,
        min,
        max,
    }
}

/// Every `_async` method of both types once, each result checked, in a
/// spawned task.
fn every_async_method((clock, scope, t0): (ManualClock, Scope, u64)) {
    let a = TimeSeries::new(&scope, "async-a", &resolutions()).unwrap();
    let b = TimeSeries::new(&scope, "async-b", &resolutions()).unwrap();
    let packed = PackedSeries::new(&scope, "async-p", SEC, 60, SlotWidth::U8, HOUR).unwrap();
    let rt = runtime();
    // PackedSeries: incr_async, incr_now_async.
    let incremented = {
        let (packed, clock) = (packed.clone(), clock.clone());
        run_spawned(
            &rt,
            vec![Box::pin(async move {
                let mut got = vec![packed.incr_async(t0, 3).await.unwrap()];
                clock.set_ms(t0 + 1_000);
                got.push(packed.incr_now_async(1).await.unwrap()); // slot t0 + 1 s
                got.push(packed.incr_async(t0 + 999, 300).await.unwrap());
                got.push(packed.incr_async(t0, 0).await.unwrap());
                clock.set_ms(t0);
                got
            })],
        )
    };
    assert_eq!(incremented, [vec![3, 1, 255, 255]]);
    rt.block_on(async move {
        tokio::spawn(async move {
            // TimeSeries: record_async, record_now_async.
            a.record_async(t0, 12).await.unwrap();
            a.record_async(t0 + 500, -3).await.unwrap(); // same second
            clock.set_ms(t0 + 1_000);
            a.record_now_async(40).await.unwrap(); // next second
            b.record_async(t0, 5).await.unwrap();

            // range_async and the aggregates.
            let seconds = a.range_async(t0, t0 + 59_999, SEC).await.unwrap();
            assert_eq!(
                seconds,
                [
                    Bucket {
                        start_ms: t0,
                        stats: stats(2, 9, -3, 12)
                    },
                    Bucket {
                        start_ms: t0 + 1_000,
                        stats: Stats::of(40)
                    },
                ]
            );
            let minute = a.aggregate_async(t0, t0, MINUTE).await.unwrap();
            assert_eq!(minute, Some(stats(3, 49, -3, 40)));
            assert_eq!(a.count_async(t0, t0 + 59_999, SEC).await.unwrap(), 3);
            assert_eq!(a.sum_async(t0, t0 + 59_999, SEC).await.unwrap(), 49);
            assert_eq!(
                a.avg_async(t0, t0 + 59_999, SEC).await.unwrap(),
                Some(49.0 / 3.0)
            );
            assert_eq!(a.min_async(t0, t0, MINUTE).await.unwrap(), Some(-3));
            assert_eq!(a.max_async(t0, t0, MINUTE).await.unwrap(), Some(40));
            assert_eq!(a.count_async(t0 + 2_000, t0 + 2_999, SEC).await.unwrap(), 0);
            assert_eq!(
                a.min_async(t0 + 2_000, t0 + 2_999, SEC).await.unwrap(),
                None
            );

            // union_async, intersection_async.
            let union = TimeSeries::union_async(&[&a, &b], t0, t0 + 59_999, SEC)
                .await
                .unwrap();
            assert_eq!(
                union,
                [
                    Bucket {
                        start_ms: t0,
                        stats: stats(3, 14, -3, 12)
                    },
                    Bucket {
                        start_ms: t0 + 1_000,
                        stats: Stats::of(40)
                    },
                ]
            );
            let both = TimeSeries::intersection_async(&[&a, &b], t0, t0 + 59_999, SEC)
                .await
                .unwrap();
            assert_eq!(
                both,
                [Bucket {
                    start_ms: t0,
                    stats: stats(3, 14, -3, 12)
                }]
            );
            assert!(
                TimeSeries::union_async(&[&a, &a], t0, t0, SEC)
                    .await
                    .is_err(),
                "a series given twice is refused"
            );

            // PackedSeries: get_async, range_async, sum_async.
            assert_eq!(packed.get_async(t0).await.unwrap(), 255);
            assert_eq!(packed.get_async(t0 + 1_000).await.unwrap(), 1);
            let slots = packed.range_async(t0, t0 + 2_000).await.unwrap();
            assert_eq!(
                slots.iter().map(|s| s.value).collect::<Vec<_>>(),
                [255, 1, 0]
            );
            assert_eq!(packed.sum_async(t0, t0 + 2_000).await.unwrap(), 256);

            // The blocking API reads the same items.
            assert_eq!(a.aggregate(t0, t0, MINUTE).unwrap(), minute);
            assert_eq!(packed.sum(t0, t0 + 2_000).unwrap(), 256);
        })
        .await
        .unwrap();
    });
}

#[test]
fn every_async_method_on_memory() {
    every_async_method(memory());
}

#[test]
fn every_async_method_on_memcached() {
    let (_server, store) = memcached();
    every_async_method(mcds_testkit::vouched_scope(store));
}

/// 16 tasks each `record_async` 200 random samples into the same few
/// buckets (4 seconds, one minute), then 16 tasks `incr_async` the packed slot of each of those samples; then every bucket's count, sum, min and max equal those of the
/// acknowledged records, at both resolutions, and the packed slots count
/// the acknowledged increments.
fn sixteen_tasks_exact((_clock, scope, t0): (ManualClock, Scope, u64), label: &str) {
    let series = TimeSeries::new(&scope, "async-exact", &resolutions()).unwrap();
    let packed = PackedSeries::new(&scope, "async-exact-p", SEC, 60, SlotWidth::U32, HOUR).unwrap();
    let seed: u64 = mcds_testkit::seed::rng(label).random();
    let rt = runtime();
    let acknowledged: Vec<Vec<(u64, i64)>> = rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let series = series.clone();
                tokio::spawn(async move {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ task);
                    let mut done = Vec::new();
                    for _ in 0..PER_TASK {
                        let ts = t0 + rng.random_range(0..4_000);
                        let v: i64 = match rng.random_range(0..100) {
                            0..70 => rng.random_range(-1_000..1_000),
                            70..95 => rng.random_range(-(1 << 45)..(1 << 45)),
                            _ => rng.random(),
                        };
                        series.record_async(ts, v).await.unwrap();
                        done.push((ts, v));
                    }
                    done
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.push(t.await.unwrap());
        }
        all
    });
    // The packed increments: the same timestamps, 16 tasks at once.
    let incremented = run_spawned(
        &rt,
        acknowledged
            .iter()
            .map(|done| {
                let packed = packed.clone();
                let stamps: Vec<u64> = done.iter().map(|&(ts, _)| ts).collect();
                Box::pin(async move {
                    for ts in stamps {
                        packed.incr_async(ts, 1).await.unwrap();
                    }
                })
                    as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
            })
            .collect(),
    );
    assert_eq!(incremented.len() as u64, TASKS);
    let acknowledged: Vec<(u64, i64)> = acknowledged.into_iter().flatten().collect();
    assert_eq!(acknowledged.len() as u64, TASKS * PER_TASK);

    // The model: per second and per minute bucket, and per packed slot.
    let model = |step_ms: u64| {
        let mut per: BTreeMap<u64, Stats> = BTreeMap::new();
        for &(ts, v) in &acknowledged {
            per.entry(ts / step_ms * step_ms)
                .and_modify(|s| s.merge(&Stats::of(v)))
                .or_insert(Stats::of(v));
        }
        per.into_iter()
            .map(|(start_ms, stats)| Bucket { start_ms, stats })
            .collect::<Vec<_>>()
    };
    let (want_sec, want_min) = (model(1_000), model(60_000));
    let mut want_slots = [0u32; 4];
    for &(ts, _) in &acknowledged {
        want_slots[((ts - t0) / 1_000) as usize] += 1;
    }
    let total = want_min[0].stats;
    let got = rt.block_on(async {
        let (series, packed) = (series.clone(), packed.clone());
        tokio::spawn(async move {
            let (from, to) = (t0, t0 + 3_999);
            (
                series.range_async(from, to, SEC).await.unwrap(),
                series.range_async(from, to, MINUTE).await.unwrap(),
                series.aggregate_async(from, to, SEC).await.unwrap(),
                series.count_async(from, to, SEC).await.unwrap(),
                series.sum_async(from, to, MINUTE).await.unwrap(),
                series.min_async(from, to, SEC).await.unwrap(),
                series.max_async(from, to, SEC).await.unwrap(),
                packed.range_async(from, to).await.unwrap(),
                packed.sum_async(from, to).await.unwrap(),
            )
        })
        .await
        .unwrap()
    });
    let (seconds, minutes, aggregate, count, sum, min, max, slots, packed_sum) = got;
    assert_eq!(seconds, want_sec, "{label}: 1 s buckets");
    assert_eq!(minutes, want_min, "{label}: the 1 min bucket");
    assert_eq!(aggregate, Some(total), "{label}: aggregate");
    assert_eq!(count, TASKS * PER_TASK, "{label}: count");
    assert_eq!(sum, total.sum, "{label}: sum");
    assert_eq!((min, max), (Some(total.min), Some(total.max)));
    assert_eq!(
        slots.iter().map(|s| s.value).collect::<Vec<_>>(),
        want_slots,
        "{label}: packed slots"
    );
    assert_eq!(packed_sum, TASKS * PER_TASK, "{label}: packed sum");
    println!(
        "{label}: {TASKS} tasks x {PER_TASK} record_async, then x {PER_TASK} incr_async: count {count} sum {sum} min {:?} max {:?}, slots {want_slots:?}, all exact",
        min, max
    );
}

#[test]
fn sixteen_tasks_exact_on_memory() {
    sixteen_tasks_exact(memory(), "memory");
}

#[test]
fn sixteen_tasks_exact_on_memcached() {
    let (_server, store) = memcached();
    sixteen_tasks_exact(mcds_testkit::vouched_scope(store), "memcached");
}
