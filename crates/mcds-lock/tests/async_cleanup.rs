//! From an adversarial review: background cleanup of cancelled async acquires and of async
//! guards, in and out of runtimes, on a normal and a marker-less server.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn wait_free(lock: &Lock, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    loop {
        let h = lock.holder().unwrap();
        if h.is_none() || Instant::now() > deadline {
            return h;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Poll acquire_async once (add queued), then drop it; let it run `after`
/// then end.
fn cancel_once(lock: &Lock) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    let mut acquire = Box::pin(lock.acquire_async(Duration::from_secs(10)));
    match acquire.as_mut().poll(&mut cx) {
        Poll::Ready(Ok(guard)) => {
            drop(guard);
            false
        }
        Poll::Ready(Err(e)) => panic!("acquire: {e}"),
        Poll::Pending => {
            // Give the add time to be applied before the cancellation.
            std::thread::sleep(Duration::from_millis(20));
            drop(acquire);
            true
        }
    }
}

fn shutdown_case(rt: tokio::runtime::Runtime, flavor: &str) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "sd", Duration::from_secs(30)).unwrap();
    assert!(lock.holder().unwrap().is_none());
    let mut stranded = Vec::new();
    for attempt in 0..10 {
        let cancelled = rt.block_on(async { cancel_once(&lock) });
        if !cancelled {
            continue;
        }
        let _ = attempt;
        break;
    }
    drop(rt);
    if let Some(h) = wait_free(&lock, Duration::from_secs(3)) {
        stranded.push(h);
    }
    println!("{flavor}: cancelled acquire then runtime dropped; held 3 s later: {stranded:?}");
    assert!(
        stranded.is_empty(),
        "{flavor}: a cancelled acquire_async whose runtime ended right after left the lock held by {stranded:?} (TTL 30 s)"
    );
}

#[test]
fn cancelled_acquire_at_shutdown_current_thread() {
    shutdown_case(mcds_testkit::current_thread_runtime(), "current_thread");
}

#[test]
fn cancelled_acquire_at_shutdown_multi_thread() {
    shutdown_case(mcds_testkit::runtime(), "multi_thread");
}

fn store4(server: &MemcachedServer) -> Arc<dyn Store> {
    mcds_testkit::store_with_connections(server, 4)
}

fn big(lock: Lock) -> Lock {
    lock.with_owner_label(&"x".repeat(200)).unwrap()
}

#[test]
fn cancelled_acquire_outside_runtime_is_cleaned_up() {
    for (name, server) in [
        ("normal", MemcachedServer::start_default()),
        ("markerless", mcds_testkit::markerless_server()),
    ] {
        let store = store4(&server);
        let lock = big(Lock::new(Arc::clone(&store), "out", Duration::from_secs(30)).unwrap());
        assert!(lock.holder().unwrap().is_none());
        let mut held = Vec::new();
        let mut cancels = 0;
        for _ in 0..30 {
            if cancel_once(&lock) {
                cancels += 1;
            }
            if let Some(h) = wait_free(&lock, Duration::from_secs(2)) {
                held.push(h);
                break;
            }
        }
        println!("{name}: {cancels} cancels outside a runtime; stranded: {held:?}");
        assert!(held.is_empty(), "{name}: stranded {held:?}");
    }
}

#[test]
fn async_guard_dropped_outside_runtime_markerless() {
    let server = mcds_testkit::markerless_server();
    let store = store4(&server);
    let lock = big(Lock::new(Arc::clone(&store), "out", Duration::from_secs(30)).unwrap());
    let mut waits = Vec::new();
    for i in 0..50 {
        let g = match mcds_core::block_on(lock.acquire_async(Duration::from_secs(2))) {
            Ok(g) => g,
            Err(e) => panic!("iteration {i}: {e:?}; holder {:?}", lock.holder()),
        };
        let t = Instant::now();
        drop(g);
        assert_eq!(wait_free(&lock, Duration::from_secs(3)), None);
        waits.push(t.elapsed());
    }
    waits.sort();
    println!(
        "markerless, 50 async guards dropped outside a runtime: median {:?} max {:?}",
        waits[25], waits[49]
    );
}
