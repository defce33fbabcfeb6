//! The idle check across restarts: `Lane::check` reads the clock once for
//! both ages (the clock sample's and the connection's idle time). A caller
//! pausing ~100-300 µs between requests (around IDLE_CHECK, 200 µs) while
//! the server is killed and restarted 15 times on the same port: counts
//! each error kind by the pause before the request (under / over 200 µs),
//! and every reply must be this caller's (a get answers the value just set,
//! or a miss after a restart, or an error; never another value).
//! Random pauses; the seed is printed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod support;

use support::{Rng, k, seed};

use mcds_core::{Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

fn kind(e: &mcds_core::Error) -> String {
    let s = format!("{e:?}");
    s.split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap()
        .to_string()
}

/// A pause of 100 to 300 µs before a request, and which side of the
/// 200 µs idle check it falls on.
fn pace(rng: &mut Rng) -> (Duration, &'static str) {
    let gap = Duration::from_micros(100 + rng.below(200));
    let side = if gap > Duration::from_micros(200) {
        "over"
    } else {
        "under"
    };
    (gap, side)
}

fn pause(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

#[test]
fn requests_paced_around_the_idle_check_across_restarts() {
    let mut rng = Rng(seed());
    let mut server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_millis(500))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
            .connect([server.addr()])
            .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
        let mut rng = Rng(rng.below(u64::MAX) | 1);
        std::thread::spawn(move || {
            let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
            let mut wrong = 0u64;
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let key = k(&format!("idle-{}", i % 64));
                let value = format!("v{i}");
                let (gap, side) = pace(&mut rng);
                pause(gap);
                let set = store.set(&key, value.as_bytes(), Ttl::Never);
                let tag = match &set {
                    Ok(_) => "ok".to_string(),
                    Err(e) => kind(e),
                };
                *outcomes.entry(format!("set {side} {tag}")).or_default() += 1;
                let (gap, side) = pace(&mut rng);
                pause(gap);
                let tag = match store.get(&key) {
                    Ok(Some(v)) if v.value[..] == *value.as_bytes() => "ok".to_string(),
                    Ok(Some(v)) => {
                        // A set that failed may have applied or not: an
                        // older value of this caller is then possible.
                        if set.is_ok() {
                            wrong += 1;
                            println!(
                                "wrong: {key:?} set {value} got {:?}",
                                String::from_utf8_lossy(&v.value)
                            );
                        }
                        "other value".to_string()
                    }
                    Ok(None) => "miss".to_string(),
                    Err(e) => kind(&e),
                };
                *outcomes.entry(format!("get {side} {tag}")).or_default() += 1;
            }
            (outcomes, wrong, i)
        })
    };
    for _ in 0..15 {
        std::thread::sleep(Duration::from_millis(100 + rng.below(100)));
        server.restart();
    }
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    let (outcomes, wrong, rounds) = worker.join().unwrap();
    println!("{rounds} set+get rounds, 15 restarts: {wrong} wrong values");
    for (k, v) in &outcomes {
        println!("  {k}: {v}");
    }
    assert_eq!(wrong, 0);
}
