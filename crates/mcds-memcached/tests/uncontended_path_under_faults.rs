//! Stress tests of the lane's uncontended path (from an adversarial review): a
//! driver's own request has no slot (its delivery is kept in the driver),
//! the in-flight list is the lane's spare, the connection is boxed, and a
//! pinned session does not read the server's clock again.
//!
//! These tests mix sync threads (single ops and pipelines), async tasks
//! (some cancelled at random), on 1 or 2 connections per server of a pool
//! of 2 real memcached servers, while the servers are frozen (SIGSTOP),
//! killed and restarted, or answer past a tiny I/O timeout. Every caller
//! owns its counters (each in its own range of values), so that:
//! * a reply delivered to the wrong caller shows as a value out of range;
//! * a request reported not sent (`Io`/`Timeout`/`ServerDown`) that was in
//!   fact applied, or applied twice, shows in the exact accounting
//!   `ok <= final - base <= ok + ambiguous` (freeze and tiny-timeout runs);
//! * a caller that hangs, or a lane left "driving", shows as a worker that
//!   does not stop in time, or a liveness phase at the end that does not
//!   complete.
//!
//! Random: the seed is printed (`MCDS_TEST_SEED=<n>` replays it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

mod support;

use support::{Rng, k, seed};

use mcds_core::{Error, Key, Op, Reply, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{ServerOptions, ServerPool};

const KEYS_PER_WORKER: usize = 6;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chaos {
    /// SIGSTOP/SIGCONT at random.
    Freeze,
    /// kill -9, then restart after a while.
    Kill,
    /// No chaos from outside: a tiny I/O timeout, big values read by some
    /// callers, so replies come late and connections are dropped often.
    TinyTimeout,
}

/// One counter a worker owns.
#[derive(Default, Clone)]
struct Acct {
    ok: u64,
    amb: u64,
    not_sent: u64,
}

#[derive(Default)]
struct Shared {
    wrong: Mutex<Vec<String>>,
    kinds: Mutex<BTreeMap<String, u64>>,
    worst: Mutex<(Duration, String)>,
}

impl Shared {
    fn wrong(&self, s: String) {
        let mut w = self.wrong.lock().unwrap();
        if w.len() < 40 {
            println!("WRONG: {s}");
        }
        w.push(s);
    }
    fn kind(&self, s: &str) {
        *self.kinds.lock().unwrap().entry(s.to_string()).or_default() += 1;
    }
    fn took(&self, d: Duration, what: &str) {
        let mut w = self.worst.lock().unwrap();
        if d > w.0 {
            *w = (d, what.to_string());
        }
    }
}

/// Wait up to 10 s for `total` workers to report on `done_rx` (an op is
/// bounded by its timeouts; a hang or a stuck lane keeps a worker
/// forever), print the run's figures, and fail on a hang.
fn stop_and_report(
    shared: &Shared,
    store: &MemcachedStore,
    done_rx: &mpsc::Receiver<String>,
    total: usize,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stopped = Vec::new();
    while stopped.len() < total {
        let left = deadline.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left) {
            Ok(who) => stopped.push(who),
            Err(_) => break,
        }
    }
    let (worst, what) = shared.worst.lock().unwrap().clone();
    println!("worst op: {worst:?} ({what})");
    for (kind, n) in shared.kinds.lock().unwrap().iter() {
        println!("  {n:>8} x {kind}");
    }
    println!("{:?}", store.connection_stats());
    assert_eq!(
        stopped.len(),
        total,
        "HANG: {} of {total} workers did not stop within 10 s (stopped: {stopped:?})",
        total - stopped.len()
    );
}

/// Worker `w`'s own generator, derived from the test's seed.
fn worker_rng(seed: u64, w: usize) -> Rng {
    Rng(seed ^ (w as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A tokio runtime with 2 workers, as the machine has 2 cores.
fn two_worker_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Fail on any wrong outcome a worker recorded.
fn assert_nothing_wrong(shared: &Shared) {
    let wrong = shared.wrong.lock().unwrap();
    assert!(
        wrong.is_empty(),
        "{} wrong outcomes, first: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}

fn base(worker: usize, j: usize) -> u64 {
    (worker as u64 * 100 + j as u64 + 1) * 1_000_000_000
}

fn keys_of(worker: usize) -> Vec<Key> {
    (0..KEYS_PER_WORKER)
        .map(|j| k(&format!("r9-w{worker}-c{j}")))
        .collect()
}

/// What one counter op did: classify, check the value, account.
fn account(
    shared: &Shared,
    chaos: Chaos,
    who: &str,
    key: &Key,
    base: u64,
    acct: &mut Acct,
    r: Result<Reply, Error>,
) {
    match r {
        Ok(Reply::Counter(Some(v))) | Ok(Reply::Value(v)) => {
            shared.kind("ok");
            let lo = base + acct.ok + 1;
            let hi = base + acct.ok + acct.amb + 1;
            let in_range = if chaos == Chaos::Kill {
                // Restarted servers lose counters: only the owner's range.
                v > base && v <= hi
            } else {
                v >= lo && v <= hi
            };
            if !in_range {
                shared.wrong(format!(
                    "{who}: {key} replied {v}, want {lo}..={hi} (ok {} amb {} not-sent {})",
                    acct.ok, acct.amb, acct.not_sent
                ));
            }
            acct.ok += 1;
        }
        Ok(Reply::Counter(None)) => {
            // Missing: only after a restart.
            shared.kind("ok-missing");
            if chaos != Chaos::Kill {
                shared.wrong(format!("{who}: {key} missing without a restart"));
            }
        }
        Ok(other) => shared.wrong(format!("{who}: {key} replied {other:?}")),
        Err(Error::Ambiguous { .. }) => {
            shared.kind("ambiguous");
            acct.amb += 1;
        }
        Err(e @ (Error::Io { .. } | Error::Timeout { .. } | Error::ServerDown { .. })) => {
            let kind = match e {
                Error::Io { .. } => "io (not sent)",
                Error::Timeout { .. } => "timeout (not sent)",
                _ => "server down",
            };
            shared.kind(kind);
            acct.not_sent += 1;
        }
        Err(e) => {
            // Not expected: count it as maybe applied, and say so.
            shared.kind(&format!(
                "other: {}",
                e.to_string().chars().take(70).collect::<String>()
            ));
            acct.amb += 1;
        }
    }
}

fn op_for<'a>(chaos: Chaos, key: &'a Key, base: u64) -> Op<'a> {
    if chaos == Chaos::Kill {
        Op::IncrOrInit {
            key,
            delta: 1,
            initial: base + 1,
            ttl: Ttl::Never,
        }
    } else {
        Op::Incr { key, delta: 1 }
    }
}

fn big_value(i: usize) -> Vec<u8> {
    let tag = format!("<big{i}>");
    tag.bytes().cycle().take(200 * 1024 + i * 7919).collect()
}

struct Cfg {
    chaos: Chaos,
    conns: usize,
    io_timeout: Duration,
    run_for: Duration,
    sync_single: usize,
    sync_pipe: usize,
    async_tasks: usize,
    readers: usize,
}

fn run(cfg: Cfg) {
    let seed = seed();
    let mut rng = Rng(seed);
    let conns = if cfg.conns == 0 {
        1 + rng.below(2) as usize
    } else {
        cfg.conns
    };
    println!(
        "chaos {:?}, {conns} connection(s) per server, io_timeout {:?}",
        cfg.chaos, cfg.io_timeout
    );
    let mut pool = ServerPool::start(2, ServerOptions::default());
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(conns)
            .io_timeout(cfg.io_timeout)
            .connect_timeout(Duration::from_millis(150))
            .down_backoff(Duration::from_millis(30), Duration::from_millis(120))
            .connect(pool.addrs())
            .unwrap(),
    );
    // The starting values go through a store with the default timeouts:
    // under load, the tiny-timeout store's sets may end ambiguous, and the
    // accounting needs each base known.
    let setup = MemcachedStore::builder().connect(pool.addrs()).unwrap();
    let workers = cfg.sync_single + cfg.sync_pipe + cfg.async_tasks;
    for w in 0..workers {
        for (j, key) in keys_of(w).iter().enumerate() {
            setup
                .set(key, base(w, j).to_string().as_bytes(), Ttl::Never)
                .unwrap();
        }
    }
    let bigs: Vec<Vec<u8>> = (0..8).map(big_value).collect();
    for (i, v) in bigs.iter().enumerate() {
        setup.set(&k(&format!("r9-big{i}")), v, Ttl::Never).unwrap();
    }
    drop(setup);
    let bigs = Arc::new(bigs);
    let shared = Arc::new(Shared::default());
    let stop = Arc::new(AtomicBool::new(false));
    let accts: Arc<Mutex<BTreeMap<usize, Vec<Acct>>>> = Arc::default();
    let (done_tx, done_rx) = mpsc::channel::<String>();

    let mut threads = Vec::new();
    // Sync callers of single ops, and of pipelines.
    for w in 0..cfg.sync_single + cfg.sync_pipe {
        let pipe = w >= cfg.sync_single;
        let (store, shared, stop, accts, done) = (
            store.clone(),
            shared.clone(),
            stop.clone(),
            accts.clone(),
            done_tx.clone(),
        );
        let chaos = cfg.chaos;
        let mut rng = worker_rng(seed, w);
        threads.push(std::thread::spawn(move || {
            let keys = keys_of(w);
            let mut acct = vec![Acct::default(); keys.len()];
            let who = format!("sync{} {w}", if pipe { "-pipe" } else { "" });
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                if !pipe || rng.below(4) == 0 {
                    let j = rng.below(keys.len() as u64) as usize;
                    let op = op_for(chaos, &keys[j], base(w, j));
                    let r = store.execute(&op);
                    shared.took(t.elapsed(), &format!("{who} single"));
                    account(&shared, chaos, &who, &keys[j], base(w, j), &mut acct[j], r);
                } else {
                    // A random subset (one server only, or both).
                    let pick: Vec<usize> = (0..keys.len()).filter(|_| rng.below(2) == 0).collect();
                    let ops: Vec<Op<'_>> = pick
                        .iter()
                        .map(|&j| op_for(chaos, &keys[j], base(w, j)))
                        .collect();
                    let rs = store.pipeline(&ops);
                    shared.took(t.elapsed(), &format!("{who} pipeline of {}", ops.len()));
                    for (&j, r) in pick.iter().zip(rs) {
                        account(&shared, chaos, &who, &keys[j], base(w, j), &mut acct[j], r);
                    }
                }
                if rng.below(8) == 0 {
                    std::thread::sleep(Duration::from_micros(rng.below(400)));
                }
            }
            accts.lock().unwrap().insert(w, acct);
            let _ = done.send(who);
        }));
    }
    // Readers of big values (slow replies, timed out mid-block).
    for r in 0..cfg.readers {
        let (store, shared, stop, bigs, done) = (
            store.clone(),
            shared.clone(),
            stop.clone(),
            bigs.clone(),
            done_tx.clone(),
        );
        let chaos = cfg.chaos;
        let mut rng = Rng(seed ^ (1000 + r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        threads.push(std::thread::spawn(move || {
            let who = format!("reader {r}");
            while !stop.load(Ordering::Relaxed) {
                let i = rng.below(bigs.len() as u64) as usize;
                let t = Instant::now();
                let got = store.get(&k(&format!("r9-big{i}")));
                shared.took(t.elapsed(), &format!("{who} get"));
                match got {
                    Ok(Some(item)) if item.value == bigs[i] => shared.kind("get ok"),
                    Ok(None) if chaos == Chaos::Kill => shared.kind("get miss"),
                    Ok(other) => shared.wrong(format!(
                        "{who}: r9-big{i} gave {:?} bytes",
                        other.map(|i| i.value.len())
                    )),
                    Err(_) => shared.kind("get error"),
                }
            }
            let _ = done.send(who);
        }));
    }
    // A caller of `stats` (a listing read up to END by whoever drives).
    {
        let (store, shared, stop, done) =
            (store.clone(), shared.clone(), stop.clone(), done_tx.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                for (server, r) in store.stats() {
                    match r {
                        Ok(stats) if stats.iter().any(|(name, _)| name == "pid") => {
                            shared.kind("stats ok")
                        }
                        Ok(stats) => shared.wrong(format!(
                            "stats of {server}: no pid in {} lines",
                            stats.len()
                        )),
                        Err(_) => shared.kind("stats error"),
                    }
                }
                shared.took(t.elapsed(), "stats");
                std::thread::sleep(Duration::from_millis(2));
            }
            let _ = done.send("stats".to_string());
        }));
    }
    // Async callers: singles and pipelines, some cancelled.
    let rt = two_worker_runtime();
    let first_async = cfg.sync_single + cfg.sync_pipe;
    for a in 0..cfg.async_tasks {
        let w = first_async + a;
        let (store, shared, stop, accts, done) = (
            store.clone(),
            shared.clone(),
            stop.clone(),
            accts.clone(),
            done_tx.clone(),
        );
        let chaos = cfg.chaos;
        let mut rng = worker_rng(seed, w);
        rt.spawn(async move {
            let keys = keys_of(w);
            let mut acct = vec![Acct::default(); keys.len()];
            let who = format!("async {w}");
            while !stop.load(Ordering::Relaxed) {
                let cancel_after = if rng.below(6) == 0 {
                    Some(Duration::from_micros(20 + rng.below(3000)))
                } else {
                    None
                };
                let t = Instant::now();
                if rng.below(3) != 0 {
                    let j = rng.below(keys.len() as u64) as usize;
                    let op = op_for(chaos, &keys[j], base(w, j));
                    let fut = store.execute_async(&op);
                    let r = match cancel_after {
                        Some(d) => tokio::time::timeout(d, fut).await.ok(),
                        None => Some(fut.await),
                    };
                    shared.took(t.elapsed(), &format!("{who} single"));
                    match r {
                        Some(r) => {
                            account(&shared, chaos, &who, &keys[j], base(w, j), &mut acct[j], r)
                        }
                        None => {
                            shared.kind("cancelled");
                            acct[j].amb += 1;
                        }
                    }
                } else {
                    let pick: Vec<usize> = (0..keys.len()).filter(|_| rng.below(2) == 0).collect();
                    let ops: Vec<Op<'_>> = pick
                        .iter()
                        .map(|&j| op_for(chaos, &keys[j], base(w, j)))
                        .collect();
                    let fut = store.pipeline_async(&ops);
                    let rs = match cancel_after {
                        Some(d) => tokio::time::timeout(d, fut).await.ok(),
                        None => Some(fut.await),
                    };
                    shared.took(t.elapsed(), &format!("{who} pipeline of {}", ops.len()));
                    match rs {
                        Some(rs) => {
                            for (&j, r) in pick.iter().zip(rs) {
                                account(
                                    &shared,
                                    chaos,
                                    &who,
                                    &keys[j],
                                    base(w, j),
                                    &mut acct[j],
                                    r,
                                );
                            }
                        }
                        None => {
                            shared.kind("cancelled");
                            for &j in &pick {
                                acct[j].amb += 1;
                            }
                        }
                    }
                }
                if rng.below(8) == 0 {
                    tokio::time::sleep(Duration::from_micros(rng.below(400))).await;
                }
            }
            accts.lock().unwrap().insert(w, acct);
            let _ = done.send(who);
        });
    }
    drop(done_tx);

    // Chaos, from this thread.
    let started = Instant::now();
    let mut events = 0;
    while started.elapsed() < cfg.run_for {
        std::thread::sleep(Duration::from_millis(50 + rng.below(250)));
        let s = rng.below(2) as usize;
        match cfg.chaos {
            Chaos::Freeze => {
                pool.servers[s].pause();
                std::thread::sleep(Duration::from_millis(10 + rng.below(400)));
                pool.servers[s].resume();
                events += 1;
            }
            Chaos::Kill => {
                // Kill mid-traffic; restart after 0..300 ms.
                pool.servers[s].kill();
                std::thread::sleep(Duration::from_millis(rng.below(300)));
                pool.servers[s].restart();
                events += 1;
            }
            Chaos::TinyTimeout => {}
        }
    }
    println!("{events} chaos events in {:?}", started.elapsed());
    stop.store(true, Ordering::Relaxed);
    stop_and_report(&shared, &store, &done_rx, workers + cfg.readers + 1);
    for t in threads {
        t.join().unwrap();
    }

    // Liveness after the chaos: every lane must still serve (a lane left
    // driving would hang its waiters). Many concurrent callers, so every
    // lane of every server is used.
    std::thread::sleep(Duration::from_millis(500));
    let live_deadline = Instant::now() + Duration::from_secs(15);
    let (tx, rx) = mpsc::channel::<(usize, usize)>();
    for t in 0..16 {
        let (store, tx) = (store.clone(), tx.clone());
        std::thread::spawn(move || {
            let mut ok = 0;
            for i in 0..100 {
                let key = k(&format!("r9-live-{t}-{}", i % 7));
                if store.set(&key, b"x", Ttl::Never).is_ok() {
                    ok += 1;
                }
            }
            let _ = tx.send((t, ok));
        });
    }
    drop(tx);
    let mut live = Vec::new();
    while live.len() < 16 {
        match rx.recv_timeout(live_deadline.saturating_duration_since(Instant::now())) {
            Ok(x) => live.push(x),
            Err(_) => break,
        }
    }
    let oks: usize = live.iter().map(|x| x.1).sum();
    println!(
        "liveness: {} of 16 callers done, {oks} of {} sets ok",
        live.len(),
        live.len() * 100
    );
    assert_eq!(
        live.len(),
        16,
        "HANG after the chaos: a lane does not serve"
    );

    // The exact accounting (not after kills: restarts lose counters).
    let accts = accts.lock().unwrap();
    let mut checked = 0;
    let mut ok_total = 0;
    let mut amb_total = 0;
    let mut ns_total = 0;
    if cfg.chaos != Chaos::Kill {
        // Read back with the default timeouts (the chaos store's may be
        // tiny, and the machine loaded).
        let verify = MemcachedStore::builder().connect(pool.addrs()).unwrap();
        for (&w, acct) in accts.iter() {
            for (j, key) in keys_of(w).iter().enumerate() {
                let a = &acct[j];
                ok_total += a.ok;
                amb_total += a.amb;
                ns_total += a.not_sent;
                let item = verify.get(key).unwrap().unwrap();
                let v: u64 = std::str::from_utf8(&item.value).unwrap().parse().unwrap();
                let applied = v - base(w, j);
                if applied < a.ok || applied > a.ok + a.amb {
                    shared.wrong(format!(
                        "{key}: {applied} applied, but {} ok, {} ambiguous, {} not sent",
                        a.ok, a.amb, a.not_sent
                    ));
                }
                checked += 1;
            }
        }
        println!(
            "accounting: {checked} counters, {ok_total} ok, {amb_total} ambiguous/cancelled, {ns_total} not sent"
        );
    } else {
        println!(
            "accounting: {} workers reported (value ranges only)",
            accts.len()
        );
    }
    assert_nothing_wrong(&shared);
    drop(rt);
}

/// How long each test's chaos lasts: 6 s by default (CI runs five of them,
/// each keeping both cores busy), `MCDS_CHAOS_SECS` for a longer campaign
/// (the review ran 12 to 15 s each).
fn chaos_for() -> Duration {
    let secs = std::env::var("MCDS_CHAOS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    Duration::from_secs(secs)
}

#[test]
fn freezes_with_mixed_callers_lose_nothing_and_misreport_nothing() {
    run(Cfg {
        chaos: Chaos::Freeze,
        conns: 0,
        io_timeout: Duration::from_millis(120),
        run_for: chaos_for(),
        sync_single: 6,
        sync_pipe: 3,
        async_tasks: 10,
        readers: 2,
    });
}

#[test]
fn kills_and_restarts_with_mixed_callers_hang_nobody() {
    run(Cfg {
        chaos: Chaos::Kill,
        conns: 0,
        io_timeout: Duration::from_millis(150),
        run_for: chaos_for(),
        sync_single: 6,
        sync_pipe: 3,
        async_tasks: 10,
        readers: 2,
    });
}

#[test]
fn a_tiny_io_timeout_with_big_replies_loses_nothing() {
    run(Cfg {
        chaos: Chaos::TinyTimeout,
        conns: 0,
        io_timeout: Duration::from_millis(3),
        run_for: chaos_for(),
        sync_single: 6,
        sync_pipe: 3,
        async_tasks: 10,
        readers: 3,
    });
}

/// A value of writer `w`, its `seq`-th set, `len` bytes: `<w:seq>` repeated.
fn tagged(w: usize, seq: u64, len: usize) -> Vec<u8> {
    let tag = format!("<{w}:{seq}>");
    tag.bytes().cycle().take(len.max(tag.len())).collect()
}

/// The (writer, seq) of a value made by [`tagged`], if it is whole.
fn untag(v: &[u8]) -> Option<(usize, u64)> {
    let end = v.iter().position(|&b| b == b'>')?;
    let tag = std::str::from_utf8(&v[..=end]).ok()?;
    let (w, seq) = tag.strip_prefix('<')?.strip_suffix('>')?.split_once(':')?;
    let (w, seq) = (w.parse().ok()?, seq.parse().ok()?);
    (tagged(w, seq, v.len()) == v).then_some((w, seq))
}

/// What one writer knows of its key.
#[derive(Default)]
struct Writes {
    last_ok: Option<u64>,
    ambiguous: std::collections::BTreeSet<u64>,
    not_sent: std::collections::BTreeSet<u64>,
}

impl Writes {
    fn set_outcome(&mut self, shared: &Shared, seq: u64, r: &Result<u64, Error>) {
        match r {
            Ok(_) => {
                shared.kind("set ok");
                self.last_ok = Some(seq);
            }
            Err(Error::Ambiguous { .. }) => {
                shared.kind("set ambiguous");
                self.ambiguous.insert(seq);
            }
            Err(Error::Io { .. } | Error::Timeout { .. } | Error::ServerDown { .. }) => {
                shared.kind("set not sent");
                self.not_sent.insert(seq);
            }
            Err(e) => {
                shared.kind(&format!(
                    "set other: {}",
                    e.to_string().chars().take(60).collect::<String>()
                ));
                self.ambiguous.insert(seq);
            }
        }
    }

    fn check_get(
        &self,
        shared: &Shared,
        who: &str,
        w: usize,
        key: &Key,
        got: Result<Option<mcds_core::Item>, Error>,
    ) {
        match got {
            Ok(Some(item)) => {
                shared.kind("get ok");
                match untag(&item.value) {
                    Some((ww, seq)) if ww == w => {
                        if self.not_sent.contains(&seq) {
                            shared
                                .wrong(format!("{who}: {key} holds set #{seq}, reported NOT SENT"));
                        } else if Some(seq) != self.last_ok && !self.ambiguous.contains(&seq) {
                            shared.wrong(format!(
                                "{who}: {key} holds set #{seq}; last ok #{:?}, ambiguous {:?}",
                                self.last_ok,
                                self.ambiguous.iter().rev().take(5).collect::<Vec<_>>()
                            ));
                        }
                    }
                    other => shared.wrong(format!(
                        "{who}: {key} gave {} bytes, tag {other:?} (not writer {w}'s)",
                        item.value.len()
                    )),
                }
            }
            Ok(None) => {
                shared.kind("get miss");
                if self.last_ok.is_some() {
                    shared.wrong(format!("{who}: {key} missing after an ok set"));
                }
            }
            Err(_) => shared.kind("get error"),
        }
    }
}

fn size(rng: &mut Rng) -> usize {
    match rng.below(4) {
        0 => 1 + rng.below(100) as usize,
        1 => 1 + rng.below(8 * 1024) as usize,
        // Past MAX_WRITE (256 KiB): a write of its own, the rest waits.
        _ => 60 * 1024 + rng.below(400 * 1024) as usize,
    }
}

/// Sync and async writers of big and small values share one connection to
/// one server that freezes: the MAX_WRITE cut puts a handed-over caller's
/// own request past the first write, and a caller that found the lane idle
/// goes first. Each writer checks that its key holds its last ok set or
/// one of its ambiguous ones: never one reported not sent, never another
/// writer's.
#[test]
fn big_and_small_writes_on_one_connection_across_freezes() {
    let seed = seed();
    let mut rng = Rng(seed);
    let mut pool = ServerPool::start(1, ServerOptions::default().memory_mb(256));
    let server = &mut pool.servers[0];
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(1)
            .io_timeout(Duration::from_millis(250))
            .connect_timeout(Duration::from_millis(150))
            .down_backoff(Duration::from_millis(30), Duration::from_millis(120))
            .connect([server.addr()])
            .unwrap(),
    );
    let shared = Arc::new(Shared::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<String>();
    let sync_writers = 5;
    let async_writers = 6;
    for w in 0..sync_writers {
        let (store, shared, stop, done) =
            (store.clone(), shared.clone(), stop.clone(), done_tx.clone());
        let mut rng = worker_rng(seed, w);
        std::thread::spawn(move || {
            let who = format!("sync writer {w}");
            let key = k(&format!("r9-wr-{w}"));
            let mut writes = Writes::default();
            let mut seq = 0;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let v = tagged(w, seq, size(&mut rng));
                let t = Instant::now();
                let r = store.set(&key, &v, Ttl::Never);
                shared.took(t.elapsed(), &format!("{who} set"));
                writes.set_outcome(&shared, seq, &r);
                let t = Instant::now();
                let got = store.get(&key);
                shared.took(t.elapsed(), &format!("{who} get"));
                writes.check_get(&shared, &who, w, &key, got);
            }
            let _ = done.send(who);
        });
    }
    let rt = two_worker_runtime();
    for a in 0..async_writers {
        let w = sync_writers + a;
        let (store, shared, stop, done) =
            (store.clone(), shared.clone(), stop.clone(), done_tx.clone());
        let mut rng = worker_rng(seed, w);
        rt.spawn(async move {
            let who = format!("async writer {w}");
            let key = k(&format!("r9-wr-{w}"));
            let mut writes = Writes::default();
            let mut seq = 0;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let v = tagged(w, seq, size(&mut rng));
                let op = Op::Set {
                    key: &key,
                    value: &v,
                    ttl: Ttl::Never,
                };
                let t = Instant::now();
                let r = store.execute_async(&op).await.and_then(Reply::cas);
                shared.took(t.elapsed(), &format!("{who} set"));
                writes.set_outcome(&shared, seq, &r);
                let op = Op::Get(&key);
                let t = Instant::now();
                let got = store.execute_async(&op).await.and_then(Reply::item);
                shared.took(t.elapsed(), &format!("{who} get"));
                writes.check_get(&shared, &who, w, &key, got);
            }
            let _ = done.send(who);
        });
    }
    drop(done_tx);
    let started = Instant::now();
    let mut freezes = 0;
    while started.elapsed() < chaos_for() {
        std::thread::sleep(Duration::from_millis(50 + rng.below(300)));
        server.pause();
        std::thread::sleep(Duration::from_millis(10 + rng.below(600)));
        server.resume();
        freezes += 1;
    }
    stop.store(true, Ordering::Relaxed);
    println!("{freezes} freezes in {:?}", started.elapsed());
    stop_and_report(&shared, &store, &done_rx, sync_writers + async_writers);
    assert_nothing_wrong(&shared);
    drop(rt);
}

/// One caller's counter across kills: counted exactly per server process.
/// A restarted server has lost it; the caller finds it missing and adds it
/// again (a new epoch). Within an epoch every ok reply must be
/// `base + ok + 1 ..= base + ok + ambiguous + 1`: a request reported not
/// sent that reached the new process, or one applied twice, breaks it.
struct Epoch {
    ok: u64,
    amb: u64,
    /// The counter must be added again (it was found missing).
    lost: bool,
    epochs: u64,
}

impl Epoch {
    fn outcome(&mut self, shared: &Shared, who: &str, base: u64, r: Result<Reply, Error>) {
        match r {
            Ok(Reply::Counter(Some(v))) => {
                shared.kind("ok");
                let (lo, hi) = (base + self.ok + 1, base + self.ok + self.amb + 1);
                if self.lost || v < lo || v > hi {
                    shared.wrong(format!(
                        "{who}: replied {v}, want {lo}..={hi} (epoch {}, lost {})",
                        self.epochs, self.lost
                    ));
                }
                self.ok += 1;
            }
            Ok(Reply::Counter(None)) => {
                shared.kind("missing (restarted)");
                self.lost = true;
            }
            Ok(other) => shared.wrong(format!("{who}: replied {other:?}")),
            Err(Error::Ambiguous { .. }) => {
                shared.kind("ambiguous");
                self.amb += 1;
            }
            Err(Error::Io { .. } | Error::Timeout { .. } | Error::ServerDown { .. }) => {
                shared.kind("not sent");
            }
            Err(e) => {
                shared.kind(&format!(
                    "other: {}",
                    e.to_string().chars().take(60).collect::<String>()
                ));
                self.amb += 1;
            }
        }
    }

    /// After an `add` of `base`: a new epoch if it stored (or found it,
    /// added by an earlier ambiguous add).
    fn added(&mut self, shared: &Shared, r: Result<mcds_core::Stored, Error>) {
        match r {
            Ok(_) => {
                shared.kind("re-added");
                *self = Epoch {
                    ok: 0,
                    amb: 0,
                    lost: false,
                    epochs: self.epochs + 1,
                };
            }
            Err(_) => shared.kind("re-add failed"),
        }
    }
}

#[test]
fn counters_across_kills_are_exact_per_server_process() {
    let seed = seed();
    let mut rng = Rng(seed);
    let conns = 1 + rng.below(2) as usize;
    println!("{conns} connection(s)");
    let mut pool = ServerPool::start(1, ServerOptions::default());
    let server = &mut pool.servers[0];
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(conns)
            .io_timeout(Duration::from_millis(150))
            .connect_timeout(Duration::from_millis(150))
            .down_backoff(Duration::from_millis(20), Duration::from_millis(60))
            .connect([server.addr()])
            .unwrap(),
    );
    let shared = Arc::new(Shared::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel::<String>();
    let (sync_n, async_n) = (4, 6);
    let base = |w: usize| (w as u64 + 1) * 1_000_000_000;
    for w in 0..sync_n {
        let (store, shared, stop, done) =
            (store.clone(), shared.clone(), stop.clone(), done_tx.clone());
        let mut rng = worker_rng(seed, w);
        std::thread::spawn(move || {
            let who = format!("sync {w}");
            let key = k(&format!("r9-ep-{w}"));
            let mut e = Epoch {
                ok: 0,
                amb: 0,
                lost: true,
                epochs: 0,
            };
            while !stop.load(Ordering::Relaxed) {
                if e.lost {
                    let r = store.add(&key, base(w).to_string().as_bytes(), Ttl::Never);
                    e.added(&shared, r);
                    continue;
                }
                let t = Instant::now();
                let r = store.execute(&Op::Incr {
                    key: &key,
                    delta: 1,
                });
                shared.took(t.elapsed(), &who);
                e.outcome(&shared, &who, base(w), r);
                // Worker 0 pauses often (the idle check, the uncontended path).
                if w == 0 || rng.below(6) == 0 {
                    std::thread::sleep(Duration::from_micros(rng.below(500)));
                }
            }
            let _ = done.send(format!("{who} ({} epochs)", e.epochs));
        });
    }
    let rt = two_worker_runtime();
    for a in 0..async_n {
        let w = sync_n + a;
        let (store, shared, stop, done) =
            (store.clone(), shared.clone(), stop.clone(), done_tx.clone());
        let mut rng = worker_rng(seed, w);
        rt.spawn(async move {
            let who = format!("async {w}");
            let key = k(&format!("r9-ep-{w}"));
            let value = base(w).to_string();
            let mut e = Epoch {
                ok: 0,
                amb: 0,
                lost: true,
                epochs: 0,
            };
            while !stop.load(Ordering::Relaxed) {
                if e.lost {
                    let op = Op::Add {
                        key: &key,
                        value: value.as_bytes(),
                        ttl: Ttl::Never,
                    };
                    let r = store.execute_async(&op).await.and_then(Reply::stored);
                    e.added(&shared, r);
                    continue;
                }
                let op = Op::Incr {
                    key: &key,
                    delta: 1,
                };
                let t = Instant::now();
                let r = store.execute_async(&op).await;
                shared.took(t.elapsed(), &who);
                e.outcome(&shared, &who, base(w), r);
                if rng.below(6) == 0 {
                    tokio::time::sleep(Duration::from_micros(rng.below(500))).await;
                }
            }
            let _ = done.send(format!("{who} ({} epochs)", e.epochs));
        });
    }
    drop(done_tx);
    let started = Instant::now();
    let mut kills = 0;
    while started.elapsed() < chaos_for() {
        std::thread::sleep(Duration::from_millis(20 + rng.below(300)));
        server.kill();
        std::thread::sleep(Duration::from_millis(rng.below(150)));
        server.restart();
        kills += 1;
    }
    stop.store(true, Ordering::Relaxed);
    println!("{kills} kills in {:?}", started.elapsed());
    stop_and_report(&shared, &store, &done_rx, sync_n + async_n);
    assert_nothing_wrong(&shared);
    drop(rt);
}
