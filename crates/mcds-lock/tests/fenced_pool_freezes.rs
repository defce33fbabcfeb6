//! From an adversarial review: fenced locks on a pool of 3, the lock item and its fence
//! counter on different servers (the 3-round-trip acquire), taken by
//! threads and tokio tasks of two stores (two "processes") while the fence
//! counter's server is frozen now and then (SIGSTOP 300 ms, I/O timeout
//! 100 ms). Holders never overlap, and fencing tokens strictly increase in
//! the order the critical sections are entered.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcds_core::{Key, Store};
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{ServerOptions, ServerPool};

#[test]
fn fenced_split_locks_on_a_pool_with_a_freezing_fence_server() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let stores: Vec<Arc<MemcachedStore>> = (0..2)
        .map(|_| {
            Arc::new(
                MemcachedStore::builder()
                    .io_timeout(Duration::from_millis(100))
                    .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
                    .connect(pool.addrs())
                    .unwrap(),
            )
        })
        .collect();
    // A lock name whose item and fence counter live on different servers.
    let (name, fence_server) = (0..)
        .map(|i| format!("split-{i}"))
        .find_map(|name| {
            let (lk, fk) = (
                Key::new(format!("lock:{name}:owner")).unwrap(),
                Key::new(format!("lock:{name}:fence")).unwrap(),
            );
            let (a, b) = (stores[0].server_for(&lk), stores[0].server_for(&fk));
            (a != b).then_some((name, b))
        })
        .unwrap();
    println!("lock {name}: fence counter on server {fence_server}");
    let busy = Arc::new(AtomicBool::new(false));
    let last_token = Arc::new(AtomicU64::new(0));
    let wrong = Arc::new(Mutex::new(Vec::<String>::new()));
    let entered = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let enter = {
        let (busy, last_token, wrong, entered) = (
            busy.clone(),
            last_token.clone(),
            wrong.clone(),
            entered.clone(),
        );
        Arc::new(move |who: &str, token: u64| {
            if busy.swap(true, Ordering::SeqCst) {
                wrong
                    .lock()
                    .unwrap()
                    .push(format!("{who}: entered while another holder was inside"));
            }
            let prev = last_token.fetch_max(token, Ordering::SeqCst);
            if prev >= token {
                wrong
                    .lock()
                    .unwrap()
                    .push(format!("{who}: token {token} after {prev}"));
            }
            entered.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(1));
            busy.store(false, Ordering::SeqCst);
        })
    };
    let mut threads = Vec::new();
    for t in 0..4 {
        let store: Arc<dyn Store> = stores[t % 2].clone();
        let (name, enter, stop, errors) =
            (name.clone(), enter.clone(), stop.clone(), errors.clone());
        threads.push(std::thread::spawn(move || {
            let lock = Lock::new(store, &name, Duration::from_secs(30))
                .unwrap()
                .with_fencing(true);
            let rt = mcds_testkit::current_thread_runtime();
            while !stop.load(Ordering::SeqCst) {
                let got = if t < 2 {
                    lock.try_acquire()
                } else {
                    rt.block_on(lock.try_acquire_async())
                };
                match got {
                    Ok(Some(guard)) => {
                        enter(&format!("worker {t}"), guard.fencing_token().unwrap());
                        if t < 2 {
                            guard.release().unwrap();
                        } else {
                            rt.block_on(guard.release_async()).unwrap();
                        }
                    }
                    Ok(None) => std::thread::sleep(Duration::from_micros(200)),
                    Err(_) => {
                        errors.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        }));
    }
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(300));
        pool.servers[fence_server].pause();
        std::thread::sleep(Duration::from_millis(300));
        pool.servers[fence_server].resume();
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().unwrap();
    }
    let wrong = wrong.lock().unwrap();
    println!(
        "{} critical sections, {} acquire errors, last token {}, {} wrong",
        entered.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst),
        last_token.load(Ordering::SeqCst),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{:?}", &wrong[..wrong.len().min(10)]);
    assert!(entered.load(Ordering::SeqCst) > 50);
}
