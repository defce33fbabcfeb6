//! Callers sharing a connection to a server that freezes. `read_reply`'s
//! data-block fast path returns a failed `fill_buf` (a timeout) instead
//! of reading again (found by an adversarial review). Real memcached frozen
//! (SIGSTOP) while 4 callers share one connection reading values of 1 B to
//! 900 KiB (a frozen server stops mid-block for the big ones): every
//! value read must be the one stored under its key (never another
//! caller's reply, never a late one), and a failed get must end in about
//! one I/O timeout (not two). Random sizes and pauses; the seed is printed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;

use support::{Rng, k, seed};

use mcds_core::{Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

fn value(i: u64, len: usize) -> Vec<u8> {
    let tag = format!("<{i}>");
    tag.bytes().cycle().take(len.max(tag.len())).collect()
}

#[test]
fn callers_sharing_a_connection_to_a_frozen_server_get_their_own_values() {
    let mut rng = Rng(seed());
    let server = MemcachedServer::start_default();
    let timeout = Duration::from_millis(200);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(timeout)
            .connect([server.addr()])
            .unwrap(),
    );
    let keys = 32u64;
    let mut expected = Vec::new();
    for i in 0..keys {
        let len = match rng.below(3) {
            0 => 1 + rng.below(64) as usize,
            1 => 1 + rng.below(16 * 1024) as usize,
            _ => 64 * 1024 + rng.below(836 * 1024) as usize,
        };
        let v = value(i, len);
        store.set(&k(&format!("blk-{i}")), &v, Ttl::Never).unwrap();
        expected.push(v);
    }
    let expected = Arc::new(expected);
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let slowest_error = Arc::new(Mutex::new(Duration::ZERO));
    let wrong = Arc::new(Mutex::new(0u64));
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (store, stop, expected, outcomes, slowest_error, wrong) = (
                Arc::clone(&store),
                Arc::clone(&stop),
                Arc::clone(&expected),
                Arc::clone(&outcomes),
                Arc::clone(&slowest_error),
                Arc::clone(&wrong),
            );
            let mut rng = Rng(rng.below(u64::MAX) | 1);
            std::thread::spawn(move || {
                let _ = w;
                while !stop.load(Ordering::SeqCst) {
                    let i = rng.below(keys);
                    let t = Instant::now();
                    let tag = match store.get(&k(&format!("blk-{i}"))) {
                        Ok(Some(v)) if v.value[..] == expected[i as usize][..] => "ok".to_string(),
                        Ok(Some(v)) => {
                            *wrong.lock().unwrap() += 1;
                            println!("wrong: blk-{i} got {} bytes", v.value.len());
                            "wrong".to_string()
                        }
                        Ok(None) => "miss".to_string(),
                        Err(e) => {
                            let took = t.elapsed();
                            let mut s = slowest_error.lock().unwrap();
                            *s = (*s).max(took);
                            format!("{e:?}")
                                .split(|c: char| !c.is_alphanumeric())
                                .next()
                                .unwrap()
                                .to_string()
                        }
                    };
                    *outcomes.lock().unwrap().entry(tag).or_default() += 1;
                }
            })
        })
        .collect();
    let freezes = 12;
    for _ in 0..freezes {
        std::thread::sleep(Duration::from_millis(20 + rng.below(80)));
        server.pause();
        std::thread::sleep(Duration::from_millis(250 + rng.below(300)));
        server.resume();
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    let wrong = *wrong.lock().unwrap();
    println!(
        "{freezes} freezes, io_timeout {timeout:?}: {wrong} wrong values, slowest failed get {:?}",
        *slowest_error.lock().unwrap()
    );
    for (k, v) in outcomes.lock().unwrap().iter() {
        println!("  {k}: {v}");
    }
    // Afterwards every key reads back whole.
    for i in 0..keys {
        let got = store.get(&k(&format!("blk-{i}"))).unwrap().unwrap();
        assert!(
            got.value[..] == expected[i as usize][..],
            "blk-{i} after the freezes"
        );
    }
    assert_eq!(wrong, 0);
}
