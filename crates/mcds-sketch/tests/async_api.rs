//! The async API of every sketch, on the embedded store and on real
//! memcached: each async method runs inside `tokio::spawn` on a
//! multi-threaded runtime (which proves its future is `Send`), agrees with
//! the blocking API, and 16 tasks adding to one HyperLogLog, Bloom filter
//! and scalable Bloom filter at once lose nothing.

use mcds_testkit::runtime;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{MemoryStore, Store};
use mcds_memcached::MemcachedStore;
use mcds_sketch::hll::Registers;
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};
use mcds_testkit::MemcachedServer;

const TASKS: usize = 16;
const PER_TASK: usize = 250;

fn memcached(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

fn item(prefix: &str, i: usize) -> String {
    format!("{prefix}:{i}")
}

/// Run `future` as a spawned task on `rt` (so it must be `Send`).
fn spawned<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    future: impl Future<Output = T> + Send + 'static,
) -> T {
    rt.block_on(async { tokio::spawn(future).await.unwrap() })
}

/// Every async method of `BloomFilter`.
fn bloom(rt: &tokio::runtime::Runtime, store: Arc<dyn Store>) {
    let bloom = BloomFilter::new(store, "async-bloom", 1000, 0.01).unwrap();
    let b = bloom.clone();
    spawned(rt, async move {
        assert!(b.add_async("ann").await.unwrap(), "new");
        assert!(!b.add_async("ann").await.unwrap(), "seen");
        assert_eq!(b.add_many_async(&["bob", "cy", "ann"]).await.unwrap(), 2);
        assert!(b.contains_async("bob").await.unwrap());
        assert!(!b.contains_async("dee").await.unwrap());
        assert_eq!(
            b.contains_many_async(&["ann", "dee", "cy"]).await.unwrap(),
            [true, false, true]
        );
    });
    assert!(bloom.contains("cy").unwrap(), "the blocking API sees it");
    let b = bloom.clone();
    spawned(rt, async move {
        b.clear_async().await.unwrap();
        assert!(!b.contains_async("ann").await.unwrap());
    });
    assert!(!bloom.contains("cy").unwrap());
}

/// Every async method of `HyperLogLog` and `HllBuffer`.
fn hll(rt: &tokio::runtime::Runtime, store: Arc<dyn Store>) {
    let monday = HyperLogLog::new(store.clone(), "async-hll:mon").unwrap();
    let tuesday = HyperLogLog::new(store.clone(), "async-hll:tue").unwrap();
    let week = HyperLogLog::new(store, "async-hll:week").unwrap();
    let (m, t, w) = (monday.clone(), tuesday.clone(), week.clone());
    spawned(rt, async move {
        assert!(m.add_async("a.com").await.unwrap());
        assert!(!m.add_async("a.com").await.unwrap(), "already counted");
        assert!(m.add_many_async(&["b.com", "c.com"]).await.unwrap());
        assert!(t.add_many_async(&["c.com", "d.com"]).await.unwrap());
        assert_eq!(m.count_async().await.unwrap(), 3);
        assert_eq!(HyperLogLog::count_union_async(&[&m, &t]).await.unwrap(), 4);
        w.merge_async(&[&m, &t]).await.unwrap();
        assert_eq!(w.count_async().await.unwrap(), 4);
        let mut local = Registers::new();
        local.insert(b"e.com");
        assert!(w.merge_registers_async(&local).await.unwrap());
        assert_eq!(w.registers_async().await.unwrap().count(), 5);
        let mut buffer = w.buffer();
        buffer.add("f.com");
        buffer.add("a.com");
        assert!(buffer.flush_async().await.unwrap());
        assert_eq!(buffer.pending(), 0);
        assert!(!buffer.flush_async().await.unwrap(), "nothing pending");
        assert_eq!(w.count_async().await.unwrap(), 6);
    });
    assert_eq!(week.count().unwrap(), 6, "the blocking API sees it");
    let w = week.clone();
    spawned(rt, async move {
        w.clear_async().await.unwrap();
        assert_eq!(w.count_async().await.unwrap(), 0);
    });
    assert_eq!(week.count().unwrap(), 0);
}

/// Every async method of `Leaderboard`.
fn leaderboard(rt: &tokio::runtime::Runtime, store: Arc<dyn Store>) {
    let board = Leaderboard::new(store, "async-board", 100).unwrap();
    let b = board.clone();
    spawned(rt, async move {
        assert_eq!(b.incr_async("ann", 10).await.unwrap(), 10);
        assert_eq!(b.incr_async("ann", 20).await.unwrap(), 30);
        b.incr_many_async(&[("bob", 25), ("cy", 1)]).await.unwrap();
        let top = b.top_async(2).await.unwrap();
        assert_eq!((top[0].member.as_slice(), top[0].count), (&b"ann"[..], 30));
        assert_eq!((top[1].member.as_slice(), top[1].count), (&b"bob"[..], 25));
        assert_eq!(b.score_async("cy").await.unwrap().unwrap().count, 1);
        assert_eq!(b.score_async("dee").await.unwrap(), None);
        let summary = b.summary_async().await.unwrap();
        assert_eq!((summary.total(), summary.len()), (56, 3));
        assert!(b.incr_async("ann", 0).await.is_err(), "an increment of 0");
    });
    assert_eq!(board.score("bob").unwrap().unwrap().count, 25);
    let b = board.clone();
    spawned(rt, async move {
        b.clear_async().await.unwrap();
        assert!(b.summary_async().await.unwrap().is_empty());
    });
    assert!(board.top(10).unwrap().is_empty());
}

/// Every async method of `ActivityBitmap`.
fn bitmap(rt: &tokio::runtime::Runtime, store: Arc<dyn Store>) {
    let day = Duration::from_secs(86_400);
    let start = 1_767_225_600; // 2026-01-01
    let logins = ActivityBitmap::new(store.clone(), "async-bitmap", start, day).unwrap();
    let l = logins.clone();
    spawned(rt, async move {
        assert!(!l.set_async(0).await.unwrap(), "was clear");
        assert!(l.set_async(0).await.unwrap(), "was set");
        assert!(!l.set_async(70_000).await.unwrap(), "a second segment");
        let jan_3 = (start + 2 * 86_400) * 1000 + 5;
        assert!(!l.mark_async(jan_3).await.unwrap());
        assert!(l.is_marked_async(jan_3).await.unwrap());
        assert!(!l.is_marked_async(jan_3 + 86_400_000).await.unwrap());
        assert!(l.get_async(2).await.unwrap());
        assert!(!l.get_async(1).await.unwrap());
        assert_eq!(l.count_bits_async(0, 70_000).await.unwrap(), 3);
        assert_eq!(l.count_bits_async(1, 69_999).await.unwrap(), 1);
        let jan_31 = (start + 30 * 86_400) * 1000;
        assert_eq!(l.count_async(start * 1000, jan_31).await.unwrap(), 2);
    });
    assert_eq!(logins.count_bits(0, 70_000).unwrap(), 3);
    // mark_now: bit 0 is the Unix epoch, so the current day is marked.
    let since_epoch = ActivityBitmap::new(store, "async-bitmap-now", 0, day).unwrap();
    let s = since_epoch.clone();
    let today = spawned(rt, async move {
        assert!(!s.mark_now_async().await.unwrap());
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        s.index_of(now_ms).unwrap()
    });
    // Around midnight the day may have turned between the mark and the
    // clock read: accept the day before.
    assert!(since_epoch.get(today).unwrap() || since_epoch.get(today - 1).unwrap());
}

/// Every async method of `ScalableBloomFilter`.
fn scalable(rt: &tokio::runtime::Runtime, store: Arc<dyn Store>) {
    let seen = ScalableBloomFilter::new(store, "async-scalable", 50, 0.01).unwrap();
    let s = seen.clone();
    spawned(rt, async move {
        assert_eq!(s.layers_async().await.unwrap(), 1);
        for i in 0..500 {
            s.add_async(item("user", i)).await.unwrap();
        }
        assert!(!s.add_async("user:7").await.unwrap(), "already in");
        assert!(s.layers_async().await.unwrap() >= 3, "grown");
        assert!(s.contains_async("user:499").await.unwrap());
        let all: Vec<String> = (0..500).map(|i| item("user", i)).collect();
        let found = s.contains_many_async(&all).await.unwrap();
        assert!(found.iter().all(|&b| b), "no false negative");
    });
    assert!(
        seen.layers().unwrap() >= 3,
        "the blocking API sees the growth"
    );
    assert!(seen.contains("user:3").unwrap());
    let s = seen.clone();
    spawned(rt, async move {
        s.clear_async().await.unwrap();
        assert_eq!(s.layers_async().await.unwrap(), 1);
        assert!(!s.contains_async("user:3").await.unwrap());
    });
    assert!(!seen.contains("user:3").unwrap());
}

fn every_async_method(store: Arc<dyn Store>) {
    let rt = runtime();
    bloom(&rt, store.clone());
    hll(&rt, store.clone());
    leaderboard(&rt, store.clone());
    bitmap(&rt, store.clone());
    scalable(&rt, store);
}

/// 16 tasks add 250 distinct elements each to one HyperLogLog, one Bloom
/// filter and one scalable Bloom filter at once (single adds and batches
/// mixed): every element is found in both filters (no false negative), and
/// the HyperLogLog's estimate is within 3 standard errors (3 × 0.81 %).
fn concurrent_adds(store: Arc<dyn Store>) {
    let rt = runtime();
    let n = TASKS * PER_TASK;
    let hll = HyperLogLog::new(store.clone(), "async-concurrent").unwrap();
    let bloom = BloomFilter::new(store.clone(), "async-concurrent", n as u64, 0.01).unwrap();
    let scalable = ScalableBloomFilter::new(store, "async-concurrent", 200, 0.01).unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| {
                let (hll, bloom, scalable) = (hll.clone(), bloom.clone(), scalable.clone());
                tokio::spawn(async move {
                    let mine: Vec<String> =
                        (0..PER_TASK).map(|i| item(&format!("t{t}"), i)).collect();
                    let (singles, batched) = mine.split_at(10);
                    for e in singles {
                        hll.add_async(e).await.unwrap();
                        bloom.add_async(e).await.unwrap();
                    }
                    for chunk in batched.chunks(60) {
                        hll.add_many_async(chunk).await.unwrap();
                        bloom.add_many_async(chunk).await.unwrap();
                    }
                    for e in &mine[..50] {
                        scalable.add_async(e).await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let all: Vec<String> = (0..TASKS)
        .flat_map(|t| (0..PER_TASK).map(move |i| item(&format!("t{t}"), i)))
        .collect();
    let found = bloom.contains_many(&all).unwrap();
    assert_eq!(
        found.iter().filter(|&&b| b).count(),
        n,
        "Bloom false negatives"
    );
    let in_scalable: Vec<String> = (0..TASKS)
        .flat_map(|t| (0..50).map(move |i| item(&format!("t{t}"), i)))
        .collect();
    let found = scalable.contains_many(&in_scalable).unwrap();
    assert!(found.iter().all(|&b| b), "scalable false negatives");
    assert!(
        scalable.layers().unwrap() >= 2,
        "800 elements past 200 grow it"
    );
    let estimate = hll.count().unwrap() as f64;
    let error = (estimate - n as f64).abs() / n as f64;
    assert!(error <= 3.0 * 0.0081, "estimate {estimate} of {n}");
}

#[test]
fn every_async_method_on_the_embedded_store() {
    every_async_method(Arc::new(MemoryStore::new()));
}

#[test]
fn every_async_method_on_memcached() {
    let server = MemcachedServer::start_default();
    every_async_method(memcached(&server));
}

#[test]
fn concurrent_async_adds_on_the_embedded_store() {
    concurrent_adds(Arc::new(MemoryStore::new()));
}

#[test]
fn concurrent_async_adds_on_memcached() {
    let server = MemcachedServer::start_default();
    concurrent_adds(memcached(&server));
}
