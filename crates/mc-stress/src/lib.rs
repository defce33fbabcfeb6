//! # mc-stress
//!
//! Workloads that tests run in separate OS processes (`mc-stress-worker`),
//! so that concurrency claims are checked across processes, not only
//! threads. Each workload prints one line of results on stdout.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use mc_core::{Key, Result, Store, Ttl};
use mc_counter::Counter;
use mc_lock::{Lock, LockOptions, Release};
use mc_memcached::MemcachedStore;
use mc_set::Set;

/// Connect to `servers` (`host:port[,host:port...]`).
pub fn connect(servers: &str) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(MemcachedStore::connect(servers)?))
}

/// `threads` threads each increment counter `name` `n` times. Prints
/// `incremented <total>`.
pub fn counter(store: Arc<dyn Store>, name: &str, threads: usize, n: u64) -> Result<String> {
    let counter = Counter::new(store, name)?;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<u64> {
                    for _ in 0..n {
                        counter.incr(1)?;
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h.join().map_err(|_| panic_error())??;
        }
        Ok(format!("incremented {total}"))
    })
}

fn panic_error() -> mc_core::Error {
    mc_core::Error::InvalidArgument("a worker thread panicked".into())
}

/// Take lock `name` `rounds` times. Inside the critical section: mark
/// ourselves inside (a shared counter that must read 1), do a non-atomic
/// read-modify-write of `<name>:shared`, unmark. Prints
/// `rounds <n> overlaps <m> lost <k>`.
pub fn lock(store: Arc<dyn Store>, name: &str, rounds: usize) -> Result<String> {
    let options = LockOptions {
        backoff_min: Duration::from_micros(50),
        backoff_max: Duration::from_millis(2),
        ..LockOptions::default()
    };
    let lock = Lock::with_options(Arc::clone(&store), name, Duration::from_secs(30), options)?;
    let inside = Key::new(format!("{name}:inside"))?;
    let shared = Key::new(format!("{name}:shared"))?;
    let (mut overlaps, mut lost) = (0, 0);
    for _ in 0..rounds {
        let guard = lock.acquire(Duration::from_secs(120))?;
        if store.incr_or_init(&inside, 1, 1, Ttl::Never)? != 1 {
            overlaps += 1;
        }
        let n = store.get(&shared)?.and_then(|i| i.counter()).unwrap_or(0);
        store.set(&shared, (n + 1).to_string().as_bytes(), Ttl::Never)?;
        store.decr(&inside, 1)?;
        if guard.release()? == Release::Lost {
            lost += 1;
        }
    }
    Ok(format!("rounds {rounds} overlaps {overlaps} lost {lost}"))
}

/// Worker `id` adds `rounds` batches of 10 members `"<id>:<n>"` to set
/// `name` and removes the odd ones again. Prints `set <id> kept <k>`.
pub fn set(store: Arc<dyn Store>, name: &str, id: u64, rounds: u64) -> Result<String> {
    let set = Set::new(store, name)?;
    for round in 0..rounds {
        let batch: Vec<String> = (0..10)
            .map(|i| format!("{id}:{}", round * 10 + i))
            .collect();
        set.add(&batch)?;
        let odd: Vec<&String> = batch.iter().skip(1).step_by(2).collect();
        set.remove(&odd)?;
        if round % 10 == 0 {
            set.members()?;
        }
    }
    Ok(format!("set {id} kept {}", rounds * 5))
}
