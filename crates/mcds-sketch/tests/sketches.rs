//! mcds-sketch on the embedded store and on real memcached: accuracy at
//! scale, nothing lost under concurrent CAS updates, round trips, a naive
//! bitmap model, and garbage.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, MemoryStore, Store, Ttl, traffic};
use mcds_memcached::MemcachedStore;
use mcds_sketch::hll::{REGISTERS, Registers, SEGMENT_REGISTERS};
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog};
use mcds_testkit::MemcachedServer;
use proptest::prelude::*;

fn item(prefix: &str, i: u64) -> Vec<u8> {
    format!("{prefix}:{i}").into_bytes()
}

/// Insert `n` items at capacity `n`, then probe `n` others: the measured
/// false-positive rate is within 1.5× of the target, with no false
/// negatives.
fn bloom_rate(store: Arc<dyn Store>, n: u64, target: f64) -> (f64, u32) {
    let bloom = BloomFilter::new(store, "fpr", n, target).unwrap();
    let inserted: Vec<Vec<u8>> = (0..n).map(|i| item("in", i)).collect();
    for chunk in inserted.chunks(10_000) {
        bloom.add_many(chunk).unwrap();
    }
    let mut present = 0;
    for chunk in inserted.chunks(10_000) {
        present += bloom
            .contains_many(chunk)
            .unwrap()
            .iter()
            .filter(|&&b| b)
            .count() as u64;
    }
    assert_eq!(present, n, "false negatives");
    let probes: Vec<Vec<u8>> = (0..n).map(|i| item("out", i)).collect();
    let mut false_positives = 0;
    for chunk in probes.chunks(10_000) {
        false_positives += bloom
            .contains_many(chunk)
            .unwrap()
            .iter()
            .filter(|&&b| b)
            .count() as u64;
    }
    let rate = false_positives as f64 / n as f64;
    assert!(
        rate <= 1.5 * target,
        "false-positive rate {rate} above 1.5 x {target}"
    );
    (rate, bloom.shape().blocks)
}

#[test]
fn bloom_false_positive_rate_at_capacity() {
    let (one, blocks) = bloom_rate(Arc::new(MemoryStore::new()), 100_000, 0.01);
    assert_eq!(blocks, 1);
    // Small items force the bits into several blocks.
    let small = MemoryStore::builder().item_size_limit(32 * 1024).build();
    let (split, many) = bloom_rate(Arc::new(small), 100_000, 0.01);
    assert!(many > 1);
    let (tight, _) = bloom_rate(Arc::new(MemoryStore::new()), 100_000, 0.001);
    let server = MemcachedServer::start_default();
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (real, _) = bloom_rate(store, 100_000, 0.01);
    println!(
        "bloom, 100000 items at capacity: measured false-positive rate {:.4} (target 0.01, 1 block), {:.4} (target 0.01, {many} blocks of 32 KiB items), {:.5} (target 0.001), {:.4} on memcached; 0 false negatives",
        one, split, tight, real
    );
}

#[test]
fn hll_error_at_a_million_distinct() {
    let n = 1_000_000u64;
    let check = |store: Arc<dyn Store>| -> f64 {
        let hll = HyperLogLog::new(store, "million").unwrap();
        let mut buffer = hll.buffer();
        for i in 0..n {
            buffer.add(item("e", i));
        }
        let (_, t) = traffic::measure(|| buffer.flush().unwrap());
        assert_eq!(t.round_trips, 2, "HllBuffer::flush");
        // Adding them again changes nothing.
        for i in (0..n).step_by(1000) {
            buffer.add(item("e", i));
        }
        assert!(!buffer.flush().unwrap());
        let estimate = hll.count().unwrap();
        let error = (estimate as f64 - n as f64).abs() / n as f64;
        assert!(error <= 0.02, "estimate {estimate}, error {error}");
        error
    };
    let memory = check(Arc::new(MemoryStore::new()));
    let server = MemcachedServer::start_default();
    let real = check(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
    // Small counts are exact or nearly.
    let mut r = Registers::new();
    for i in 0..100 {
        r.insert(&item("s", i));
    }
    assert!((99..=101).contains(&r.count()), "{}", r.count());
    assert_eq!(Registers::new().count(), 0);
    println!(
        "hyperloglog, 1000000 distinct: error {:.3}% (embedded), {:.3}% (memcached); limit 2%, sigma 0.81%",
        memory * 100.0,
        real * 100.0
    );
}

#[test]
fn hll_merge_is_the_union_and_commutes() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = HyperLogLog::new(Arc::clone(&store), "a").unwrap();
    let b = HyperLogLog::new(Arc::clone(&store), "b").unwrap();
    let a_items: Vec<Vec<u8>> = (0..5000).map(|i| item("x", i)).collect();
    let b_items: Vec<Vec<u8>> = (2500..10_000).map(|i| item("x", i)).collect();
    assert!(a.add_many(&a_items).unwrap());
    assert!(b.add_many(&b_items).unwrap());
    let ab = HyperLogLog::new(Arc::clone(&store), "ab").unwrap();
    let ba = HyperLogLog::new(Arc::clone(&store), "ba").unwrap();
    ab.merge(&[&a, &b]).unwrap();
    ba.merge(&[&b]).unwrap();
    ba.merge(&[&a]).unwrap();
    assert_eq!(ab.registers().unwrap(), ba.registers().unwrap());
    let union = HyperLogLog::count_union(&[&a, &b]).unwrap();
    assert_eq!(union, ab.count().unwrap());
    assert!((9800..=10_200).contains(&union), "{union}");
    // PFMERGE keeps what the target had.
    let c = HyperLogLog::new(Arc::clone(&store), "c").unwrap();
    c.add("only-in-c").unwrap();
    c.merge(&[&a]).unwrap();
    let mut expected = a.registers().unwrap();
    expected.insert(b"only-in-c");
    assert_eq!(c.registers().unwrap(), expected);
}

/// 8 threads add disjoint elements by CAS on memcached: the stored sketches
/// equal the ones built locally from every element (nothing lost).
#[test]
fn concurrent_adds_lose_nothing() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "concurrent").unwrap();
    let bloom = BloomFilter::new(Arc::clone(&store), "concurrent", 20_000, 0.01).unwrap();
    let bitmap =
        ActivityBitmap::new(Arc::clone(&store), "concurrent", 0, Duration::from_secs(1)).unwrap();
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (hll, bloom, bitmap) = (&hll, &bloom, &bitmap);
            s.spawn(move || {
                for i in 0..250 {
                    let e = item(&format!("t{t}"), i);
                    hll.add(&e).unwrap();
                    bloom.add(&e).unwrap();
                    bitmap.set(t * 250 + i).unwrap();
                }
            });
        }
    });
    let mut expected = Registers::new();
    let all: Vec<Vec<u8>> = (0..8)
        .flat_map(|t| (0..250).map(move |i| item(&format!("t{t}"), i)))
        .collect();
    for e in &all {
        expected.insert(e);
    }
    assert_eq!(
        hll.registers().unwrap(),
        expected,
        "a register update was lost"
    );
    assert!(
        bloom.contains_many(&all).unwrap().iter().all(|&b| b),
        "a bit was lost"
    );
    assert_eq!(bitmap.count_bits(0, 1999).unwrap(), 2000, "a bit was lost");
    println!(
        "8 threads x 250 CAS adds each on memcached: HyperLogLog registers equal the local union, all 2000 Bloom elements present, bitmap count 2000"
    );
}

/// The segment of the register an element raises.
fn segment_of(element: &[u8]) -> usize {
    let mut r = Registers::new();
    r.insert(element);
    (0..REGISTERS).position(|i| r.get(i) != 0).unwrap() / SEGMENT_REGISTERS
}

/// An element other than `e` whose register is in `e`'s segment, and not
/// `e`'s register.
fn same_segment(e: &str) -> Vec<u8> {
    let mut first = Registers::new();
    first.insert(e.as_bytes());
    (0u64..)
        .map(|i| item("same", i))
        .find(|c| {
            let mut both = first.clone();
            segment_of(c) == segment_of(e.as_bytes()) && both.insert(c)
        })
        .unwrap()
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store = mcds_testkit::counting_memcached(&server);
    let rt = |f: &dyn Fn()| mcds_testkit::round_trips(f);
    let hll = HyperLogLog::new(Arc::clone(&store), "rt").unwrap();
    assert_eq!(
        rt(&|| assert!(hll.add("a").unwrap())),
        3,
        "HLL add (first of its segment: the append's NS, then an add)"
    );
    let b = same_segment("a");
    assert_eq!(rt(&|| assert!(hll.add(&b).unwrap())), 1, "HLL add");
    assert_eq!(
        rt(&|| assert!(!hll.add("a").unwrap())),
        1,
        "HLL add, nothing changes"
    );
    assert_eq!(rt(&|| assert_eq!(hll.count().unwrap(), 2)), 1, "HLL count");
    let mut buffer = hll.buffer();
    for i in 0..1000 {
        buffer.add(item("buf", i));
    }
    let (_, t) = traffic::measure(|| buffer.flush().unwrap());
    assert_eq!(t.round_trips, 2, "HllBuffer flush of 1000 elements");
    let bloom = BloomFilter::new(Arc::clone(&store), "rt", 1000, 0.01).unwrap();
    assert_eq!(rt(&|| assert!(bloom.add("a").unwrap())), 2, "Bloom add");
    assert_eq!(
        rt(&|| assert!(!bloom.add("a").unwrap())),
        1,
        "Bloom add, seen"
    );
    assert_eq!(
        rt(&|| assert!(bloom.contains("a").unwrap())),
        1,
        "Bloom contains"
    );
    let many: Vec<Vec<u8>> = (0..100).map(|i| item("m", i)).collect();
    assert_eq!(
        rt(&|| assert_eq!(bloom.add_many(&many).unwrap(), 100)),
        2,
        "Bloom add_many"
    );
    let bitmap = ActivityBitmap::new(Arc::clone(&store), "rt", 0, Duration::from_secs(60)).unwrap();
    assert_eq!(rt(&|| assert!(!bitmap.set(3).unwrap())), 2, "bitmap set");
    assert_eq!(
        rt(&|| assert!(bitmap.set(3).unwrap())),
        1,
        "bitmap set, already set"
    );
    assert_eq!(
        rt(&|| assert_eq!(bitmap.count_bits(0, 100).unwrap(), 1)),
        1,
        "bitmap count"
    );
    println!(
        "sketch round trips on memcached: HLL add 1 (3 for a segment's first), count 1, HllBuffer flush 2; Bloom add 2 (1 if seen), contains 1, add_many(100) 2; bitmap set 2 (1 if set), count 1"
    );
}

proptest! {
    #![proptest_config(mcds_testkit::seed::proptest_config(file!(), 256))]
    /// The bitmap agrees with a naive model across segment boundaries.
    #[test]
    fn bitmap_matches_a_model(
        bits in prop::collection::vec(0u64..200_000, 0..60),
        ranges in prop::collection::vec((0u64..200_000, 0u64..200_000), 1..10),
    ) {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let bitmap = ActivityBitmap::new(store, "model", 0, Duration::from_secs(1)).unwrap();
        let mut model = BTreeSet::new();
        for &b in &bits {
            let was = bitmap.set(b).unwrap();
            prop_assert_eq!(was, !model.insert(b));
        }
        for &(a, b) in &ranges {
            let (lo, hi) = (a.min(b), a.max(b));
            prop_assert_eq!(bitmap.count_bits(lo, hi).unwrap(), model.range(lo..=hi).count() as u64);
            prop_assert_eq!(bitmap.get(lo).unwrap(), model.contains(&lo));
        }
    }
}

#[test]
fn bitmap_by_time() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let clock = mcds_core::ManualClock::new(1_767_225_600_000 + 3 * 86_400_000 + 5000);
    let scope = mcds_core::Scope::new(store).with_clock(Arc::new(clock.clone()));
    let days =
        ActivityBitmap::new(scope, "days", 1_767_225_600, Duration::from_secs(86_400)).unwrap();
    assert!(!days.mark_now().unwrap());
    assert!(days.mark_now().unwrap());
    assert!(days.is_marked(1_767_225_600_000 + 3 * 86_400_000).unwrap());
    assert!(!days.is_marked(1_767_225_600_000 + 4 * 86_400_000).unwrap());
    assert_eq!(
        days.count(1_767_225_600_000, 1_767_225_600_000 + 30 * 86_400_000)
            .unwrap(),
        1
    );
    assert!(matches!(days.mark(1000), Err(Error::InvalidArgument(_))));
}

#[test]
fn garbage_and_reopened_filters_are_corrupt() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "junk").unwrap();
    for junk in [
        &b""[..],
        b"MHL1",
        b"garbage",
        &[0xff; 12292],
        b"MHS1",
        b"MHS1X",
        b"MHS1S\x05\x00\x41\x00",
        b"MHS1S\x00",
        b"MHS1S\x00\x00\x01",
        b"MHS1S\x00\x00\x00\x04",
        b"MHS1S\x00\x00\x3f\x00",
        b"MHS1D\x00\x00",
        &[b"MHS1D".as_slice(), &[0xff; 768]].concat(),
    ] {
        for key in hll.keys() {
            store.set(key, junk, Ttl::Never).unwrap();
        }
        assert!(
            matches!(hll.count(), Err(Error::Corrupt { .. })),
            "{junk:?}"
        );
        assert!(
            matches!(hll.add("x"), Err(Error::Corrupt { .. })),
            "{junk:?}"
        );
        assert!(
            matches!(hll.add_many(&["x", "y"]), Err(Error::Corrupt { .. })),
            "{junk:?}"
        );
    }
    let bloom = BloomFilter::new(Arc::clone(&store), "junk", 1000, 0.01).unwrap();
    store
        .set(&bloom.keys()[0], b"not bits", Ttl::Never)
        .unwrap();
    assert!(matches!(bloom.contains("x"), Err(Error::Corrupt { .. })));
    assert!(matches!(bloom.add("x"), Err(Error::Corrupt { .. })));
    bloom.clear().unwrap();
    bloom.add("x").unwrap();
    let other = BloomFilter::new(Arc::clone(&store), "junk", 5000, 0.01).unwrap();
    match other.contains("x") {
        Err(e @ Error::Corrupt { .. }) => {
            assert!(e.to_string().contains("other parameters"), "{e}")
        }
        r => panic!("reopened with other parameters: {r:?}"),
    }
    let bitmap =
        ActivityBitmap::new(Arc::clone(&store), "junk", 0, Duration::from_secs(1)).unwrap();
    store
        .set(
            &Key::new("bitmap:junk:0").unwrap(),
            &[0u8; 9000],
            Ttl::Never,
        )
        .unwrap();
    assert!(matches!(
        bitmap.count_bits(0, 10),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(bitmap.set(1), Err(Error::Corrupt { .. })));
}
