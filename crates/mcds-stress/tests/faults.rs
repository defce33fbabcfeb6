//! Faults under the structures, on real memcached: a server killed with -9
//! mid-run and restarted, a server frozen with SIGSTOP, a held lock evicted,
//! `-M` out of memory, and a pool of 3 with one server dead.
//!
//! Every op must return Ok or a clear error within the configured timeout
//! plus 100 ms, never panic or hang, and work again once the server is back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcds_core::{Error, Key, Store};
use mcds_counter::{Counter, RateLimiter, Window};
use mcds_eventlog::EventLog;
use mcds_lock::{Extend, Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_set::Set;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};

const TIMEOUT: Duration = Duration::from_millis(500);

/// The tests run one at a time: the timing bounds are about the client,
/// not about a flood in a neighbouring test starving it of CPU.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
/// What an op may take: the timeout plus 100 ms.
const BOUND: Duration = Duration::from_millis(600);

fn store(servers: &str) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .io_timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .down_backoff(Duration::from_millis(20), Duration::from_millis(200))
            .connect(servers.split(','))
            .unwrap(),
    )
}

/// The errors a failing server may cause: all say what happened to the
/// request.
fn is_fault(e: &Error) -> bool {
    matches!(
        e,
        Error::ServerDown { .. }
            | Error::Io { .. }
            | Error::Timeout { .. }
            | Error::Ambiguous { .. }
    )
}

/// One op's outcome.
#[derive(Debug)]
struct Sample {
    op: &'static str,
    started: Instant,
    took: Duration,
    /// `None` for Ok; otherwise the error's kind.
    error: Option<String>,
    ambiguous: bool,
}

fn run<T>(
    samples: &Mutex<Vec<Sample>>,
    op: &'static str,
    f: impl FnOnce() -> mcds_core::Result<T>,
) {
    let started = Instant::now();
    let result = f();
    let took = started.elapsed();
    if let Err(e) = &result {
        assert!(is_fault(e), "{op}: not a clear fault error: {e:?}");
        assert!(!e.to_string().is_empty());
    }
    samples.lock().unwrap().push(Sample {
        op,
        started,
        took,
        ambiguous: matches!(&result, Err(Error::Ambiguous { .. })),
        error: result.err().map(|e| {
            format!("{e:?}")
                .split([' ', '{'])
                .next()
                .unwrap_or("")
                .to_string()
        }),
    });
}

/// Retry `f` until it succeeds (the client waits out its down-backoff).
fn eventually<T>(what: &str, mut f: impl FnMut() -> mcds_core::Result<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if Instant::now() < deadline && is_fault(&e) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{what} did not recover: {e}"),
        }
    }
}

struct Structures {
    counter: Counter,
    lock: Lock,
    set: Set,
    log: EventLog,
    limiter: RateLimiter,
}

fn structures(store: Arc<dyn Store>, name: &str) -> Structures {
    Structures {
        counter: Counter::new(Arc::clone(&store), name).unwrap(),
        lock: Lock::new(Arc::clone(&store), name, Duration::from_secs(10)).unwrap(),
        set: Set::new(Arc::clone(&store), name).unwrap(),
        log: EventLog::new(Arc::clone(&store), name, Duration::from_secs(10), 10).unwrap(),
        limiter: RateLimiter::new(
            store,
            name,
            1_000_000,
            Duration::from_secs(60),
            Window::Sliding,
        )
        .unwrap(),
    }
}

/// 4 threads loop over every structure's ops while `fault` runs on the main
/// thread; returns the samples.
fn under_load(s: &Structures, fault: impl FnOnce()) -> Vec<Sample> {
    let samples = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let (samples, stop) = (&samples, &stop);
            scope.spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match (i + t) % 6 {
                        0 | 1 => run(samples, "counter.incr", || s.counter.incr(1)),
                        2 => run(samples, "lock", || match s.lock.try_acquire()? {
                            Some(g) => g.release().map(drop),
                            None => Ok(()),
                        }),
                        3 => run(samples, "set.add", || s.set.add(&[format!("{t}:{i}")])),
                        4 => run(samples, "log.put", || s.log.put(b"e").map(drop)),
                        _ => run(samples, "limiter.check", || s.limiter.check().map(drop)),
                    }
                    i += 1;
                }
            });
        }
        fault();
        stop.store(true, Ordering::Relaxed);
    });
    samples.into_inner().unwrap()
}

fn summary(samples: &[Sample]) -> String {
    let errors = samples.iter().filter(|s| s.error.is_some()).count();
    let mut kinds: Vec<&str> = samples.iter().filter_map(|s| s.error.as_deref()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let slowest = samples.iter().map(|s| s.took).max().unwrap_or_default();
    format!(
        "{} ops, {} ok, {errors} errors ({}), slowest {slowest:?}",
        samples.len(),
        samples.len() - errors,
        kinds.join("/")
    )
}

fn assert_every_op_succeeded_after(samples: &[Sample], t: Instant, event: &str) {
    for op in [
        "counter.incr",
        "lock",
        "set.add",
        "log.put",
        "limiter.check",
    ] {
        assert!(
            samples
                .iter()
                .any(|x| x.op == op && x.started > t && x.error.is_none()),
            "{op} never succeeded after {event}"
        );
    }
}

fn assert_bounded(samples: &[Sample]) {
    for s in samples {
        assert!(
            s.took <= BOUND,
            "{} took {:?} (> timeout + 100 ms)",
            s.op,
            s.took
        );
    }
}

/// The counter contract: acked ≤ value ≤ acked + ambiguous, for the
/// increments that reached this incarnation of the server (`since`).
fn assert_counter_contract(samples: &[Sample], since: Option<Instant>, value: u64) -> String {
    let incr = |s: &&Sample| s.op == "counter.incr";
    let after = |s: &&Sample| since.is_none_or(|t| s.started >= t);
    let acked = samples
        .iter()
        .filter(incr)
        .filter(after)
        .filter(|s| s.error.is_none())
        .count() as u64;
    let ambiguous = samples
        .iter()
        .filter(incr)
        .filter(after)
        .filter(|s| s.ambiguous)
        .count() as u64;
    // Increments sent before the restart that completed after it may have
    // reached either incarnation.
    let straddling = since.map_or(0, |t| {
        samples
            .iter()
            .filter(incr)
            .filter(|s| {
                s.started < t && s.started + s.took >= t && (s.error.is_none() || s.ambiguous)
            })
            .count() as u64
    });
    assert!(
        acked <= value && value <= acked + ambiguous + straddling,
        "counter {value}: acked {acked}, ambiguous {ambiguous}, straddling {straddling}"
    );
    format!(
        "acked {acked} <= value {value} <= acked + ambiguous {ambiguous} + straddling {straddling}"
    )
}

#[test]
fn killed_server_mid_run_then_restarted() {
    let _serial = serial();
    let mut server = MemcachedServer::start_default();
    let store = store(&server.addr());
    let s = structures(store.clone(), "killed");
    let (restart_began, restarted_at) = (Mutex::new(None), Mutex::new(None));
    let samples = under_load(&s, || {
        std::thread::sleep(Duration::from_millis(700));
        server.kill();
        std::thread::sleep(Duration::from_secs(1));
        *restart_began.lock().unwrap() = Some(Instant::now());
        server.restart();
        *restarted_at.lock().unwrap() = Some(Instant::now());
        std::thread::sleep(Duration::from_millis(1300));
    });
    let restart_began = restart_began.into_inner().unwrap().unwrap();
    let restarted_at = restarted_at.into_inner().unwrap().unwrap();
    assert_bounded(&samples);
    let failed = samples.iter().filter(|s| s.error.is_some()).count();
    assert!(failed > 0, "the kill was not noticed");
    // Every kind of op worked again after the restart (past the backoff).
    assert_every_op_succeeded_after(&samples, restarted_at, "the restart");
    // The same handles work.
    let value = eventually("counter", || s.counter.get());
    // Counted from before the restart began: an increment can reach the
    // new incarnation as soon as it listens, before `restart` returns (a
    // CI run counted one more than the increments started after it).
    let contract = assert_counter_contract(&samples, Some(restart_began), value);
    let guard = eventually("lock", || s.lock.try_acquire()).expect("lock free after restart");
    assert_eq!(guard.release().unwrap(), Release::Released);
    eventually("set", || s.set.members());
    eventually("log", || s.log.fetch(0, u64::MAX / 2));
    println!(
        "killed -9 and restarted: {}; counter after restart: {contract}",
        summary(&samples)
    );
}

#[test]
fn frozen_server_times_out_then_resumes() {
    let _serial = serial();
    let server = MemcachedServer::start_default();
    let store = store(&server.addr());
    let s = structures(store.clone(), "frozen");
    // (stopped from, stopped until, running again from)
    let frozen = Mutex::new((Instant::now(), Instant::now(), Instant::now()));
    let samples = under_load(&s, || {
        std::thread::sleep(Duration::from_millis(500));
        server.pause(); // returns once every server thread is stopped
        let from = Instant::now();
        std::thread::sleep(Duration::from_secs(3));
        let until = Instant::now();
        server.resume();
        *frozen.lock().unwrap() = (from, until, Instant::now());
        std::thread::sleep(Duration::from_millis(1000));
    });
    let (from, until, to) = *frozen.lock().unwrap();
    assert_bounded(&samples);
    let during: Vec<&Sample> = samples
        .iter()
        .filter(|x| x.started > from && x.started + x.took < until)
        .collect();
    assert!(!during.is_empty());
    assert!(
        during.iter().all(|x| x.error.is_some()),
        "an op succeeded while the server was stopped"
    );
    assert!(
        during
            .iter()
            .any(|x| matches!(x.error.as_deref(), Some("Timeout" | "Ambiguous"))),
        "no op timed out: {}",
        summary(&samples)
    );
    assert_every_op_succeeded_after(&samples, to, "SIGCONT");
    // The frozen server kept its data and applied what was queued.
    std::thread::sleep(Duration::from_millis(200));
    let value = eventually("counter", || s.counter.get());
    let contract = assert_counter_contract(&samples, None, value);
    println!(
        "SIGSTOP for 3 s: {}; counter: {contract}",
        summary(&samples)
    );
}

#[test]
fn an_evicted_lock_is_lost_never_released() {
    let _serial = serial();
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let store = store(&server.addr());
    let lock = Lock::new(store.clone(), "evicted", Duration::from_secs(60)).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    // Flood the lock item's slab class (items of about the same size),
    // pipelined, until the lock is evicted. Checked only between rounds of
    // 100 000: reading the lock bumps it in memcached's LRU.
    let mut flooded = 0;
    loop {
        assert_eq!(mcds_stress::flood(store.as_ref(), flooded, 100_000), 0);
        flooded += 100_000;
        if lock.holder().unwrap().is_none() {
            break;
        }
        assert!(flooded < 2_000_000, "the lock was never evicted");
    }
    let evictions = server.stat("evictions");
    assert!(evictions > 0);
    // Another client takes the free lock.
    let other = Lock::new(store.clone(), "evicted", Duration::from_secs(60)).unwrap();
    let second = other.try_acquire().unwrap().expect("free after eviction");
    assert_eq!(guard.extend(Duration::from_secs(60)).unwrap(), Extend::Lost);
    assert!(guard.is_lost());
    assert_eq!(guard.release().unwrap(), Release::Lost);
    // The second holder still holds it.
    assert_eq!(
        lock.holder().unwrap().as_deref(),
        Some(second.owner_token())
    );
    assert_eq!(second.release().unwrap(), Release::Released);
    println!(
        "held lock evicted after {flooded} flood items ({evictions} evictions): extend Lost, release Lost, the next holder kept it"
    );
}

#[test]
fn with_no_evict_writes_report_out_of_memory() {
    let _serial = serial();
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = store(&server.addr());
    // Fill every slab class the structures use, until each refuses.
    let mut acked = Vec::new();
    for size in [10_000usize, 1000, 300, 100, 40, 10, 1] {
        let mut refused = false;
        for i in 0..100_000 {
            let key = Key::new(format!("fill:{size}:{i}")).unwrap();
            match store.set(&key, &vec![b'v'; size], mcds_core::Ttl::Never) {
                Ok(_) => acked.push((key, size)),
                Err(Error::OutOfMemory { .. }) => {
                    refused = true;
                    break;
                }
                Err(e) => panic!("expected OutOfMemory, got {e:?}"),
            }
        }
        assert!(refused, "{size}-byte values never ran out of memory");
    }
    // Every acknowledged write is still there (nothing is evicted).
    for chunk in acked.chunks(500) {
        let keys: Vec<Key> = chunk.iter().map(|(k, _)| k.clone()).collect();
        for (item, (key, size)) in store.get_multi(&keys).unwrap().into_iter().zip(chunk) {
            assert_eq!(item.map(|i| i.value.len()), Some(*size), "{key} lost");
        }
    }
    // The structures surface the error instead of claiming success.
    let oom = |what: &str, r: mcds_core::Result<()>| match r {
        Err(Error::OutOfMemory { .. }) => {}
        other => panic!("{what}: expected OutOfMemory, got {other:?}"),
    };
    let s = structures(store.clone(), "full");
    oom("Counter::incr", s.counter.incr(1).map(drop));
    oom("Lock::try_acquire", s.lock.try_acquire().map(drop));
    oom("Set::add", s.set.add(&["a"]));
    oom("EventLog::put", s.log.put(b"e").map(drop));
    oom("RateLimiter::check", s.limiter.check().map(drop));
    println!(
        "-M: {} writes acked, all still readable; then set, Counter::incr, Lock::try_acquire, Set::add, EventLog::put and RateLimiter::check all gave OutOfMemory",
        acked.len()
    );
}

#[test]
fn pool_of_3_with_one_server_dead() {
    let _serial = serial();
    let mut pool = ServerPool::start(3, ServerOptions::default());
    let servers = pool.servers_arg();
    let store = store(&servers);
    let dead = 1;
    let counters: Vec<(Counter, usize)> = (0..30)
        .map(|i| {
            let c = Counter::new(store.clone(), &format!("c{i}")).unwrap();
            let server = store.server_for(c.key());
            (c, server)
        })
        .collect();
    assert!(counters.iter().any(|(_, s)| *s == dead));
    // A lock whose key lives on the dead server.
    let name = (0..)
        .map(|i| format!("deadlock{i}"))
        .find(|n| store.server_for(&Key::new(format!("lock:{n}:owner")).unwrap()) == dead)
        .unwrap();
    let lock = Lock::new(store.clone(), &name, Duration::from_secs(10)).unwrap();
    let lock_key = Key::new(format!("lock:{name}:owner")).unwrap();

    // A pool's client reads every server's pool record once before it
    // works (see mcds_memcached::pool): one op while all are up.
    store.get(&Key::new("warm-up").unwrap()).unwrap();
    pool.servers[dead].kill();
    let (mut ok, mut failed) = (0, 0);
    for (c, server) in &counters {
        let started = Instant::now();
        let r = c.incr(1);
        assert!(started.elapsed() <= BOUND);
        if *server == dead {
            assert!(
                matches!(&r, Err(e) if is_fault(e)),
                "dead server's key: {r:?}"
            );
            failed += 1;
        } else {
            assert_eq!(r.unwrap(), 1, "a live server's key must keep working");
            ok += 1;
        }
    }
    for _ in 0..20 {
        let started = Instant::now();
        let r = lock.try_acquire();
        assert!(started.elapsed() <= BOUND);
        assert!(
            matches!(&r, Err(e) if is_fault(e)),
            "lock on a dead server: {r:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The lock never moved to a live server.
    for (i, server) in pool.servers.iter().enumerate() {
        if i != dead {
            // One server alone, to look: a pool of its own.
            let single = MemcachedStore::builder()
                .pool_name("look")
                .connect([server.addr()])
                .unwrap();
            assert_eq!(
                single.get(&lock_key).unwrap(),
                None,
                "lock moved to server {i}"
            );
        }
    }
    pool.servers[dead].restart();
    let guard = eventually("lock after restart", || lock.try_acquire()).expect("free");
    let own = MemcachedStore::builder()
        .pool_name("look")
        .connect([pool.servers[dead].addr()])
        .unwrap();
    assert!(
        own.get(&lock_key).unwrap().is_some(),
        "the lock is back on its own server"
    );
    guard.release().unwrap();
    println!(
        "pool of 3, server {dead} dead: {ok} counters on live servers worked, {failed} on the dead one failed within {BOUND:?}; its lock failed 20 times and never moved; after restart it was taken on its own server"
    );
}
