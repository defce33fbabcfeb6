//! From an adversarial review: the embedded counter's direct `incr_or_init` path
//! (MemoryStore answers it without an Op; `&`, `Box` and `Arc` forward it),
//! its `wider_than` digit check, against memcached 1.6.18 at the edges:
//! 9 -> 10, 99 -> 100, u64::MAX wrapping to 0, decr shrinking and
//! stopping at 0. Each command is awaited on its own (memcached pads a
//! shortened number in place then), and `CountingStore` still counts one
//! round trip per embedded `incr_or_init`.

use std::sync::Arc;

use mcds_core::{CountingStore, Key, MemoryStore, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// The observable results of the edge sequence on `store`.
fn edges(store: &dyn Store) -> Vec<String> {
    let mut out = Vec::new();
    let get = |store: &dyn Store, key: &Key, what: &str, out: &mut Vec<String>| {
        let v = store
            .get(key)
            .unwrap()
            // Trailing spaces trimmed: memcached pads a shortened number
            // in place only while no other reference to the item is held
            // (a read still being answered holds one), so "101" and "101 "
            // are both its answers; the embedded store always pads.
            .map(|i| {
                String::from_utf8_lossy(&i.value)
                    .trim_end_matches(' ')
                    .to_string()
            });
        out.push(format!("{what}: {v:?}"));
    };
    for (start, delta) in [
        ("9", 1u64),
        ("99", 1),
        ("999", 1),
        ("9999999999999999999", 1),
        ("18446744073709551615", 1),
        ("18446744073709551615", 2),
        ("1", u64::MAX),
        ("0", u64::MAX),
        ("00012", 1),
        ("5", 10),
    ] {
        let key = k(&format!("e:{start}:{delta}"));
        store.set(&key, start.as_bytes(), Ttl::Never).unwrap();
        let r = store.incr(&key, delta).unwrap();
        out.push(format!("incr {start}+{delta} = {r:?}"));
        get(store, &key, "  read", &mut out);
        let r = store.incr_or_init(&key, delta, 7, Ttl::Never).unwrap();
        out.push(format!("  incr_or_init +{delta} = {r}"));
        get(store, &key, "  read", &mut out);
    }
    for (start, delta) in [
        ("10", 1u64),
        ("100", 1),
        ("1000", 999),
        ("5", 9),
        ("18446744073709551615", u64::MAX),
    ] {
        let key = k(&format!("d:{start}:{delta}"));
        store.set(&key, start.as_bytes(), Ttl::Never).unwrap();
        let r = store.decr(&key, delta).unwrap();
        out.push(format!("decr {start}-{delta} = {r:?}"));
        get(store, &key, "  read", &mut out);
        let r = store.incr(&key, 1).unwrap();
        out.push(format!("  incr +1 = {r:?}"));
        get(store, &key, "  read", &mut out);
        let r = store.incr(&key, 100).unwrap();
        out.push(format!("  incr +100 = {r:?}"));
        get(store, &key, "  read", &mut out);
    }
    let fresh = k("fresh");
    out.push(format!(
        "init missing = {}",
        store.incr_or_init(&fresh, 5, 9, Ttl::Never).unwrap()
    ));
    get(store, &fresh, "  read", &mut out);
    out.push(format!(
        "  again = {}",
        store.incr_or_init(&fresh, 5, 9, Ttl::Never).unwrap()
    ));
    get(store, &fresh, "  read", &mut out);
    out
}

#[test]
fn embedded_counters_agree_with_memcached_at_the_edges() {
    let server = MemcachedServer::start_default();
    let memcached = MemcachedStore::connect(&server.addr()).unwrap();
    let real = edges(&memcached);
    let embedded = MemoryStore::new();
    let arc: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let boxed: Box<dyn Store> = Box::new(MemoryStore::new());
    let plain = MemoryStore::new();
    for (name, got) in [
        ("MemoryStore", edges(&embedded)),
        ("Arc<dyn Store>", edges(&arc)),
        ("Box<dyn Store>", edges(&boxed)),
        ("&&MemoryStore", edges(&&plain)),
    ] {
        for (i, (r, e)) in real.iter().zip(&got).enumerate() {
            assert_eq!(
                r, e,
                "{name} differs from memcached at line {i}\nmemcached: {real:#?}\n{name}: {got:#?}"
            );
        }
        assert_eq!(real.len(), got.len());
    }
    println!("{} observations agree: {real:#?}", real.len());
}

#[test]
fn counting_store_counts_the_embedded_direct_incr() {
    for store in [CountingStore::new(
        Arc::new(MemoryStore::new()) as Arc<dyn Store>
    )] {
        let key = k("hits");
        for _ in 0..10 {
            store.incr_or_init(&key, 1, 1, Ttl::Never).unwrap();
        }
        let s = store.stats("incr_or_init");
        assert_eq!((s.calls, s.round_trips), (10, 10), "{s:?}");
    }
    let counted = Arc::new(CountingStore::new(MemoryStore::new()));
    let counter = mcds_counter::Counter::new(Arc::clone(&counted) as Arc<dyn Store>, "c").unwrap();
    for _ in 0..10 {
        counter.incr(1).unwrap();
    }
    assert_eq!(counter.get().unwrap(), 10);
    let t = counted.total();
    println!("Counter::incr x10 + get through Arc<CountingStore<MemoryStore>>: {t:?}");
    assert_eq!(t.round_trips, 11, "{:?}", counted.all());
}
