//! The async Lock path on real memcached, with two stores standing for two
//! processes (cases found by an adversarial review).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn store(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_millis(500))
            .down_backoff(Duration::from_millis(10), Duration::from_millis(50))
            .connect([server.addr()])
            .unwrap(),
    )
}

/// The raw CAS id of `key` on the server (the kit's own connection).
fn raw_cas(server: &MemcachedServer, key: &str) -> Option<u64> {
    let lines = server.raw(format!("mg {key} c\r\n").as_bytes(), |l| {
        l.starts_with("HD") || l.starts_with("EN") || l.contains("ERROR")
    });
    let line = lines.last()?;
    line.split(' ')
        .find_map(|f| f.strip_prefix('c'))
        .and_then(|c| c.parse().ok())
}

/// A holds the lock (async, store 1); memcached is killed -9 and restarted;
/// B (store 2) takes the lock after the restart, with its item's raw CAS id
/// made equal to the one A holds. A's async release (and extend) must not
/// touch B's lock: the lock is never held by two at once after that.
#[test]
fn an_async_release_after_a_restart_never_frees_the_next_holders_lock() {
    let mut server = MemcachedServer::start_default();
    let (s1, s2) = (store(&server), store(&server));
    let rt = runtime();
    let lock1 = Lock::new(s1.clone(), "review", Duration::from_secs(30)).unwrap();
    let lock2 = Lock::new(s2.clone(), "review", Duration::from_secs(30)).unwrap();
    let key = String::from_utf8(lock1.key().as_bytes().to_vec()).unwrap();
    rt.block_on(async {
        // Move the CAS counter up a little, so A's id is not tiny.
        for i in 0..20 {
            s1.set(
                &mcds_core::Key::new(format!("pump{i}")).unwrap(),
                b"x",
                mcds_core::Ttl::Never,
            )
            .unwrap();
        }
        let a = lock1
            .try_acquire_async()
            .await
            .unwrap()
            .expect("A gets the lock");
        let cas_a = raw_cas(&server, &key).expect("A's item");
        server.restart();
        // B takes the lock with the same raw CAS id as A's.
        let mut b = None;
        for attempt in 0..200 {
            let guard = lock2.try_acquire_async().await;
            let Ok(Some(guard)) = guard else {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            let cas_b = raw_cas(&server, &key).unwrap();
            if cas_b == cas_a {
                println!("B holds the lock with raw CAS id {cas_b} = A's (attempt {attempt})");
                b = Some(guard);
                break;
            }
            if cas_b > cas_a {
                panic!("overshot: B's raw CAS {cas_b} > A's {cas_a}");
            }
            guard.release_async().await.unwrap();
            // Pump the counter to just below A's id.
            let pump = cas_a.saturating_sub(cas_b).saturating_sub(3);
            for _ in 0..pump {
                server.raw(b"ms pump 1\r\nx\r\n", |l| {
                    l.starts_with("HD") || l.contains("ERROR")
                });
            }
        }
        let b = b.expect("B got the lock with A's raw CAS id");
        let extended = a.extend_async(Duration::from_secs(30)).await;
        println!("A's extend after the restart: {extended:?}");
        let released = a.release_async().await;
        println!("A's release after the restart: {released:?}");
        assert!(
            !matches!(released, Ok(Release::Released)),
            "A released a lock it no longer held"
        );
        assert_eq!(
            raw_cas(&server, &key),
            Some(cas_a),
            "B's lock item was touched by A"
        );
        // C cannot get the lock while B holds it.
        let lock3 = Lock::new(store(&server), "review", Duration::from_secs(30)).unwrap();
        assert!(
            lock3.try_acquire_async().await.unwrap().is_none(),
            "granted twice"
        );
        assert_eq!(b.release_async().await.unwrap(), Release::Released);
    });
}

/// Two stores (two processes), 8 tokio tasks each, async acquire with a
/// short TTL + auto_extend_async, async guard drops (release handed to a
/// task) mixed with release_async; the server is frozen for 300 ms in the
/// middle. Never two holders at once while each holder's lease is certain.
#[test]
fn two_stores_async_tasks_never_hold_the_lock_together() {
    let server = MemcachedServer::start_default();
    let (s1, s2) = (store(&server), store(&server));
    let rt = runtime();
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let turns = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for (n, s) in [s1, s2].into_iter().enumerate() {
            for t in 0..8 {
                let lock = Lock::new(s.clone(), "two-stores", Duration::from_secs(3))
                    .unwrap()
                    .with_backoff(Duration::from_micros(500), Duration::from_millis(10));
                let (inside, overlaps, turns) = (inside.clone(), overlaps.clone(), turns.clone());
                tasks.push(tokio::spawn(async move {
                    let until = Instant::now() + Duration::from_secs(3);
                    let mut i = 0u64;
                    while Instant::now() < until {
                        i += 1;
                        let Ok(mut guard) = lock.acquire_async(Duration::from_millis(800)).await
                        else {
                            continue;
                        };
                        let _ = guard.auto_extend_async(Duration::from_secs(3));
                        if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                            eprintln!("store {n} task {t}: another holder inside");
                        }
                        tokio::time::sleep(Duration::from_micros(300)).await;
                        inside.fetch_sub(1, Ordering::SeqCst);
                        turns.fetch_add(1, Ordering::SeqCst);
                        if i % 2 == 0 {
                            drop(guard); // release handed to a task
                        } else {
                            let _ = guard.release_async().await;
                        }
                    }
                }));
            }
        }
        tokio::time::sleep(Duration::from_millis(1000)).await;
        server.pause();
        tokio::time::sleep(Duration::from_millis(300)).await;
        server.resume();
        for t in tasks {
            t.await.unwrap();
        }
    });
    println!(
        "turns {}, overlaps {}, in {:?}",
        turns.load(Ordering::SeqCst),
        overlaps.load(Ordering::SeqCst),
        started.elapsed()
    );
    assert_eq!(overlaps.load(Ordering::SeqCst), 0);
    assert!(turns.load(Ordering::SeqCst) > 10);
}

/// A guard taken with `try_acquire_async` on a current-thread runtime, kept
/// by `auto_extend_async`. The server freezes just as a renewal is in
/// flight (the renewer holds the guard's CAS mutex across the await), and
/// the task then calls the blocking `Guard::release` (a public method of
/// every guard). The release must end (an error within its timeout is
/// fine) and the runtime must go on once the server is back.
#[test]
fn a_blocking_release_while_the_async_renewer_is_in_flight_ends() {
    let server = Arc::new(MemcachedServer::start_default());
    let s = store(&server);
    let (tx, rx) = std::sync::mpsc::channel();
    let srv = server.clone();
    std::thread::spawn(move || {
        let rt = mcds_testkit::current_thread_runtime();
        let out = rt.block_on(async move {
            let lock = Lock::new(s, "renewer", Duration::from_secs(3)).unwrap();
            let mut guard = lock.try_acquire_async().await.unwrap().unwrap();
            // Renewals every 333 ms.
            guard.auto_extend_async(Duration::from_secs(1)).unwrap();
            tokio::time::sleep(Duration::from_millis(280)).await;
            // (REVIEW_NO_PAUSE=1: the control, without the freeze.)
            if std::env::var("REVIEW_NO_PAUSE").is_err() {
                srv.pause();
            }
            // Let the renewer send its extend into the frozen server.
            tokio::time::sleep(Duration::from_millis(120)).await;
            let started = Instant::now();
            let r = guard.release();
            format!("{r:?} after {:?}", started.elapsed())
        });
        let _ = tx.send(out);
    });
    std::thread::sleep(Duration::from_millis(1000));
    server.resume();
    match rx.recv_timeout(Duration::from_secs(8)) {
        Ok(out) => println!("blocking release: {out}"),
        Err(_) => panic!(
            "the blocking release never returned (8 s after the server resumed): the runtime's thread is parked in block_on waiting for the guard's CAS mutex, held by the renewer task that only this thread can run"
        ),
    }
}
