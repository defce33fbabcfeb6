//! Async lock calls driven by another executor on a tokio runtime's
//! thread. An adversarial review found that a first fix for cancelled
//! acquires (each attempt spawned as a tokio task and awaited) hung a
//! caller that drives `acquire_async`/`try_acquire_async` with
//! `mcds_core::block_on` on a thread that is a runtime's driver: the
//! spawned attempt could never run. The attempt runs in place again (the
//! backend's I/O does not need tokio), and a cancelled one is cleaned up
//! by a task nobody waits for (`Abandoned` in `mcds-lock`).

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// Run `f` on a thread of its own; its result, or `None` if it has not
/// returned within `limit` (the thread is then left blocked; it dies with
/// the test process).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

fn lock(server: &MemcachedServer, name: &str) -> Lock {
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    Lock::new(store, name, Duration::from_secs(30)).unwrap()
}

/// A `#[tokio::test]`/`#[tokio::main(flavor = "current_thread")]` program
/// whose synchronous helper drives the async API with `mcds_core::block_on`.
#[test]
fn try_acquire_async_under_block_on_on_a_current_thread_runtime_returns() {
    let server = MemcachedServer::start_default();
    let lock = lock(&server, "ct-block-on");
    let probe = lock.clone();
    let got = within(Duration::from_secs(5), move || {
        let rt = mcds_testkit::current_thread_runtime();
        rt.block_on(async move {
            // A sync helper, called from async code, that blocks on the
            // async API with a plain executor.
            let guard = mcds_core::block_on(lock.try_acquire_async());
            guard.map(|g| g.map(|g| g.owner_token().to_string()))
        })
    });
    println!("try_acquire_async under mcds_core::block_on in a current_thread runtime: {got:?}");
    println!("holder afterwards: {:?}", probe.holder());
    assert!(
        got.is_some(),
        "try_acquire_async driven by mcds_core::block_on on a current_thread tokio runtime's \
         thread never returned (5 s): its attempt was spawned onto the runtime this thread \
         is blocking, and awaited (hang)"
    );
}

/// The same with `acquire_async` (a wait with a timeout): even the timeout
/// does not end it, since every attempt is a task that cannot run.
#[test]
fn acquire_async_under_block_on_on_a_current_thread_runtime_returns() {
    let server = MemcachedServer::start_default();
    let lock = lock(&server, "ct-block-on-wait");
    let got = within(Duration::from_secs(5), move || {
        let rt = mcds_testkit::current_thread_runtime();
        rt.block_on(async move {
            mcds_core::block_on(lock.acquire_async(Duration::from_secs(1)))
                .map(|g| g.owner_token().to_string())
        })
    });
    println!("acquire_async(1 s) under mcds_core::block_on in a current_thread runtime: {got:?}");
    assert!(
        got.is_some(),
        "acquire_async(timeout 1 s) driven by mcds_core::block_on on a current_thread tokio \
         runtime's thread did not return within 5 s (hang: its own timeout cannot fire)"
    );
}

/// Coverage: the supported forms keep working. From `spawn_blocking` on a
/// current_thread runtime (the runtime's thread is free to run the
/// attempt), and from a thread with no runtime at all.
#[test]
fn acquire_async_from_spawn_blocking_and_without_a_runtime() {
    let server = MemcachedServer::start_default();
    let lock = lock(&server, "spawn-blocking");
    let l = lock.clone();
    let got = within(Duration::from_secs(10), move || {
        let rt = mcds_testkit::current_thread_runtime();
        rt.block_on(async move {
            tokio::task::spawn_blocking(move || {
                let g = mcds_core::block_on(l.acquire_async(Duration::from_secs(2))).unwrap();
                let token = g.owner_token().to_string();
                mcds_core::block_on(g.release_async()).unwrap();
                token
            })
            .await
            .unwrap()
        })
    });
    assert!(
        got.is_some(),
        "spawn_blocking + block_on(acquire_async) hung"
    );
    assert!(lock.holder().unwrap().is_none(), "released");
    let l = lock.clone();
    let got = within(Duration::from_secs(10), move || {
        let g = mcds_core::block_on(l.acquire_async(Duration::from_secs(2))).unwrap();
        drop(g); // an async guard dropped outside any runtime: a release thread
    });
    assert!(
        got.is_some(),
        "block_on(acquire_async) without a runtime hung"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while lock.holder().unwrap().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "a dropped async guard was not released in 3 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A multi-thread runtime (2 workers): a task that blocks its worker in
/// `mcds_core::block_on(lock.try_acquire_async())`, 4 at once. The attempt
/// tasks they spawn land in the blocked workers' own queues.
#[test]
fn try_acquire_async_under_block_on_in_multi_thread_tasks_returns() {
    let server = MemcachedServer::start_default();
    let lock = lock(&server, "mt-block-on");
    let got = within(Duration::from_secs(5), move || {
        let rt = mcds_testkit::runtime();
        rt.block_on(async move {
            let tasks: Vec<_> = (0..4)
                .map(|_| {
                    let lock = lock.clone();
                    tokio::spawn(async move {
                        let g = mcds_core::block_on(lock.try_acquire_async()).unwrap();
                        if let Some(g) = g {
                            mcds_core::block_on(g.release_async()).unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        })
    });
    println!("4 tasks on a 2-worker runtime, each block_on(try_acquire_async): {got:?}");
    assert!(
        got.is_some(),
        "tasks on a 2-worker multi-thread runtime that drive try_acquire_async with \
         mcds_core::block_on never finished (5 s): the workers are blocked awaiting attempt \
         tasks that only they could run"
    );
}
