//! Found by an adversarial review: a `memcached -M` that is full and has no incarnation marker
//! (restarted, then filled by another application before any mcds client
//! connected). The handshake's `add` of the marker is refused with
//! `SERVER_ERROR out of memory`, and every connection then makes up a
//! random marker of its own (`conn.rs`, `handshake`): each dial is a "new
//! incarnation". With several connections per server, the lanes keep
//! invalidating each other, and a CAS id read on one connection does not
//! match on the next.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcds_core::{CasOutcome, Key, Store, Ttl};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// A `memcached -M` restarted and then filled by another application
/// before any mcds client connected (so without the marker), and a store
/// with 4 connections. Room is made for 40 items of 300..=400 bytes, so
/// writes of that size fit while the marker's add does not.
fn full_server_without_marker() -> (MemcachedServer, Arc<MemcachedStore>) {
    let server = mcds_testkit::markerless_server();
    let store = mcds_testkit::store_with_connections(&server, 4);
    (server, store)
}

/// Four threads each run get + cas on a key of their own, that nobody
/// else writes. Every cas must store: the item never changed between the
/// get and the cas.
#[test]
fn cas_on_an_unchanged_item_stores_on_a_full_server_without_marker() {
    let (_server, store) = full_server_without_marker();
    let exists = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stored = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (store, exists, errors, stored) = (
                Arc::clone(&store),
                Arc::clone(&exists),
                Arc::clone(&errors),
                Arc::clone(&stored),
            );
            std::thread::spawn(move || {
                let key = k(&format!("own:{t}"));
                let value = vec![b'0' + t as u8; 320];
                store.set(&key, &value, Ttl::Never).unwrap();
                for i in 0..200 {
                    let item = match store.get(&key) {
                        Ok(Some(item)) => item,
                        other => {
                            errors.fetch_add(1, Ordering::SeqCst);
                            if errors.load(Ordering::SeqCst) < 5 {
                                eprintln!("thread {t} get {i}: {other:?}");
                            }
                            continue;
                        }
                    };
                    match store.cas(&key, &value, Ttl::Never, item.cas) {
                        Ok(CasOutcome::Stored(_)) => {
                            stored.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(other) => {
                            if exists.fetch_add(1, Ordering::SeqCst) < 5 {
                                eprintln!("thread {t} cas {i}: {other:?} though nobody else writes {key:?}");
                            }
                        }
                        Err(e) => {
                            if errors.fetch_add(1, Ordering::SeqCst) < 5 {
                                eprintln!("thread {t} cas {i}: {e}");
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let stats = store.connection_stats();
    println!(
        "stored {}, refused as changed {}, errors {}; dials {} for 4 connections",
        stored.load(Ordering::SeqCst),
        exists.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst),
        stats.dials
    );
    assert_eq!(
        (exists.load(Ordering::SeqCst), errors.load(Ordering::SeqCst)),
        (0, 0),
        "a get + cas on an item nobody else writes must store; {} dials for 4 connections",
        stats.dials
    );
}

/// Locks acquired and released while other threads read: every release of
/// a lock nobody else touched must be `Released`.
#[test]
fn lock_release_on_a_full_server_without_marker() {
    let (_server, store) = full_server_without_marker();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..8)
        .map(|t| {
            let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
            std::thread::spawn(move || {
                let key = k(&format!("app:0:{}", 10 + t as usize));
                let mut errors = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    if store.get(&key).is_err() {
                        errors += 1;
                    }
                }
                errors
            })
        })
        .collect();
    let label = "x".repeat(200);
    let lock = Lock::new(
        Arc::clone(&store) as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap()
    .with_owner_label(&label)
    .unwrap();
    let mut outcomes = std::collections::BTreeMap::new();
    for _ in 0..100 {
        let outcome = match lock.try_acquire() {
            Ok(Some(guard)) => match guard.release() {
                Ok(r) => format!("release {r:?}"),
                Err(e) => format!("release error {e}"),
            },
            Ok(None) => "not acquired: held".to_string(),
            Err(e) => format!("acquire error {e}"),
        };
        *outcomes.entry(outcome).or_insert(0) += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let read_errors: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();
    println!(
        "100 acquire/release: {outcomes:?}; reader errors {read_errors}; dials {}",
        store.connection_stats().dials
    );
    assert_eq!(
        outcomes.get(&format!("release {:?}", Release::Released)),
        Some(&100),
        "every lock released; outcomes {outcomes:?}"
    );
    assert_eq!(read_errors, 0, "gets of existing items failed");
}
