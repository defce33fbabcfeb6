//! A batch of reads too large for one payload goes out on several of the
//! server's connections at once (memcached serves each connection on one
//! worker thread; that both carry it is checked in `pipeline.rs`'s unit
//! tests). These check that every reply still lands on its own
//! key, that only batches of reads are spread, and that a server
//! restarted while spread reads run makes them fail or read what is
//! there, never another key's value.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcds_core::{Key, Op, Reply, Store, Ttl, traffic};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

fn key(i: usize) -> Key {
    Key::new(format!("spread:{i:0>30}")).unwrap()
}

fn value(i: usize) -> Vec<u8> {
    format!("value of {i}").into_bytes()
}

/// 20,000 keys (about 1.3 MB of `mg` commands: several payloads), every
/// third one missing.
const N: usize = 20_000;

/// Write every key but each third one; whether every write succeeded.
fn write_keys(store: &MemcachedStore) -> bool {
    let keys: Vec<Key> = (0..N).map(key).collect();
    let values: Vec<Vec<u8>> = (0..N).map(value).collect();
    let ops: Vec<Op<'_>> = (0..N)
        .filter(|i| i % 3 != 0)
        .map(|i| Op::Set {
            key: &keys[i],
            value: &values[i],
            ttl: Ttl::Never,
        })
        .collect();
    store.pipeline(&ops).iter().all(Result::is_ok)
}

fn load(store: &MemcachedStore) {
    assert!(write_keys(store), "loading the keys failed");
}

#[test]
fn a_large_batch_of_reads_goes_out_on_both_connections_with_every_value_in_place() {
    let server = MemcachedServer::start_default();
    let loader = MemcachedStore::connect(&server.addr()).unwrap();
    load(&loader);
    let store = MemcachedStore::builder()
        .connections_per_server(2)
        .connect([server.addr()])
        .unwrap();
    let keys: Vec<Key> = (0..N).map(key).collect();
    let check = |found: &[Option<mcds_core::Item>]| {
        for (i, item) in found.iter().enumerate() {
            match item {
                Some(item) => assert_eq!(item.value, value(i), "key {i}"),
                None => assert_eq!(i % 3, 0, "key {i} is there but read as missing"),
            }
        }
        assert!(found.iter().filter(|f| f.is_none()).count() == N.div_ceil(3));
    };
    // The first batch finds one connection open: it goes out on that one,
    // and the second is dialed in the background, not waited for.
    check(&store.get_multi(&keys).unwrap());
    let open = std::time::Instant::now();
    while store.connection_stats().open < 2 {
        assert!(
            open.elapsed() < Duration::from_secs(5),
            "{:?}",
            store.connection_stats()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The next goes out on both.
    let (found, rt) = traffic::measure(|| store.get_multi(&keys).unwrap());
    check(&found);
    let stats = store.connection_stats();
    println!(
        "{N} gets: {} payloads, on {} connections",
        rt.round_trips, stats.open
    );
    assert!(rt.round_trips >= 2, "{} payloads", rt.round_trips);
    assert_eq!(stats.dials, 2, "{stats:?}");

    // The same batch async: spread too, every value in place.
    let ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
    let found = mcds_core::block_on(store.pipeline_async(&ops));
    for (i, r) in found.into_iter().enumerate() {
        let read = match r.unwrap() {
            Reply::Item(item) => item.map(|it| it.value),
            other => panic!("key {i}: {other:?}"),
        };
        assert_eq!(read, (i % 3 != 0).then(|| value(i)), "key {i}");
    }
}

#[test]
fn a_large_batch_with_a_write_stays_on_one_connection() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::builder()
        .connections_per_server(2)
        .connect([server.addr()])
        .unwrap();
    let keys: Vec<Key> = (0..N).map(key).collect();
    let extra = Key::new("spread:written").unwrap();
    let mut ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
    // A write in the middle: the server must apply the batch in order.
    ops.insert(
        N / 2,
        Op::Set {
            key: &extra,
            value: b"x",
            ttl: Ttl::Never,
        },
    );
    let results = store.pipeline(&ops);
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(store.get(&extra).unwrap().unwrap().value, b"x");
    assert_eq!(store.connection_stats().dials, 1);
}

/// Spread reads from 2 threads while the server restarts 4 times and a
/// writer loads it again after each restart: a value read is always its
/// own key's. (Values differ per key, so a reply attributed to the wrong
/// op, or read on a connection to another incarnation than the batch was
/// encoded for, would show.)
#[test]
fn spread_reads_across_restarts_fail_or_read_their_own_keys() {
    let mut server = MemcachedServer::start_default();
    let addr = server.addr();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(2)
            .io_timeout(Duration::from_secs(2))
            .connect([addr.as_str()])
            .unwrap(),
    );
    load(&store);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
            std::thread::spawn(move || {
                let keys: Vec<Key> = (0..N).map(key).collect();
                let (mut reads, mut errors, mut values) = (0u64, 0u64, 0u64);
                while !stop.load(Ordering::Relaxed) {
                    let results = store.pipeline(&keys.iter().map(Op::Get).collect::<Vec<_>>());
                    reads += 1;
                    for (i, r) in results.into_iter().enumerate() {
                        match r {
                            Ok(Reply::Item(Some(item))) => {
                                assert_eq!(
                                    item.value,
                                    value(i),
                                    "key {i} read another key's value"
                                );
                                values += 1;
                            }
                            Ok(Reply::Item(None)) => {}
                            Ok(other) => panic!("key {i}: {other:?}"),
                            Err(_) => errors += 1,
                        }
                    }
                }
                (reads, errors, values)
            })
        })
        .collect();
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(150));
        server.restart();
        std::thread::sleep(Duration::from_millis(50));
        // Loaded again (a write may fail while the restart is seen).
        for _ in 0..20 {
            if write_keys(&store) {
                break;
            }
        }
    }
    std::thread::sleep(Duration::from_millis(150));
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        let (reads, errors, values) = reader.join().unwrap();
        println!("reader: {reads} batches, {values} values read, {errors} ops failed");
        assert!(values > 0);
    }
}

/// From an adversarial review: with only one connection open, a spread
/// read of a frozen server first dialed the second (its handshake waited
/// the I/O timeout) and then timed out on the first: twice the timeout.
/// The second is now dialed in the background, and the read fails within
/// one timeout.
#[test]
fn a_spread_read_of_a_frozen_server_fails_within_one_io_timeout() {
    let server = MemcachedServer::start_default();
    let io_timeout = Duration::from_secs(1);
    let store = MemcachedStore::builder()
        .connections_per_server(2)
        .io_timeout(io_timeout)
        .connect([server.addr()])
        .unwrap();
    let keys: Vec<Key> = (0..N).map(key).collect();
    store.get(&keys[0]).unwrap(); // one connection open
    server.pause();
    let start = std::time::Instant::now();
    let results = store.pipeline(&keys.iter().map(Op::Get).collect::<Vec<_>>());
    let took = start.elapsed();
    server.resume();
    assert!(results.iter().all(Result::is_err));
    println!("{N} gets of a frozen server failed after {took:?} (I/O timeout {io_timeout:?})");
    // Twice the timeout before the fix; a margin for a busy machine.
    assert!(took < io_timeout * 8 / 5, "{took:?}");
}
