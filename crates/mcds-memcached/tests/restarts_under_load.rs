//! From an adversarial review: kill -9 and restart of the server (same port) under threads
//! and tokio tasks that run text pairs, pipelines and CAS loops on one
//! shared store. No call hangs (each ends within a few I/O timeouts), no
//! panic, and after the last restart every caller's fresh writes read back
//! as written (replies stay in step across reconnections).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, Key, Op, Reply, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

#[test]
fn restarts_under_mixed_load_neither_hang_nor_cross_replies() {
    let mut server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(200))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(30))
            .connections_per_server(2)
            .connect([server.addr()])
            .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let slowest = Arc::new(AtomicU64::new(0));
    let ops = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for t in 0..6 {
        let (store, stop, slowest, ops, errors) = (
            store.clone(),
            stop.clone(),
            slowest.clone(),
            ops.clone(),
            errors.clone(),
        );
        handles.push(std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let key = k(&format!("rv4r:{t}"));
            let log = k(&format!("rv4r:log:{t}"));
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let v = format!("{t}:{i}\r\nSTORED\r\n");
                let started = Instant::now();
                let r: Vec<_> = match i % 3 {
                    0 => vec![
                        store
                            .add(&key, v.as_bytes(), Ttl::secs(60))
                            .map(Reply::Stored),
                    ],
                    1 => {
                        let ops = [
                            Op::Set {
                                key: &key,
                                value: v.as_bytes(),
                                ttl: Ttl::secs(60),
                            },
                            Op::AppendOrAdd {
                                key: &log,
                                value: b"x",
                                ttl: Ttl::secs(60),
                            },
                            Op::Get(&key),
                        ];
                        if t % 2 == 0 {
                            store.pipeline(&ops)
                        } else {
                            rt.block_on(store.pipeline_async(&ops))
                        }
                    }
                    _ => match store.get(&key) {
                        Ok(Some(item)) => vec![
                            store
                                .cas(&key, v.as_bytes(), Ttl::secs(60), item.cas)
                                .map(Reply::CasOutcome),
                        ],
                        other => vec![other.map(Reply::Item)],
                    },
                };
                let took = started.elapsed().as_millis() as u64;
                slowest.fetch_max(took, Ordering::SeqCst);
                ops.fetch_add(1, Ordering::SeqCst);
                errors.fetch_add(
                    r.iter().filter(|r| r.is_err()).count() as u64,
                    Ordering::SeqCst,
                );
                if i % 3 == 1 && r.iter().all(|r| r.is_ok()) {
                    assert!(
                        matches!(&r[2], Ok(Reply::Item(Some(it))) if it.value == v.as_bytes()),
                        "thread {t}: pipeline read {:?} after writing {v:?}",
                        r[2]
                    );
                }
                i += 1;
            }
            // After the last restart: fresh writes read back, pairs report their own ids.
            for j in 0..50 {
                let v = format!("final:{t}:{j}");
                let fresh = k(&format!("rv4r:final:{t}:{j}"));
                let Stored::Stored(id) = store.add(&fresh, v.as_bytes(), Ttl::secs(60)).unwrap()
                else {
                    panic!("thread {t}: a fresh key was not added");
                };
                let item = store.get(&fresh).unwrap().unwrap();
                assert_eq!(
                    (item.value.as_slice(), item.cas),
                    (v.as_bytes(), id),
                    "thread {t}"
                );
                assert_eq!(
                    store.cas(&fresh, b"next", Ttl::secs(60), id).unwrap(),
                    CasOutcome::Stored(store.get(&fresh).unwrap().unwrap().cas)
                );
            }
        }));
    }
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(300));
        server.kill();
        std::thread::sleep(Duration::from_millis(100));
        server.restart();
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    println!(
        "{} calls, {} failed results, slowest call {} ms; {:?}",
        ops.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst),
        slowest.load(Ordering::SeqCst),
        store.connection_stats()
    );
    assert!(
        slowest.load(Ordering::SeqCst) < 2_000,
        "a call took {} ms",
        slowest.load(Ordering::SeqCst)
    );
}
