//! Adversarial review of `TimeSeries` (bucket generations) and
//! `PackedSeries` against real memcached 1.6.18 processes. Each `finding_*`
//! test asserts what a reader would expect; the ignored ones still fail:
//! they reproduce losses a read does not notice, which the `TimeSeries`
//! docs list under "What still escapes" (`cargo test -p mcds-timeseries
//! --test review -- --ignored` runs them). The others were fixed: a pool
//! with one `-C` server refuses a record before touching a counter, a union
//! over the widest range is an `InvalidArgument`, a series given twice to a
//! union is refused. Each `holds_*` test is something tried that held up.
//!
//! Three memcached facts behind most findings:
//!
//! * Eviction is per slab class. A bucket's count item (`n`, 18–19 digits)
//!   and its min/max item (`x`, 22 bytes) are the same size, so they share a
//!   slab class; the sum halves (`p0`…, a few digits) sit in a smaller one.
//! * `ma` (incr) does not bump an item in the LRU (`me` shows `fetch=no`
//!   after any number of increments), while every record's `get` of `x`
//!   does: a quiet bucket loses `n` first, then `x`, and keeps its sums.
//! * `ms` (the backend's CAS and add) that cannot allocate *deletes* the
//!   existing item ("avoid stale data persisting in cache because we
//!   failed alloc"), also under `-M`, the remedy the docs recommend.
//!
//! Run: `cargo test -p mcds-timeseries --test review -- --nocapture --test-threads 1`

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Clock, Key, ManualClock, Op, Scope, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};
use mcds_timeseries::{Resolution, Stats, TimeSeries};

const MINUTE: Duration = Duration::from_secs(60);
const DAY: Duration = Duration::from_secs(86_400);

/// A scope on `store` whose manual clock stands at the real time rounded
/// down to an hour (memcached expires by its own clock, so the scope's must
/// be about real); the bucket of every test starts there.
fn real_time_scope(store: Arc<dyn Store>) -> (ManualClock, Scope, u64) {
    let clock = ManualClock::starting_now();
    let t0 = clock.now_ms() / 3_600_000 * 3_600_000;
    clock.set_ms(t0);
    let scope = Scope::new(store).with_clock(Arc::new(clock.clone()));
    (clock, scope, t0)
}

/// The key of `part` of the minute bucket of `t0` of series `name`.
fn part_key(name: &str, t0: u64, part: &str) -> Key {
    Key::new(format!("ts:{name}:60000:{}:{part}", t0 / 60_000)).unwrap()
}

/// Samples 0..=100 spread over the range (latency-like, min near 0).
fn samples(n: u64, mul: u64) -> Vec<i64> {
    (0..n).map(|i| ((i * mul + 7) % 101) as i64).collect()
}

/// The true aggregates of `values`.
fn truth(values: &[i64]) -> Stats {
    let mut all = Stats::of(values[0]);
    for &v in &values[1..] {
        all.merge(&Stats::of(v));
    }
    all
}

/// Ordinary cache traffic: `n` items of `value_len` bytes under short keys,
/// pipelined (a busy application sharing the server).
fn filler(store: &dyn Store, first: usize, n: usize, value_len: usize) {
    let value = vec![b'a'; value_len];
    let keys: Vec<Key> = (first..first + n)
        .map(|i| Key::new(format!("f:{i:08}")).unwrap())
        .collect();
    for chunk in keys.chunks(1000) {
        let ops: Vec<Op<'_>> = chunk
            .iter()
            .map(|key| Op::Set {
                key,
                value: &value,
                ttl: Ttl::Never,
            })
            .collect();
        for reply in store.pipeline(&ops) {
            reply.unwrap();
        }
    }
}

/// Which of the bucket's parts memcached still has, by `me` (meta debug),
/// which does not bump an item in the LRU as a `get` would.
fn present(server: &MemcachedServer, name: &str, t0: u64) -> Vec<(&'static str, bool)> {
    ["n", "p0", "x"]
        .into_iter()
        .map(|p| {
            let key = part_key(name, t0, p);
            let command = format!("me {}\r\n", String::from_utf8_lossy(key.as_bytes()));
            let reply = server.raw(command.as_bytes(), |_| true);
            (p, reply.first().is_some_and(|l| l.starts_with("ME ")))
        })
        .collect()
}

/// Ordinary traffic of `value_len`-byte values, 20 000 items at a time,
/// until the bucket's parts are `wanted` (at most 40 rounds).
fn churn_until(
    server: &MemcachedServer,
    store: &dyn Store,
    t0: u64,
    value_len: usize,
    wanted: [(&'static str, bool); 3],
) {
    for round in 0..40 {
        filler(store, round * 20_000, 20_000, value_len);
        let parts = present(server, "lat", t0);
        println!("round {round}: {parts:?}");
        if parts == wanted {
            println!(
                "after {} filler items the bucket has: {parts:?}",
                (round + 1) * 20_000
            );
            return;
        }
    }
    panic!(
        "eviction never left {wanted:?}: {:?}",
        present(server, "lat", t0)
    );
}

/// A small memcached (`-m 2`) shared with ordinary traffic of ~110-byte
/// items (40-byte values): the count and the min/max item of a bucket that
/// is quiet for a while are evicted together, the sum counter survives in
/// its smaller slab class. Records resume; the bucket closes; the read is
/// `Ok` with a count 20 samples short (and an average 40% too high) —
/// no `Corrupt`, though the type docs say a bucket that lost its count
/// "is an Error::Corrupt naming the loss".
#[test]
#[ignore = "open: count and min/max evicted together while the sums survive read as a mixed bucket (the TimeSeries docs, What still escapes)"]
fn finding_eviction_takes_count_and_minmax_together_and_the_read_is_wrong_without_error() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let series = TimeSeries::new(&scope, "lat", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();

    let before = samples(20, 37);
    for &v in &before {
        series.record(t0, v).unwrap();
    }
    churn_until(
        &server,
        store.as_ref(),
        t0,
        40,
        [("n", false), ("p0", true), ("x", false)],
    );

    let after = samples(30, 53);
    for &v in &after {
        series.record(t0, v).unwrap();
    }
    clock.set_ms(t0 + 3 * 60_000); // the bucket is closed
    let all: Vec<i64> = before.iter().chain(&after).copied().collect();
    let read = series.aggregate(t0, t0 + 59_999, MINUTE);
    println!("true {:?}", truth(&all));
    println!("read {read:?}");
    assert_eq!(read.unwrap(), Some(truth(&all)), "a wrong answer, no error");
}

/// The same eviction, read while the bucket is open, one record after it:
/// the read returns count 1 with min = max = 3 and a sum of 967 — stats that
/// cannot be (one sample's sum is that sample), without an error. The
/// read's own check knows (it is `Decoded::Suspect`), but an open bucket
/// is "shown as read".
#[test]
#[ignore = "open: an open bucket whose parts disagree is shown as read (the TimeSeries docs)"]
fn finding_an_open_bucket_returns_impossible_stats_after_eviction() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let series = TimeSeries::new(&scope, "lat", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let before = samples(20, 37);
    for &v in &before {
        series.record(t0, v).unwrap();
    }
    churn_until(
        &server,
        store.as_ref(),
        t0,
        40,
        [("n", false), ("p0", true), ("x", false)],
    );
    series.record(t0, 3).unwrap();
    clock.set_ms(t0 + 30_000); // still in the bucket
    let read = series.aggregate(t0, t0 + 59_999, MINUTE);
    println!("read {read:?}");
    let all: Vec<i64> = before.iter().chain(&[3]).copied().collect();
    assert_eq!(read.unwrap(), Some(truth(&all)), "a wrong answer, no error");
}

/// The sum counter alone evicted (ordinary traffic of ~80-byte items, which
/// share its slab class), the count and the min/max item survive: the read
/// of the closed bucket is `Ok` with a sum of only the samples recorded
/// since. The docs list this loss as one that "still escapes", as if rare;
/// with memcached's slab classes it is what eviction of small items does.
#[test]
#[ignore = "open: sums evicted alone read as a short sum (the TimeSeries docs, What still escapes)"]
fn finding_eviction_of_the_sums_alone_reads_a_short_sum_without_error() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let series = TimeSeries::new(&scope, "lat", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let before = samples(20, 37);
    for &v in &before {
        series.record(t0, v).unwrap();
    }
    churn_until(
        &server,
        store.as_ref(),
        t0,
        10,
        [("n", true), ("p0", false), ("x", true)],
    );
    let after = samples(30, 53);
    for &v in &after {
        series.record(t0, v).unwrap();
    }
    clock.set_ms(t0 + 3 * 60_000);
    let all: Vec<i64> = before.iter().chain(&after).copied().collect();
    let read = series.aggregate(t0, t0 + 59_999, MINUTE);
    println!("true {:?}", truth(&all));
    println!("read {read:?}");
    assert_eq!(read.unwrap(), Some(truth(&all)), "a wrong answer, no error");
}

/// A pool of 3; the bucket's count and min/max item live on one server,
/// its sum on another. That server is killed (-9) and restarted mid-bucket:
/// records resume, and the closed bucket reads `Ok` with the count of the
/// samples since the restart and the sum of all of them. The docs: "the
/// count and the min/max item lost together (the bucket starts again, and
/// reads what was recorded since)" — it does not: the sums survived.
#[test]
#[ignore = "open: a restart taking count and min/max but not the sums (the TimeSeries docs)"]
fn finding_a_restart_taking_count_and_minmax_reads_a_mixed_bucket_without_error() {
    let mut pool = ServerPool::start(3, ServerOptions::default());
    let addrs = pool.addrs();
    let probe = ManualClock::starting_now().now_ms() / 3_600_000 * 3_600_000;
    let (name, lost) = (0..)
        .map(|i| format!("r{i:02}"))
        .find_map(|name| {
            let at = |part| mcds_memcached::route(part_key(&name, probe, part).as_bytes(), &addrs);
            (at("n") == at("x") && at("p0") != at("x")).then(|| (name.clone(), at("n")))
        })
        .unwrap();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    assert_eq!(t0, probe, "the hour turned during the test; run it again");
    let series = TimeSeries::new(&scope, &name, &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let before = samples(20, 37);
    for &v in &before {
        series.record(t0, v).unwrap();
    }
    pool.servers[lost].kill();
    pool.servers[lost].restart();
    // A fresh client (another process, or this one once it redialed).
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let series = TimeSeries::new(&scope, &name, &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let after = samples(30, 53);
    for &v in &after {
        series.record(t0, v).unwrap();
    }
    clock.set_ms(t0 + 3 * 60_000);
    let all: Vec<i64> = before.iter().chain(&after).copied().collect();
    let read = series.aggregate(t0, t0 + 59_999, MINUTE);
    println!("server {lost} of 3 restarted; true {:?}", truth(&all));
    println!("read {read:?}");
    assert_eq!(read.unwrap(), Some(truth(&all)), "a wrong answer, no error");
}

/// Busy buckets on a small memcached shared with ordinary traffic of small
/// and ~110-byte items: 8 series, 600 records interleaved with filler
/// (random seed printed). Each closed bucket is then read and compared with
/// the truth. The type docs promise an exact answer or `Corrupt`, except
/// for losses they list: every part lost (reads empty), the count and the
/// min/max item lost together ("the bucket starts again, and reads what was
/// recorded since": the aggregates of a suffix of the samples), or only sum
/// counters lost (count, min and max right, the sum short). A read that is
/// none of these is a wrong answer the docs do not own up to; the tally
/// says how often each happens (`REVIEW_FILLER_LEN=small|large`,
/// `REVIEW_FILLER_MAX=n` change the traffic).
#[test]
#[ignore = "slow and load-dependent (eviction by filler traffic): run by hand"]
fn holds_busy_buckets_under_eviction_are_mostly_corrupt() {
    use rand::RngExt;
    let mut rng = mcds_testkit::seed::rng("busy buckets under eviction");
    let filler_max: usize = std::env::var("REVIEW_FILLER_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let names: Vec<String> = (0..8).map(|i| format!("b{i:02}")).collect();
    let series: Vec<TimeSeries> = names
        .iter()
        .map(|n| TimeSeries::new(&scope, n, &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap())
        .collect();
    let mut recorded: Vec<Vec<i64>> = vec![Vec::new(); series.len()];
    let mut next_filler = 0;
    for _ in 0..600 {
        let s = rng.random_range(0..series.len());
        // Latency-like: mostly 1..100, sometimes a slow one.
        let v = if rng.random_ratio(1, 20) {
            rng.random_range(1_000..5_000)
        } else {
            rng.random_range(1..100)
        };
        series[s].record(t0, v).unwrap();
        recorded[s].push(v);
        let n = rng.random_range(0..=filler_max);
        let len = match std::env::var("REVIEW_FILLER_LEN").as_deref() {
            Ok("small") => 10,
            Ok("large") => 40,
            _ if rng.random_bool(0.5) => 10,
            _ => 40,
        };
        filler(store.as_ref(), next_filler, n, len);
        next_filler += n;
    }
    clock.set_ms(t0 + 3 * 60_000);
    let (mut exact, mut corrupt, mut owned, mut wrong) = (0, 0, 0, Vec::new());
    let mut short_sums = Vec::new();
    for (s, values) in series.iter().zip(&recorded) {
        if values.is_empty() {
            continue;
        }
        let suffix = |read: &Stats| (1..values.len()).any(|k| truth(&values[k..]) == *read);
        match s.aggregate(t0, t0 + 59_999, MINUTE) {
            Ok(Some(read)) if read == truth(values) => exact += 1,
            Err(mcds_core::Error::Corrupt { .. }) => corrupt += 1,
            Ok(None) => owned += 1,
            Ok(Some(read)) if suffix(&read) => owned += 1,
            Ok(Some(read))
                if (read.count, read.min, read.max) == {
                    let t = truth(values);
                    (t.count, t.min, t.max)
                } && read.sum < truth(values).sum =>
            {
                short_sums.push((s.name().to_string(), truth(values).sum, read.sum));
            }
            other => wrong.push((s.name().to_string(), truth(values), other)),
        }
    }
    println!(
        "{next_filler} filler items; exact {exact}, Corrupt {corrupt}, bucket lost or restarted {owned}, sums alone short {short_sums:?}, wrong {}",
        wrong.len()
    );
    for (name, truth, read) in &wrong {
        println!("  {name}: true {truth:?}, read {read:?}");
    }
    assert!(
        wrong.is_empty(),
        "{} buckets read wrong without an error",
        wrong.len()
    );
}

/// A pool of 2 where the second server runs with `-C` (no CAS): the type
/// docs say a record needing CAS is "refused before the counters are
/// touched, not half applied (memcached -C, a proxy)". The check asks only
/// the server of the first resolution's min/max item; a record whose other
/// resolution's min/max item lives on the `-C` server applies its counts
/// and sums there, then fails: half applied, and the bucket is left with a
/// count its min/max does not cover.
#[test]
fn finding_a_pool_with_one_cas_less_server_half_applies_records() {
    let normal = MemcachedServer::start_default();
    let no_cas = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let addrs = vec![normal.addr(), no_cas.addr()];
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addrs.join(",")).unwrap());
    let (_, scope, t0) = real_time_scope(Arc::clone(&store));
    let key = |name: &str, step: u64, part: &str| format!("ts:{name}:{step}:{}:{part}", t0 / step);
    let name = (0..)
        .map(|i| format!("c{i:02}"))
        .find(|name| {
            let at = |k: String| mcds_memcached::route(k.as_bytes(), &addrs);
            at(key(name, 1_000, "x")) == 0
                && at(key(name, 60_000, "x")) == 1
                && at(key(name, 60_000, "n")) == 1
        })
        .unwrap();
    let series = TimeSeries::new(
        &scope,
        &name,
        &[
            Resolution::new(Duration::from_secs(1), DAY).unwrap(),
            Resolution::new(MINUTE, DAY).unwrap(),
        ],
    )
    .unwrap();
    let first = series.record(t0, 5);
    let second = series.record(t0, 9);
    println!("record 5: {first:?}\nrecord 9: {second:?}");
    let minute_count = store
        .get(&Key::new(key(&name, 60_000, "n")).unwrap())
        .unwrap()
        .and_then(|i| i.counter())
        .map(|c| c & 0xffff_ffff);
    println!("the minute bucket's count item now says {minute_count:?} samples");
    // Fixed: every target's server is asked first, so both records are
    // refused before a counter is touched.
    for r in [&first, &second] {
        assert!(
            matches!(r, Err(mcds_core::Error::Unsupported { .. })),
            "{r:?}"
        );
    }
    assert_eq!(minute_count, None, "a refused record touched the counters");
}

/// `union` of a list that names one series twice counts it twice (a
/// dashboard merging the series a user picked, with a repeat).
#[test]
fn finding_union_counts_a_repeated_series_twice() {
    let (_, _, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    let t0 = 1_800_000_000_000;
    let a = TimeSeries::new(&scope, "a", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    a.record(t0, 10).unwrap();
    // Fixed: a series given twice is refused rather than counted twice.
    let union = TimeSeries::union(&[&a, &a], t0, t0, MINUTE);
    println!("union [a, a]: {union:?}");
    assert!(
        matches!(union, Err(mcds_core::Error::InvalidArgument(_))),
        "{union:?}"
    );
    let twin = TimeSeries::new(&scope, "a", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    assert!(TimeSeries::intersection(&[&a, &twin], t0, t0, MINUTE).is_err());
}

/// Held up: a retention beyond memcached's 30-day relative TTL limit (sent
/// as an absolute time), `i64::MIN`/`i64::MAX` samples, a bucket holding
/// exactly 2^31 samples (crafted: the count item at its largest) on
/// memcached 1.6.18, and one sample more is `Corrupt`.
#[test]
fn holds_long_retention_extremes_and_the_sample_limit_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let series =
        TimeSeries::new(&scope, "lat", &[Resolution::new(MINUTE, 40 * DAY).unwrap()]).unwrap();
    for v in [i64::MIN, i64::MAX, i64::MIN, -1] {
        series.record(t0, v).unwrap();
    }
    let me = server.raw(
        format!("me ts:lat:60000:{}:n\r\n", t0 / 60_000).as_bytes(),
        |_| true,
    );
    println!("count item: {me:?}");
    clock.set_ms(t0 + 39 * 86_400_000);
    let read = series.aggregate(t0, t0, MINUTE).unwrap().unwrap();
    assert_eq!(
        read,
        Stats {
            count: 4,
            sum: 2 * i128::from(i64::MIN) + i128::from(i64::MAX) - 1,
            min: i64::MIN,
            max: i64::MAX
        }
    );
    clock.set_ms(t0);
    // 2^31 samples of u32::MAX: the largest count and p0 a bucket can hold.
    let generation = ((1u64 << 31) - 1) << 32;
    let n = 1u64 << 31;
    let b = t0 / 60_000 + 1;
    let k = |part: &str| Key::new(format!("ts:lat:60000:{b}:{part}")).unwrap();
    store
        .set(
            &k("n"),
            (generation | n).to_string().as_bytes(),
            Ttl::secs(600),
        )
        .unwrap();
    store
        .set(
            &k("p0"),
            (n * u64::from(u32::MAX)).to_string().as_bytes(),
            Ttl::secs(600),
        )
        .unwrap();
    let mut x = b"x2".to_vec();
    x.extend_from_slice(&i64::from(u32::MAX).to_le_bytes());
    x.extend_from_slice(&i64::from(u32::MAX).to_le_bytes());
    x.extend_from_slice(&(((1u64 << 31) - 1) as u32).to_le_bytes());
    store.set(&k("x"), &x, Ttl::secs(600)).unwrap();
    let t1 = b * 60_000;
    let read = series.aggregate(t1, t1, MINUTE).unwrap().unwrap();
    assert_eq!(read.count, n);
    assert_eq!(read.sum, i128::from(n) * i128::from(u32::MAX));
    series.record(t1, i64::from(u32::MAX)).unwrap();
    let e = series.aggregate(t1, t1, MINUTE).unwrap_err();
    println!("one sample more: {e}");
    assert!(matches!(e, mcds_core::Error::Corrupt { .. }), "{e}");
}

/// A pool of 3, 36 series (the one minute bucket each, 20 samples), one
/// server killed (-9) and restarted, then 30 more samples each: a tally of
/// what the closed buckets read. Exact for buckets with no part on that
/// server; `Corrupt` where the count went and the min/max stayed; `Ok` and
/// wrong where the sums went alone (sum short), the min/max alone (min or
/// max of the later samples only), or the count and min/max together (count
/// of the later samples only). A run read 11 exact, 8 `Corrupt` and 17 of
/// 36 wrong without an error.
#[test]
#[ignore = "open: a pool server restarted under writers leaves wrong buckets without an error (the TimeSeries docs)"]
fn finding_a_pool_restart_leaves_half_the_live_buckets_wrong_without_error() {
    let mut pool = ServerPool::start(3, ServerOptions::default());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let resolutions = [Resolution::new(MINUTE, DAY).unwrap()];
    let names: Vec<String> = (0..36).map(|i| format!("p{i:02}")).collect();
    let before = samples(20, 37);
    let after = samples(30, 53);
    for name in &names {
        let series = TimeSeries::new(&scope, name, &resolutions).unwrap();
        for &v in &before {
            series.record(t0, v).unwrap();
        }
    }
    pool.servers[0].kill();
    pool.servers[0].restart();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let scope = Scope::new(store).with_clock(Arc::new(clock.clone()));
    for name in &names {
        let series = TimeSeries::new(&scope, name, &resolutions).unwrap();
        for &v in &after {
            series.record(t0, v).unwrap();
        }
    }
    clock.set_ms(t0 + 3 * 60_000);
    let all: Vec<i64> = before.iter().chain(&after).copied().collect();
    let (mut exact, mut corrupt, mut wrong) = (0, 0, Vec::new());
    for name in &names {
        let series = TimeSeries::new(&scope, name, &resolutions).unwrap();
        match series.aggregate(t0, t0 + 59_999, MINUTE) {
            Ok(Some(read)) if read == truth(&all) => exact += 1,
            Err(mcds_core::Error::Corrupt { .. }) => corrupt += 1,
            other => wrong.push((name.clone(), other)),
        }
    }
    println!(
        "true {:?}\nexact {exact}, Corrupt {corrupt}, wrong without error {}",
        truth(&all),
        wrong.len()
    );
    for (name, read) in &wrong {
        println!("  {name}: {read:?}");
    }
    assert!(
        wrong.is_empty(),
        "{} of 36 buckets read wrong without an error",
        wrong.len()
    );
}

/// A union over the widest range (0 to `u64::MAX` at a 1 ms step, with a
/// long retention) of two series: each plan is about 2^64 buckets, and the
/// check of the read's size adds them up with `Iterator::sum`, which
/// overflows: a panic in a debug build (and a wrapped total in release)
/// where the project promises a clear `InvalidArgument`.
#[test]
fn finding_a_union_over_the_widest_range_panics_instead_of_invalid_argument() {
    let (_, _, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    let ms = Duration::from_millis(1);
    let century = Duration::from_secs(100 * 365 * 86_400);
    let r = [Resolution::new(ms, century).unwrap()];
    let a = TimeSeries::new(&scope, "a", &r).unwrap();
    let b = TimeSeries::new(&scope, "b", &r).unwrap();
    let single = a.range(0, u64::MAX, ms);
    println!("range of one series: {single:?}");
    assert!(matches!(single, Err(mcds_core::Error::InvalidArgument(_))));
    let union = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        TimeSeries::union(&[&a, &b], 0, u64::MAX, ms)
    }));
    println!("union of two: {union:?}");
    assert!(
        matches!(union, Ok(Err(mcds_core::Error::InvalidArgument(_)))),
        "not a clear InvalidArgument"
    );
}

/// The remedy the docs give for eviction, `-M` ("refuse rather than
/// evict"), loses data too: memcached 1.6's `ms` (which the backend uses
/// for CAS and add) *deletes* the existing item when it cannot allocate the
/// new value ("avoid stale data persisting in cache because we failed
/// alloc"). A record whose min/max widening is refused for memory thus
/// deletes the bucket's min/max item; the next record re-creates it with
/// its own sample and the count's generation, and once memory frees (items
/// expire or are deleted) later records widen it again. The closed bucket
/// then reads `Ok` with the min of the later samples: the acknowledged
/// sample 0 is gone from it, with no error. Fixed: mcds-memcached sends CAS
/// writes as text commands, which leave the item in place when refused.
#[test]
fn finding_with_no_evict_a_refused_widening_deletes_the_min_max_item() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let series = TimeSeries::new(&scope, "lat", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let before = samples(20, 37); // min 0, max 94
    for &v in &before {
        series.record(t0, v).unwrap();
    }
    // Other traffic fills the server; -M refuses what does not fit.
    let value = vec![b'a'; 40];
    let mut filled = 0;
    while store
        .set(
            &Key::new(format!("f:{filled:08}")).unwrap(),
            &value,
            Ttl::Never,
        )
        .is_ok()
    {
        filled += 1;
    }
    println!(
        "{filled} filler items fit; present: {:?}",
        present(&server, "lat", t0)
    );
    let refused = series.record(t0, 101);
    println!(
        "record 101 (widens the max): {refused:?}; present: {:?}",
        present(&server, "lat", t0)
    );
    assert!(refused.is_err());
    // Some of the other traffic expires or is deleted: memory frees.
    for i in 0..100 {
        store
            .delete(&Key::new(format!("f:{i:08}")).unwrap())
            .unwrap();
    }
    let after = samples(30, 53); // min 4, max 100
    for &v in &after {
        series.record(t0, v).unwrap();
    }
    clock.set_ms(t0 + 3 * 60_000);
    let read = series.aggregate(t0, t0 + 59_999, MINUTE);
    let acked: Vec<i64> = before.iter().chain(&after).copied().collect();
    println!("acknowledged {:?}", truth(&acked));
    println!("read {read:?}");
    let read = read.expect("an answer, not an error");
    let read = read.expect("a bucket");
    assert_eq!(
        read.min, 0,
        "the acknowledged sample 0 is lost from the min: {read:?}"
    );
}

/// The same memcached behaviour on a [`PackedSeries`]: with `-M`, one
/// increment refused for memory deletes the whole period item (a day of
/// per-minute counters), and the next increment, into the chunk that freed,
/// starts the period again from zeros: every acknowledged count before it
/// is gone, and reads say 0 without an error. Fixed as the one above.
#[test]
fn finding_with_no_evict_a_refused_packed_increment_wipes_the_period() {
    use mcds_timeseries::{PackedSeries, SlotWidth};
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (_, scope, t0) = real_time_scope(Arc::clone(&store));
    // 1440 u8 slots: a 1442-byte item.
    let logins = PackedSeries::new(&scope, "logins", MINUTE, 1440, SlotWidth::U8, 7 * DAY).unwrap();
    for minute in 0..10 {
        assert_eq!(logins.incr(t0 + minute * 60_000, 5).unwrap(), 5);
    }
    // Other traffic of the period item's size fills the server.
    let value = vec![b'a'; 1464]; // items of the period item's size class
    let mut filled = 0;
    while store
        .set(
            &Key::new(format!("f:{filled:08}")).unwrap(),
            &value,
            Ttl::Never,
        )
        .is_ok()
    {
        filled += 1;
    }
    let refused = logins.incr(t0 + 11 * 60_000, 1);
    println!("{filled} filler items fit; the next increment: {refused:?}");
    let next = logins.incr(t0 + 12 * 60_000, 1);
    println!("the one after: {next:?}");
    let counts = logins.sum(t0, t0 + 9 * 60_000);
    println!("sum of the 10 acknowledged minutes (50 counted): {counts:?}");
    assert_eq!(
        counts.unwrap(),
        50,
        "acknowledged counts lost without an error"
    );
}

/// Records that arrive 61 s after their bucket ended (a log shipper's
/// delay) into a healthy bucket on a pool of 3, read concurrently by a
/// dashboard: each `Corrupt` the reader gets is false (nothing was lost).
/// Documented ("a read between a record's two steps may report Corrupt for
/// a healthy bucket"); on loopback the rereads cover it: a run saw 440
/// reads and no false `Corrupt`.
#[test]
#[ignore = "timing-dependent: the documented race of a read between a late record's two steps gave 1 false Corrupt in 666 reads under a loaded CI machine (0 in 440 and 476 on an idle one); run by hand"]
fn holds_late_records_and_concurrent_reads_of_a_healthy_bucket() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let pool = ServerPool::start(3, ServerOptions::default());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    clock.set_ms(t0 + 60_000 + 61_000); // the bucket of t0 closed 1 s ago
    let series = TimeSeries::new(&scope, "late", &[Resolution::new(MINUTE, DAY).unwrap()]).unwrap();
    let done = AtomicBool::new(false);
    let (reads, false_corrupt, values) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let (mut reads, mut corrupt) = (0, 0);
            while !done.load(Ordering::Relaxed) {
                reads += 1;
                match series.aggregate(t0, t0, MINUTE) {
                    Err(mcds_core::Error::Corrupt { .. }) => corrupt += 1,
                    other => {
                        other.unwrap();
                    }
                }
            }
            (reads, corrupt)
        });
        // Widening values, so most records take both steps.
        let values: Vec<i64> = (0..400).map(|i| if i % 2 == 0 { -i } else { i }).collect();
        for &v in &values {
            series.record(t0, v).unwrap();
        }
        done.store(true, Ordering::Relaxed);
        let (reads, corrupt) = reader.join().unwrap();
        (reads, corrupt, values)
    });
    assert_eq!(
        series.aggregate(t0, t0, MINUTE).unwrap(),
        Some(truth(&values))
    );
    println!("{reads} reads during 400 late records: {false_corrupt} false Corrupt");
    assert_eq!(false_corrupt, 0, "reads of a healthy bucket said Corrupt");
}

/// Lost replies: a pool of 3, 36 series (20 samples each), one server
/// paused (SIGSTOP) for one record per series (a 100 ms I/O timeout: the
/// first record touching it times out, the store then marks it down and
/// the later ones fail fast), then 30 more samples each. A failed record
/// may be partly applied (documented), but the read is meant to catch a
/// bucket "a record failed partway" left disagreeing: every closed bucket
/// should read exactly (with or without the failed sample) or `Corrupt`.
/// A run: 27 records failed (1 Ambiguous, 1 Timeout, 25 ServerDown),
/// 15 buckets read `Ok` torn (count 51 with the sum of 50 and max 1000, or
/// count 50 with the sum of 51), none `Corrupt`. Retrying the failed
/// records would double-count their applied parts; not retrying leaves
/// them torn: no caller action gives an exact bucket.
#[test]
#[ignore = "open: a record that failed partway (it returned its error) may leave a bucket that reads Ok"]
fn finding_a_record_failed_partway_leaves_a_torn_bucket_that_reads_ok() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(100))
            .connect(pool.addrs())
            .unwrap(),
    );
    let (clock, scope, t0) = real_time_scope(Arc::clone(&store));
    let resolutions = [Resolution::new(MINUTE, DAY).unwrap()];
    let series: Vec<TimeSeries> = (0..36)
        .map(|i| TimeSeries::new(&scope, &format!("s{i:02}"), &resolutions).unwrap())
        .collect();
    let (before, after) = (samples(20, 37), samples(30, 53));
    for s in &series {
        for &v in &before {
            s.record(t0, v).unwrap();
        }
    }
    pool.servers[0].pause();
    let failed: Vec<bool> = series
        .iter()
        .map(|s| match s.record(t0, 1_000) {
            Ok(()) => false,
            Err(e) => {
                println!("{}: record 1000 failed: {e:?}", s.name());
                true
            }
        })
        .collect();
    pool.servers[0].resume();
    // The store marked the server down: wait until it takes it back.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while series.iter().any(|s| {
        s.range(t0, t0, MINUTE)
            .is_err_and(|e| !matches!(e, mcds_core::Error::Corrupt { .. }))
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the paused server never came back"
        );
        std::thread::yield_now();
    }
    for s in &series {
        for &v in &after {
            s.record(t0, v).unwrap();
        }
    }
    clock.set_ms(t0 + 3 * 60_000);
    let without: Vec<i64> = before.iter().chain(&after).copied().collect();
    let with: Vec<i64> = without.iter().copied().chain([1_000]).collect();
    let (mut exact, mut corrupt, mut wrong) = (0, 0, Vec::new());
    for (s, &failed) in series.iter().zip(&failed) {
        match s.aggregate(t0, t0 + 59_999, MINUTE) {
            Ok(Some(r)) if r == truth(&with) || (failed && r == truth(&without)) => exact += 1,
            Err(mcds_core::Error::Corrupt { .. }) => corrupt += 1,
            other => wrong.push((s.name().to_string(), failed, other)),
        }
    }
    let failures = failed.iter().filter(|&&f| f).count();
    println!(
        "{failures} records failed; exact {exact}, Corrupt {corrupt}, wrong {}",
        wrong.len()
    );
    for w in &wrong {
        println!("  {w:?}");
    }
    assert!(wrong.is_empty());
}
