//! The async API of `Lock`, on the embedded store and on real memcached:
//! mutual exclusion among many tokio tasks, auto-extension as a task, the
//! release of a dropped guard handed to the runtime, and faults (kill -9,
//! SIGSTOP) reaching async callers as errors within the timeout.

use mcds_testkit::runtime;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{MemoryStore, Store};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// 16 tasks × 10 turns through `with_lock_async`; inside, a read-yield-write
/// of a plain counter: any overlap would lose an update, and the count of
/// tasks inside never exceeds one.
fn tasks_exclude_each_other(store: Arc<dyn Store>) {
    let rt = runtime();
    let lock = Lock::new(store, "async-mutex", Duration::from_secs(10))
        .unwrap()
        .with_backoff(Duration::from_micros(200), Duration::from_millis(5));
    let inside = Arc::new(AtomicUsize::new(0));
    let total = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (lock, inside, total) = (lock.clone(), inside.clone(), total.clone());
                tokio::spawn(async move {
                    for _ in 0..10 {
                        let (_, release) = lock
                            .with_lock_async(Duration::from_secs(20), async |_guard| {
                                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                                let seen = total.load(Ordering::SeqCst);
                                tokio::task::yield_now().await;
                                total.store(seen + 1, Ordering::SeqCst);
                                inside.fetch_sub(1, Ordering::SeqCst);
                            })
                            .await
                            .unwrap();
                        assert_eq!(release, Release::Released);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(total.load(Ordering::SeqCst), 160);
}

#[test]
fn tasks_exclude_each_other_on_the_embedded_store() {
    tasks_exclude_each_other(Arc::new(MemoryStore::new()));
}

#[test]
fn tasks_exclude_each_other_on_memcached() {
    let server = MemcachedServer::start_default();
    tasks_exclude_each_other(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
}

/// A 1 s lease kept for 3.5 s by `auto_extend_async` (a task, not a
/// thread): nobody else gets in meanwhile; after release, the lock is free.
/// Real memcached expiry is under test, so this sleeps.
#[test]
fn auto_extend_async_keeps_the_lease_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(store, "async-renewed", Duration::from_secs(1)).unwrap();
    let rt = runtime();
    rt.block_on(async {
        let mut guard = lock.acquire_async(Duration::from_secs(1)).await.unwrap();
        guard.auto_extend_async(Duration::from_secs(1)).unwrap();
        let until = Instant::now() + Duration::from_millis(3500);
        while Instant::now() < until {
            assert!(
                lock.try_acquire_async().await.unwrap().is_none(),
                "the lease expired under auto-extension"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert!(!guard.is_lost());
        assert_eq!(guard.release_async().await.unwrap(), Release::Released);
        let again = lock.try_acquire_async().await.unwrap();
        assert!(again.is_some(), "free after the release");
        again.unwrap().release_async().await.unwrap();
    });
}

/// Dropping an async guard does not block: the release runs on a task, and
/// the lock is free soon after (long before its 30 s lease would end).
#[test]
fn a_dropped_async_guard_is_released_by_the_runtime() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(store, "async-dropped", Duration::from_secs(30)).unwrap();
    let rt = runtime();
    rt.block_on(async {
        let guard = lock.acquire_async(Duration::from_secs(1)).await.unwrap();
        drop(guard);
        let again = lock.acquire_async(Duration::from_secs(5)).await.unwrap();
        again.release_async().await.unwrap();
    });
    // Outside a runtime, the release goes to a thread.
    let guard = mcds_core::block_on(lock.acquire_async(Duration::from_secs(1))).unwrap();
    drop(guard);
    let again = lock.acquire(Duration::from_secs(5)).unwrap();
    again.release().unwrap();
}

const TIMEOUT: Duration = Duration::from_millis(500);
const BOUND: Duration = Duration::from_millis(1100);

/// Tasks taking turns on a lock while the server is killed and restarted,
/// then paused: every call ends within the bound, and the lock is never
/// held by two tasks at once.
#[test]
fn faults_reach_async_lock_callers_as_errors() {
    let mut server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .io_timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .connect([server.addr()])
            .unwrap(),
    );
    let lock = Lock::new(store, "async-faults", Duration::from_secs(2)).unwrap();
    let rt = runtime();
    let inside = Arc::new(AtomicUsize::new(0));
    let stop = Instant::now() + Duration::from_millis(4000);
    let (outcomes, _) = std::thread::scope(|s| {
        let load = s.spawn(|| {
            rt.block_on(async {
                let tasks: Vec<_> = (0..8)
                    .map(|_| {
                        let (lock, inside) = (lock.clone(), inside.clone());
                        tokio::spawn(async move {
                            let mut out = Vec::new();
                            while Instant::now() < stop {
                                let started = Instant::now();
                                let got = lock.try_acquire_async().await;
                                out.push((started.elapsed(), got.is_ok()));
                                if let Ok(Some(guard)) = got {
                                    assert_eq!(
                                        inside.fetch_add(1, Ordering::SeqCst),
                                        0,
                                        "two holders"
                                    );
                                    tokio::time::sleep(Duration::from_millis(2)).await;
                                    inside.fetch_sub(1, Ordering::SeqCst);
                                    let started = Instant::now();
                                    let released = guard.release_async().await;
                                    out.push((started.elapsed(), released.is_ok()));
                                } else {
                                    tokio::time::sleep(Duration::from_millis(5)).await;
                                }
                            }
                            out
                        })
                    })
                    .collect();
                let mut all = Vec::new();
                for t in tasks {
                    all.extend(t.await.unwrap());
                }
                all
            })
        });
        std::thread::sleep(Duration::from_millis(500));
        server.kill();
        std::thread::sleep(Duration::from_millis(500));
        server.restart();
        std::thread::sleep(Duration::from_millis(1000));
        server.pause();
        std::thread::sleep(Duration::from_millis(800));
        server.resume();
        (load.join().unwrap(), ())
    });
    let failed = outcomes.iter().filter(|o| !o.1).count();
    let slowest = outcomes.iter().map(|o| o.0).max().unwrap();
    println!(
        "async lock under kill -9, restart, SIGSTOP: {} calls, {failed} failed, slowest {slowest:?}",
        outcomes.len()
    );
    assert!(failed > 0, "the faults were seen");
    assert!(slowest <= BOUND, "a call took {slowest:?}");
}
