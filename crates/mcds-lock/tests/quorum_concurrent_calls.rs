//! Calls on one quorum lease that run at once, and what a renewal must
//! report, on real memcached: a stale extend must not make a given-back
//! item count or report `Extended` after another call found the lease
//! lost, the renewer must report a list mismatch at once, renewals
//! between rolling restarts keep the margin, and a frozen member must not
//! pile up cleanup threads. Each (but the rolling restarts) failed before
//! its fix (the third adversarial review's tests).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcds_core::{Key, OpKind, QuorumStore, Store};
use mcds_lock::{Extend, Lock};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{HookStore, MemcachedServer};

const TIMEOUT: Duration = Duration::from_millis(300);

fn raw_store(s: &MemcachedServer) -> Arc<MemcachedStore> {
    mcds_testkit::quorum_member(s, TIMEOUT)
}

fn quorum_over(servers: &[MemcachedServer], stores: &[Arc<dyn Store>]) -> Arc<dyn Store> {
    Arc::new(
        QuorumStore::new(
            servers
                .iter()
                .zip(stores)
                .map(|(s, st)| (s.addr(), Arc::clone(st)))
                .collect(),
        )
        .unwrap(),
    )
}

fn warm(st: &MemcachedStore) {
    for _ in 0..4 {
        if st.get(&Key::new("x").unwrap()).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(60));
    }
}

fn raw_text(s: &MemcachedServer, name: &str) -> Option<String> {
    let st = MemcachedStore::connect(&s.addr()).unwrap();
    st.get(&Key::new(format!("lock:{name}:owner")).unwrap())
        .unwrap()
        .map(|i| String::from_utf8_lossy(&i.value).into_owned())
}

fn thread_is(name: &str) -> bool {
    std::thread::current().name() == Some(name)
}

/// Two extends of one guard at once (a user's `extend` and the
/// renewer's, or two threads: `Guard::extend` takes `&self`). Extend 1
/// CAS-extends A, B, C, then is descheduled before it reads its
/// outcomes. Meanwhile: C restarts; extend 2 finds C gone (vouched with
/// A, B) and is about to give C back when B restarts too, so only A
/// holds: a contender is granted B + C and releases. Extend 2 then gives
/// C back (fresh) and, B failing, keeps round one's outcome. Extend 1
/// resumes and marks every part it extended as not fresh, the *new* item
/// on C included (it reads the part's current state, not the one it
/// extended). The next extend counts A and C's new item and says
/// `Extended`, though a contender held the lock since the last vouch.
#[test]
fn a_stale_concurrent_extend_never_makes_a_given_back_item_count() {
    let ttl = Duration::from_secs(10);
    let name = "q-stale-fresh";
    let mut servers: Vec<MemcachedServer> =
        (0..3).map(|_| MemcachedServer::start_default()).collect();
    let raw: Vec<Arc<MemcachedStore>> = servers.iter().map(raw_store).collect();
    let hooks: Vec<Arc<HookStore>> = raw
        .iter()
        .map(|r| HookStore::new(Arc::clone(r) as Arc<dyn Store>))
        .collect();
    let hooked: Vec<Arc<dyn Store>> = hooks
        .iter()
        .map(|h| Arc::clone(h) as Arc<dyn Store>)
        .collect();
    let holder = Lock::new(quorum_over(&servers, &hooked), name, ttl)
        .unwrap()
        .with_fencing(true);
    let craw: Vec<Arc<MemcachedStore>> = servers.iter().map(raw_store).collect();
    let cstores: Vec<Arc<dyn Store>> = craw
        .iter()
        .map(|r| Arc::clone(r) as Arc<dyn Store>)
        .collect();
    let contender = Lock::new(quorum_over(&servers, &cstores), name, ttl)
        .unwrap()
        .with_fencing(true);
    holder.try_acquire().unwrap().unwrap().release().unwrap();
    contender.try_acquire().unwrap().unwrap().release().unwrap();

    let guard = holder.try_acquire().unwrap().expect("free");
    println!("holder granted, token {:?}", guard.fencing_token());

    let (p1_tx, p1_rx) = mpsc::channel::<()>();
    let (r1_tx, r1_rx) = mpsc::channel::<()>();
    let (p2_tx, p2_rx) = mpsc::channel::<()>();
    let (r2_tx, r2_rx) = mpsc::channel::<()>();
    let armed1 = Arc::new(AtomicBool::new(true));
    let armed2 = Arc::new(AtomicBool::new(true));
    {
        let armed1 = Arc::clone(&armed1);
        let r1_rx = Mutex::new(r1_rx);
        hooks[2].after(move |ops| {
            if thread_is("t1")
                && ops
                    .iter()
                    .any(|op| op.kind() == OpKind::Get && op.key().as_bytes() == b"mcds:quorum")
                && armed1.swap(false, Ordering::SeqCst)
            {
                p1_tx.send(()).unwrap();
                r1_rx.lock().unwrap().recv().unwrap();
            }
        });
    }
    {
        let armed2 = Arc::clone(&armed2);
        let r2_rx = Mutex::new(r2_rx);
        let lock_key = format!("lock:{name}:owner");
        hooks[2].before(move |ops| {
            if thread_is("t2")
                && ops.iter().any(|op| {
                    op.kind() == OpKind::Add && op.key().as_bytes() == lock_key.as_bytes()
                })
                && armed2.swap(false, Ordering::SeqCst)
            {
                p2_tx.send(()).unwrap();
                r2_rx.lock().unwrap().recv().unwrap();
            }
        });
    }

    let mut contender_granted_at = None;
    let (e1, e2) = std::thread::scope(|s| {
        let g = &guard;
        let h1 = std::thread::Builder::new()
            .name("t1".into())
            .spawn_scoped(s, move || g.extend(ttl))
            .unwrap();
        p1_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("extend 1 reached its pause");
        println!("extend 1 has CAS-extended A, B, C and is descheduled");
        servers[2].restart();
        warm(&raw[2]);
        let h2 = std::thread::Builder::new()
            .name("t2".into())
            .spawn_scoped(s, move || g.extend(ttl))
            .unwrap();
        if p2_rx.recv_timeout(Duration::from_secs(5)).is_err() {
            let e2 = h2.join().unwrap();
            println!("extend 2 never gave C back: {e2:?}");
            let _ = r1_tx.send(());
            let e1 = h1.join().unwrap();
            panic!("setup failed: extend 2 {e2:?}, extend 1 {e1:?}");
        }
        println!("extend 2 found C gone, vouched with A and B, and is about to give C back");
        servers[1].restart();
        warm(&craw[1]);
        warm(&craw[2]);
        for (i, sv) in servers.iter().enumerate() {
            println!("  member {i}: {:?}", raw_text(sv, name));
        }
        match contender.acquire(Duration::from_secs(3)) {
            Ok(cg) => {
                contender_granted_at = Some(Instant::now());
                println!(
                    "CONTENDER GRANTED (token {:?}) while only A holds the holder's item; releases: {:?}",
                    cg.fencing_token(),
                    cg.release()
                );
            }
            Err(e) => println!("contender: {e}"),
        }
        // B hiccups (frozen for a moment) as extend 2 goes on.
        servers[1].pause();
        r2_tx.send(()).unwrap();
        let e2 = h2.join().unwrap();
        println!("extend 2: {e2:?}");
        let _ = r1_tx.send(());
        let e1 = h1.join().unwrap();
        println!("extend 1: {e1:?}");
        servers[1].resume();
        (e1, e2)
    });
    let _ = (e1, e2);
    std::thread::sleep(Duration::from_millis(300));
    let next = guard.extend(ttl);
    println!(
        "next extend (sent after the contender's grant): {next:?}; is_lost {}",
        guard.is_lost()
    );
    for (i, sv) in servers.iter().enumerate() {
        println!("  member {i}: {:?}", raw_text(sv, name));
    }
    let released = guard.release();
    println!("release after that: {released:?}");
    if contender_granted_at.is_some() {
        assert!(
            !matches!(next, Ok(Extend::Extended)),
            "Extended although a contender was granted the lock after the lease's last vouch"
        );
    }
}

/// Extend 1 CAS-extends A, B, C and is descheduled before it reads its
/// outcomes; A and C restart; extend 2 finds the lease lost, releases B
/// and says `Lost`; a contender is granted the lock. Extend 1 then
/// resumes and says `Extended` (and moves `lease_until` forward) while
/// the contender holds the lock and the holder holds nothing.
#[test]
fn an_extend_after_a_concurrent_one_found_the_lease_lost_says_lost() {
    let ttl = Duration::from_secs(10);
    let name = "q-stale-lost";
    let mut servers: Vec<MemcachedServer> =
        (0..3).map(|_| MemcachedServer::start_default()).collect();
    let raw: Vec<Arc<MemcachedStore>> = servers.iter().map(raw_store).collect();
    let hooks: Vec<Arc<HookStore>> = raw
        .iter()
        .map(|r| HookStore::new(Arc::clone(r) as Arc<dyn Store>))
        .collect();
    let hooked: Vec<Arc<dyn Store>> = hooks
        .iter()
        .map(|h| Arc::clone(h) as Arc<dyn Store>)
        .collect();
    let holder = Lock::new(quorum_over(&servers, &hooked), name, ttl).unwrap();
    let craw: Vec<Arc<MemcachedStore>> = servers.iter().map(raw_store).collect();
    let cstores: Vec<Arc<dyn Store>> = craw
        .iter()
        .map(|r| Arc::clone(r) as Arc<dyn Store>)
        .collect();
    let contender = Lock::new(quorum_over(&servers, &cstores), name, ttl).unwrap();
    holder.try_acquire().unwrap().unwrap().release().unwrap();
    contender.try_acquire().unwrap().unwrap().release().unwrap();
    let guard = holder.try_acquire().unwrap().expect("free");

    let (p1_tx, p1_rx) = mpsc::channel::<()>();
    let (r1_tx, r1_rx) = mpsc::channel::<()>();
    let armed1 = Arc::new(AtomicBool::new(true));
    {
        let r1_rx = Mutex::new(r1_rx);
        hooks[2].after(move |ops| {
            if thread_is("t1")
                && ops
                    .iter()
                    .any(|op| op.kind() == OpKind::Get && op.key().as_bytes() == b"mcds:quorum")
                && armed1.swap(false, Ordering::SeqCst)
            {
                p1_tx.send(()).unwrap();
                r1_rx.lock().unwrap().recv().unwrap();
            }
        });
    }
    let mut contender_guard = None;
    let e1 = std::thread::scope(|s| {
        let g = &guard;
        let h1 = std::thread::Builder::new()
            .name("t1".into())
            .spawn_scoped(s, move || g.extend(ttl))
            .unwrap();
        p1_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        servers[0].restart();
        servers[2].restart();
        warm(&raw[0]);
        warm(&raw[2]);
        let e2 = guard.extend(ttl);
        println!("extend 2: {e2:?}, is_lost {}", guard.is_lost());
        warm(&craw[0]);
        warm(&craw[2]);
        match contender.acquire(Duration::from_secs(3)) {
            Ok(cg) => {
                println!("contender granted");
                contender_guard = Some(cg);
            }
            Err(e) => println!("contender: {e}"),
        }
        r1_tx.send(()).unwrap();
        h1.join().unwrap()
    });
    println!("extend 1: {e1:?}, is_lost {}", guard.is_lost());
    for (i, sv) in servers.iter().enumerate() {
        println!("  member {i}: {:?}", raw_text(sv, name));
    }
    if contender_guard.is_some() {
        assert!(
            !matches!(e1, Ok(Extend::Extended)),
            "extend returned Extended while a contender holds the lock and the lease holds nothing"
        );
    }
}

fn cleanup_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("mcds-lock clea"))
        .count()
}

fn all_threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// A member frozen while contenders poll a held lock: each attempt whose
/// add to the frozen member was sent leaves a cleanup thread.
#[test]
fn cleanup_threads_stay_few_while_a_member_is_frozen() {
    let ttl = Duration::from_secs(30);
    let name = "q-threads";
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let q = |_: ()| -> Arc<dyn Store> {
        let stores: Vec<Arc<dyn Store>> = servers
            .iter()
            .map(|s| Arc::new(MemcachedStore::connect(&s.addr()).unwrap()) as Arc<dyn Store>)
            .collect();
        quorum_over(&servers, &stores)
    };
    let holder = Lock::new(q(()), name, ttl).unwrap();
    let guard = holder.try_acquire().unwrap().unwrap();
    let contenders: Vec<Lock> = (0..8)
        .map(|_| Lock::new(q(()), name, ttl).unwrap())
        .collect();
    for c in &contenders {
        assert!(c.try_acquire().unwrap().is_none());
    }
    let base = all_threads();
    servers[2].pause();
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let peak_all = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t0 = Instant::now();
    let attempts = std::thread::scope(|s| {
        let sampler = {
            let (stop, peak, peak_all) =
                (Arc::clone(&stop), Arc::clone(&peak), Arc::clone(&peak_all));
            s.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    peak.fetch_max(cleanup_threads(), Ordering::SeqCst);
                    peak_all.fetch_max(all_threads(), Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        let hs: Vec<_> = contenders
            .iter()
            .map(|c| {
                s.spawn(move || {
                    let mut n = 0;
                    let mut errs = 0;
                    while t0.elapsed() < Duration::from_secs(5) {
                        n += 1;
                        // Waiting for the lock, as a worker does.
                        match c.acquire(Duration::from_secs(5)) {
                            Err(mcds_core::Error::WaitTimeout { .. }) => {}
                            _ => errs += 1,
                        }
                    }
                    (n, errs)
                })
            })
            .collect();
        let r: Vec<(i32, i32)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        stop.store(true, Ordering::SeqCst);
        sampler.join().unwrap();
        r
    });
    servers[2].resume();
    println!(
        "attempts {attempts:?} in 5 s; base threads {base}; peak threads {}; peak cleanup threads {}; cleanup threads now {}",
        peak_all.load(Ordering::SeqCst),
        peak.load(Ordering::SeqCst),
        cleanup_threads()
    );
    std::thread::sleep(Duration::from_secs(8));
    println!("cleanup threads 8 s after resume: {}", cleanup_threads());
    drop(guard);
    assert!(
        peak.load(Ordering::SeqCst) < 100,
        "cleanup threads piled up"
    );
}

/// Rolling restarts, one server at a time, with a renewal in between
/// (the module docs: "The next extend adds the item there again", and a
/// lease survives a second minority's loss after the renewal that finds
/// an item gone). The renewal after C's restart meets the dead
/// connection, counts C as an error, and says `Extended` without giving C
/// its item back; A then restarts and a contender takes A + C while the
/// lease is valid.
#[test]
fn rolling_restarts_with_a_renewal_between_never_let_a_second_holder_in() {
    let ttl = Duration::from_secs(10);
    let rounds = 3;
    let mut overlaps = 0;
    for round in 0..rounds {
        let name = format!("q-rolling{round}");
        let mut servers: Vec<MemcachedServer> =
            (0..3).map(|_| MemcachedServer::start_default()).collect();
        let hstores: Vec<Arc<dyn Store>> = servers
            .iter()
            .map(|s| raw_store(s) as Arc<dyn Store>)
            .collect();
        let cstores: Vec<Arc<dyn Store>> = servers
            .iter()
            .map(|s| raw_store(s) as Arc<dyn Store>)
            .collect();
        let holder = Lock::new(quorum_over(&servers, &hstores), &name, ttl)
            .unwrap()
            .with_fencing(true);
        let contender = Lock::new(quorum_over(&servers, &cstores), &name, ttl)
            .unwrap()
            .with_fencing(true);
        holder.try_acquire().unwrap().unwrap().release().unwrap();
        contender.try_acquire().unwrap().unwrap().release().unwrap();
        let guard = holder.try_acquire().unwrap().expect("free");
        servers[2].restart();
        let e = guard.extend(ttl);
        let extended_at = Instant::now();
        println!(
            "round {round}: renewal after C's restart: {e:?}; C now holds {:?}",
            raw_text(&servers[2], &name)
        );
        servers[0].restart();
        // Another process, connecting now.
        let fresh: Vec<Arc<dyn Store>> = servers
            .iter()
            .map(|s| raw_store(s) as Arc<dyn Store>)
            .collect();
        let contender = Lock::new(quorum_over(&servers, &fresh), &name, ttl)
            .unwrap()
            .with_fencing(true);
        let got = contender.try_acquire();
        let valid = extended_at.elapsed() < ttl;
        match got {
            Ok(Some(g)) => {
                overlaps += 1;
                println!(
                    "round {round}: TWO HOLDERS: contender granted (token {:?} vs {:?}) {:?} after the holder's Extended (valid {valid}); holder's next extend {:?}",
                    g.fencing_token(),
                    guard.fencing_token(),
                    extended_at.elapsed(),
                    guard.extend(ttl)
                );
            }
            other => println!("round {round}: contender {other:?}"),
        }
    }
    assert_eq!(overlaps, 0, "{overlaps} of {rounds} rounds had two holders");
}

/// The renewer meets a quorum record that differs from its list (the
/// case the second review's fix handles: another client, listing other
/// servers, was granted too). The renewal releases every part and marks
/// the lease lost, but returns `InvalidArgument`, which the renewer takes
/// for a transient error: `on_lost` runs only at the next renewal
/// (TTL/3 later), while the lock is already free and a third client
/// holds it.
#[test]
fn the_renewer_reports_a_list_mismatch_at_once() {
    let ttl = Duration::from_secs(3);
    let name = "q-mismatch-renewer";
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let stores: Vec<Arc<dyn Store>> = servers
        .iter()
        .map(|s| raw_store(s) as Arc<dyn Store>)
        .collect();
    let holder = Lock::new(quorum_over(&servers, &stores), name, ttl).unwrap();
    let mut guard = holder.try_acquire().unwrap().expect("free");
    let (tx, rx) = mpsc::channel();
    guard
        .auto_extend_with(ttl, move |e| {
            let _ = tx.send((Instant::now(), format!("{e:?}")));
        })
        .unwrap();
    // The record another client (other list) wrote on server 0.
    let st = MemcachedStore::connect(&servers[0].addr()).unwrap();
    let original = st
        .get(&Key::new(mcds_lock::QUORUM_RECORD_KEY).unwrap())
        .unwrap()
        .unwrap()
        .value;
    st.set(
        &Key::new(mcds_lock::QUORUM_RECORD_KEY).unwrap(),
        b"127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
        mcds_core::Ttl::Never,
    )
    .unwrap();
    let t0 = Instant::now();
    while !guard.is_lost() && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let lost_at = Instant::now();
    println!("is_lost turned true after {:?}", t0.elapsed());
    // Restore the record: a third client, listing the same servers.
    st.set(
        &Key::new(mcds_lock::QUORUM_RECORD_KEY).unwrap(),
        &original,
        mcds_core::Ttl::Never,
    )
    .unwrap();
    let third = Lock::new(quorum_over(&servers, &stores), name, ttl).unwrap();
    let g3 = third.try_acquire();
    let third_at = Instant::now();
    println!(
        "third client: {:?} at {:?} after is_lost",
        g3.as_ref().map(|g| g.is_some()),
        third_at - lost_at
    );
    let reported = rx.recv_timeout(Duration::from_secs(3));
    match &reported {
        Ok((at, e)) => println!(
            "on_lost({e}) ran {:?} after is_lost, {:?} after the third client was granted",
            *at - lost_at,
            at.saturating_duration_since(third_at)
        ),
        Err(_) => println!("on_lost never ran"),
    }
    if let (Ok(Some(_)), Ok((at, _))) = (&g3, &reported) {
        assert!(
            *at <= third_at,
            "on_lost ran {:?} after another client was granted the lock",
            at.saturating_duration_since(third_at)
        );
    }
}
