//! Found by an adversarial review: an async acquire that is cancelled (its future dropped, as
//! `tokio::time::timeout` or `select!` do) after its `add` was queued.
//! The add is written and applied by the lane's helper thread anyway, and
//! no guard exists to release it: the lock stays held by nobody until its
//! TTL (+2 s) runs out, and every other client waits that long.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, runtime};

/// Poll `acquire_async` exactly once (it queues its add and is pending on
/// the reply), then drop it: a cancellation at its first await. The lock
/// must not be left held by nobody: another client gets it within 3 s
/// (its TTL is 30 s).
#[test]
fn a_cancelled_async_acquire_never_strands_the_lock() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let rt = runtime();
    let lock = Lock::new(Arc::clone(&store), "stranded", Duration::from_secs(30)).unwrap();
    // Warm the connection (the handshake), so the first poll queues the add.
    assert!(lock.holder().unwrap().is_none());
    let mut stranded = None;
    for attempt in 0..20 {
        rt.block_on(async {
            let mut cx = Context::from_waker(Waker::noop());
            let mut acquire = Box::pin(lock.acquire_async(Duration::from_secs(10)));
            match acquire.as_mut().poll(&mut cx) {
                Poll::Ready(Ok(guard)) => {
                    // Finished at once: not a cancellation; give it back.
                    guard.release_async().await.unwrap();
                }
                Poll::Ready(Err(e)) => panic!("acquire: {e}"),
                Poll::Pending => drop(acquire), // cancelled
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        if let Some(holder) = lock.holder().unwrap() {
            stranded = Some((attempt, holder));
            break;
        }
    }
    let Some((attempt, holder)) = stranded else {
        println!("no cancelled acquire left the lock held in 20 attempts");
        return;
    };
    println!(
        "attempt {attempt}: the cancelled acquire left the lock held by {holder:?}, and no guard exists"
    );
    let other = Lock::new(Arc::clone(&store), "stranded", Duration::from_secs(30)).unwrap();
    let started = Instant::now();
    let got = other.acquire(Duration::from_secs(3));
    println!(
        "another client's acquire(3 s): {:?} after {:?}",
        got.as_ref().map(|g| g.owner_token().to_string()),
        started.elapsed()
    );
    assert!(
        got.is_ok(),
        "a cancelled acquire_async left the lock held by {holder:?} with no guard to release it: \
         nobody can take it until its 32 s item expires ({got:?})"
    );
}

/// The everyday form: `tokio::time::timeout(300 ms, lock.acquire_async(..))`
/// while the server is slow (paused 500 ms). The timeout fires, the
/// caller moves on believing it holds nothing; the server then applies the
/// add, and the lock is held by nobody for its whole TTL.
#[test]
fn an_acquire_under_tokio_timeout_on_a_slow_server_never_strands_the_lock() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let rt = runtime();
    let lock = Lock::new(Arc::clone(&store), "slow", Duration::from_secs(30)).unwrap();
    assert!(lock.holder().unwrap().is_none());
    server.pause();
    let timed_out = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_millis(300),
            lock.acquire_async(Duration::from_secs(10)),
        )
        .await
        .is_err()
    });
    assert!(
        timed_out,
        "the server was paused: the acquire cannot finish in 300 ms"
    );
    std::thread::sleep(Duration::from_millis(200));
    server.resume();
    std::thread::sleep(Duration::from_millis(100));
    let holder = lock.holder().unwrap();
    println!("after the timed-out acquire: holder {holder:?}");
    let started = Instant::now();
    let got = lock.acquire(Duration::from_secs(3));
    println!(
        "the next acquire(3 s): {:?} after {:?}",
        got.as_ref().map(|g| g.owner_token().to_string()),
        started.elapsed()
    );
    assert!(
        got.is_ok(),
        "acquire_async cancelled by tokio::time::timeout left the lock held by {holder:?} with no guard: \
         nobody can take it until the item expires ({got:?})"
    );
}

/// An async guard dropped at the end of the runtime's main future (the
/// shape of `#[tokio::main] async fn main() { let _guard = lock.acquire_async(..).await?; work().await; }`):
/// its drop spawns the release as a task, and the runtime ends before the
/// task ever runs. The lock stays held by a finished program until its
/// TTL (+2 s) runs out. (The blocking API's guard releases in `Drop`.)
#[test]
fn an_async_guard_dropped_as_the_runtime_ends_releases_the_lock() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "cron", Duration::from_secs(30)).unwrap();
    let mut stranded = Vec::new();
    for flavor in ["current_thread", "multi_thread"] {
        let rt = match flavor {
            "current_thread" => mcds_testkit::current_thread_runtime(),
            _ => runtime(),
        };
        let token = rt.block_on(async {
            let guard = lock.acquire_async(Duration::from_secs(5)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await; // the work
            guard.owner_token().to_string()
            // guard dropped here
        });
        drop(rt);
        std::thread::sleep(Duration::from_millis(200));
        let holder = lock.holder().unwrap();
        println!(
            "{flavor}: guard {token} dropped at the end of block_on; 200 ms after the runtime ended the holder is {holder:?}"
        );
        if holder.is_some() {
            stranded.push(flavor);
            // Free it for the next flavor (the test's own raw delete).
            let key = String::from_utf8(lock.key().as_bytes().to_vec()).unwrap();
            server.raw(format!("delete {key}\r\n").as_bytes(), |_| true);
        }
    }
    assert!(
        stranded.is_empty(),
        "runtimes {stranded:?}: an async guard dropped at the end of the runtime's main future \
         left the lock held 200 ms after the runtime ended (until its 32 s TTL)"
    );
}

/// The other async guard calls, cancelled after one poll (their write
/// queued): a cancelled `release_async` still frees the lock (the guard,
/// dropped with the future, releases again), and a cancelled
/// `extend_async` leaves a guard that still extends and releases (it
/// adopts the id its unseen extend gave the item).
#[test]
fn cancelled_release_and_extend_leave_the_lock_consistent() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let rt = runtime();
    let lock = Lock::new(Arc::clone(&store), "calls", Duration::from_secs(30)).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mut checked = 0;
    for round in 0..20 {
        rt.block_on(async {
            let guard = lock.acquire_async(Duration::from_secs(5)).await.unwrap();
            // A cancelled extend, then a real one and a real release.
            {
                let mut extend = Box::pin(guard.extend_async(Duration::from_secs(30)));
                let _ = extend.as_mut().poll(&mut cx);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            assert_eq!(
                guard.extend_async(Duration::from_secs(30)).await.unwrap(),
                mcds_lock::Extend::Extended,
                "round {round}: extend after a cancelled extend"
            );
            if round % 2 == 0 {
                assert_eq!(
                    guard.release_async().await.unwrap(),
                    mcds_lock::Release::Released,
                    "round {round}"
                );
            } else {
                let mut release = Box::pin(guard.release_async());
                let _ = release.as_mut().poll(&mut cx);
                drop(release); // cancelled: the guard inside is dropped too
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        });
        assert!(
            lock.holder().unwrap().is_none(),
            "round {round}: the lock is still held after a (cancelled) release"
        );
        checked += 1;
    }
    println!("{checked} rounds of cancelled extend + release, lock free after each");
}
