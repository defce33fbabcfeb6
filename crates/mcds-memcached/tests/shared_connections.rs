//! The shared connections (lanes, `mux.rs`) and the async path, against
//! real memcached. Each test prints what it measured;
//! random tests print their seed (`MCDS_TEST_SEED=<n>` replays one).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;

use support::{Rng, k, runtime, seed};

use mcds_core::{Error, Key, Op, Reply, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions, ServerPool};

/// A key of the given server of a pool store.
fn key_on(store: &MemcachedStore, server: usize, tag: &str) -> Key {
    for i in 0.. {
        let key = k(&format!("{tag}-{i}"));
        if store.server_for(&key) == server {
            return key;
        }
    }
    unreachable!()
}

/// One caller's `incr` of a key holding text answers `CLIENT_ERROR`: that
/// error is its own. Other callers whose requests shared the write (one
/// connection, `connections_per_server(1)`) did nothing wrong and must not
/// see an error.
#[test]
fn a_client_error_of_one_caller_fails_no_other_caller() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_secs(2))
            .connect([server.addr()])
            .unwrap(),
    );
    store.set(&k("text"), b"not a number", Ttl::Never).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let bad = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            let mut other = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match store.incr(&k("text"), 1) {
                    Err(Error::NonNumeric { .. }) => n += 1,
                    r => other.push(format!("{r:?}")),
                }
            }
            (n, other)
        })
    };
    let errors = Arc::new(Mutex::new(Vec::new()));
    let ops = Arc::new(AtomicU64::new(0));
    let innocent: Vec<_> = (0..8)
        .map(|t| {
            let (store, errors, ops) = (store.clone(), errors.clone(), ops.clone());
            std::thread::spawn(move || {
                let key = k(&format!("innocent-{t}"));
                for i in 0..400u64 {
                    let set = store.set(&key, i.to_string().as_bytes(), Ttl::Never);
                    if let Err(e) = &set {
                        errors.lock().unwrap().push(format!("set: {e}"));
                    }
                    match store.get(&key) {
                        Ok(Some(item)) if item.value == i.to_string().as_bytes() => {}
                        Ok(other) if set.is_ok() => errors.lock().unwrap().push(format!(
                            "get AFTER A SUCCESSFUL SET: wrong value {:?}, wanted {i}",
                            other.map(|o| String::from_utf8_lossy(&o.value).to_string())
                        )),
                        Ok(_) => {}
                        Err(e) => errors.lock().unwrap().push(format!("get: {e}")),
                    }
                    ops.fetch_add(2, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in innocent {
        t.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let (refused, other) = bad.join().unwrap();
    let errors = errors.lock().unwrap();
    let stats = store.connection_stats();
    println!(
        "innocent ops {}, their errors {}, incr refusals {refused}, other incr results {:?}, connection stats {stats:?}",
        ops.load(Ordering::Relaxed),
        errors.len(),
        &other[..other.len().min(3)],
    );
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for e in errors.iter() {
        *kinds.entry(e.chars().take(90).collect()).or_default() += 1;
    }
    for (kind, n) in &kinds {
        println!("  {n} x {kind}");
    }
    assert!(
        errors.is_empty(),
        "{} innocent callers' ops failed because another caller's command was refused",
        errors.len()
    );
    assert!(other.is_empty(), "{other:?}");
}

/// A pipeline spanning two servers, one of them frozen (SIGSTOP): single ops
/// on the healthy server, issued by other threads, should not wait for the
/// frozen one.
#[test]
fn a_pipeline_stuck_on_a_frozen_server_does_not_stall_the_healthy_one() {
    let pool = ServerPool::start(2, ServerOptions::default());
    let io_timeout = Duration::from_millis(600);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(io_timeout)
            .connect_timeout(Duration::from_millis(300))
            .connect(pool.addrs())
            .unwrap(),
    );
    let frozen_key = key_on(&store, 0, "frozen");
    let healthy_key = key_on(&store, 1, "healthy");
    // Connections up to both, before the freeze.
    store.set(&frozen_key, b"x", Ttl::Never).unwrap();
    store.set(&healthy_key, b"0", Ttl::Never).unwrap();
    pool.servers[0].pause();
    let pipeliner = {
        let (store, a, b) = (store.clone(), frozen_key.clone(), healthy_key.clone());
        std::thread::spawn(move || {
            // A read on the frozen server, an increment on the healthy one.
            let ops = [Op::Get(&a), Op::Incr { key: &b, delta: 1 }];
            let started = Instant::now();
            let r = store.pipeline(&ops);
            (started.elapsed(), format!("{r:?}"), r[1].is_ok())
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let mut worst = Duration::ZERO;
    let mut errors = Vec::new();
    let until = Instant::now() + Duration::from_millis(900);
    let mut n = 0;
    while Instant::now() < until {
        let started = Instant::now();
        let r = store.incr(&healthy_key, 1);
        worst = worst.max(started.elapsed());
        if let Err(e) = r {
            errors.push(e.to_string());
        }
        n += 1;
    }
    let (pipeline_took, pipeline, healthy_part_ok) = pipeliner.join().unwrap();
    pool.servers[0].resume();
    println!(
        "pipeline took {pipeline_took:?}: {pipeline}\n{n} incr on the healthy server: worst {worst:?}, errors {errors:?}"
    );
    assert!(
        healthy_part_ok,
        "the pipeline's increment on the healthy server failed: {pipeline}"
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        worst < Duration::from_millis(100),
        "an op on the healthy server waited {worst:?} for a pipeline stuck on the frozen one"
    );
}

/// 64 threads on one connection (`connections_per_server(1)`); the server is
/// frozen for 1.5 s. Every op ends within its bound: io_timeout, plus a dial
/// (connect timeout and the handshake's io_timeout) if it had to make one,
/// plus 100 ms.
#[test]
fn sixty_four_callers_on_one_connection_with_a_frozen_server_end_in_time() {
    let server = MemcachedServer::start_default();
    let io_timeout = Duration::from_millis(300);
    let connect_timeout = Duration::from_millis(200);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(io_timeout)
            .connect_timeout(connect_timeout)
            .down_backoff(Duration::from_millis(50), Duration::from_millis(200))
            .connect([server.addr()])
            .unwrap(),
    );
    store.set(&k("warm"), b"1", Ttl::Never).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let worst = Arc::new(Mutex::new((Duration::ZERO, String::new())));
    let counts = Arc::new(Mutex::new(
        std::collections::BTreeMap::<String, usize>::new(),
    ));
    let threads: Vec<_> = (0..64)
        .map(|t| {
            let (store, stop, worst, counts) =
                (store.clone(), stop.clone(), worst.clone(), counts.clone());
            std::thread::spawn(move || {
                let key = k(&format!("c{t}"));
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let r = store.incr_or_init(&key, 1, 0, Ttl::Never);
                    let took = started.elapsed();
                    let what = match &r {
                        Ok(_) => "ok".to_string(),
                        Err(e) => format!("{e}").chars().take(60).collect(),
                    };
                    let mut w = worst.lock().unwrap();
                    if took > w.0 {
                        *w = (took, what.clone());
                    }
                    drop(w);
                    *counts.lock().unwrap().entry(what).or_default() += 1;
                    if r.is_err() {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    server.pause();
    std::thread::sleep(Duration::from_millis(1500));
    server.resume();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let (took, what) = worst.lock().unwrap().clone();
    println!("worst op {took:?} ({what})");
    for (what, n) in counts.lock().unwrap().iter() {
        println!("  {n} x {what}");
    }
    println!("{:?}", store.connection_stats());
    let bound = io_timeout + connect_timeout + io_timeout + Duration::from_millis(100);
    assert!(took <= bound, "an op took {took:?} > {bound:?}");
    assert!(counts.lock().unwrap().get("ok").copied().unwrap_or(0) > 0);
}

/// The same with 64 tokio tasks through the async API.
#[test]
fn sixty_four_async_tasks_on_one_connection_with_a_frozen_server_end_in_time() {
    let server = MemcachedServer::start_default();
    let io_timeout = Duration::from_millis(300);
    let connect_timeout = Duration::from_millis(200);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(io_timeout)
            .connect_timeout(connect_timeout)
            .down_backoff(Duration::from_millis(50), Duration::from_millis(200))
            .connect([server.addr()])
            .unwrap(),
    );
    store.set(&k("warm"), b"1", Ttl::Never).unwrap();
    let rt = runtime();
    let stop = Arc::new(AtomicBool::new(false));
    let worst = Arc::new(Mutex::new((Duration::ZERO, String::new())));
    let counts = Arc::new(Mutex::new(
        std::collections::BTreeMap::<String, usize>::new(),
    ));
    rt.block_on(async {
        let tasks: Vec<_> = (0..64)
            .map(|t| {
                let (store, stop, worst, counts) =
                    (store.clone(), stop.clone(), worst.clone(), counts.clone());
                tokio::spawn(async move {
                    let key = k(&format!("a{t}"));
                    while !stop.load(Ordering::Relaxed) {
                        let started = Instant::now();
                        let op = Op::IncrOrInit {
                            key: &key,
                            delta: 1,
                            initial: 0,
                            ttl: Ttl::Never,
                        };
                        let r =
                            tokio::time::timeout(Duration::from_secs(5), store.execute_async(&op))
                                .await;
                        let took = started.elapsed();
                        let what = match &r {
                            Ok(Ok(_)) => "ok".to_string(),
                            Ok(Err(e)) => format!("{e}").chars().take(60).collect(),
                            Err(_) => "HUNG 5 s".to_string(),
                        };
                        {
                            let mut w = worst.lock().unwrap();
                            if took > w.0 {
                                *w = (took, what.clone());
                            }
                        }
                        let failed = what != "ok";
                        *counts.lock().unwrap().entry(what).or_default() += 1;
                        if failed {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        server.pause();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        server.resume();
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await.unwrap();
        }
    });
    let (took, what) = worst.lock().unwrap().clone();
    println!("worst op {took:?} ({what})");
    for (what, n) in counts.lock().unwrap().iter() {
        println!("  {n} x {what}");
    }
    let bound = io_timeout + connect_timeout + io_timeout + Duration::from_millis(100);
    assert!(took <= bound, "an op took {took:?} > {bound:?}");
    assert!(counts.lock().unwrap().get("ok").copied().unwrap_or(0) > 0);
}

/// Sync threads and tokio tasks mixed on one store over a pool of 3, one
/// connection per server: single ops and pipelines spanning the pool. Each
/// caller owns its keys and checks every reply against what it wrote (a
/// reply handed to the wrong caller shows as a wrong value or counter).
#[test]
fn mixed_sync_and_async_callers_get_their_own_replies() {
    let seed = seed();
    let pool = ServerPool::start(3, ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_secs(3))
            .connect(pool.addrs())
            .unwrap(),
    );
    let wrong = Arc::new(Mutex::new(Vec::<String>::new()));
    let done = Arc::new(AtomicUsize::new(0));
    let sync: Vec<_> = (0..8)
        .map(|t| {
            let (store, wrong, done) = (store.clone(), wrong.clone(), done.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let keys: Vec<Key> = (0..6).map(|i| k(&format!("s{t}-{i}"))).collect();
                let mut counters = vec![0u64; keys.len()];
                for round in 0..150u64 {
                    let i = rng.below(keys.len() as u64) as usize;
                    match rng.below(3) {
                        0 => {
                            let v = format!("s{t}-{round}");
                            store.set(&keys[i], v.as_bytes(), Ttl::Never).unwrap();
                            match store.get(&keys[i]).unwrap() {
                                Some(item) if item.value == v.as_bytes() => {}
                                other => wrong.lock().unwrap().push(format!(
                                    "sync {t}: get {} gave {other:?}, wanted {v}",
                                    keys[i]
                                )),
                            }
                            counters[i] = u64::MAX; // not a counter now
                        }
                        1 => {
                            if counters[i] == u64::MAX {
                                store.delete(&keys[i]).unwrap();
                                counters[i] = 0;
                            }
                            let got = store.incr_or_init(&keys[i], 1, 1, Ttl::Never).unwrap();
                            counters[i] += 1;
                            if got != counters[i] {
                                wrong.lock().unwrap().push(format!(
                                    "sync {t}: counter {} gave {got}, wanted {}",
                                    keys[i], counters[i]
                                ));
                            }
                        }
                        _ => {
                            // A pipeline over all the caller's keys (spans the pool).
                            let ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
                            let replies = store.pipeline(&ops);
                            for (i, r) in replies.into_iter().enumerate() {
                                let ok = match (r.unwrap(), counters[i]) {
                                    (Reply::Item(None), 0) => true,
                                    (Reply::Item(Some(item)), c) if c != u64::MAX => {
                                        item.value == c.to_string().as_bytes()
                                    }
                                    (Reply::Item(Some(item)), _) => {
                                        item.value.starts_with(format!("s{t}-").as_bytes())
                                    }
                                    _ => false,
                                };
                                if !ok {
                                    wrong.lock().unwrap().push(format!(
                                        "sync {t}: pipelined get of {} inconsistent",
                                        keys[i]
                                    ));
                                }
                            }
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let rt = runtime();
    rt.block_on(async {
        let tasks: Vec<_> = (0..24)
            .map(|t| {
                let (store, wrong, done) = (store.clone(), wrong.clone(), done.clone());
                tokio::spawn(async move {
                    let mut rng = Rng(seed ^ (t as u64 + 100).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let keys: Vec<Key> = (0..6).map(|i| k(&format!("a{t}-{i}"))).collect();
                    for round in 0..100u64 {
                        let i = rng.below(keys.len() as u64) as usize;
                        if rng.below(2) == 0 {
                            let v = format!("a{t}-{round}");
                            let set = Op::Set {
                                key: &keys[i],
                                value: v.as_bytes(),
                                ttl: Ttl::Never,
                            };
                            store.execute_async(&set).await.unwrap();
                            let get = Op::Get(&keys[i]);
                            match store.execute_async(&get).await.unwrap() {
                                Reply::Item(Some(item)) if item.value == v.as_bytes() => {}
                                other => wrong
                                    .lock()
                                    .unwrap()
                                    .push(format!("async {t}: get gave {other:?}, wanted {v}")),
                            }
                        } else {
                            // Set every key, then read them all back in one
                            // pipeline (spans the pool).
                            let values: Vec<String> = (0..keys.len())
                                .map(|j| format!("a{t}-{round}-{j}"))
                                .collect();
                            let sets: Vec<Op<'_>> = keys
                                .iter()
                                .zip(&values)
                                .map(|(key, v)| Op::Set {
                                    key,
                                    value: v.as_bytes(),
                                    ttl: Ttl::Never,
                                })
                                .collect();
                            for r in store.pipeline_async(&sets).await {
                                r.unwrap();
                            }
                            let gets: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
                            for (j, r) in store.pipeline_async(&gets).await.into_iter().enumerate()
                            {
                                match r.unwrap() {
                                    Reply::Item(Some(item))
                                        if item.value == values[j].as_bytes() => {}
                                    other => wrong.lock().unwrap().push(format!(
                                        "async {t}: pipelined get gave {other:?}, wanted {}",
                                        values[j]
                                    )),
                                }
                            }
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    for t in sync {
        t.join().unwrap();
    }
    let wrong = wrong.lock().unwrap();
    println!(
        "{} rounds, {} wrong, {:?}",
        done.load(Ordering::Relaxed),
        wrong.len(),
        store.connection_stats()
    );
    assert!(wrong.is_empty(), "{:?}", &wrong[..wrong.len().min(10)]);
}

/// Async requests whose futures are cancelled at random points (a tokio
/// timeout of a few microseconds), interleaved with requests that finish:
/// no later request gets an earlier one's reply.
#[test]
fn cancelled_async_requests_leave_no_reply_behind() {
    let seed = seed();
    let server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .connect([server.addr()])
            .unwrap(),
    );
    let rt = runtime();
    let wrong = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let (store, wrong, cancelled) = (store.clone(), wrong.clone(), cancelled.clone());
                tokio::spawn(async move {
                    let mut rng = Rng(seed ^ (t as u64 + 7).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let key = k(&format!("cancel-{t}"));
                    let mut last: Option<String>;
                    for round in 0..300u64 {
                        let v = format!("{t}-{round}");
                        let set = Op::Set {
                            key: &key,
                            value: v.as_bytes(),
                            ttl: Ttl::Never,
                        };
                        let budget = Duration::from_micros(rng.below(300));
                        match tokio::time::timeout(budget, store.execute_async(&set)).await {
                            Ok(r) => {
                                r.unwrap();
                                last = Some(v.clone());
                            }
                            Err(_) => {
                                cancelled.fetch_add(1, Ordering::Relaxed);
                                // May or may not have been applied.
                                last = None;
                            }
                        }
                        let get = Op::Get(&key);
                        let got = store.execute_async(&get).await.unwrap();
                        if let Some(want) = &last {
                            match got {
                                Reply::Item(Some(item)) if item.value == want.as_bytes() => {}
                                other => {
                                    eprintln!("task {t}: got {other:?}, wanted {want}");
                                    wrong.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        } else if let Reply::Item(Some(item)) = got
                            && !item.value.starts_with(format!("{t}-").as_bytes())
                        {
                            eprintln!("task {t}: another task's value {:?}", item.value);
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    println!(
        "cancelled {}, wrong {}",
        cancelled.load(Ordering::Relaxed),
        wrong.load(Ordering::Relaxed)
    );
    assert_eq!(wrong.load(Ordering::Relaxed), 0);
}

/// Threads named `mcds-lane` (the async helpers) alive in this process.
fn lane_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "mcds-lane")
        .count()
}

/// Stores dropped while async requests are in flight (their tasks aborted,
/// the server frozen so requests sit in the lanes): no panic, no helper
/// thread left behind.
#[test]
fn dropping_a_store_with_async_requests_in_flight() {
    let server = MemcachedServer::start_default();
    let rt = runtime();
    let before = lane_threads();
    for round in 0..5 {
        let store = Arc::new(
            MemcachedStore::builder()
                .connections_per_server(2)
                .io_timeout(Duration::from_millis(300))
                .connect([server.addr()])
                .unwrap(),
        );
        rt.block_on(async {
            let tasks: Vec<_> = (0..8)
                .map(|t| {
                    let store = store.clone();
                    tokio::spawn(async move {
                        let key = k(&format!("drop-{t}"));
                        loop {
                            let op = Op::IncrOrInit {
                                key: &key,
                                delta: 1,
                                initial: 0,
                                ttl: Ttl::Never,
                            };
                            let _ = store.execute_async(&op).await;
                        }
                    })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(30)).await;
            if round % 2 == 1 {
                server.pause();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            for t in &tasks {
                t.abort();
            }
            for t in tasks {
                let _ = t.await;
            }
        });
        drop(store);
        server.resume();
    }
    // Helper threads end when their lane is dropped (or after the frozen
    // read they were in times out).
    let deadline = Instant::now() + Duration::from_secs(3);
    while lane_threads() > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "lane helper threads before {before}, after {}",
        lane_threads()
    );
    assert!(lane_threads() <= before);
    // The server still works for a new store.
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    assert!(store.incr_or_init(&k("drop-0"), 1, 0, Ttl::Never).unwrap() > 0);
}

/// Pipelines spanning a pool of 3 in both key orders, plus single ops, 12
/// threads on one connection per server: nothing hangs (each thread must
/// finish its rounds within a bound), and every reply is right.
#[test]
fn crossing_pipelines_neither_hang_nor_mix_replies() {
    let seed = seed();
    let pool = ServerPool::start(3, ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_secs(2))
            .connect(pool.addrs())
            .unwrap(),
    );
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..12 {
        let (store, tx) = (store.clone(), tx.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(seed ^ (t as u64 + 3).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut keys: Vec<Key> = (0..3)
                .map(|s| key_on(&store, s, &format!("x{t}")))
                .collect();
            let mut bad = 0;
            for round in 0..200u64 {
                if t % 2 == 1 {
                    keys.reverse();
                }
                let vals: Vec<String> = (0..3).map(|j| format!("{t}-{round}-{j}")).collect();
                if rng.below(4) == 0 {
                    let j = rng.below(3) as usize;
                    store.set(&keys[j], vals[j].as_bytes(), Ttl::Never).unwrap();
                    if store.get(&keys[j]).unwrap().map(|i| i.value)
                        != Some(vals[j].clone().into_bytes())
                    {
                        bad += 1;
                    }
                    continue;
                }
                let sets: Vec<Op<'_>> = keys
                    .iter()
                    .zip(&vals)
                    .map(|(key, v)| Op::Set {
                        key,
                        value: v.as_bytes(),
                        ttl: Ttl::Never,
                    })
                    .collect();
                for r in store.pipeline(&sets) {
                    r.unwrap();
                }
                let gets: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
                for (j, r) in store.pipeline(&gets).into_iter().enumerate() {
                    match r.unwrap() {
                        Reply::Item(Some(item)) if item.value == vals[j].as_bytes() => {}
                        _ => bad += 1,
                    }
                }
            }
            let _ = tx.send((t, bad));
        });
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut finished = 0;
    let mut bad = 0;
    while finished < 12 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, b)) => {
                finished += 1;
                bad += b;
            }
            Err(_) => panic!("only {finished} of 12 threads finished in 20 s: a hang"),
        }
    }
    println!("bad replies {bad}, {:?}", store.connection_stats());
    assert_eq!(bad, 0);
}

/// A server restarted (kill -9, then a new process on the same port) while
/// 16 callers share one connection: a CAS id read before the restart must
/// never apply to the new incarnation's item (CAS ids restart at 1 there).
/// Each caller reads its keys' ids, waits out the restart, then writes each
/// key afresh on the new server (an item with small CAS ids again) and
/// tries the old id, 20 times: none may apply. (An earlier form judged
/// "before the kill" by the clock around `restart()`, and flagged CAS
/// writes that the old server applied in the instant before it died.)
#[test]
fn a_cas_from_before_a_restart_never_applies_after_it() {
    let mut server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_millis(500))
            .down_backoff(Duration::from_millis(10), Duration::from_millis(50))
            .connect([server.addr()])
            .unwrap(),
    );
    let before_kill = Arc::new(std::sync::Barrier::new(17));
    let restarted = Arc::new(std::sync::Barrier::new(17));
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let (store, before_kill, restarted) =
                (store.clone(), before_kill.clone(), restarted.clone());
            std::thread::spawn(move || {
                let keys: Vec<Key> = (0..4).map(|i| k(&format!("cas-{t}-{i}"))).collect();
                // Ids of the first incarnation: every key written a few
                // times, so its id is a small number the new server will
                // hand out again.
                let mut old = Vec::new();
                for key in &keys {
                    for _ in 0..3 {
                        store.set(key, b"seed", Ttl::Never).unwrap();
                    }
                    old.push(store.get(key).unwrap().unwrap().cas);
                }
                before_kill.wait();
                restarted.wait();
                let mut applied = 0;
                for round in 0..20 {
                    for (key, &cas) in keys.iter().zip(&old) {
                        // The new incarnation's item, written again and again.
                        let _ = store.set(key, format!("new-{round}").as_bytes(), Ttl::Never);
                        if let Ok(mcds_core::CasOutcome::Stored(_)) =
                            store.cas(key, b"stale", Ttl::Never, cas)
                        {
                            applied += 1;
                        }
                    }
                }
                applied
            })
        })
        .collect();
    before_kill.wait();
    server.restart();
    restarted.wait();
    let applied: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    println!("16 callers x 4 keys x 20 rounds: stale CAS writes applied {applied}");
    assert_eq!(applied, 0);
}

/// A tokio runtime with one thread: an async caller must never block it.
/// While a blocking caller dials a frozen server (the lane's lock held for
/// the handshake), an async request on that lane should not freeze the
/// runtime's other tasks (a 5 ms ticker).
#[test]
fn an_async_caller_never_blocks_its_runtime_thread() {
    let server = MemcachedServer::start_default();
    let io_timeout = Duration::from_millis(500);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(io_timeout)
            .connect_timeout(Duration::from_millis(300))
            .connect([server.addr()])
            .unwrap(),
    );
    // No connection yet; freeze the server: a dial's handshake hangs.
    server.pause();
    let blocking = {
        let store = store.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let r = store.get(&k("x"));
            (started.elapsed(), format!("{r:?}"))
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let worst_gap = rt.block_on(async {
        let ticker = tokio::spawn(async {
            let mut worst = Duration::ZERO;
            let mut last = Instant::now();
            for _ in 0..100 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                worst = worst.max(last.elapsed());
                last = Instant::now();
            }
            worst
        });
        tokio::task::yield_now().await;
        let key = k("y");
        let op = Op::Get(&key);
        let started = Instant::now();
        let r = store.execute_async(&op).await;
        println!(
            "async get: {:?} after {:?}",
            r.map(|_| ()),
            started.elapsed()
        );
        ticker.await.unwrap()
    });
    server.resume();
    let (took, r) = blocking.join().unwrap();
    println!(
        "blocking get {took:?}: {r}; worst gap of a 5 ms ticker on the runtime: {worst_gap:?}"
    );
    assert!(
        worst_gap < Duration::from_millis(100),
        "the runtime's only thread was blocked {worst_gap:?} by an async request"
    );
}

/// A server with a 2 KiB item limit (`-I 2k`): one thread pipelines a value
/// too large for it (SERVER_ERROR mid-batch) next to small ones; 8 other
/// threads run single ops on the same single connection. The refusal is the
/// pipeliner's alone; the others must see no error.
#[test]
fn a_server_error_mid_batch_fails_no_other_caller() {
    let server = MemcachedServer::start({
        let mut o = ServerOptions::default().item_size("2k");
        o.extra_args = vec!["-o".into(), "slab_chunk_max=1024".into()];
        o
    });
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_secs(2))
            .connect([server.addr()])
            .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let pipeliner = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            let big = vec![b'x'; 4096];
            let (a, b, c) = (k("pa"), k("pb"), k("pc"));
            let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
            while !stop.load(Ordering::Relaxed) {
                let ops = [
                    Op::Set {
                        key: &a,
                        value: b"1",
                        ttl: Ttl::Never,
                    },
                    Op::Set {
                        key: &b,
                        value: &big,
                        ttl: Ttl::Never,
                    },
                    Op::Set {
                        key: &c,
                        value: b"3",
                        ttl: Ttl::Never,
                    },
                ];
                for (i, r) in store.pipeline(&ops).into_iter().enumerate() {
                    let what = match r {
                        Ok(_) => "ok".to_string(),
                        Err(e) => format!("{e}").chars().take(50).collect(),
                    };
                    *outcomes.entry(format!("op{i}: {what}")).or_default() += 1;
                }
            }
            outcomes
        })
    };
    let errors = Arc::new(Mutex::new(Vec::new()));
    let innocent: Vec<_> = (0..8)
        .map(|t| {
            let (store, errors) = (store.clone(), errors.clone());
            std::thread::spawn(move || {
                let key = k(&format!("inn-{t}"));
                for i in 0..300u64 {
                    if let Err(e) = store.set(&key, i.to_string().as_bytes(), Ttl::Never) {
                        errors.lock().unwrap().push(format!("set: {e}"));
                    }
                    if let Err(e) = store.get(&key) {
                        errors.lock().unwrap().push(format!("get: {e}"));
                    }
                }
            })
        })
        .collect();
    for t in innocent {
        t.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let outcomes = pipeliner.join().unwrap();
    let errors = errors.lock().unwrap();
    println!("pipeliner: {outcomes:?}\n{:?}", store.connection_stats());
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for e in errors.iter() {
        *kinds.entry(e.chars().take(90).collect()).or_default() += 1;
    }
    println!("innocent errors {} of 4800 ops", errors.len());
    for (kind, n) in &kinds {
        println!("  {n} x {kind}");
    }
    assert!(errors.is_empty());
}
