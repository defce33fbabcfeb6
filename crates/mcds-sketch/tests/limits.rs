//! Each sketch's limits (the `# Limits` section of its docs), tested at
//! the limit and one step past it: the value at the limit works (on the
//! embedded store and on real memcached where that is cheap), the one past
//! it is the documented error, and nothing was written. The leaderboard's
//! limits are in `tests/topk*.rs`.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::backend::item_size;
use mcds_core::{Error, MAX_KEY_LEN, MemoryStore, Scope, Store};
use mcds_memcached::MemcachedStore;
use mcds_sketch::bitmap::{SEGMENT_BITS, SEGMENT_BYTES};
use mcds_sketch::bloom::{MAX_BLOCKS, Shape};
use mcds_sketch::hll::Registers;
use mcds_sketch::scalable::{MAX_GROWTH, MAX_LAYERS};
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, ScalableBloomFilter};
use mcds_testkit::MemcachedServer;

/// The bytes of the block key `bloom:<name>:<u32::MAX>` beyond the name.
const BLOOM_KEY_EXTRA: usize = "bloom:".len() + ":4294967295".len();
/// `sbloom:<name>:0.<u32::MAX>` beyond the name (the first layer's block).
const SBLOOM_KEY_EXTRA: usize = "sbloom:".len() + ":0.4294967295".len();
/// `hll:<name>:s0` beyond the name.
const HLL_KEY_EXTRA: usize = "hll:".len() + ":s0".len();
/// `bitmap:<name>:<u64::MAX / 65 536>` beyond the name.
const BITMAP_KEY_EXTRA: usize = "bitmap:".len() + ":281474976710655".len();
/// A dense HyperLogLog segment: magic, form byte, 1 024 six-bit registers.
const DENSE_SEGMENT: usize = 4 + 1 + 768;

fn memcached(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

fn memory() -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new())
}

fn memory_with_item_limit(limit: usize) -> Arc<MemoryStore> {
    Arc::new(MemoryStore::builder().item_size_limit(limit).build())
}

fn name(len: usize) -> String {
    "n".repeat(len)
}

fn is_invalid_key<T: std::fmt::Debug>(r: mcds_core::Result<T>) -> bool {
    matches!(r, Err(Error::InvalidKey { .. }))
}

fn is_invalid_argument<T: std::fmt::Debug>(r: &mcds_core::Result<T>) -> bool {
    matches!(r, Err(Error::InvalidArgument(_)))
}

// ---------------------------------------------------------------- Bloom

/// A Bloom filter's name may take `250 − 17` bytes (less the scope's
/// prefix); one byte more is `InvalidKey` from `new`, which writes nothing.
#[test]
fn a_bloom_filter_name_at_the_key_limit_works_and_one_byte_more_is_invalid_key() {
    let longest = MAX_KEY_LEN - BLOOM_KEY_EXTRA;
    assert_eq!(longest, 233);
    let server = MemcachedServer::start_default();
    for store in [memory() as Arc<dyn Store>, memcached(&server)] {
        let bloom = BloomFilter::new(Arc::clone(&store), &name(longest), 1000, 0.01).unwrap();
        assert!(bloom.add("ann").unwrap());
        assert!(bloom.contains("ann").unwrap());
        assert!(!bloom.contains("bob").unwrap());
        let prefixed = Scope::new(Arc::clone(&store)).with_prefix("app/").unwrap();
        let bloom = BloomFilter::new(&prefixed, &name(longest - 4), 1000, 0.01).unwrap();
        assert!(bloom.add("ann").unwrap());
        assert!(is_invalid_key(BloomFilter::new(
            &prefixed,
            &name(longest - 3),
            1000,
            0.01
        )));
        assert!(is_invalid_key(BloomFilter::new(
            store,
            &name(longest + 1),
            1000,
            0.01
        )));
    }
    // An escaped byte (':' is written "%3A") counts three.
    let colons = format!("{}:", name(longest - 3));
    assert!(BloomFilter::new(memory(), &colons, 1000, 0.01).is_ok());
    let colons = format!("{}:", name(longest - 2));
    assert!(is_invalid_key(BloomFilter::new(
        memory(),
        &colons,
        1000,
        0.01
    )));
    let store = memory();
    assert!(is_invalid_key(BloomFilter::new(
        store.clone(),
        &name(longest + 1),
        1000,
        0.01
    )));
    assert_eq!(store.len(), 0, "nothing written");
}

/// The false-positive rate lies strictly between 0 and 1, and a filter
/// expects at least one item: anything else is `InvalidArgument`, and
/// nothing is written.
#[test]
fn a_bloom_filter_with_a_rate_of_zero_or_one_or_no_items_is_invalid_argument() {
    let store = memory();
    for rate in [f64::MIN_POSITIVE, 1e-12, 0.5, 1.0 - f64::EPSILON] {
        let bloom = BloomFilter::new(store.clone(), "ok", 1, rate).unwrap();
        assert!(bloom.shape().k >= 1 && bloom.shape().k <= 30, "{rate}");
        assert!(bloom.add("x").unwrap());
        assert!(bloom.contains("x").unwrap());
        bloom.clear().unwrap();
    }
    assert_eq!(store.len(), 0);
    for rate in [0.0, 1.0, -0.01, 1.5, f64::NAN, f64::INFINITY] {
        let r = BloomFilter::new(store.clone(), "bad", 1000, rate);
        assert!(is_invalid_argument(&r), "rate {rate}: {r:?}");
    }
    let r = BloomFilter::new(store.clone(), "bad", 0, 0.01);
    assert!(is_invalid_argument(&r), "{r:?}");
    assert_eq!(store.len(), 0, "nothing written");
}

/// The room for bits in one block item: the store's item limit less the
/// longest block key, the 17-byte header and memcached's per-item
/// overhead.
fn room(store: &dyn Store, name: &str) -> usize {
    store.item_size_limit() - item_size(BLOOM_KEY_EXTRA + name.len(), 17)
}

/// The largest `expected_items` for which `blocks` blocks hold the filter
/// at `rate` (the bits grow with the items, so a bisection finds it).
fn most_items(rate: f64, room: usize, blocks: u32) -> u64 {
    let fits = |n: u64| Shape::for_capacity(n, rate, room).is_ok_and(|s| s.blocks <= blocks);
    let (mut lo, mut hi) = (1u64, 1u64 << 40);
    assert!(fits(lo) && !fits(hi));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    lo
}

/// On real memcached (`-I 1m`), the largest filter that fits one item is
/// one block of exactly the item limit, which memcached stores; one item
/// more splits it into two blocks, each below the limit, no error.
#[test]
fn a_bloom_filter_splits_into_blocks_past_the_item_limit_on_memcached() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let room = room(&*store, "big");
    let n = most_items(0.01, room, 1);
    let one = BloomFilter::new(Arc::clone(&store), "big", n, 0.01).unwrap();
    assert_eq!(one.shape().blocks, 1);
    let block = one.shape().block_len();
    println!(
        "at 1 %: {n} items in one block of {block} bytes (item {} of {})",
        item_size(one.keys()[0].len(), block),
        store.item_size_limit()
    );
    assert!(item_size(one.keys()[0].len(), block) <= store.item_size_limit());
    assert!(room - (block - 17) < 8, "the block fills the item");
    let elements: Vec<String> = (0..200).map(|i| format!("e{i}")).collect();
    assert_eq!(one.add_many(&elements).unwrap(), 200);
    assert!(one.contains_many(&elements).unwrap().iter().all(|&b| b));
    let stored = store.get(&one.keys()[0]).unwrap().unwrap();
    assert_eq!(stored.value.len(), block, "memcached took the whole block");

    let two = BloomFilter::new(Arc::clone(&store), "big2", n + 1, 0.01).unwrap();
    assert_eq!(two.shape().blocks, 2);
    assert_eq!(two.add_many(&elements).unwrap(), 200);
    assert!(two.contains_many(&elements).unwrap().iter().all(|&b| b));
    for key in two.keys() {
        let item = store.get(key).unwrap().expect("both blocks written");
        assert!(item_size(key.len(), item.value.len()) <= store.item_size_limit());
    }
}

/// A filter spans at most `MAX_BLOCKS` items: the largest capacity that
/// fits them opens (and works), one item more is `InvalidArgument` before
/// anything is allocated or written.
#[test]
fn a_bloom_filter_of_max_blocks_opens_and_one_item_more_is_invalid_argument() {
    let store = memory();
    let n = most_items(0.01, room(&*store, "huge"), MAX_BLOCKS);
    println!("at 1 % with 1 MiB items: at most {n} expected items");
    let bloom = BloomFilter::new(store.clone(), "huge", n, 0.01).unwrap();
    assert_eq!(bloom.shape().blocks, MAX_BLOCKS);
    assert_eq!(bloom.keys().len(), MAX_BLOCKS as usize);
    assert!(bloom.add("x").unwrap());
    assert!(bloom.contains("x").unwrap());
    assert_eq!(store.len(), 1, "an add writes its one block");
    let past = BloomFilter::new(store.clone(), "huge2", n + 1, 0.01);
    match &past {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("at most 65536 items"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(is_invalid_argument(&BloomFilter::new(
        store.clone(),
        "huge3",
        u64::MAX,
        0.01
    )));
    assert_eq!(store.len(), 1, "nothing more written");
}

/// A store whose item limit leaves 8 bytes for bits (one 64-bit word)
/// takes a filter of 64-bit blocks; one byte less is `InvalidArgument`.
#[test]
fn a_store_whose_item_limit_leaves_no_word_of_bits_refuses_a_bloom_filter() {
    let least = item_size(BLOOM_KEY_EXTRA + 1, 17) + 8;
    let store = memory_with_item_limit(least);
    let bloom = BloomFilter::new(store.clone(), "b", 100, 0.01).unwrap();
    assert_eq!(bloom.shape().block_bits, 64);
    assert!(bloom.shape().blocks > 1);
    let elements: Vec<String> = (0..100).map(|i| format!("e{i}")).collect();
    bloom.add_many(&elements).unwrap();
    assert!(bloom.contains_many(&elements).unwrap().iter().all(|&b| b));

    let store = memory_with_item_limit(least - 1);
    let r = BloomFilter::new(store.clone(), "b", 100, 0.01);
    assert!(is_invalid_argument(&r), "{r:?}");
    assert_eq!(store.len(), 0, "nothing written");
}

/// Elements are hashed, never stored: an element of 2 MiB (twice the item
/// limit) is added and found like any other.
#[test]
fn elements_larger_than_an_item_are_hashed_not_stored() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let big = vec![b'x'; 2 << 20];
    let bloom = BloomFilter::new(Arc::clone(&store), "el", 1000, 0.01).unwrap();
    assert!(bloom.add(&big).unwrap());
    assert!(bloom.contains(&big).unwrap());
    let scalable = ScalableBloomFilter::new(Arc::clone(&store), "el", 100, 0.01).unwrap();
    assert!(scalable.add(&big).unwrap());
    assert!(scalable.contains(&big).unwrap());
    let hll = HyperLogLog::new(Arc::clone(&store), "el").unwrap();
    assert!(hll.add(&big).unwrap());
    let mut buffer = hll.buffer();
    buffer.add(&big);
    buffer.flush().unwrap();
    assert_eq!(hll.count().unwrap(), 1);
}

// ---------------------------------------------------- ScalableBloomFilter

/// A scalable filter's name may take `250 − 21` bytes (less the prefix):
/// with that, it grows to all `MAX_LAYERS` (32) layers, then goes on
/// adding to the last one without an error. One byte more is `InvalidKey`
/// from `new`, and `with_growth` past `MAX_GROWTH` is `InvalidArgument`;
/// neither writes anything.
#[test]
fn a_scalable_filter_grows_to_max_layers_then_fills_the_last() {
    let longest = MAX_KEY_LEN - SBLOOM_KEY_EXTRA - 1; // layer 10 and up: 2 digits
    assert_eq!(longest, 229);
    let server = MemcachedServer::start_default();
    for store in [memory() as Arc<dyn Store>, memcached(&server)] {
        // Layers of one element each (growth 1): 32 layers in a few adds.
        let filter = ScalableBloomFilter::new(Arc::clone(&store), &name(longest), 1, 0.01)
            .unwrap()
            .with_growth(1)
            .unwrap();
        let mut added = Vec::new();
        for i in 0..1000 {
            added.push(format!("e{i}"));
            filter.add(&added[i]).unwrap();
            if filter.layers().unwrap() == MAX_LAYERS as usize {
                break;
            }
        }
        assert_eq!(filter.layers().unwrap(), MAX_LAYERS as usize);
        println!("{MAX_LAYERS} layers after {} adds", added.len());
        for i in 0..100 {
            let e = format!("more{i}");
            filter.add(&e).unwrap();
            added.push(e);
        }
        assert_eq!(
            filter.layers().unwrap(),
            MAX_LAYERS as usize,
            "no layer past the last"
        );
        assert!(filter.contains_many(&added).unwrap().iter().all(|&b| b));
    }
    // `new` checks the last layer's keys: one byte more is refused up
    // front (it would stop the filter growing at layer 10).
    let store = memory();
    assert!(is_invalid_key(ScalableBloomFilter::new(
        store.clone(),
        &name(longest + 1),
        1,
        0.01
    )));
    let filter = ScalableBloomFilter::new(store.clone(), "g", 10, 0.01).unwrap();
    assert!(filter.clone().with_growth(MAX_GROWTH).is_ok());
    assert!(is_invalid_argument(
        &filter.clone().with_growth(MAX_GROWTH + 1)
    ));
    assert!(is_invalid_argument(&filter.with_growth(0)));
    assert_eq!(store.len(), 0, "nothing written");
}

/// The first layer is a Bloom filter at half the rate: its capacity is
/// bounded by `MAX_BLOCKS` as a fixed filter's is. The largest opens, one
/// more is `InvalidArgument`; the rate lies strictly between 0 and 1.
#[test]
fn a_scalable_filter_first_layer_past_max_blocks_is_invalid_argument() {
    let store = memory();
    let room = store.item_size_limit() - item_size(SBLOOM_KEY_EXTRA + "s".len(), 17);
    let n = most_items(0.005, room, MAX_BLOCKS);
    let filter = ScalableBloomFilter::new(store.clone(), "s", n, 0.01).unwrap();
    assert!(filter.add("x").unwrap());
    assert!(filter.contains("x").unwrap());
    assert_eq!(filter.layers().unwrap(), 1);
    let before = store.len();
    let r = ScalableBloomFilter::new(store.clone(), "s2", n + 1, 0.01);
    assert!(is_invalid_argument(&r), "{r:?}");
    for rate in [0.0, 1.0, f64::NAN] {
        let r = ScalableBloomFilter::new(store.clone(), "s3", 10, rate);
        assert!(is_invalid_argument(&r), "{rate}: {r:?}");
    }
    let r = ScalableBloomFilter::new(store.clone(), "s4", 0, 0.01);
    assert!(is_invalid_argument(&r), "{r:?}");
    assert_eq!(store.len(), before, "nothing written");
}

// ------------------------------------------------------------ HyperLogLog

/// A HyperLogLog's name may take `250 − 7` bytes (less the prefix); one
/// byte more is `InvalidKey` from `new`, which writes nothing.
#[test]
fn a_hyperloglog_name_at_the_key_limit_works_and_one_byte_more_is_invalid_key() {
    let longest = MAX_KEY_LEN - HLL_KEY_EXTRA;
    assert_eq!(longest, 243);
    let server = MemcachedServer::start_default();
    for store in [memory() as Arc<dyn Store>, memcached(&server)] {
        let hll = HyperLogLog::new(Arc::clone(&store), &name(longest)).unwrap();
        assert!(hll.keys().iter().all(|k| k.len() <= MAX_KEY_LEN));
        hll.add_many(&["a", "b"]).unwrap();
        assert!(hll.add("c").unwrap());
        let mut buffer = hll.buffer();
        buffer.add("d");
        buffer.flush().unwrap();
        assert_eq!(hll.count().unwrap(), 4);
        let prefixed = Scope::new(Arc::clone(&store)).with_prefix("app/").unwrap();
        assert!(HyperLogLog::new(&prefixed, &name(longest - 4)).is_ok());
        assert!(is_invalid_key(HyperLogLog::new(
            &prefixed,
            &name(longest - 3)
        )));
    }
    let store = memory();
    assert!(is_invalid_key(HyperLogLog::new(
        store.clone(),
        &name(longest + 1)
    )));
    assert_eq!(store.len(), 0, "nothing written");
}

/// A flush writes whole segments: the store's item limit must hold a
/// dense one (773 bytes plus key and overhead). At exactly that limit a
/// flush of 20 000 elements (every segment dense) works; one byte less is
/// `ValueTooLarge`, nothing is written, and the buffer keeps its elements.
#[test]
fn an_hll_buffer_flush_needs_an_item_limit_that_holds_a_dense_segment() {
    let least = item_size("hll:b:s0".len(), DENSE_SEGMENT);
    let elements: Vec<String> = (0..20_000).map(|i| format!("e{i}")).collect();
    let mut model = Registers::new();
    for e in &elements {
        model.insert(e.as_bytes());
    }

    let store = memory_with_item_limit(least);
    let hll = HyperLogLog::new(store.clone(), "b").unwrap();
    let mut buffer = hll.buffer();
    for e in &elements {
        buffer.add(e);
    }
    assert!(buffer.flush().unwrap());
    assert_eq!(hll.registers().unwrap(), model);
    for key in hll.keys() {
        let value = store.get(key).unwrap().unwrap().value;
        assert_eq!(value.len(), DENSE_SEGMENT, "dense");
    }

    let store = memory_with_item_limit(least - 1);
    let hll = HyperLogLog::new(store.clone(), "b").unwrap();
    let mut buffer = hll.buffer();
    for e in &elements {
        buffer.add(e);
    }
    match buffer.flush() {
        Err(Error::ValueTooLarge { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(buffer.pending(), elements.len(), "kept for a retry");
    assert!(hll.registers().unwrap().is_empty(), "nothing written");
    assert_eq!(store.len(), 0);
}

// ---------------------------------------------------------- ActivityBitmap

/// A bitmap's name may take `250 − 23` bytes (less the prefix), room for
/// its last segment's key; one byte more is `InvalidKey` from `new`. A
/// unit is at least 1 ms: 0 is `InvalidArgument`. Neither writes anything.
#[test]
fn a_bitmap_name_at_the_key_limit_works_and_one_byte_more_is_invalid_key() {
    let longest = MAX_KEY_LEN - BITMAP_KEY_EXTRA;
    assert_eq!(longest, 227);
    let server = MemcachedServer::start_default();
    for store in [memory() as Arc<dyn Store>, memcached(&server)] {
        let bits = ActivityBitmap::new(
            Arc::clone(&store),
            &name(longest),
            0,
            Duration::from_millis(1),
        )
        .unwrap();
        // The last bit of the last segment (the longest key).
        assert!(!bits.set(u64::MAX).unwrap());
        assert!(bits.get(u64::MAX).unwrap());
        assert!(!bits.get(u64::MAX - 1).unwrap());
        assert!(!bits.set(0).unwrap());
        assert!(bits.mark(0).unwrap(), "unit 0: bit 0, set");
    }
    let store = memory();
    assert!(is_invalid_key(ActivityBitmap::new(
        store.clone(),
        &name(longest + 1),
        0,
        Duration::from_secs(1)
    )));
    let r = ActivityBitmap::new(store.clone(), "b", 0, Duration::ZERO);
    assert!(is_invalid_argument(&r), "{r:?}");
    let r = ActivityBitmap::new(store.clone(), "b", 0, Duration::from_micros(999));
    assert!(is_invalid_argument(&r), "{r:?}");
    assert_eq!(store.len(), 0, "nothing written");
}

/// A count reads at most 10 000 segments: a range over exactly 10 000
/// counts; one bit more, reaching the 10 001st segment, is
/// `InvalidArgument` (it reads nothing).
#[test]
fn a_bitmap_count_over_10_000_segments_works_and_10_001_is_invalid_argument() {
    let server = MemcachedServer::start_default();
    for store in [memory() as Arc<dyn Store>, memcached(&server)] {
        let bits = ActivityBitmap::new(Arc::clone(&store), "c", 0, Duration::from_secs(1)).unwrap();
        let last = 10_000 * SEGMENT_BITS - 1;
        for i in [0, SEGMENT_BITS, last] {
            bits.set(i).unwrap();
        }
        assert_eq!(bits.count_bits(0, last).unwrap(), 3);
        let r = bits.count_bits(0, last + 1);
        assert!(is_invalid_argument(&r), "{r:?}");
        // Segments, not bits: two bits astride 10 001 segments.
        let r = bits.count_bits(SEGMENT_BITS - 1, last + 1);
        assert!(is_invalid_argument(&r), "{r:?}");
        assert_eq!(bits.count_bits(SEGMENT_BITS - 1, last).unwrap(), 2);
    }
}

/// A segment grows to 8 KiB as bits are set: the store's item limit must
/// hold it. At exactly that limit the segment's last bit sets; one byte
/// less, that set is `ValueTooLarge` and the segment keeps what it had
/// (bits early in a segment, in a shorter item, still set).
#[test]
fn a_bitmap_segment_needs_an_item_limit_of_8_kib_plus_its_key() {
    let key_len = "bitmap:s:0".len();
    let least = item_size(key_len, SEGMENT_BYTES);
    let store = memory_with_item_limit(least);
    let bits = ActivityBitmap::new(store.clone(), "s", 0, Duration::from_secs(1)).unwrap();
    assert!(!bits.set(SEGMENT_BITS - 1).unwrap());
    assert!(bits.get(SEGMENT_BITS - 1).unwrap());

    let store = memory_with_item_limit(least - 1);
    let bits = ActivityBitmap::new(store.clone(), "s", 0, Duration::from_secs(1)).unwrap();
    assert!(!bits.set(3).unwrap());
    match bits.set(SEGMENT_BITS - 1) {
        Err(Error::ValueTooLarge { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert!(!bits.get(SEGMENT_BITS - 1).unwrap(), "not written");
    assert_eq!(bits.count_bits(0, SEGMENT_BITS - 1).unwrap(), 1);
    let segment = store
        .get(&mcds_core::Key::new("bitmap:s:0").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(segment.value, [0x10], "the segment as it was");
}

/// A count that reaches the last segment (bits up to 2^64 − 1) reads it
/// like any other, without overflowing past its end.
#[test]
fn a_bitmap_count_of_the_last_bits_reads_the_last_segment() {
    let store = memory();
    let bitmap = ActivityBitmap::new(store, "end", 0, Duration::from_millis(1)).unwrap();
    bitmap.set(u64::MAX).unwrap();
    bitmap.set(u64::MAX - 10).unwrap();
    assert_eq!(bitmap.count_bits(u64::MAX - 10, u64::MAX).unwrap(), 2);
    assert_eq!(bitmap.count_bits(u64::MAX, u64::MAX).unwrap(), 1);
    assert_eq!(
        bitmap
            .count_bits(u64::MAX - SEGMENT_BITS * 2, u64::MAX)
            .unwrap(),
        2
    );
}

/// A unit with a fraction of a millisecond would be dropped to whole
/// milliseconds: refused instead, and so is one below 1 ms.
#[test]
fn a_bitmap_unit_of_a_fraction_of_a_millisecond_is_invalid_argument() {
    let store = memory();
    for unit in [
        Duration::from_micros(1500),
        Duration::from_micros(999),
        Duration::ZERO,
    ] {
        assert!(
            is_invalid_argument(&ActivityBitmap::new(store.clone(), "u", 0, unit)),
            "{unit:?}"
        );
    }
    assert!(ActivityBitmap::new(store.clone(), "u", 0, Duration::from_millis(2)).is_ok());
    assert_eq!(store.len(), 0, "nothing written");
}

/// A union of sketches on two stores, or a merge of sources on two stores,
/// would read the second store's sketch from the first: refused, and
/// nothing is written. A merge's target may live in another store.
#[test]
fn a_hyperloglog_union_or_merge_across_two_stores_is_invalid_argument() {
    let (a, b) = (memory(), memory());
    let x = HyperLogLog::new(a.clone() as Arc<dyn Store>, "x").unwrap();
    let y = HyperLogLog::new(b.clone() as Arc<dyn Store>, "y").unwrap();
    y.add("e").unwrap();
    let z = HyperLogLog::new(a.clone() as Arc<dyn Store>, "z").unwrap();
    z.add("f").unwrap();
    assert!(is_invalid_argument(&HyperLogLog::count_union(&[&x, &y])));
    assert!(is_invalid_argument(&x.merge(&[&z, &y])));
    assert_eq!(a.len(), 1, "nothing written: z's one segment");
    assert_eq!(HyperLogLog::count_union(&[&x, &z]).unwrap(), 1);
    x.merge(&[&y]).unwrap();
    assert_eq!(
        x.count().unwrap(),
        1,
        "a source in another store than the target"
    );
}
