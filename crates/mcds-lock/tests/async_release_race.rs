//! A dropped async guard's background release (a thread, on a
//! current-thread runtime) racing a re-acquire of the same lock, and its
//! own `unfinished` fallback when the runtime is dropped at once. The new
//! holder's item must survive both: after each round the next guard must
//! still hold the lock, and release it as `Released`.
//!
//! Random pauses; the seed is printed (`MCDS_TEST_SEED` replays).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use rand::RngExt;

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn reacquire_after_background_release_and_runtime_drop() {
    let mut rng = mcds_testkit::seed::rng("async release race");
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "r8-reacquire", Duration::from_secs(30)).unwrap();
    let rounds = 400;
    let (mut lost, mut stolen, mut slow) = (0, 0, 0);
    let mut waited = Duration::ZERO;
    for round in 0..rounds {
        let rt = current_thread();
        let g1 = rt
            .block_on(lock.acquire_async(Duration::from_secs(5)))
            .unwrap();
        let mode = rng.random_range(0..3u32);
        let pause = Duration::from_micros(rng.random_range(0..600));
        let rt = match mode {
            // Dropped in the runtime, re-acquired on the same runtime.
            0 => {
                rt.block_on(async {
                    drop(g1);
                });
                rt
            }
            // Dropped in the runtime, then the runtime dropped after a
            // pause (its stand-in task runs the fallback, racing the
            // thread), a new runtime re-acquires.
            1 => {
                rt.block_on(async {
                    drop(g1);
                });
                std::thread::sleep(pause);
                drop(rt);
                current_thread()
            }
            // Dropped in the runtime, the runtime dropped at once.
            _ => {
                rt.block_on(async {
                    drop(g1);
                });
                drop(rt);
                current_thread()
            }
        };
        let t = Instant::now();
        let g2 = rt
            .block_on(lock.acquire_async(Duration::from_secs(5)))
            .unwrap();
        let w = t.elapsed();
        waited += w;
        if w > Duration::from_millis(500) {
            slow += 1;
        }
        // Let any straggling release of g1 (thread or fallback) finish.
        std::thread::sleep(pause + Duration::from_millis(2));
        let holder = lock.holder().unwrap();
        if holder.as_deref() != Some(g2.owner_token()) {
            stolen += 1;
            println!(
                "round {round} mode {mode}: holder {holder:?}, guard {}",
                g2.owner_token()
            );
        }
        match rt.block_on(g2.release_async()) {
            Ok(Release::Released) => {}
            other => {
                lost += 1;
                println!("round {round} mode {mode}: release {other:?}");
            }
        }
        drop(rt);
    }
    println!(
        "{rounds} rounds: {stolen} new holders' items gone, {lost} releases not Released, {slow} re-acquires over 500 ms, mean wait {:?}",
        waited / rounds
    );
    assert_eq!((stolen, lost), (0, 0));
}
