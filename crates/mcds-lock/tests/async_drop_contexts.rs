//! An async guard dropped in unusual places of a current-thread
//! runtime, then the runtime ended in unusual ways. Each case: 20 locks;
//! every lock must be free within 1 s of the runtime's end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::{Guard, Lock};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn held_after(lock: &Lock, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        if lock.holder().unwrap().is_none() {
            return false;
        }
        if Instant::now() > deadline {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn check(case: &str, run: impl Fn(tokio::runtime::Runtime, Guard)) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let mut held = 0;
    for i in 0..20 {
        let lock = Lock::new(
            Arc::clone(&store),
            &format!("r8-ctx-{case}-{i}"),
            Duration::from_secs(60),
        )
        .unwrap();
        let rt = current_thread();
        let g = rt
            .block_on(lock.acquire_async(Duration::from_secs(5)))
            .unwrap();
        run(rt, g);
        if held_after(&lock, Duration::from_secs(1)) {
            held += 1;
        }
    }
    println!("{case}: {held} of 20 held 1 s after the runtime ended");
    assert_eq!(held, 0, "{case}");
}

#[test]
fn dropped_in_spawn_blocking_then_shutdown_timeout_zero() {
    check("spawn_blocking", |rt, g| {
        rt.block_on(async {
            tokio::task::spawn_blocking(move || drop(g)).await.unwrap();
        });
        rt.shutdown_timeout(Duration::ZERO);
    });
}

#[test]
fn dropped_in_local_set_task_then_shutdown_background() {
    check("local_set", |rt, g| {
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            tokio::task::spawn_local(async move { drop(g) })
                .await
                .unwrap();
        });
        drop(local);
        rt.shutdown_background();
    });
}

#[test]
fn dropped_in_a_task_left_pending_when_the_runtime_drops() {
    check("pending_task", |rt, g| {
        rt.block_on(async {
            tokio::spawn(async move {
                let _g = g;
                std::future::pending::<()>().await;
            });
            tokio::task::yield_now().await;
        });
        drop(rt);
    });
}

#[test]
fn runtime_dropped_inside_another_runtimes_spawn_blocking() {
    let outer = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let handle = outer.handle().clone();
    check("inner_rt_in_spawn_blocking", move |rt, g| {
        handle.block_on(async move {
            tokio::task::spawn_blocking(move || {
                rt.block_on(async { drop(g) });
                drop(rt);
            })
            .await
            .unwrap();
        });
    });
}
