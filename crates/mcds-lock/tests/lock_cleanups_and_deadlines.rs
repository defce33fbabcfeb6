//! Cleanups and deadlines across what the program does around a lock, on
//! real memcached: a runtime dropped while a cleanup runs must not turn
//! later cleanups off, a blocking acquire whose add got no reply must not
//! strand the lock, and one long extend must not hide a lapsed lease from
//! the renewer. Each failed before its fix (the fourth adversarial
//! review's tests).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcds_core::{Key, Store};
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, runtime};

const TIMEOUT: Duration = Duration::from_millis(300);

fn quorum(servers: &[MemcachedServer]) -> Arc<dyn Store> {
    mcds_testkit::quorum_store(servers.iter(), TIMEOUT)
}

fn raw_text(s: &MemcachedServer, name: &str) -> Option<String> {
    let st = MemcachedStore::connect(&s.addr()).unwrap();
    st.get(&Key::new(format!("lock:{name}:owner")).unwrap())
        .unwrap()
        .map(|i| String::from_utf8_lossy(&i.value).into_owned())
}

/// A cancelled async acquire on a slow (paused) server, on runtime `rt`.
fn cancelled_acquire_on_a_paused_server(
    rt: &tokio::runtime::Runtime,
    server: &MemcachedServer,
    lock: &Lock,
) {
    server.pause();
    let timed_out = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_millis(300),
            lock.acquire_async(Duration::from_secs(10)),
        )
        .await
        .is_err()
    });
    assert!(timed_out);
    std::thread::sleep(Duration::from_millis(200));
    server.resume();
}

/// A program that runs its async work on a runtime it later drops (a sync
/// program with a runtime per job, a test harness, a service restarting its
/// runtime) while a sweeper it started is still looking (< 6.4 s). The
/// sweeper's task is dropped with the runtime, but its entry stays in the
/// registry: every later given-up add on that store and key only adds its
/// value to the dead entry, and nobody deletes it. The lock is then held
/// by nobody until its TTL.
#[test]
fn a_runtime_dropped_while_a_sweeper_runs_leaves_later_cleanups_working() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "orphan", Duration::from_secs(30)).unwrap();
    assert!(lock.holder().unwrap().is_none());

    // Job 1, on its own runtime: one cancelled acquire; its sweeper
    // cleans up (the lock is free), and the runtime ends within 6.4 s.
    let rt1 = runtime();
    cancelled_acquire_on_a_paused_server(&rt1, &server, &lock);
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "job 1: holder after its sweeper ran: {:?}",
        lock.holder().unwrap()
    );
    assert!(
        lock.holder().unwrap().is_none(),
        "job 1's sweeper cleaned up"
    );
    drop(rt1);

    // Job 2, much later, on a new runtime: the same cancellation.
    std::thread::sleep(Duration::from_secs(8));
    let rt2 = runtime();
    cancelled_acquire_on_a_paused_server(&rt2, &server, &lock);
    std::thread::sleep(Duration::from_millis(500));
    let holder = lock.holder().unwrap();
    println!("job 2: holder 500 ms after: {holder:?}");
    let started = Instant::now();
    let got = lock.acquire(Duration::from_secs(4));
    println!(
        "next acquire(4 s): {:?} after {:?}",
        got.as_ref().map(|g| g.owner_token().to_string()),
        started.elapsed()
    );
    assert!(
        got.is_ok(),
        "a cancelled acquire after an earlier runtime was dropped left the lock held by {holder:?} \
         with no guard and no sweeper: stranded until its 32 s item expires"
    );
}

/// The same for the quorum lock's blocking API: a straggler's add (no
/// reply, frozen members) after an earlier async job's runtime ended.
#[test]
fn a_dropped_runtime_leaves_the_quorum_locks_straggler_cleanup_working() {
    let ttl = Duration::from_secs(30);
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let name = "q-orphan";
    let first = Lock::new(quorum(&servers), name, ttl).unwrap();
    let other = Lock::new(quorum(&servers), name, ttl).unwrap();
    first.try_acquire().unwrap().unwrap().release().unwrap();
    other.try_acquire().unwrap().unwrap().release().unwrap();

    // An async job on its own runtime, cancelled while 2 members are frozen.
    let rt1 = runtime();
    servers[1].pause();
    servers[2].pause();
    let r = rt1.block_on(async {
        tokio::time::timeout(Duration::from_millis(100), first.try_acquire_async()).await
    });
    println!(
        "job 1: {:?}",
        r.as_ref().map(|r| r.as_ref().map(|g| g.is_some()))
    );
    servers[1].resume();
    servers[2].resume();
    std::thread::sleep(Duration::from_millis(500));
    for (i, s) in servers.iter().enumerate() {
        println!("after job 1, member {i}: {:?}", raw_text(s, name));
    }
    drop(rt1);
    std::thread::sleep(Duration::from_secs(8));

    // Later, blocking: 2 of 3 frozen past the I/O timeout; their adds land late.
    servers[1].pause();
    servers[2].pause();
    let r = first.try_acquire();
    println!("blocking acquire with 2 of 3 frozen: {r:?}");
    assert!(r.is_err());
    servers[1].resume();
    servers[2].resume();
    std::thread::sleep(Duration::from_millis(1000));
    for (i, s) in servers.iter().enumerate() {
        println!("member {i}: {:?}", raw_text(s, name));
    }
    let t = Instant::now();
    let got = other.acquire(Duration::from_secs(3));
    println!(
        "another client: {:?} after {:?}",
        got.as_ref().map(|g| g.owner_token().to_string()),
        t.elapsed()
    );
    assert!(
        got.is_ok(),
        "the lock was left held by nobody: {:?}",
        other.holder()
    );
}

#[allow(dead_code)]
fn poll_once_then_drop(rt: &tokio::runtime::Runtime, lock: &Lock) {
    rt.block_on(async {
        let mut cx = Context::from_waker(Waker::noop());
        let mut a = Box::pin(lock.try_acquire_async());
        if let Poll::Ready(Ok(Some(g))) = a.as_mut().poll(&mut cx) {
            g.release_async().await.unwrap();
        }
    });
}

/// The single-server lock's blocking acquire on a server that is slow past
/// the I/O timeout: the add gets no reply (the call fails), and the server
/// applies it when it runs again. The async path arms a cleanup for this
/// (`Abandoned`), the quorum lock keeps one for an add with no reply; the
/// blocking single-server path has none: the lock is held by nobody until
/// its TTL.
#[test]
fn a_blocking_acquire_whose_add_got_no_reply_leaves_the_lock_free() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .io_timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .connect([server.addr()])
            .unwrap(),
    );
    let lock = Lock::new(Arc::clone(&store), "blocking-late", Duration::from_secs(30)).unwrap();
    assert!(lock.holder().unwrap().is_none());
    server.pause();
    let r = lock.try_acquire();
    println!(
        "try_acquire on a frozen server: {:?}",
        r.as_ref().map(|g| g.is_some())
    );
    assert!(r.is_err());
    std::thread::sleep(Duration::from_millis(200));
    server.resume();
    std::thread::sleep(Duration::from_millis(500));
    let holder = lock.holder();
    println!("holder: {holder:?}");
    let other = Lock::new(Arc::clone(&store), "blocking-late", Duration::from_secs(30)).unwrap();
    let t = Instant::now();
    let got = other.acquire(Duration::from_secs(3));
    println!(
        "another client: {:?} after {:?}",
        got.as_ref().map(|g| g.owner_token().to_string()),
        t.elapsed()
    );
    assert!(
        got.is_ok(),
        "a failed blocking acquire left the lock held by {holder:?} with no guard, until its TTL"
    );
}

/// A TCP relay to one server that can be cut (every connection closed,
/// new ones closed at once): a network partition of one client.
struct Relay {
    addr: String,
    cut: Arc<std::sync::atomic::AtomicBool>,
}

fn relay(backend: String) -> Relay {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let cut = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&cut);
    std::thread::spawn(move || {
        let open: Arc<std::sync::Mutex<Vec<TcpStream>>> = Arc::default();
        let (c2, open2) = (Arc::clone(&c), Arc::clone(&open));
        std::thread::spawn(move || {
            loop {
                if c2.load(Ordering::SeqCst) {
                    for s in open2.lock().unwrap().drain(..) {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        for conn in listener.incoming() {
            let Ok(client) = conn else { continue };
            if c.load(Ordering::SeqCst) {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
            let Ok(server) = TcpStream::connect(&backend) else {
                continue;
            };
            open.lock().unwrap().push(client.try_clone().unwrap());
            open.lock().unwrap().push(server.try_clone().unwrap());
            for (mut from, mut to) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    loop {
                        match from.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if to.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    let _ = to.shutdown(Shutdown::Both);
                    let _ = from.shutdown(Shutdown::Both);
                });
            }
        }
    });
    Relay { addr, cut }
}

/// A renewer at TTL 3 s (items written for 5 s), after one `extend(60 s)`
/// by the holder: the lease's deadline (`lease_until`) only moves forward,
/// so it stays 60 s ahead while every later renewal writes the items for
/// 5 s only. The holder's client is then cut off (a partition): its
/// renewals fail, and the renewer, which gives up when the next try would
/// come after `lease_until`, goes on for about 59 s instead of reporting
/// the loss within about 2 s. Another client is granted the lock after
/// 5 s, while the holder's guard still reports it held.
#[test]
fn a_long_extend_then_short_renewals_never_hide_a_lapsed_lease_from_the_renewer() {
    lease_until_case(true);
}

/// Control: the same without the one `extend(60 s)`: the renewer reports
/// the loss before the other client is granted.
#[test]
fn control_short_renewals_alone_report_the_loss_in_time() {
    lease_until_case(false);
}

fn lease_until_case(long_extend: bool) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let relays: Vec<Relay> = servers.iter().map(|s| relay(s.addr())).collect();
    let members = servers
        .iter()
        .zip(&relays)
        .map(|(s, r)| {
            let store = MemcachedStore::builder()
                .io_timeout(TIMEOUT)
                .connect_timeout(TIMEOUT)
                .down_backoff(Duration::from_millis(20), Duration::from_millis(200))
                .pool_name("relayed")
                .connect([r.addr.clone()])
                .unwrap();
            (s.addr(), Arc::new(store) as Arc<dyn Store>)
        })
        .collect();
    let holder_store: Arc<dyn Store> = Arc::new(mcds_core::QuorumStore::new(members).unwrap());
    let name = "q-lease-until";
    let ttl = Duration::from_secs(3);
    let lock = Lock::new(holder_store, name, ttl).unwrap();
    let other = Lock::new(quorum(&servers), name, ttl).unwrap();
    let mut g = lock.try_acquire().unwrap().unwrap();
    let lost = Arc::new(AtomicBool::new(false));
    let l = Arc::clone(&lost);
    g.auto_extend_with(ttl, move |e| {
        println!("on_lost({e:?})");
        l.store(true, Ordering::SeqCst);
    })
    .unwrap();
    if long_extend {
        println!("extend(60 s): {:?}", g.extend(Duration::from_secs(60)));
    }
    // Two renewals at 3 s (items now written for 5 s).
    std::thread::sleep(Duration::from_millis(2300));
    let cut_at = Instant::now();
    for r in &relays {
        r.cut.store(true, Ordering::SeqCst);
    }
    println!("holder cut off from every server");
    let mut granted = None;
    while cut_at.elapsed() < Duration::from_secs(12) {
        if let Ok(Some(g2)) = other.try_acquire() {
            granted = Some((
                cut_at.elapsed(),
                g.is_lost(),
                lost.load(Ordering::SeqCst),
                g2,
            ));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let Some((after, is_lost, on_lost, g2)) = granted else {
        panic!("the other client was never granted");
    };
    println!(
        "other client granted {after:?} after the cut; holder is_lost={is_lost}, on_lost called={on_lost}"
    );
    drop(g2);
    assert!(
        is_lost || on_lost,
        "two holders: another client was granted {after:?} after the holder was cut off, \
         and the holder's renewer had not reported the loss (is_lost false)"
    );
}
