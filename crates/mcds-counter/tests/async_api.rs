//! The async API of `Counter`, on the embedded store and on real memcached
//! (one server and a pool of three): many tokio tasks on one store are
//! exact, share a fixed number of connections, and faults (kill -9,
//! SIGSTOP) reach them as clear errors within the timeout, never a hang.

use mcds_testkit::runtime;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{MemoryStore, Store};
use mcds_counter::Counter;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};

const TASKS: usize = 64;
const PER_TASK: u64 = 200;

/// 64 tasks × 200 `incr_async` on one counter, plus one `incr_many_async`
/// per task on its own counters: every increment is counted once.
fn many_tasks_are_exact(store: Arc<dyn Store>) {
    let rt = runtime();
    let shared = Counter::new(store.clone(), "async-shared").unwrap();
    shared.reset().unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| {
                let (shared, store) = (shared.clone(), store.clone());
                tokio::spawn(async move {
                    let mine = Counter::new(store.clone(), &format!("async-{t}")).unwrap();
                    let other = Counter::new(store, &format!("async-other-{t}")).unwrap();
                    mine.reset_async().await.unwrap();
                    other.reset_async().await.unwrap();
                    for _ in 0..PER_TASK {
                        shared.incr_async(1).await.unwrap();
                    }
                    let new =
                        Counter::incr_many_async(&[(&mine, 2), (&other, 3), (&mine, 5)]).await;
                    let new: Vec<u64> = new.into_iter().map(Result::unwrap).collect();
                    assert_eq!(new, [2, 3, 7]);
                    assert_eq!(mine.decr_async(1).await.unwrap(), 6);
                    assert_eq!(mine.get_async().await.unwrap(), 6);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(shared.get().unwrap(), TASKS as u64 * PER_TASK);
}

#[test]
fn many_tasks_on_the_embedded_store() {
    many_tasks_are_exact(Arc::new(MemoryStore::new()));
}

#[test]
fn many_tasks_on_memcached_share_the_stores_connections() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    many_tasks_are_exact(store.clone());
    let stats = store.connection_stats();
    println!("64 tasks on one server: {stats:?}");
    // At most 4 shared connections (the default), and with
    // mcds-memcached's `tokio` feature as many again for async callers
    // that drive their own.
    assert!(stats.open <= 8, "{stats:?}");
    assert!(
        stats.requests > stats.writes,
        "some writes carried several requests: {stats:?}"
    );
}

#[test]
fn many_tasks_on_a_pool_of_three() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let store = Arc::new(MemcachedStore::builder().connect(pool.addrs()).unwrap());
    many_tasks_are_exact(store.clone());
    let stats = store.connection_stats();
    println!("64 tasks on a pool of 3: {stats:?}");
    assert!(stats.open <= 24, "{stats:?}");
}

const TIMEOUT: Duration = Duration::from_millis(500);
/// What one op may take: the timeout plus 100 ms (plus a connect timeout
/// when it had to dial).
const BOUND: Duration = Duration::from_millis(1100);

fn fault_store(addr: &str) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .io_timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .connect([addr])
            .unwrap(),
    )
}

/// Run `tasks` tasks of `incr_async` until `stop`, timing each op; the ops'
/// outcomes as (started, took, ok).
async fn load(counter: Counter, tasks: usize, stop: Instant) -> Vec<(Instant, Duration, bool)> {
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut out = Vec::new();
                while Instant::now() < stop {
                    let started = Instant::now();
                    let ok = counter.incr_async(1).await.is_ok();
                    out.push((started, started.elapsed(), ok));
                    if !ok {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
                out
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    all
}

#[test]
fn kill_and_restart_reach_async_callers_as_errors() {
    let mut server = MemcachedServer::start_default();
    let store = fault_store(&server.addr());
    let counter = Counter::new(store.clone() as Arc<dyn Store>, "async-faults").unwrap();
    let rt = runtime();
    let start = Instant::now();
    let stop = start + Duration::from_millis(2500);
    let outcomes = std::thread::scope(|s| {
        let load = s.spawn(|| rt.block_on(load(counter.clone(), 16, stop)));
        std::thread::sleep(Duration::from_millis(500));
        server.kill();
        std::thread::sleep(Duration::from_millis(500));
        server.restart();
        load.join().unwrap()
    });
    let restarted = start + Duration::from_millis(1000);
    let failed = outcomes.iter().filter(|o| !o.2).count();
    let slowest = outcomes.iter().map(|o| o.1).max().unwrap();
    println!(
        "async, kill -9 and restart: {} ops, {failed} failed, slowest {slowest:?}",
        outcomes.len()
    );
    assert!(failed > 0, "the kill was seen");
    assert!(slowest <= BOUND, "an op took {slowest:?}");
    assert!(
        outcomes
            .iter()
            .any(|o| o.0 > restarted + Duration::from_millis(600) && o.2),
        "ops succeed again after the restart"
    );
}

#[test]
fn a_frozen_server_times_out_async_callers_then_resumes() {
    let server = MemcachedServer::start_default();
    let store = fault_store(&server.addr());
    let counter = Counter::new(store.clone() as Arc<dyn Store>, "async-frozen").unwrap();
    let rt = runtime();
    let start = Instant::now();
    let stop = start + Duration::from_millis(3000);
    let (outcomes, resumed) = std::thread::scope(|s| {
        let load = s.spawn(|| rt.block_on(load(counter.clone(), 16, stop)));
        std::thread::sleep(Duration::from_millis(500));
        server.pause();
        std::thread::sleep(Duration::from_millis(1200));
        server.resume();
        let resumed = Instant::now();
        (load.join().unwrap(), resumed)
    });
    let failed = outcomes.iter().filter(|o| !o.2).count();
    let slowest = outcomes.iter().map(|o| o.1).max().unwrap();
    println!(
        "async, SIGSTOP 1.2 s: {} ops, {failed} failed, slowest {slowest:?}",
        outcomes.len()
    );
    assert!(failed > 0, "the pause was seen");
    assert!(slowest <= BOUND, "an op took {slowest:?}");
    assert!(
        outcomes
            .iter()
            .any(|o| o.0 > resumed + Duration::from_millis(200) && o.2),
        "ops succeed again after the resume"
    );
}
