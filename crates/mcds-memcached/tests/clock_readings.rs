//! An exchange reads the clock once and counts its deadline, its write's
//! timeout and its connection's idle check from that reading; getting a
//! connection may wait for a dial, and the reading must then be taken
//! again. These tests come from an adversarial review of that change: the
//! first two failed while the reading was kept across a dial (a request
//! written after its deadline and reported `Ambiguous` though applied; an
//! idle check skipped after a restart), and so did the fifth, from a
//! second review (a dial after the session was pinned, which kept the
//! request's deadline from before it). The third and fourth check what the
//! change must keep: deadlines against a frozen server, and lanes that
//! follow a restart through the server's epoch without a dial per op.

use std::future::Future;
use std::net::TcpStream;
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};

mod support;

use support::{k, runtime};

use mcds_core::{Error, Op, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions};

/// A dial that takes longer than `io_timeout` but succeeds (the server's
/// accept queue was full for a moment, so the connect waited for the SYN
/// retransmission, ~1 s; `connect_timeout` is 3 s) must not eat the
/// exchange's own `io_timeout`: the builder documents that an operation
/// that dials "may also spend up to the connect timeout ... on the dial".
/// With a reading from before the dial, the deadline counted from it,
/// and the write's arm was primed with it: the request was written after its
/// deadline, then its read timed out at once, and a set the server applied
/// was reported `Ambiguous`.
#[test]
fn a_slow_dial_does_not_eat_the_exchange_timeout() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-b".into(), "1".into()],
        ..ServerOptions::default()
    });
    let store = MemcachedStore::builder()
        .connections_per_server(1)
        .connect_timeout(Duration::from_secs(3))
        .io_timeout(Duration::from_millis(300))
        .connect([server.addr()])
        .unwrap();
    let key = k("clock-readings:slow-dial");
    // Fill the accept queue of the stopped server (backlog 1: two fit).
    server.pause();
    let addr: std::net::SocketAddr = server.addr().parse().unwrap();
    let mut fillers = Vec::new();
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
            Ok(s) => fillers.push(s),
            Err(_) => break,
        }
        assert!(fillers.len() < 64, "the accept queue never filled");
    }
    println!("{} connections fill the accept queue", fillers.len());
    let started = Instant::now();
    let worker = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let r = store.set(&key, b"v", Ttl::Never);
            (r, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(200));
        server.resume();
        worker.join().unwrap()
    });
    let (result, took) = worker;
    let stats = store.connection_stats();
    println!("set: {result:?} after {took:?}, {} dials", stats.dials);
    drop(fillers);
    let applied = store.get(&key).unwrap().is_some();
    println!("the server applied the set: {applied}");
    assert!(
        took > Duration::from_millis(300),
        "the dial was not slow ({took:?}): the test did not test anything"
    );
    assert!(
        result.is_ok(),
        "a healthy server's set failed (applied: {applied}): {result:?}"
    );
}

/// The idle check with a stale `now`: an async caller whose lane had no
/// connection reads `now`, then awaits the dial (on a thread of its own).
/// Its task runs again later (here: the runtime's thread was busy with a
/// restart of the server); by then the fresh connection has been closed
/// by the server. The old code peeked at the connection (idle > 200 µs)
/// and saw the close: the set was refused unsent (the incarnation
/// changed). With the stale reading, the check compared it with
/// `check_after` (set after the dial, so later than `now`): no peek, and the
/// set was written into the closed connection and ended `Ambiguous`: the
/// very case the idle check is there to prevent.
#[test]
fn an_async_caller_resumed_late_still_checks_its_idle_connection() {
    let mut server = MemcachedServer::start_default();
    let store = MemcachedStore::builder()
        .connections_per_server(1)
        .io_timeout(Duration::from_secs(1))
        .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .connect([server.addr()])
        .unwrap();
    let key = k("clock-readings:late-async");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(async {
        let op = Op::Set {
            key: &key,
            value: b"v",
            ttl: Ttl::Never,
        };
        let mut fut = pin!(store.execute_async(&op));
        // First poll: no connection yet, the dial runs on its own thread.
        let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "the first poll did not wait for a dial");
        // The task's thread is busy meanwhile: the dial finishes, and the
        // server is killed and started again on the same port.
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(store.connection_stats().dials, 1);
        server.restart();
        std::thread::sleep(Duration::from_millis(50));
        fut.await
    });
    println!("set after the restart: {result:?}");
    assert!(
        !matches!(result, Err(Error::Ambiguous { .. })),
        "written into a connection the server had closed: {result:?}"
    );
}

/// Deadlines with a frozen server: 3 threads and 3 tokio tasks incrementing
/// over 2 lanes while the server is SIGSTOPped 8 times for 600-700 ms
/// (io_timeout and connect_timeout 150 ms). An op that failed after its
/// request was sent (`Ambiguous`) took at most a dial's handshake and one
/// exchange (2 x io_timeout) and 50 ms of scheduling room on a 2-core
/// machine; any failure at most connect_timeout more. The counter
/// afterwards is at least the number of acknowledged increments.
#[test]
fn ops_against_a_frozen_server_end_near_their_deadline() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    let server = MemcachedServer::start_default();
    let timeout = Duration::from_millis(150);
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(2)
            .io_timeout(timeout)
            .connect_timeout(timeout)
            .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
            .connect([server.addr()])
            .unwrap(),
    );
    let key = k("clock-readings:frozen");
    store.set(&key, b"0", Ttl::Never).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    // (slowest failure, slowest Ambiguous)
    type Slowest = [(Duration, String); 2];
    let slowest: Arc<Mutex<Slowest>> = Arc::default();
    let note = {
        let slowest = Arc::clone(&slowest);
        move |took: Duration, what: String| {
            let mut s = slowest.lock().unwrap();
            let ambiguous = what.contains("Ambiguous");
            for (i, slot) in s.iter_mut().enumerate() {
                if (i == 0 || ambiguous) && took > slot.0 {
                    *slot = (took, what.clone());
                }
            }
        }
    };
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (store, stop, acked, key, note) = (
                Arc::clone(&store),
                Arc::clone(&stop),
                Arc::clone(&acked),
                key.clone(),
                note.clone(),
            );
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let t = Instant::now();
                    match store.incr(&key, 1) {
                        Ok(_) => {
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => note(t.elapsed(), format!("sync {e:?}")),
                    }
                }
            })
        })
        .collect();
    let rt = runtime();
    let tasks: Vec<_> = (0..3)
        .map(|_| {
            let (store, stop, acked, key, note) = (
                Arc::clone(&store),
                Arc::clone(&stop),
                Arc::clone(&acked),
                key.clone(),
                note.clone(),
            );
            rt.spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let op = Op::Incr {
                        key: &key,
                        delta: 1,
                    };
                    let t = Instant::now();
                    match store.execute_async(&op).await {
                        Ok(_) => {
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => note(t.elapsed(), format!("async {e:?}")),
                    }
                }
            })
        })
        .collect();
    for i in 0..8u64 {
        std::thread::sleep(Duration::from_millis(50 + 13 * i));
        server.pause();
        std::thread::sleep(Duration::from_millis(600 + 12 * i));
        server.resume();
    }
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().unwrap();
    }
    rt.block_on(async {
        for t in tasks {
            t.await.unwrap();
        }
    });
    let counter: u64 = String::from_utf8(store.get(&key).unwrap().unwrap().value.to_vec())
        .unwrap()
        .parse()
        .unwrap();
    let [(took, what), (took_sent, what_sent)] = slowest.lock().unwrap().clone();
    let acked = acked.load(Ordering::Relaxed);
    println!("{acked} acknowledged increments, counter {counter}");
    println!("slowest failure {took:?}: {what}");
    println!("slowest Ambiguous {took_sent:?}: {what_sent}");
    assert!(counter >= acked, "acknowledged increments lost");
    let room = Duration::from_millis(50);
    assert!(
        took_sent <= 2 * timeout + room,
        "a sent op failed {took_sent:?} after it started (io_timeout {timeout:?}): {what_sent}"
    );
    assert!(
        took <= 3 * timeout + room,
        "an op failed {took:?} after it started (io_timeout {timeout:?}): {what}"
    );
}

/// The lanes' copies of the server's incarnation (`Seen`, refreshed by
/// epoch) across a restart: a CAS id read before the restart is refused
/// after it even where the new server's raw id is the same (the mask
/// changed), and two callers on two lanes settle on the new incarnation
/// with one dial per lane, not one per op (a lane whose copy never
/// refreshed would think its connection "moved" on every request).
#[test]
fn lanes_follow_a_restart_by_epoch_without_redialing_per_op() {
    use mcds_core::CasOutcome;
    let mut server = MemcachedServer::start_default();
    let store = std::sync::Arc::new(
        MemcachedStore::builder()
            .connections_per_server(2)
            .io_timeout(Duration::from_millis(500))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
            .connect([server.addr()])
            .unwrap(),
    );
    let key = k("clock-readings:epoch");
    store.set(&key, b"before", Ttl::Never).unwrap();
    let old = store.get(&key).unwrap().unwrap().cas;
    server.restart();
    // The new server's ids start over: the marker, then this set, as before.
    let mut set = Err(Error::Internal(String::new()));
    for _ in 0..3 {
        set = store.set(&key, b"after", Ttl::Never);
        if set.is_ok() {
            break;
        }
    }
    set.unwrap();
    let stale = store.cas(&key, b"stale", Ttl::Never, old).unwrap();
    assert!(
        !matches!(stale, CasOutcome::Stored(_)),
        "a CAS id of the old incarnation matched on the new one"
    );
    let before = store.connection_stats().dials;
    std::thread::scope(|s| {
        for t in 0..2 {
            let store = &store;
            s.spawn(move || {
                let key = k(&format!("clock-readings:epoch:{t}"));
                for i in 0..300u32 {
                    store
                        .set(&key, i.to_string().as_bytes(), Ttl::Never)
                        .unwrap();
                    let item = store.get(&key).unwrap().unwrap();
                    assert_eq!(item.value[..], *i.to_string().as_bytes());
                    let r = store.cas(&key, b"x", Ttl::Never, item.cas).unwrap();
                    assert!(matches!(r, CasOutcome::Stored(_)), "cas {i}: {r:?}");
                }
            });
        }
    });
    let dials = store.connection_stats().dials - before;
    println!("stale cas: {stale:?}; dials for 1800 ops on 2 lanes: {dials}");
    assert!(dials <= 2, "{dials} dials for 1800 ops");
}

/// A dial made after the session was pinned (its connection failed, and
/// the request, given back unsent, is sent again) must move the request's
/// deadline as the first dial's reading does: a request queued with the
/// deadline of before the dial is written with 1 ms left, and a healthy
/// server's slightly late reply turns an applied set into `Ambiguous`
/// (as it did, three times in three, before the deadline was moved).
///
/// Timeline (io_timeout 400 ms, one lane):
/// - t=0: server SIGSTOPped; a sync `get` (A) drives the lane, waits.
/// - t=300: async set (B) is pinned and queued behind A (deadline t=700).
/// - t=400 to 430 (the machine's wake-up latency): A times out, the
///   connection is dropped, B is given back unsent (NotConnected; more
///   than half its timeout left, so it is sent again, as long as A ends
///   before t=500).
/// - at once: B's retry: `submit_async` finds no connection, dials (the
///   server is still stopped: the handshake waits).
/// - t=740: server resumed, 40 ms past B's first deadline and some 60 ms
///   before the dial's handshake (begun at about t=400) would time out;
///   the dial completes (same incarnation). (Resumed at t=800, the
///   handshake had 3 ms left, and a loaded run missed it.)
/// - the server is stopped again for 20 ms, and B's task runs: B is
///   written now. Its exchange used about 100 ms of its io_timeout before
///   the dial (which the builder says may take up to connect_timeout on
///   top), so a reply 20 ms later is in time, with some 250 ms to spare;
///   with the deadline of before the dial, 1 ms is armed and the reply
///   is late. (The first timeline, B at t=250 and a 100 ms pause, left
///   30 ms and 110 ms of margin, and failed on a loaded machine.)
#[test]
fn a_dial_inside_submit_does_not_eat_the_exchange_timeout() {
    let server = MemcachedServer::start_default();
    let io_timeout = Duration::from_millis(400);
    let store = MemcachedStore::builder()
        .connections_per_server(1)
        .io_timeout(io_timeout)
        .connect_timeout(Duration::from_secs(3))
        .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .connect([server.addr()])
        .unwrap();
    let key = k("clock-readings:submit-dial");
    let other = k("clock-readings:submit-dial-other");
    store.set(&other, b"x", Ttl::Never).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    std::thread::scope(|s| {
        server.pause();
        let t0 = Instant::now();
        let a = s.spawn(|| store.get(&other));
        std::thread::sleep(Duration::from_millis(300));
        let (result, took) = rt.block_on(async {
            let op = Op::Set {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
            };
            let started = Instant::now();
            let mut fut = pin!(store.execute_async(&op));
            let mut poll_once =
                async || std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
            assert!(poll_once().await.is_pending(), "B was not queued behind A");
            // A times out at t=400; B is given back unsent (before A's
            // caller returns: its driver fails what is queued).
            let a = a.join().unwrap();
            println!("A: {a:?} at {:?}", t0.elapsed());
            let dials = store.connection_stats().dials;
            assert!(poll_once().await.is_pending(), "B's retry did not dial");
            // Past B's deadline, the server comes back; wait for the dial.
            std::thread::sleep(Duration::from_millis(740).saturating_sub(t0.elapsed()));
            server.resume();
            let waited = Instant::now();
            while store.connection_stats().dials == dials {
                assert!(
                    waited.elapsed() < Duration::from_secs(2),
                    "the dial never ended"
                );
                std::thread::sleep(Duration::from_micros(200));
            }
            println!("redialed at {:?}", t0.elapsed());
            // A 20 ms pause of the server while B is written.
            server.pause();
            let resumer = s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                server.resume();
            });
            let r = fut.await;
            let took = started.elapsed();
            resumer.join().unwrap();
            (r, took)
        });
        println!("B: {result:?} after {took:?}");
        let applied = store.get(&key).unwrap().is_some();
        println!("the server applied B: {applied}");
        assert!(
            !matches!(result, Err(Error::Ambiguous { .. })),
            "an applied set on a healthy server ended Ambiguous {took:?} after it began \
             (io_timeout {io_timeout:?}, connect_timeout 3 s): {result:?}"
        );
        assert!(result.is_ok(), "B failed: {result:?}");
    });
}
