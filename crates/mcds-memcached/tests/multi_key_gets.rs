//! A batch of reads of items goes to memcached as multi-key `gets` lines,
//! whose replies name their keys and leave out the misses (see
//! `pipeline::gets_payload`). These check, against real memcached, that
//! every item lands on its own key whatever the mix: misses between hits,
//! a key twice in one batch, keys of memcached's longest length (fewer to
//! a line), empty and large values, and that the CAS id read this way is
//! the item's own (a CAS write with it applies; with an older one, not).

use mcds_core::{CasOutcome, Key, Op, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

/// Key `i`: `len` bytes, distinct for each `i`.
fn key(i: usize, len: usize) -> Key {
    let tail = format!(":{i}");
    Key::new(format!("{}{tail}", "g".repeat(len - tail.len()))).unwrap()
}

/// The value of key `i`: empty, short, or 100 KiB, by `i`.
fn value(i: usize) -> Vec<u8> {
    match i % 5 {
        0 => Vec::new(),
        4 => vec![b'a' + (i % 26) as u8; 100 * 1024],
        _ => format!("value {i}").into_bytes(),
    }
}

#[test]
fn a_get_multi_reads_hits_misses_repeats_and_the_longest_keys_in_place() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    for len in [8, 250] {
        let n = 3_000;
        let keys: Vec<Key> = (0..n).map(|i| key(i, len.max(8))).collect();
        let values: Vec<Vec<u8>> = (0..n).map(value).collect();
        // Every third key stays missing.
        let sets: Vec<Op<'_>> = (0..n)
            .filter(|i| i % 3 != 0)
            .map(|i| Op::Set {
                key: &keys[i],
                value: &values[i],
                ttl: Ttl::Never,
            })
            .collect();
        assert!(store.pipeline(&sets).iter().all(Result::is_ok));
        // Each key, then some again (a miss and a hit among them).
        let order: Vec<usize> = (0..n).chain([1, 0, 2, 1, n - 1]).collect();
        let asked: Vec<Key> = order.iter().map(|&i| keys[i].clone()).collect();
        let found = store.get_multi(&asked).unwrap();
        assert_eq!(found.len(), asked.len());
        for (&i, item) in order.iter().zip(&found) {
            match item {
                Some(item) => {
                    assert_ne!(
                        i % 3,
                        0,
                        "key {i} (length {len}) is missing but read a value"
                    );
                    assert_eq!(item.value, values[i], "key {i} (length {len})");
                }
                None => assert_eq!(
                    i % 3,
                    0,
                    "key {i} (length {len}) is there but read as missing"
                ),
            }
        }
    }
}

#[test]
fn a_cas_id_read_in_a_batch_is_the_items_own() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let keys: Vec<Key> = (0..50).map(|i| key(i, 20)).collect();
    for k in &keys {
        store.set(k, b"first", Ttl::Never).unwrap();
    }
    let read = store.get_multi(&keys).unwrap();
    // Half change after the read: their ids from the batch are stale.
    for k in keys.iter().step_by(2) {
        store.set(k, b"changed", Ttl::Never).unwrap();
    }
    for (i, (k, item)) in keys.iter().zip(&read).enumerate() {
        let cas = item.as_ref().expect("every key was set").cas;
        let outcome = store.cas(k, b"second", Ttl::Never, cas).unwrap();
        if i % 2 == 0 {
            assert_eq!(outcome, CasOutcome::Exists, "key {i}: a stale id applied");
        } else {
            assert!(
                matches!(outcome, CasOutcome::Stored(_)),
                "key {i}: its own id was refused: {outcome:?}"
            );
        }
    }
}

/// memcached with almost no memory for replies (`-o read_buf_mem_limit=1`
/// over 32 worker threads) fails multi-key gets midway with `SERVER_ERROR
/// out of memory writing get response`, and drops the replies it had not
/// sent, earlier lines' included (an adversarial review found this). A
/// read then either gets its own value or fails as a server error that
/// says the key was not read: never another key's value, never a miss,
/// never "the store is full" (no item failed), and the connection stays
/// (it is in step at the batch's `MN`).
#[test]
fn reads_whose_replies_memcached_dropped_fail_as_not_read_and_keep_the_connection() {
    use mcds_testserver::ServerOptions;
    let server = MemcachedServer::start(ServerOptions {
        threads: 32,
        extra_args: vec!["-o".into(), "read_buf_mem_limit=1".into()],
        ..Default::default()
    });
    let store = MemcachedStore::builder()
        .connections_per_server(1)
        .connect([server.addr()])
        .unwrap();
    let keys: Vec<Key> = (0..300).map(|i| key(i, 12)).collect();
    for (i, k) in keys.iter().enumerate() {
        store
            .set(k, format!("v{i}").as_bytes(), Ttl::Never)
            .unwrap();
    }
    let dials = store.connection_stats().dials;
    let (mut read, mut not_read) = (0, 0);
    for _ in 0..20 {
        let ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
        for (i, r) in store.pipeline(&ops).into_iter().enumerate() {
            match r {
                Ok(mcds_core::Reply::Item(Some(item))) => {
                    assert_eq!(item.value, format!("v{i}").into_bytes(), "key {i}");
                    read += 1;
                }
                Err(mcds_core::Error::Server { message, .. }) if message.contains("not read") => {
                    not_read += 1;
                }
                other => panic!("key {i}: {other:?}"),
            }
        }
        // The connection is in step: a read on it gets its own value.
        let item = store.get(&keys[7]).unwrap().expect("key 7 was set");
        assert_eq!(item.value, b"v7");
    }
    let redials = store.connection_stats().dials - dials;
    println!("{read} values read, {not_read} reads failed as not read, {redials} new connections");
    assert!(
        not_read > 0,
        "memcached never ran out of reply memory: the test tests nothing"
    );
    assert_eq!(
        redials, 0,
        "a batch memcached answered in step closed its connection"
    );
}
