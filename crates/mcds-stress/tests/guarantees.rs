//! Guarantees that must hold on real memcached, each in a case that broke
//! them once: a server restart (CAS ids start again at 1), a server without
//! CAS (`-C`), the protocol paths of servers before 1.6.13, an `extend` whose
//! reply never came, memcached's own clock ticks (not aligned to Unix
//! seconds), absurd sizes, and key names that contain the separator.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, Clock, DeleteOutcome, Error, Key, Scope, Store, SystemClock, Ttl};
use mcds_counter::{ShadowCounter, WindowCounter};
use mcds_eventlog::EventLog;
use mcds_lock::{Extend, Lock, Release};
use mcds_memcached::{MemcachedStore, Version};
use mcds_set::Table;
use mcds_testkit::{MemcachedServer, ServerOptions};

fn store(addr: &str) -> Arc<MemcachedStore> {
    Arc::new(MemcachedStore::connect(addr).unwrap())
}

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

const TTL: Duration = Duration::from_secs(30);

// ---- 1. restarts ----

/// A holds the lock; the server restarts; B takes the lock on the new
/// incarnation, with the same CAS id A had. A's extend and release must
/// report Lost and leave B's lock alone; nobody else gets in.
#[test]
fn a_restart_never_lets_an_old_guard_act_on_the_next_lock() {
    let mut server = MemcachedServer::start_default();
    let client_a = store(&server.addr());
    let a = Lock::new(client_a.clone(), "job", TTL)
        .unwrap()
        .try_acquire()
        .unwrap()
        .unwrap();
    server.restart();
    let client_b = store(&server.addr());
    let lock_b = Lock::new(client_b.clone(), "job", TTL).unwrap();
    let b = lock_b
        .try_acquire()
        .unwrap()
        .expect("the restarted server is empty");
    let extended = a.extend(TTL).unwrap();
    let released = a.release().unwrap();
    let client_c = store(&server.addr());
    let c = Lock::new(client_c, "job", TTL)
        .unwrap()
        .try_acquire()
        .unwrap();
    println!(
        "after a restart: A's extend {extended:?}, A's release {released:?}, C's acquire {:?}, B lost: {}",
        c.as_ref().map(|_| "granted"),
        b.is_lost()
    );
    assert_eq!(extended, Extend::Lost, "A extended B's lock");
    assert_eq!(released, Release::Lost, "A released B's lock");
    assert!(c.is_none(), "C acquired while B holds the lock");
    assert_eq!(lock_b.holder().unwrap().as_deref(), Some(b.owner_token()));
    assert!(!b.is_lost());
    assert_eq!(b.extend(TTL).unwrap(), Extend::Extended);
    assert_eq!(b.release().unwrap(), Release::Released);
}

/// The same for a bare CAS write and a CAS delete: an id read before a
/// restart matches nothing after it, even where the numbering collides.
#[test]
fn a_cas_id_from_before_a_restart_matches_nothing_after_it() {
    let mut server = MemcachedServer::start_default();
    let old = store(&server.addr());
    let key = k("doc");
    old.set(&key, b"v1", Ttl::Never).unwrap();
    let stale = old.get(&key).unwrap().unwrap().cas;
    server.restart();
    let new = store(&server.addr());
    new.set(&key, b"v2", Ttl::Never).unwrap();
    let cas = old.cas(&key, b"v3", Ttl::Never, stale).unwrap();
    let deleted = old.delete_cas(&key, stale).unwrap();
    println!("after a restart, the old CAS id: cas {cas:?}, delete_cas {deleted:?}");
    assert_eq!(cas, CasOutcome::Exists);
    assert_eq!(deleted, DeleteOutcome::Exists);
    assert_eq!(new.get(&key).unwrap().unwrap().value, b"v2");
    // Fresh ids work on the new incarnation, from either client.
    let fresh = old.get(&key).unwrap().unwrap().cas;
    assert!(matches!(
        new.cas(&key, b"v4", Ttl::Never, fresh).unwrap(),
        CasOutcome::Stored(_)
    ));
}

/// Whatever someone stored under the incarnation key works as a marker
/// (only its hash is used): a 2000-byte value there once made every new
/// connection fail its handshake until the key was deleted by hand.
#[test]
fn a_foreign_value_under_the_marker_key_is_a_marker() {
    let server = MemcachedServer::start_default();
    server.raw_set(mcds_memcached::INCARNATION_KEY, &[b'm'; 2000]);
    let s = store(&server.addr());
    let key = k("after");
    let cas = s.set(&key, b"v", Ttl::Never).unwrap();
    assert_eq!(s.get(&key).unwrap().unwrap().cas, cas);
    let stale = s.set(&key, b"w", Ttl::Never).unwrap();
    assert_eq!(
        s.cas(&key, b"x", Ttl::Never, cas).unwrap(),
        CasOutcome::Exists
    );
    assert!(matches!(
        s.cas(&key, b"x", Ttl::Never, stale).unwrap(),
        CasOutcome::Stored(_)
    ));
}

// ---- 2. servers without CAS ----

/// memcached `-C` answers every CAS id as 0, so `md k C0` deletes whatever is
/// there: a lock there could not tell its own item from the next holder's.
/// Nothing that needs CAS may start.
#[test]
fn a_server_without_cas_refuses_locks_and_cas_writes() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let s = store(&server.addr());
    let acquired = Lock::new(s.clone(), "job", TTL).unwrap().try_acquire();
    println!("-C: Lock::try_acquire gave {acquired:?}");
    assert!(
        matches!(acquired, Err(Error::Unsupported { .. })),
        "a lock was granted on a server without CAS: {acquired:?}"
    );
    assert!(
        s.get(&k("lock:job:owner")).unwrap().is_none(),
        "nothing written"
    );
    let key = k("x");
    s.set(&key, b"v", Ttl::Never).unwrap();
    assert!(!s.supports_cas(&key).unwrap());
    let e = s.cas(&key, b"w", Ttl::Never, 0).unwrap_err();
    assert!(e.to_string().contains("-C"), "{e}");
    assert!(matches!(
        s.delete_cas(&key, 0),
        Err(Error::Unsupported { .. })
    ));
    assert!(matches!(
        s.update(&key, Ttl::Never, 3, &mut |_| Some(b"w".to_vec())),
        Err(Error::Unsupported { .. })
    ));
    assert_eq!(s.get(&key).unwrap().unwrap().value, b"v", "left alone");
}

/// `-C` with `-M`, full before any client connected: the incarnation marker
/// cannot be stored, so the handshake learns `-C` from `stats settings`,
/// and still no lock is granted.
#[test]
fn a_full_server_without_cas_still_refuses_locks() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default().memory_mb(2).no_evict()
    });
    let mut flood = Vec::new();
    for i in 0..60_000 {
        flood.extend_from_slice(
            format!("set f{i:06} 0 0 32 noreply\r\n{}\r\n", "x".repeat(32)).as_bytes(),
        );
    }
    flood.extend_from_slice(b"version\r\n");
    server.raw(&flood, |line| line.starts_with("VERSION"));
    let s = store(&server.addr());
    let acquired = Lock::new(s.clone(), "job", TTL).unwrap().try_acquire();
    println!("-C -M, full: Lock::try_acquire gave {acquired:?}");
    assert!(
        matches!(acquired, Err(Error::Unsupported { .. })),
        "{acquired:?}"
    );
}

/// A client connected while the server had CAS; the server then restarts
/// with `-C` on the same port. The client's next acquire must be refused,
/// not granted on a lock it could neither extend nor release.
#[test]
fn a_lock_is_refused_after_a_restart_with_dash_c() {
    let mut server = MemcachedServer::start_default();
    let client = store(&server.addr());
    client.get(&k("warm")).unwrap(); // a pooled connection that saw CAS
    server.restart_with(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let acquired = Lock::new(client, "cron", TTL).unwrap().try_acquire();
    println!("after a restart with -C: Lock::try_acquire gave {acquired:?}");
    assert!(
        matches!(acquired, Err(Error::Unsupported { .. })),
        "{acquired:?}"
    );
}

// ---- 3. older servers' paths ----

/// Before 1.6.13 `md` ignores `C`; `delete_cas` is then a CAS write of an
/// item that is already expired: one atomic command (a text `cas`, sent
/// with the `mg` that keeps replies in step, in one write), so no pause of
/// the releaser can make it delete the next holder's lock. Forced on the
/// installed server with `version_cap`.
#[test]
fn delete_cas_on_servers_before_1_6_13_is_one_atomic_command() {
    let server = MemcachedServer::start(ServerOptions::default().log_commands());
    let old = Arc::new(
        MemcachedStore::builder()
            .version_cap(Version(1, 6, 12))
            .connect([server.addr()])
            .unwrap(),
    );
    let key = k("old");
    let cas = old.set(&key, b"v", Ttl::Never).unwrap();
    let before = server.command_count();
    assert_eq!(
        old.delete_cas(&key, cas ^ 1).unwrap(),
        DeleteOutcome::Exists
    );
    assert_eq!(old.delete_cas(&key, cas).unwrap(), DeleteOutcome::Deleted);
    assert_eq!(old.delete_cas(&key, cas).unwrap(), DeleteOutcome::NotFound);
    assert_eq!(
        server.command_count() - before,
        6,
        "one text cas and its mg each"
    );
    assert!(old.get(&key).unwrap().is_none());
    assert!(old.add(&key, b"again", Ttl::Never).unwrap().is_stored());
    // The lock on that path: A's lease ends (deleted behind its back), B
    // takes the lock, A's release must leave B's alone.
    let lock = Lock::new(old.clone(), "job", TTL).unwrap();
    let a = lock.try_acquire().unwrap().unwrap();
    old.delete(&k("lock:job:owner")).unwrap();
    let b = lock.try_acquire().unwrap().unwrap();
    assert_eq!(a.release().unwrap(), Release::Lost);
    assert_eq!(lock.holder().unwrap().as_deref(), Some(b.owner_token()));
    assert_eq!(b.release().unwrap(), Release::Released);
    let commands = server.commands();
    assert!(
        commands
            .iter()
            .all(|c| !c.starts_with("md ") || !c.contains(" C")),
        "an md with C was sent to a '1.6.12' server: {commands:?}"
    );
}

// ---- 4. replies that never came ----

/// The server is frozen while `extend` is in flight: the client gets
/// Ambiguous, and the write is applied when the server resumes. The guard
/// must find its own token and carry on, and its release must free the
/// lock, not strand it for a whole TTL.
#[test]
fn an_ambiguous_extend_that_was_applied_is_adopted() {
    let server = MemcachedServer::start_default();
    let s = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(300))
            .connect([server.addr()])
            .unwrap(),
    );
    let lock = Lock::new(s.clone(), "job", Duration::from_secs(20)).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    server.pause();
    let first = guard.extend(Duration::from_secs(20));
    server.resume();
    // The write queued on the frozen connection is applied on resume.
    std::thread::sleep(Duration::from_millis(200));
    let second = guard.extend(Duration::from_secs(20));
    let lost = guard.is_lost();
    let released = guard.release();
    let holder = lock.holder().unwrap();
    println!(
        "frozen extend: {first:?}; then extend {second:?} (is_lost {lost}), release {released:?}, holder after {holder:?}"
    );
    assert!(matches!(first, Err(Error::Ambiguous { .. })), "{first:?}");
    assert_eq!(second.unwrap(), Extend::Extended);
    assert!(!lost);
    assert_eq!(released.unwrap(), Release::Released);
    assert_eq!(holder, None, "the lock was stranded");
}

/// Writes queued while the server is frozen (SIGSTOP) are applied when it
/// resumes, before memcached's clock thread has caught up. With relative
/// TTLs their expiry came from the clock of before the pause, so a TTL
/// shorter than the pause expired at once: a lock granted on resume was
/// free again for the next client, and a window increment was acknowledged
/// and gone. mcds sends absolute expiry times on the server's own clock,
/// which a frozen clock does not shorten. A connection dialed during the
/// pause reads the stale clock in its handshake; that sample must not
/// lower the estimate either.
#[test]
fn writes_applied_as_a_frozen_server_resumes_keep_their_ttl() {
    let ttl = Duration::from_secs(2);
    // Longer than the lock's item TTL (ttl + 1 s) and the window's slot keys
    // ((3 + 1) × 1 s).
    let pause = Duration::from_secs(5);
    let server = MemcachedServer::start_default();
    let [a, b, c]: [Arc<dyn Store>; 3] = std::array::from_fn(|_| store(&server.addr()) as _);
    // Each client connects (and reads the server's clock) before the pause:
    // one pooled connection each.
    for s in [&a, &b, &c] {
        s.get(&k("warm")).unwrap();
    }
    let lock_a = Lock::new(a.clone(), "job", ttl).unwrap();
    let lock_b = Lock::new(b.clone(), "job", ttl).unwrap();
    let slot = Duration::from_secs(1);
    let queued = WindowCounter::new(c, "queued", slot, 3).unwrap();
    let dialed = WindowCounter::new(a, "dialed", slot, 3).unwrap();
    server.pause();
    std::thread::sleep(pause);
    let (sent, acquired, counted) = std::thread::scope(|scope| {
        // The lock and the first counter go out on pooled connections and
        // wait in the frozen server's socket buffers.
        let lock = scope.spawn(|| (Instant::now(), lock_a.try_acquire()));
        let first = scope.spawn(|| queued.incr(1));
        std::thread::sleep(Duration::from_millis(50));
        // A's pooled connection is taken: this one dials, and its
        // handshake is answered with the stale clock.
        let second = scope.spawn(|| dialed.incr(1));
        std::thread::sleep(Duration::from_millis(300));
        server.resume();
        let (sent, acquired) = lock.join().unwrap();
        let counted = [first.join().unwrap(), second.join().unwrap()];
        (sent, acquired, counted)
    });
    let guard = acquired.unwrap().expect("the lock was free");
    for n in counted {
        assert_eq!(n.unwrap(), 1);
    }
    // `value` counts complete slots: look early in the next one, when the
    // server's clock has caught up.
    let wall = SystemClock.now_ms();
    std::thread::sleep(Duration::from_millis(1100 - wall % 1000));
    let totals = [queued.value().unwrap(), dialed.value().unwrap()];
    let mut b_got = None;
    while sent.elapsed() < ttl + Duration::from_secs(5) {
        if let Some(g) = lock_b.try_acquire().unwrap() {
            b_got = Some((sent.elapsed(), g));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (after, _b) = b_got.expect("the lock never expired");
    println!(
        "frozen {pause:?}: A's lock sent during the pause, lease {ttl:?}; B acquired {after:?} after A's send; window totals after resume (queued, dialed): {totals:?}"
    );
    assert!(
        after >= ttl,
        "B acquired {after:?} after A's send, inside A's lease of {ttl:?}"
    );
    assert_eq!(totals, [1, 1], "an acknowledged increment was lost");
    std::mem::forget(guard);
}

// ---- 5. memcached's clock ticks ----

/// A clock that remembers, per thread, the last time it told.
#[derive(Debug)]
struct Spy;

thread_local! {
    static TOLD: Cell<u64> = const { Cell::new(0) };
}

impl Clock for Spy {
    fn now_ms(&self) -> u64 {
        let now = SystemClock.now_ms();
        TOLD.with(|t| t.set(now));
        now
    }
}

fn told_secs() -> u64 {
    TOLD.with(Cell::get) / 1000
}

/// Start a server `phase` ms into a Unix second: memcached's clock ticks
/// once a second from its start, so each phase puts the server's second
/// boundary at another point of the Unix second.
fn server_at_phase(phase_ms: u64) -> MemcachedServer {
    let now = SystemClock.now_ms();
    let wait = (1000 + phase_ms - now % 1000) % 1000;
    std::thread::sleep(Duration::from_millis(wait));
    MemcachedServer::start_default()
}

const PHASES: [u64; 4] = [0, 250, 500, 750];

/// How long the clock-tick tests write: over 20 boundaries of 1 s chunks.
fn run_for() -> Duration {
    Duration::from_secs(
        std::env::var("MCDS_TICK_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(22),
    )
}

/// A 3 × 1 s event log on real memcached, written continuously by two
/// writers across 22 chunk boundaries, at 4 phases of the server's clock.
/// A reader fetches the last 2 s every 100 ms: every acknowledged event in
/// that range must be there, every time.
#[test]
fn an_event_log_loses_no_acknowledged_event_at_any_server_tick_phase() {
    let results: Vec<(u64, usize, usize, usize)> = std::thread::scope(|scope| {
        let runs: Vec<_> = PHASES
            .iter()
            .map(|&phase| scope.spawn(move || event_log_run(phase)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut lost = 0;
    for (phase, acked, fetches, missing) in &results {
        println!(
            "event log 3 x 1 s, server started {phase} ms into a second: {acked} events acknowledged, {fetches} fetches, {missing} acknowledged events missing from a fetch that covered them"
        );
        lost += missing;
    }
    assert_eq!(lost, 0);
}

fn event_log_run(phase: u64) -> (u64, usize, usize, usize) {
    let server = server_at_phase(phase);
    let s: Arc<dyn Store> = store(&server.addr());
    let log = EventLog::new(s, "ticks", Duration::from_secs(1), 3).unwrap();
    let capacity_ms = log.capacity().as_millis() as u64;
    let acked: Mutex<Vec<(u64, Vec<u8>)>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let end = Instant::now() + run_for();
    let (fetches, missing) = std::thread::scope(|scope| {
        for w in 0..2 {
            let (log, acked, stop) = (&log, &acked, &stop);
            scope.spawn(move || {
                let mut seq = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let payload = format!("w{w}:{seq}").into_bytes();
                    if let Ok(e) = log.put(&payload) {
                        acked.lock().unwrap().push((e.at_ms, payload));
                    }
                    seq += 1;
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
        }
        let (mut fetches, mut missing) = (0, 0);
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
            // Everything acknowledged before this fetch, with a time inside
            // the log's reach (50 ms of margin for the clock read inside).
            let known: Vec<(u64, Vec<u8>)> = acked.lock().unwrap().clone();
            let now = SystemClock.now_ms();
            let events = log.fetch(0, u64::MAX).unwrap();
            fetches += 1;
            let got: HashSet<&[u8]> = events.iter().map(|e| e.payload.as_slice()).collect();
            missing += known
                .iter()
                .filter(|(at, _)| *at + capacity_ms >= now + 50)
                .filter(|(_, p)| !got.contains(p.as_slice()))
                .count();
        }
        stop.store(true, Ordering::Relaxed);
        (fetches, missing)
    });
    let acked = acked.lock().unwrap().len();
    (phase, acked, fetches, missing)
}

/// Per slot number: increments acknowledged, and the largest count an
/// `incr` returned.
type Slots = BTreeMap<u64, (u64, u64)>;

/// A 3 × 1 s window counter and a 1 s shadow counter, incremented
/// continuously by two writers across 22 boundaries at 4 server phases.
/// Half a second into every slot the writers are held still and the counts
/// read must equal the acknowledged increments exactly; no `incr` may
/// return more than its slot ever had.
#[test]
fn window_and_shadow_counts_equal_the_acknowledged_increments() {
    let results: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = PHASES
            .iter()
            .map(|&phase| scope.spawn(move || counter_run(phase)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for line in results {
        println!("{line}");
    }
}

fn counter_run(phase: u64) -> String {
    let server = server_at_phase(phase);
    let s: Arc<dyn Store> = store(&server.addr());
    let scope = Scope::new(s).with_clock(Arc::new(Spy));
    let window = WindowCounter::new(&scope, "w", Duration::from_secs(1), 3).unwrap();
    let shadow = ShadowCounter::new(&scope, "s", Duration::from_secs(1)).unwrap();
    // Writers hold it shared around (clock, incr, record); a check takes it
    // exclusively, so nothing is in flight while it reads.
    let gate = RwLock::new(());
    let window_slots: Mutex<Slots> = Mutex::default();
    let shadow_slots: Mutex<Slots> = Mutex::default();
    let stop = AtomicBool::new(false);
    let end = Instant::now() + run_for();
    let mut checks = 0;
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (gate, stop, window, shadow) = (&gate, &stop, &window, &shadow);
            let (window_slots, shadow_slots) = (&window_slots, &shadow_slots);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    {
                        let _held = gate.read().unwrap();
                        if let Ok(n) = window.incr(1) {
                            let e = window_slots.lock().unwrap();
                            record(e, told_secs(), n);
                        }
                        if let Ok(n) = shadow.incr(1) {
                            let e = shadow_slots.lock().unwrap();
                            record(e, told_secs(), n);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
        }
        while Instant::now() < end {
            let now = SystemClock.now_ms();
            std::thread::sleep(Duration::from_millis(1500 - now % 1000));
            let _still = gate.write().unwrap();
            let slot = SystemClock.now_secs();
            let w = window.value().unwrap();
            let sh = shadow.value().unwrap();
            let acked =
                |slots: &Mutex<Slots>, n: u64| slots.lock().unwrap().get(&n).map_or(0, |e| e.0);
            let want_w = acked(&window_slots, slot - 1) + acked(&window_slots, slot - 2);
            let want_sh = acked(&shadow_slots, slot - 1);
            assert_eq!(
                (w, sh),
                (want_w, want_sh),
                "phase {phase} ms, second {slot}: window and shadow counts against the acknowledged increments"
            );
            checks += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    for (name, slots) in [("window", &window_slots), ("shadow", &shadow_slots)] {
        for (slot, (acked, max_returned)) in slots.lock().unwrap().iter() {
            assert!(
                max_returned <= acked,
                "phase {phase} ms: a {name} incr in second {slot} returned {max_returned}, but only {acked} increments were made in it"
            );
        }
    }
    let total: u64 = window_slots.lock().unwrap().values().map(|e| e.0).sum();
    format!(
        "window 3 x 1 s and shadow 1 s, server started {phase} ms into a second: {total} increments each, {checks} checks, every count exact"
    )
}

fn record(mut slots: std::sync::MutexGuard<'_, Slots>, slot: u64, returned: u64) {
    let e = slots.entry(slot).or_default();
    e.0 += 1;
    e.1 = e.1.max(returned);
}

// ---- 6. sizes from callers ----

/// A filter too large for any deployment is refused before anything is
/// allocated (it used to abort the process building one key per block).
#[test]
fn an_absurd_bloom_filter_is_refused() {
    let s: Arc<dyn Store> = Arc::new(mcds_core::MemoryStore::new());
    for (items, rate) in [(u64::MAX, 0.01), (1 << 40, 1e-300), (u64::MAX, 0.5)] {
        let r = mcds_sketch::BloomFilter::new(s.clone(), "huge", items, rate);
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "{items} items at {rate}: {r:?}"
        );
    }
}

// ---- 7. key names ----

/// Table `users:v:admin`'s member list and table `users`'s member
/// `admin:members` used to be the same key.
#[test]
fn tables_with_separators_in_their_names_do_not_collide() {
    let server = MemcachedServer::start_default();
    let s: Arc<dyn Store> = store(&server.addr());
    let users = Table::new(s.clone(), "users").unwrap();
    let other = Table::new(s.clone(), "users:v:admin").unwrap();
    other.set("x", b"1").unwrap();
    users.set("admin:members", b"not a list").unwrap();
    other.set("y", b"2").unwrap();
    let keys = other.keys().unwrap();
    println!("table users:v:admin after writing users/admin:members: {keys:?}");
    assert_eq!(keys, vec![b"x".to_vec(), b"y".to_vec()]);
    assert_eq!(users.get("admin:members").unwrap().unwrap(), b"not a list");
}
