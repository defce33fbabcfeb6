//! mcds-lock on the embedded store (manual clock, no sleeps) and on real
//! memcached.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{Clock, CountingStore, Key, ManualClock, MemoryStore, Scope, Store, Ttl, traffic};
use mcds_lock::{Extend, Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn memory() -> (Arc<dyn Store>, ManualClock) {
    let clock = ManualClock::new(1_800_000_000_000);
    let store = MemoryStore::builder()
        .clock(Arc::new(clock.clone()))
        .build();
    (Arc::new(store), clock)
}

/// A lock with a short backoff, and the manual clock when given.
fn fast(
    store: Arc<dyn Store>,
    name: &str,
    ttl: Duration,
    clock: Option<&ManualClock>,
    fencing: bool,
) -> mcds_core::Result<Lock> {
    let mut scope = Scope::new(store);
    if let Some(clock) = clock {
        scope = scope.with_clock(Arc::new(clock.clone()));
    }
    Ok(Lock::new(scope, name, ttl)?
        .with_fencing(fencing)
        .with_backoff(Duration::from_micros(50), Duration::from_millis(2)))
}

/// 8 threads contend 2000 times each. Inside the critical section: a
/// non-atomic read-modify-write of a value in the store and an in-section
/// holder count. Returns (overlaps, final value).
fn contend(store: Arc<dyn Store>, threads: usize, rounds: usize) -> (usize, u64) {
    let lock = fast(
        Arc::clone(&store),
        "contended",
        Duration::from_secs(30),
        None,
        false,
    )
    .unwrap();
    let shared = Key::new("contended:shared").unwrap();
    store.set(&shared, b"0", Ttl::Never).unwrap();
    let inside = AtomicUsize::new(0);
    let overlaps = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..rounds {
                    let guard = lock.acquire(Duration::from_secs(60)).unwrap();
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    // Non-atomic read-modify-write: only mutual exclusion
                    // keeps it exact.
                    let n = store.get(&shared).unwrap().unwrap().counter().unwrap();
                    store
                        .set(&shared, (n + 1).to_string().as_bytes(), Ttl::Never)
                        .unwrap();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    assert_eq!(guard.release().unwrap(), Release::Released);
                }
            });
        }
    });
    let value = store.get(&shared).unwrap().unwrap().counter().unwrap();
    (overlaps.load(Ordering::SeqCst), value)
}

#[test]
fn contention_memory_8_threads() {
    let (store, _) = memory();
    let (overlaps, value) = contend(store, 8, 2000);
    println!("lock contention, memory, 8 threads x 2000: overlaps {overlaps}, value {value}");
    assert_eq!((overlaps, value), (0, 16_000));
}

#[test]
fn contention_memcached_8_threads() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (overlaps, value) = contend(store, 8, 2000);
    println!("lock contention, memcached, 8 threads x 2000: overlaps {overlaps}, value {value}");
    assert_eq!((overlaps, value), (0, 16_000));
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let dyn_store: Arc<dyn Store> = store.clone();
    let lock = Lock::new(dyn_store, "rt", Duration::from_secs(10)).unwrap();
    lock.holder().unwrap(); // warm the connection
    let (guard, t) = traffic::measure(|| lock.try_acquire().unwrap().unwrap());
    assert_eq!(t.round_trips, 1, "try_acquire");
    let (busy, t) = traffic::measure(|| lock.try_acquire().unwrap());
    assert!(busy.is_none());
    assert_eq!(t.round_trips, 1, "try_acquire when held");
    let (ext, t) = traffic::measure(|| guard.extend(Duration::from_secs(20)).unwrap());
    assert_eq!((ext, t.round_trips), (Extend::Extended, 1), "extend");
    let (rel, t) = traffic::measure(|| guard.release().unwrap());
    assert_eq!((rel, t.round_trips), (Release::Released, 1), "release");
    println!(
        "lock round trips on memcached: try_acquire 1, release 1, extend 1 (CountingStore: {:?})",
        store.all()
    );
}

/// Acquiring with a fencing token is one pipelined round trip (add + ma) on
/// one server, and on a pool when lock and fence share a server; across two
/// servers it is two, in order.
#[test]
fn fenced_acquire_round_trips() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = fast(store, "rt-fenced", Duration::from_secs(10), None, true).unwrap();
    lock.holder().unwrap(); // warm the connection
    // The acquire that creates the fence counter also asks the server for
    // its last loss (its loss record and stats, and the record's first
    // write): once per counter lifetime.
    let (created, t) = traffic::measure(|| lock.try_acquire().unwrap().unwrap());
    println!("fenced try_acquire that creates the counter: {t:?}");
    assert!((2..=5).contains(&t.round_trips), "{t:?}");
    created.release().unwrap();
    let (guard, t) = traffic::measure(|| lock.try_acquire().unwrap().unwrap());
    assert_eq!((t.round_trips, t.commands), (1, 2), "fenced try_acquire");
    let first = guard.fencing_token().unwrap();
    guard.release().unwrap();
    let (again, t) = traffic::measure(|| lock.try_acquire().unwrap().unwrap());
    assert_eq!(t.round_trips, 1);
    assert_eq!(again.fencing_token(), Some(first + 1));
    let (busy, t) = traffic::measure(|| lock.try_acquire().unwrap());
    assert!(busy.is_none());
    assert_eq!(t.round_trips, 1, "fenced try_acquire when held");

    let pool = mcds_testkit::ServerPool::start(3, Default::default());
    let pooled = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let (mut same, mut split) = (0, 0);
    for i in 0..12 {
        let name = format!("fenced-{i}");
        let (lk, fk) = (
            Key::new(format!("lock:{name}:owner")).unwrap(),
            Key::new(format!("lock:{name}:fence")).unwrap(),
        );
        let colocated = pooled.colocated(&lk, &fk);
        let lock = fast(pooled.clone(), &name, Duration::from_secs(10), None, true).unwrap();
        lock.holder().unwrap();
        // Create the counter first (see above).
        lock.try_acquire().unwrap().unwrap().release().unwrap();
        let (g, t) = traffic::measure(|| lock.try_acquire().unwrap().unwrap());
        assert!(g.fencing_token().is_some());
        let expected = if colocated { 1 } else { 3 };
        assert_eq!(t.round_trips, expected, "{name}: colocated {colocated}");
        if colocated { same += 1 } else { split += 1 }
    }
    println!(
        "fenced try_acquire: 1 round trip on one server; pool of 3: {same} locks colocated with their fence (1 round trip), {split} split (3: add, incr, check)"
    );
}

/// A holder whose lease expired cannot release or extend the next holder's
/// lock; fencing tokens keep increasing across holders.
fn expired_holder(store: Arc<dyn Store>, clock: Option<&ManualClock>, wait: &dyn Fn()) {
    let lock = fast(
        Arc::clone(&store),
        "lease",
        Duration::from_secs(1),
        clock,
        true,
    )
    .unwrap();
    let first = lock.try_acquire().unwrap().unwrap();
    let t1 = first.fencing_token().unwrap();
    wait(); // the lease runs out
    let second = lock
        .try_acquire()
        .unwrap()
        .expect("expired lock can be taken");
    let t2 = second.fencing_token().unwrap();
    assert!(t2 > t1, "fencing tokens increase: {t1} then {t2}");
    assert_eq!(first.extend(Duration::from_secs(5)).unwrap(), Extend::Lost);
    assert_eq!(first.release().unwrap(), Release::Lost);
    assert_eq!(
        lock.holder().unwrap().as_deref(),
        Some(second.owner_token())
    );
    assert!(
        lock.try_acquire().unwrap().is_none(),
        "second still holds it"
    );
    assert_eq!(
        second.extend(Duration::from_secs(5)).unwrap(),
        Extend::Extended
    );
    assert_eq!(second.release().unwrap(), Release::Released);
    let third = lock.try_acquire().unwrap().unwrap();
    assert!(third.fencing_token().unwrap() > t2);
}

#[test]
fn expired_holder_memory() {
    let (store, clock) = memory();
    let c = clock.clone();
    expired_holder(store, Some(&clock), &move || {
        c.advance(Duration::from_secs(3))
    });
}

#[test]
fn expired_holder_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    // Real TTLs: the lock's item lives ttl + 2 s on the server's
    // whole-second clock, give or take its ticks: wait until it is gone.
    let probe = Arc::clone(&store);
    expired_holder(store, None, &move || {
        let key = mcds_core::Key::new("lock:lease:owner").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while probe.get(&key).unwrap().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "the lock never expired"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    });
}

#[test]
fn fencing_survives_a_lost_counter() {
    let (store, clock) = memory();
    let lock = fast(
        Arc::clone(&store),
        "f",
        Duration::from_secs(10),
        Some(&clock),
        true,
    )
    .unwrap();
    let mut last = 0;
    for _ in 0..50 {
        let g = lock.try_acquire().unwrap().unwrap();
        let t = g.fencing_token().unwrap();
        assert!(t > last);
        last = t;
        g.release().unwrap();
    }
    // memcached lost the counter (eviction, restart); time moved on.
    store.delete(&Key::new("lock:f:fence").unwrap()).unwrap();
    clock.advance(Duration::from_millis(1));
    let g = lock.try_acquire().unwrap().unwrap();
    assert!(
        g.fencing_token().unwrap() > last,
        "still increasing after the counter was lost"
    );
}

/// Acquire and release `lock` once: its fencing token.
fn one_token(lock: &Lock) -> u64 {
    let guard = lock.try_acquire().unwrap().expect("free");
    let token = guard.fencing_token().unwrap();
    guard.release().unwrap();
    token
}

/// The fence counter (and the lock with it) lost and re-created within one
/// millisecond, and a counter another client re-created from a clock 10 s
/// behind: every token is still larger than the one before.
fn tokens_never_repeat(store: Arc<dyn Store>, clock: &ManualClock, lose: &dyn Fn()) {
    let lock = fast(
        Arc::clone(&store),
        "once",
        Duration::from_secs(10),
        Some(clock),
        true,
    )
    .unwrap();
    let mut last = one_token(&lock);
    for round in 0..20 {
        lose();
        let token = one_token(&lock);
        println!("round {round}: {last} then {token} in the same millisecond");
        assert!(
            token > last,
            "token {token} after {last}: repeated or behind"
        );
        last = token;
    }
    // Another client re-created the counter from a slow clock.
    let behind = (clock.now_ms() - 10_000) * 1_000 * mcds_lock::FENCE_TICKS_PER_MICROSECOND;
    let fence = Key::new("lock:once:fence").unwrap();
    store
        .set(&fence, behind.to_string().as_bytes(), Ttl::Never)
        .unwrap();
    let token = one_token(&lock);
    assert!(
        token > last,
        "token {token} after {last}: the counter fell behind"
    );
    assert!(one_token(&lock) > token);
}

#[test]
fn fencing_tokens_never_repeat_when_the_counter_is_lost_within_a_millisecond() {
    let (store, clock) = memory();
    let fence = Key::new("lock:once:fence").unwrap();
    let s = Arc::clone(&store);
    tokens_never_repeat(Arc::clone(&store), &clock, &move || {
        s.delete(&fence).unwrap();
    });
}

#[test]
fn fencing_tokens_never_repeat_across_flushes_within_a_millisecond_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let clock = ManualClock::starting_now();
    tokens_never_repeat(store, &clock, &|| {
        let reply = server.raw(b"flush_all\r\n", |_| true);
        assert_eq!(reply.first().map(String::as_str), Some("OK"), "{reply:?}");
    });
}

/// A new counter starts at the real clock's microseconds plus the allowed
/// skew, times `FENCE_TICKS_PER_MICROSECOND`, plus a random tie-break.
#[test]
fn a_new_fence_counter_starts_from_the_clock_plus_the_skew_with_a_tie_break() {
    let (store, clock) = memory();
    let real_us = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64
    };
    let skew_us = mcds_lock::FENCE_CLOCK_SKEW.as_micros() as u64;
    let ticks = mcds_lock::FENCE_TICKS_PER_MICROSECOND;
    let mut tie_breaks = std::collections::HashSet::new();
    for i in 0..50 {
        let lock = fast(
            Arc::clone(&store),
            &format!("new{i}"),
            Duration::from_secs(10),
            Some(&clock),
            true,
        )
        .unwrap();
        let before = real_us().max(clock.now_ms() * 1_000);
        let token = one_token(&lock);
        let after = real_us().max(clock.now_ms() * 1_000);
        assert!(token >= (before + skew_us) * ticks, "{token}");
        assert!(token < (after + skew_us) * ticks + ticks, "{token}");
        let tie_break = token % ticks;
        assert!(tie_break < mcds_lock::FENCE_TIE_BREAK, "{tie_break}");
        tie_breaks.insert(tie_break);
    }
    // 50 draws below 1,024: all equal has a chance of 2^-490.
    assert!(tie_breaks.len() > 1, "not random: {tie_breaks:?}");
}

#[test]
fn auto_extend_keeps_the_lease_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "renewed", Duration::from_secs(1)).unwrap();
    let mut guard = lock.try_acquire().unwrap().unwrap();
    guard.auto_extend(Duration::from_secs(1)).unwrap();
    // Hold for well past the 1 s TTL: the renewer (every 333 ms) keeps it.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        assert!(
            lock.try_acquire().unwrap().is_none(),
            "lease lapsed at {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!guard.is_lost());
    assert_eq!(guard.release().unwrap(), Release::Released);
    assert!(lock.try_acquire().unwrap().is_some());
}

#[test]
fn renewer_reports_a_lost_lease() {
    let (store, _) = memory();
    let lock = Lock::new(Arc::clone(&store), "stolen", Duration::from_secs(1)).unwrap();
    let mut guard = lock.try_acquire().unwrap().unwrap();
    let reported = Arc::new(AtomicU64::new(0));
    let r = Arc::clone(&reported);
    guard
        .auto_extend_with(Duration::from_secs(1), move |_| {
            r.store(1, Ordering::SeqCst);
        })
        .unwrap();
    // Another process deletes and takes the lock.
    store
        .delete(&Key::new("lock:stolen:owner").unwrap())
        .unwrap();
    let thief = lock.try_acquire().unwrap().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while reported.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "loss never reported");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(guard.is_lost());
    assert_eq!(guard.release().unwrap(), Release::Lost);
    assert_eq!(lock.holder().unwrap().as_deref(), Some(thief.owner_token()));
}

#[test]
fn drop_releases_and_with_lock_runs_once() {
    let (store, _) = memory();
    let lock = Lock::new(store, "scoped", Duration::from_secs(30)).unwrap();
    {
        let _guard = lock.try_acquire().unwrap().unwrap();
        assert!(lock.try_acquire().unwrap().is_none());
    }
    assert!(
        lock.holder().unwrap().is_none(),
        "dropped guard released the lock"
    );
    let (v, release) = lock
        .with_lock(Duration::from_secs(1), |g| g.owner_token().len())
        .unwrap();
    assert_eq!((v, release), (32, Release::Released));
}

#[test]
fn acquire_times_out_clearly() {
    let (store, _) = memory();
    let lock = Lock::new(store, "busy", Duration::from_secs(30)).unwrap();
    let _held = lock.try_acquire().unwrap().unwrap();
    let start = Instant::now();
    let err = lock.acquire(Duration::from_millis(100)).unwrap_err();
    assert!(matches!(err, mcds_core::Error::WaitTimeout { .. }), "{err}");
    assert!(err.to_string().contains("busy"), "{err}");
    assert!(start.elapsed() >= Duration::from_millis(100));
}

#[test]
fn bad_arguments_are_clear_errors() {
    let (store, _) = memory();
    assert!(matches!(
        Lock::new(Arc::clone(&store), "x", Duration::from_millis(500)),
        Err(mcds_core::Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Lock::new(Arc::clone(&store), "has space", Duration::from_secs(1)),
        Err(mcds_core::Error::InvalidKey { .. })
    ));
    assert!(matches!(
        Lock::new(store, "", Duration::from_secs(1)),
        Err(mcds_core::Error::InvalidKey { .. })
    ));
}

#[test]
fn an_owner_label_names_the_holder_and_tokens_stay_unique() {
    let (store, clock) = memory();
    let a = fast(
        store.clone(),
        "labelled",
        Duration::from_secs(10),
        Some(&clock),
        false,
    )
    .unwrap()
    .with_owner_label("host=web1 pid=1")
    .unwrap();
    let b = fast(
        store,
        "labelled",
        Duration::from_secs(10),
        Some(&clock),
        false,
    )
    .unwrap()
    .with_owner_label("host=web1 pid=1")
    .unwrap();
    let guard = a.try_acquire().unwrap().unwrap();
    let holder = a.holder().unwrap().unwrap();
    assert!(holder.starts_with("host=web1 pid=1 "), "{holder}");
    assert_eq!(holder, guard.owner_token());
    // The same label on another lock object: still a different owner.
    assert!(b.try_acquire().unwrap().is_none());
    clock.advance(Duration::from_secs(13));
    let second = b.try_acquire().unwrap().unwrap();
    assert_ne!(second.owner_token(), guard.owner_token());
    assert_eq!(
        guard.release().unwrap(),
        Release::Lost,
        "not the new holder's"
    );
    assert_eq!(second.release().unwrap(), Release::Released);
    for bad in ["tab\there", "new\nline", &"x".repeat(201), "é"] {
        let e = Lock::new(Arc::new(MemoryStore::new()), "x", Duration::from_secs(1))
            .unwrap()
            .with_owner_label(bad)
            .unwrap_err();
        assert!(e.to_string().contains("printable ASCII"), "{e}");
    }
}

#[test]
fn acquire_with_an_unbounded_timeout_waits_instead_of_panicking() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let lock = fast(store, "forever", Duration::from_secs(10), None, false).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    let waiter = std::thread::spawn({
        let lock = lock.clone();
        move || lock.acquire(Duration::MAX).map(|g| g.release())
    });
    // Whether the waiter is already backing off or not yet started, it
    // gets the lock once it is released (before the fix, computing the
    // deadline panicked at once).
    assert_eq!(guard.release().unwrap(), Release::Released);
    assert_eq!(waiter.join().unwrap().unwrap().unwrap(), Release::Released);
}
