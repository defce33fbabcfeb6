//! From an adversarial review of the marker-less lanes and of the pair
//! CAS ids, against real memcached (`memcached -M -m 2`).
//!
//! 1. A CAS id read (from an `add`, a text pair) before a restart, by a
//!    store that lives on across it, on a server restarted and made to
//!    hand the *same raw CAS id* to the same key again (checked with a raw
//!    `mg`): it must match nothing after the restart. Marker-less before
//!    and after; marker-less before, marked after; marked both times.
//! 2. A lock on a full marker-less server with 4 connections, contended by
//!    threads and tokio tasks: never two holders at once, every release
//!    `Released`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, DeleteOutcome, Key, Store, Stored, Ttl};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions, fill_without_marker};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn store(server: &MemcachedServer) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .connections_per_server(4)
            .io_timeout(Duration::from_millis(500))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(30))
            .connect([server.addr()])
            .unwrap(),
    )
}

/// The raw CAS id memcached holds for `key`.
fn raw_cas(server: &MemcachedServer, key: &str) -> Option<u64> {
    let lines = server.raw(format!("mg {key} c\r\n").as_bytes(), |l| {
        l.starts_with("HD") || l.starts_with("EN")
    });
    let line = lines.last()?;
    line.split(' ')
        .find_map(|t| t.strip_prefix('c'))
        .and_then(|c| c.parse().ok())
}

/// Raw text `set`s of a scratch key (320 bytes, which fits on a filled
/// server) until the server's CAS counter is at `target - 1`, then a raw
/// set of `key`: it gets raw CAS id `target`.
fn recreate_with_raw_cas(server: &MemcachedServer, key: &str, target: u64) {
    let value = "b".repeat(320);
    let set = |k: &str| {
        let lines = server.raw(
            format!("set {k} 0 0 {}\r\n{value}\r\n", value.len()).as_bytes(),
            |_| true,
        );
        assert_eq!(lines, ["STORED"], "raw set of {k}");
    };
    loop {
        set("scratch");
        let now = raw_cas(server, "scratch").unwrap();
        assert!(now < target, "the counter passed {target} ({now})");
        if now == target - 1 {
            break;
        }
    }
    set(key);
    assert_eq!(raw_cas(server, key), Some(target));
}

fn stale_id_case(full_before: bool, full_after: bool) -> String {
    let mut server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let key = k("victim");
    let value = vec![b'a'; 320];
    if full_before {
        server.restart();
        fill_without_marker(&server);
    }
    // Push the CAS counter ahead of where a second fill ends, so that the
    // raw id can be handed out again after the restart.
    let value320 = "c".repeat(320);
    let pad: Vec<u8> = (0..3000)
        .flat_map(|_| format!("set scratch 0 0 320 noreply\r\n{value320}\r\n").into_bytes())
        .collect();
    let mut raw = std::net::TcpStream::connect(server.addr()).unwrap();
    std::io::Write::write_all(&mut raw, &pad).unwrap();
    drop(raw);
    std::thread::sleep(Duration::from_millis(200));
    let store = store(&server);
    // Every lane dialed first (threads overlapping).
    std::thread::scope(|s| {
        for t in 0..8 {
            let store = &store;
            s.spawn(move || {
                for _ in 0..50 {
                    let _ = store.get(&k(&format!("warm{t}")));
                }
            });
        }
    });
    let Stored::Stored(old_id) = store.add(&key, &value, Ttl::Never).unwrap() else {
        panic!("add refused");
    };
    let got = store.get(&key).unwrap().unwrap();
    assert_eq!(
        got.cas, old_id,
        "attack 4: the add's (text pair's) CAS id is not the item's"
    );
    let raw_before = raw_cas(&server, "victim").unwrap();
    server.restart();
    if full_after {
        fill_without_marker(&server);
    }
    recreate_with_raw_cas(&server, "victim", raw_before);
    // The same store, its id from before the restart.
    let deadline = Instant::now() + Duration::from_secs(10);
    let cas = loop {
        match store.cas(&key, &[b's'; 330], Ttl::Never, old_id) {
            Ok(outcome) => break outcome,
            Err(e) => {
                assert!(Instant::now() < deadline, "cas kept failing: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    let delete = loop {
        match store.delete_cas(&key, old_id) {
            Ok(outcome) => break outcome,
            Err(e) => {
                assert!(Instant::now() < deadline, "delete_cas kept failing: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    let now = store.get(&key).unwrap().map(|i| i.value);
    let report = format!(
        "full before {full_before}, after {full_after}: raw id {raw_before} reused; stale cas {cas:?}, stale delete_cas {delete:?}, value now {:?} bytes of {:?}",
        now.as_ref().map(Vec::len),
        now.as_ref().and_then(|v| v.first().map(|&b| b as char)),
    );
    println!("{report}");
    assert!(
        matches!(cas, CasOutcome::Exists | CasOutcome::NotFound),
        "{report}"
    );
    assert!(
        matches!(delete, DeleteOutcome::Exists | DeleteOutcome::NotFound),
        "{report}"
    );
    report
}

#[test]
fn stale_id_markerless_before_and_after_restart() {
    stale_id_case(true, true);
}

#[test]
fn stale_id_markerless_before_marked_after_restart() {
    stale_id_case(true, false);
}

#[test]
fn stale_id_marked_before_and_after_restart() {
    stale_id_case(false, false);
}

/// Never two holders; every release Released. Threads and tokio tasks on
/// one store with 4 connections, on a full server without marker.
#[test]
fn markerless_lock_mutual_exclusion_threads_and_tasks() {
    let server = mcds_testkit::markerless_server();
    let store = store(&server);
    let lock = Lock::new(
        Arc::clone(&store) as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap()
    .with_owner_label(&"x".repeat(200))
    .unwrap();
    let inside = Arc::new(AtomicI64::new(0));
    let doubles = Arc::new(AtomicU64::new(0));
    let grants = Arc::new(AtomicU64::new(0));
    let bad_releases = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let enter = {
        let (inside, doubles, grants) = (inside.clone(), doubles.clone(), grants.clone());
        move || {
            grants.fetch_add(1, Ordering::SeqCst);
            if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                doubles.fetch_add(1, Ordering::SeqCst);
            }
        }
    };
    let leave = {
        let inside = inside.clone();
        move || {
            inside.fetch_sub(1, Ordering::SeqCst);
        }
    };
    // What each contender (thread or task) holds.
    let shares = || {
        (
            lock.clone(),
            stop.clone(),
            bad_releases.clone(),
            errors.clone(),
            enter.clone(),
            leave.clone(),
        )
    };
    let mut threads = Vec::new();
    for _ in 0..4 {
        let (lock, stop, bad, errors, enter, leave) = shares();
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match lock.try_acquire() {
                    Ok(Some(g)) => {
                        enter();
                        std::thread::sleep(Duration::from_micros(300));
                        leave();
                        match g.release() {
                            Ok(Release::Released) => {}
                            other => {
                                if bad.fetch_add(1, Ordering::SeqCst) < 5 {
                                    eprintln!("thread release: {other:?}");
                                }
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        if errors.fetch_add(1, Ordering::SeqCst) < 5 {
                            eprintln!("thread acquire: {e}");
                        }
                    }
                }
            }
        }));
    }
    // Readers elsewhere on the server, spreading load over the lanes.
    for t in 0..2 {
        let (store, stop) = (store.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let _ = store.get(&k(&format!("app:0:{}", 300 + t)));
            }
        }));
    }
    let rt = mcds_testkit::runtime();
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (lock, stop, bad, errors, enter, leave) = shares();
            rt.spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    match lock.try_acquire_async().await {
                        Ok(Some(g)) => {
                            enter();
                            tokio::time::sleep(Duration::from_micros(300)).await;
                            leave();
                            match g.release_async().await {
                                Ok(Release::Released) => {}
                                other => {
                                    if bad.fetch_add(1, Ordering::SeqCst) < 5 {
                                        eprintln!("task release: {other:?}");
                                    }
                                }
                            }
                        }
                        Ok(None) => tokio::task::yield_now().await,
                        Err(e) => {
                            if errors.fetch_add(1, Ordering::SeqCst) < 5 {
                                eprintln!("task acquire: {e}");
                            }
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().unwrap();
    }
    rt.block_on(async {
        for t in tasks {
            t.await.unwrap();
        }
    });
    let stats = store.connection_stats();
    println!(
        "grants {}, double grants {}, releases not Released {}, errors {}, dials {}",
        grants.load(Ordering::SeqCst),
        doubles.load(Ordering::SeqCst),
        bad_releases.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst),
        stats.dials
    );
    assert_eq!(doubles.load(Ordering::SeqCst), 0, "two holders at once");
    assert_eq!(
        bad_releases.load(Ordering::SeqCst),
        0,
        "releases that did not release"
    );
    assert!(grants.load(Ordering::SeqCst) > 100);
}

/// Attack 4: the CAS id each pair (text add/replace/cas, then `mg`)
/// returns is the id a `get` then reads, and a `cas` with it stores; from
/// 4 threads on 4 connections, on a normal and a full marker-less server.
fn pair_ids(full: bool) {
    let mut server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    if full {
        server.restart();
        fill_without_marker(&server);
    }
    let store = store(&server);
    let mismatches = AtomicU64::new(0);
    let checked = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (store, mismatches, checked) = (&store, &mismatches, &checked);
            s.spawn(move || {
                let key = k(&format!("pair{t}"));
                let v = |c: u8| vec![c; 320];
                for i in 0..100 {
                    let _ = store.delete(&key);
                    let mut ids = Vec::new();
                    match store.add(&key, &v(b'a'), Ttl::Never).unwrap() {
                        Stored::Stored(id) => ids.push(("add", id)),
                        Stored::NotStored => panic!("add refused"),
                    }
                    let read = store.get(&key).unwrap().unwrap().cas;
                    ids.push(("get", read));
                    match store.replace(&key, &v(b'b'), Ttl::Never).unwrap() {
                        Stored::Stored(id) => ids.push(("replace", id)),
                        Stored::NotStored => panic!("replace refused"),
                    }
                    let read2 = store.get(&key).unwrap().unwrap().cas;
                    ids.push(("get", read2));
                    let outcome = store.cas(&key, &v(b'c'), Ttl::Never, read2).unwrap();
                    let CasOutcome::Stored(after) = outcome else {
                        if mismatches.fetch_add(1, Ordering::SeqCst) < 5 {
                            eprintln!(
                                "t{t} i{i}: cas with the id just read: {outcome:?} ({ids:?})"
                            );
                        }
                        continue;
                    };
                    let read3 = store.get(&key).unwrap().unwrap().cas;
                    checked.fetch_add(1, Ordering::SeqCst);
                    if (ids[0].1 != ids[1].1 || ids[2].1 != ids[3].1 || after != read3)
                        && mismatches.fetch_add(1, Ordering::SeqCst) < 5
                    {
                        eprintln!("t{t} i{i}: {ids:?}, cas {after} then get {read3}");
                    }
                }
            });
        }
    });
    println!(
        "full {full}: {} rounds, {} with a pair id not the item's",
        checked.load(Ordering::SeqCst),
        mismatches.load(Ordering::SeqCst)
    );
    assert_eq!(mismatches.load(Ordering::SeqCst), 0);
}

#[test]
fn pair_ids_are_the_items_normal_server() {
    pair_ids(false);
}

#[test]
fn pair_ids_are_the_items_markerless_server() {
    pair_ids(true);
}

/// Attack 2, async: a fresh store (no lane dialed) on a full marker-less
/// server, 4 connections; 12 tokio tasks and 4 threads start at once
/// (every lane's first dial races, sessions move to lane 0), each running
/// get + cas on a key nobody else writes. Every cas must store.
#[test]
fn markerless_async_first_dials_race_get_cas() {
    let server = mcds_testkit::markerless_server();
    for round in 0..5 {
        let store = store(&server);
        let refused = Arc::new(AtomicU64::new(0));
        let errors = Arc::new(AtomicU64::new(0));
        let stored = Arc::new(AtomicU64::new(0));
        let rt = mcds_testkit::runtime();
        let start = Arc::new(std::sync::Barrier::new(16));
        let shares = || {
            (
                Arc::clone(&store),
                refused.clone(),
                errors.clone(),
                stored.clone(),
                start.clone(),
            )
        };
        let mut tasks = Vec::new();
        for t in 0..12 {
            let (store, refused, errors, stored, start) = shares();
            tasks.push(rt.spawn(async move {
                let _ = tokio::task::spawn_blocking(move || start.wait()).await;
                let access = mcds_core::Access::new(&*store, mcds_core::Io::Async);
                let key = k(&format!("async{round}:{t}"));
                let value = vec![b'v'; 330];
                for i in 0..60 {
                    let item = match access.get(&key).await {
                        Ok(Some(item)) => item,
                        Ok(None) => {
                            if let Err(e) = access.set(&key, &value, Ttl::Never).await {
                                if errors.fetch_add(1, Ordering::SeqCst) < 3 {
                                    eprintln!("task {t} set {i}: {e}");
                                }
                            }
                            continue;
                        }
                        Err(e) => {
                            if errors.fetch_add(1, Ordering::SeqCst) < 3 {
                                eprintln!("task {t} get {i}: {e}");
                            }
                            continue;
                        }
                    };
                    match access.cas(&key, &value, Ttl::Never, item.cas).await {
                        Ok(CasOutcome::Stored(_)) => {
                            stored.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(other) => {
                            if refused.fetch_add(1, Ordering::SeqCst) < 3 {
                                eprintln!("task {t} cas {i}: {other:?}, nobody else writes it");
                            }
                        }
                        Err(e) => {
                            if errors.fetch_add(1, Ordering::SeqCst) < 3 {
                                eprintln!("task {t} cas {i}: {e}");
                            }
                        }
                    }
                }
            }));
        }
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (store, refused, errors, stored, start) = shares();
                std::thread::spawn(move || {
                    start.wait();
                    let key = k(&format!("sync{round}:{t}"));
                    let value = vec![b'w'; 330];
                    for _ in 0..60 {
                        let item = match store.get(&key) {
                            Ok(Some(item)) => item,
                            Ok(None) => {
                                if store.set(&key, &value, Ttl::Never).is_err() {
                                    errors.fetch_add(1, Ordering::SeqCst);
                                }
                                continue;
                            }
                            Err(_) => {
                                errors.fetch_add(1, Ordering::SeqCst);
                                continue;
                            }
                        };
                        match store.cas(&key, &value, Ttl::Never, item.cas) {
                            Ok(CasOutcome::Stored(_)) => {
                                stored.fetch_add(1, Ordering::SeqCst);
                            }
                            Ok(_) => {
                                refused.fetch_add(1, Ordering::SeqCst);
                            }
                            Err(_) => {
                                errors.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        rt.block_on(async {
            for t in tasks {
                t.await.unwrap();
            }
        });
        println!(
            "round {round}: stored {}, refused {}, errors {}, dials {}",
            stored.load(Ordering::SeqCst),
            refused.load(Ordering::SeqCst),
            errors.load(Ordering::SeqCst),
            store.connection_stats().dials
        );
        assert_eq!(
            (
                refused.load(Ordering::SeqCst),
                errors.load(Ordering::SeqCst)
            ),
            (0, 0),
            "round {round}"
        );
        // Room for the next round's items.
        for t in 0..12 {
            store.delete(&k(&format!("async{round}:{t}"))).unwrap();
        }
        for t in 0..4 {
            store.delete(&k(&format!("sync{round}:{t}"))).unwrap();
        }
    }
}
