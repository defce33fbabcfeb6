//! From an adversarial review: an async guard dropped at the end of `block_on` on a
//! current_thread runtime that stays alive but is not driven again (a sync
//! program that keeps a runtime for occasional async calls). Its release
//! was a task on that runtime: it did not run, and the lock stayed held
//! until its TTL. Same for a cancelled acquire's cleanup. On a
//! current-thread runtime both now run on a thread of their own.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn held_after(lock: &Lock, limit: Duration) -> Option<String> {
    let t = Instant::now();
    loop {
        let h = lock.holder().unwrap();
        if h.is_none() || t.elapsed() > limit {
            return h;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn guard_dropped_at_end_of_block_on_on_an_idle_current_thread_runtime() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "idle", Duration::from_secs(30)).unwrap();
    let rt = mcds_testkit::current_thread_runtime();
    rt.block_on(async {
        let _g = lock.acquire_async(Duration::from_secs(2)).await.unwrap();
        // work; _g dropped as the future ends
    });
    let guard_held = held_after(&lock, Duration::from_secs(2));
    println!(
        "guard dropped at the end of block_on, runtime alive and idle: held 2 s later by {guard_held:?}"
    );
    // Drive the runtime again: the release runs now.
    rt.block_on(async { tokio::task::yield_now().await });
    let after = held_after(&lock, Duration::from_secs(1));
    println!("after the runtime is driven again: {after:?}");

    // A cancelled acquire the same way.
    let lock2 = Lock::new(Arc::clone(&store), "idle2", Duration::from_secs(30)).unwrap();
    assert!(lock2.holder().unwrap().is_none());
    let mut cancel_held = None;
    for _ in 0..10 {
        rt.block_on(async {
            let mut cx = Context::from_waker(Waker::noop());
            let mut acquire = Box::pin(lock2.acquire_async(Duration::from_secs(10)));
            if let Poll::Ready(r) = acquire.as_mut().poll(&mut cx) {
                drop(r);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
            drop(acquire);
        });
        cancel_held = held_after(&lock2, Duration::from_secs(2));
        if cancel_held.is_some() {
            break;
        }
    }
    println!(
        "cancelled acquire at the end of block_on, runtime idle: held 2 s later by {cancel_held:?}"
    );
    assert!(
        guard_held.is_none() && cancel_held.is_none(),
        "locks stay held while the current_thread runtime is idle: guard {guard_held:?}, cancelled acquire {cancel_held:?} (TTL 30 s)"
    );
}
