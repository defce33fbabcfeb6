//! The embedded `MemoryStore` under many threads and a small budget,
//! written by an adversarial review: with LRU eviction no write is ever
//! refused, and with `Eviction::Error` refusals lose nothing and stay
//! cheap (before the per-shard expiry bound, each refused write scanned
//! every item of every shard up to 1000 times: this file took 867 s).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use mcds_core::{Error, Eviction, Key, MemoryStore, Store, Ttl};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// With LRU eviction a write should never be refused for memory while
/// there are other items to evict (memcached without -M evicts).
#[test]
fn lru_store_never_refuses_writes_under_concurrency() {
    for shards in [2usize, 4, 32] {
        let store = Arc::new(
            MemoryStore::builder()
                .memory_limit(8 * 1024)
                .shards(shards)
                .eviction(Eviction::Lru)
                .build(),
        );
        let refused = Arc::new(AtomicU64::new(0));
        let ok = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let store = Arc::clone(&store);
                let refused = Arc::clone(&refused);
                let ok = Arc::clone(&ok);
                thread::spawn(move || {
                    for i in 0..20_000u64 {
                        let key = k(&format!("t{t}-{}", i % 500));
                        match store.set(&key, &[b'x'; 200], Ttl::Never) {
                            Ok(_) => {
                                ok.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(Error::OutOfMemory { .. }) => {
                                refused.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        println!(
            "shards {shards}: {} sets stored, {} refused OutOfMemory, {} evictions, used {} of 8192",
            ok.load(Ordering::Relaxed),
            refused.load(Ordering::Relaxed),
            store.evictions(),
            store.used_bytes()
        );
        assert!(store.used_bytes() <= 8 * 1024);
        assert_eq!(
            refused.load(Ordering::Relaxed),
            0,
            "shards {shards}: an LRU store refused writes for memory"
        );
    }
}

/// Eviction::Error: counters bumped by many threads while others fill the
/// budget. Every acknowledged incr is counted; a refused one changes
/// nothing; no existing item disappears.
#[test]
fn no_evict_counters_and_items_under_concurrency() {
    let store = Arc::new(
        MemoryStore::builder()
            .memory_limit(64 * 1024)
            .shards(4)
            .eviction(Eviction::Error)
            .build(),
    );
    // Counters start at 9 so the 10th incr needs another digit (grows).
    for c in 0..16 {
        store.set(&k(&format!("c{c}")), b"9", Ttl::Never).unwrap();
    }
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..16).map(|_| AtomicU64::new(0)).collect());
    let mut handles = Vec::new();
    for t in 0..4u64 {
        let store = Arc::clone(&store);
        let acked = Arc::clone(&acked);
        handles.push(thread::spawn(move || {
            for i in 0..50_000u64 {
                let c = ((i + t) % 16) as usize;
                match store.incr(&k(&format!("c{c}")), 1 + (i % 7) * 1000) {
                    Ok(Some(_)) => {
                        acked[c].fetch_add(1 + (i % 7) * 1000, Ordering::Relaxed);
                    }
                    Ok(None) => panic!("counter c{c} disappeared"),
                    Err(Error::OutOfMemory { .. }) => {}
                    Err(e) => panic!("{e}"),
                }
            }
        }));
    }
    let stored: Arc<Vec<AtomicU64>> = Arc::new((0..4).map(|_| AtomicU64::new(0)).collect());
    for t in 0..4u64 {
        let store = Arc::clone(&store);
        let stored = Arc::clone(&stored);
        handles.push(thread::spawn(move || {
            let mut mine = Vec::new();
            for i in 0..5_000u64 {
                let key = k(&format!("f{t}-{i}"));
                match store.set(&key, &vec![b'y'; (i % 300) as usize], Ttl::Never) {
                    Ok(_) => mine.push(key),
                    Err(Error::OutOfMemory { .. }) => {}
                    Err(e) => panic!("{e}"),
                }
                if i % 3 == 0 && !mine.is_empty() {
                    let key = &mine[(i as usize * 7) % mine.len()];
                    let _ = store.append(key, b"zz");
                }
            }
            for key in &mine {
                assert!(store.get(key).unwrap().is_some(), "{key:?} lost under -M");
            }
            stored[t as usize].store(mine.len() as u64, Ordering::Relaxed);
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    for c in 0..16 {
        let v = store.get(&k(&format!("c{c}"))).unwrap().unwrap().value;
        let n: u64 = String::from_utf8(v).unwrap().trim().parse().unwrap();
        assert_eq!(n, 9 + acked[c].load(Ordering::Relaxed), "counter c{c}");
    }
    println!(
        "used {} of {}, {} items, filler items kept {:?}",
        store.used_bytes(),
        64 * 1024,
        store.len(),
        stored
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .collect::<Vec<_>>()
    );
    assert!(store.used_bytes() <= 64 * 1024);
}
