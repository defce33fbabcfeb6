//! From an adversarial review: async guards with an `auto_extend_async` renewer, held by
//! tasks that are still running when the runtime is dropped (a
//! `#[tokio::main]` returning with background tasks). The task is dropped
//! at shutdown, with the guard inside it: its release must still happen
//! (the background release, run blocking if its task is dropped
//! unfinished), without a panic or a hang, and the lock must be free at
//! once, not after its TTL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn check(rt: tokio::runtime::Runtime, flavor: &str, renew: bool) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let locks: Vec<Lock> = (0..4)
        .map(|i| {
            Lock::new(
                Arc::clone(&store),
                &format!("bg{i}"),
                Duration::from_secs(30),
            )
            .unwrap()
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    for lock in &locks {
        let (lock, tx) = (lock.clone(), tx.clone());
        rt.spawn(async move {
            let mut g = lock.acquire_async(Duration::from_secs(2)).await.unwrap();
            if renew {
                g.auto_extend_async(Duration::from_secs(30)).unwrap();
            }
            tx.send(()).unwrap();
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop(g);
        });
    }
    // One guard dropped by the main future just before the runtime ends.
    let last = locks[0].clone();
    let extra = Lock::new(Arc::clone(&store), "main", Duration::from_secs(30)).unwrap();
    let extra2 = extra.clone();
    rt.block_on(async move {
        for _ in 0..4 {
            while rx.try_recv().is_err() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let mut g = extra2.try_acquire_async().await.unwrap().unwrap();
        if renew {
            g.auto_extend_async(Duration::from_secs(30)).unwrap();
        }
        drop(g);
        let _ = last;
    });
    let started = Instant::now();
    drop(rt);
    let shutdown = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut held: Vec<String>;
    loop {
        held = locks
            .iter()
            .chain([&extra])
            .filter(|l| l.holder().unwrap().is_some())
            .map(|l| l.name().to_string())
            .collect();
        if held.is_empty() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    println!(
        "{flavor}, renewer {renew}: runtime dropped in {shutdown:?}; still held 2 s later: {held:?}"
    );
    assert!(
        held.is_empty(),
        "{flavor} (auto_extend_async: {renew}): locks {held:?} stayed held after the runtime was dropped (their TTL is 30 s)"
    );
}

#[test]
fn guards_in_tasks_dropped_at_shutdown_are_released_multi_thread() {
    check(mcds_testkit::runtime(), "multi_thread", true);
}

#[test]
fn guards_in_tasks_dropped_at_shutdown_are_released_current_thread() {
    check(
        mcds_testkit::current_thread_runtime(),
        "current_thread",
        true,
    );
}

#[test]
fn guards_without_renewer_in_tasks_dropped_at_shutdown_are_released_multi_thread() {
    check(mcds_testkit::runtime(), "multi_thread", false);
}

#[test]
fn guards_without_renewer_in_tasks_dropped_at_shutdown_are_released_current_thread() {
    check(
        mcds_testkit::current_thread_runtime(),
        "current_thread",
        false,
    );
}
