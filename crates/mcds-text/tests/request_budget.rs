//! A pipelined payload is as large as the request budget
//! ([`mcds_net::transport::request_budget`]): written whole before any
//! reply is read. These check that a full payload whose replies are far
//! larger than its requests completes with every value right, on the meta
//! store and the text store, and that a batch of many keys takes the round
//! trips the budget says.
//!
//! What they cannot show: that a payload larger than the send buffer would
//! wait forever. On this loopback (send buffers that grow to 4 MiB, and a
//! memcached that keeps reading while its replies queue) 1 MB payloads
//! complete even without asking for a send buffer. The budget rests on the
//! argument in its docs, for servers and kernels that do stop.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{CountingStore, Key, Op, Store, Ttl, traffic};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

/// 6,000 gets of 4 KiB values in one payload (about 300 KB of requests
/// in one or two payloads, 24 MB of replies).
fn full_payload_of_gets_for_big_values(store: &dyn Store) {
    let keys: Vec<Key> = (0..8)
        .map(|i| Key::new(format!("budget:{i:0>40}")).unwrap())
        .collect();
    let value = vec![b'v'; 4096];
    for key in &keys {
        store.set(key, &value, Ttl::Never).unwrap();
    }
    let ops: Vec<Op<'_>> = (0..6000).map(|i| Op::Get(&keys[i % keys.len()])).collect();
    let request_bytes: usize = 50 * ops.len(); // `mg <47-byte key> v …`
    assert!(request_bytes > 100_000, "{request_bytes}");
    let results = store.pipeline(&ops);
    assert_eq!(results.len(), ops.len());
    for (i, r) in results.iter().enumerate() {
        assert!(
            matches!(r, Ok(mcds_core::Reply::Item(Some(item))) if item.value == value),
            "op {i}: {r:?}"
        );
    }
}

#[test]
fn a_full_payload_whose_replies_fill_every_buffer_completes_on_the_meta_store() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::builder()
        .io_timeout(Duration::from_secs(10))
        .connect([server.addr()])
        .unwrap();
    full_payload_of_gets_for_big_values(&store);
}

#[test]
fn a_full_payload_whose_replies_fill_every_buffer_completes_on_the_text_store() {
    let server = MemcachedServer::start_default();
    let store = mcds_text::TextStore::builder()
        .io_timeout(Duration::from_secs(10))
        .connect([server.addr()])
        .unwrap();
    full_payload_of_gets_for_big_values(&store);
}

/// 10,000 missing keys of 40 bytes (about 500 KB of `mg` commands): one
/// round trip per request budget of commands, where 32 KiB payloads took
/// 15.
#[test]
fn a_batch_takes_one_round_trip_per_request_budget() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let keys: Vec<Key> = (0..10_000)
        .map(|i| Key::new(format!("budget:{i:0>33}")).unwrap())
        .collect();
    store.get_multi(&keys[..1]).unwrap(); // warm the connection
    let (found, rt) = traffic::measure(|| store.get_multi(&keys).unwrap());
    assert!(found.iter().all(Option::is_none));
    let budget = mcds_net::transport::request_budget();
    // An `mg <key> v f t k O<n> q` command is about 60 bytes.
    let max = (10_000usize * 64).div_ceil(budget) as u64 + 1;
    println!(
        "10,000 keys: {} round trips with a request budget of {budget} bytes",
        rt.round_trips
    );
    assert!(
        rt.round_trips <= max,
        "{} round trips, at most {max} expected",
        rt.round_trips
    );
}
