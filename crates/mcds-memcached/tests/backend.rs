//! Backend-specific behaviour on real memcached: round trips per op, version
//! paths, timeouts, ambiguity, backoff while a server is down, pools, error
//! mapping.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mcds_core::{CountingStore, Error, Key, Store, Ttl, traffic};
use mcds_memcached::{MemcachedStore, Version};
use mcds_testserver::{MemcachedServer, ServerOptions, ServerPool};

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn installed_version() -> Version {
    let out = std::process::Command::new("memcached")
        .arg("-V")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("memcached", "VERSION");
    Version::parse(&text)
}

#[test]
fn reads_the_server_version_once_per_connection() {
    let server = MemcachedServer::start(ServerOptions::default().log_commands());
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    assert_eq!(store.server_version(0), None, "no connection yet");
    store.get(&k("x")).unwrap();
    let version = store.server_version(0).unwrap();
    assert_eq!(version, installed_version());
    for _ in 0..50 {
        store.get(&k("x")).unwrap();
    }
    let log = server.commands();
    assert_eq!(log.iter().filter(|c| *c == "version").count(), 1, "{log:?}");
    // 50 gets, the first get, and the handshake's `version` (the pool
    // record's read, add and read again are three more, see `pool`).
    assert_eq!(log.len(), 55);
    // Two threads at once need two connections: one handshake each.
    let b = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                b.wait();
                for _ in 0..200 {
                    store.get(&k("x")).unwrap();
                }
            });
        }
    });
    let versions = server.commands().iter().filter(|c| *c == "version").count();
    assert!((1..=2).contains(&versions), "{versions} handshakes");
}

#[test]
fn round_trips_per_op() {
    let server = MemcachedServer::start(ServerOptions::default().log_commands());
    let store = CountingStore::new(MemcachedStore::connect(&server.addr()).unwrap());
    let s = &store;
    s.get(&k("warm")).unwrap();
    store.reset();

    let one = |name: &str, f: &dyn Fn()| {
        let ((), t) = traffic::measure(f);
        assert_eq!(t.round_trips, 1, "{name}");
        assert_eq!(t.commands, 1, "{name}");
    };
    one("set", &|| {
        let _ = s.set(&k("a"), b"1", Ttl::Never).unwrap();
    });
    one("get", &|| {
        let _ = s.get(&k("a")).unwrap();
    });
    one("add (returns cas)", &|| {
        let _ = s.add(&k("b"), b"1", Ttl::secs(5)).unwrap();
    });
    one("replace", &|| {
        let _ = s.replace(&k("b"), b"2", Ttl::secs(5)).unwrap();
    });
    let cas = s.get(&k("b")).unwrap().unwrap().cas;
    one("cas", &|| {
        let _ = s.cas(&k("b"), b"3", Ttl::secs(5), cas).unwrap();
    });
    one("incr_or_init, first touch", &|| {
        let _ = s.incr_or_init(&k("n"), 1, 1, Ttl::secs(60)).unwrap();
    });
    one("incr_or_init", &|| {
        let _ = s.incr_or_init(&k("n"), 1, 1, Ttl::secs(60)).unwrap();
    });
    one("incr", &|| {
        let _ = s.incr(&k("n"), 1).unwrap();
    });
    one("decr", &|| {
        let _ = s.decr(&k("n"), 1).unwrap();
    });
    one("append hit", &|| {
        let _ = s.append(&k("a"), b"x").unwrap();
    });
    one("touch", &|| {
        let _ = s.touch(&k("a"), Ttl::secs(60)).unwrap();
    });
    let cas = s.get(&k("a")).unwrap().unwrap().cas;
    one("delete_cas", &|| {
        let _ = s.delete_cas(&k("a"), cas).unwrap();
    });
    one("delete", &|| {
        let _ = s.delete(&k("b")).unwrap();
    });
    let (_, t) = traffic::measure(|| s.get_multi(&[k("a"), k("b"), k("n")]).unwrap());
    assert_eq!(
        (t.round_trips, t.commands),
        (1, 3),
        "get_multi on one server"
    );

    // append_or_add: append then add on the first touch (a text append has
    // no create-on-miss), then a single append.
    let version = store.inner().server_version(0).unwrap();
    let ((), first) = traffic::measure(|| s.append_or_add(&k("log"), b"a", Ttl::secs(60)).unwrap());
    let ((), again) = traffic::measure(|| s.append_or_add(&k("log"), b"b", Ttl::secs(60)).unwrap());
    assert_eq!(
        first.round_trips, 2,
        "append_or_add first touch on {version}"
    );
    assert_eq!(again.round_trips, 1, "append_or_add on an existing key");
    // append on a missing key costs one probe to tell "missing" from "too large".
    let ((), miss) = traffic::measure(|| assert!(!s.append(&k("nope"), b"x").unwrap()));
    assert_eq!(miss.round_trips, 2);

    // The counts agree with the server's own command counters.
    let before = server.command_count();
    let ((), t) = traffic::measure(|| {
        s.incr_or_init(&k("n"), 1, 1, Ttl::secs(60)).unwrap();
        s.get(&k("n")).unwrap();
        s.set(&k("z"), b"1", Ttl::Never).unwrap();
    });
    assert_eq!(server.command_count() - before, t.commands);
    assert!(store.stats("incr_or_init").calls >= 3);
}

#[test]
fn get_multi_is_one_round_trip_per_server() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let store = MemcachedStore::connect(&pool.servers_arg()).unwrap();
    let keys: Vec<Key> = (0..60).map(|i| k(&format!("mk{i}"))).collect();
    for key in &keys {
        store.set(key, b"v", Ttl::Never).unwrap();
    }
    let used: std::collections::BTreeSet<usize> =
        keys.iter().map(|k| store.server_for(k)).collect();
    assert_eq!(used.len(), 3, "keys spread over all servers");
    let (items, t) = traffic::measure(|| store.get_multi(&keys).unwrap());
    assert!(items.iter().all(Option::is_some));
    assert_eq!(t.round_trips, 3);
    assert_eq!(t.commands, 60);
    // Each key is on the server the documented hash says (besides the
    // incarnation marker and the pool record every server keeps, see
    // INCARNATION_KEY and POOL_KEY).
    for (i, server) in pool.servers.iter().enumerate() {
        let on_server = keys.iter().filter(|k| store.server_for(k) == i).count() as u64;
        assert_eq!(server.stat("curr_items"), on_server + 2);
        let marker = format!("mg {} v\r\n", mcds_memcached::INCARNATION_KEY);
        let reply = server.raw(marker.as_bytes(), |l| l == "EN" || l.starts_with("VA"));
        assert!(reply[0].starts_with("VA 32"), "{reply:?}");
    }
}

#[test]
fn frozen_server_times_out_then_recovers() {
    let server = MemcachedServer::start_default();
    let timeout = Duration::from_millis(200);
    let store = MemcachedStore::builder()
        .io_timeout(timeout)
        .connect([server.addr()])
        .unwrap();
    store.set(&k("n"), b"1", Ttl::Never).unwrap();
    server.pause();

    let start = Instant::now();
    let read = store.get(&k("n"));
    assert!(
        matches!(read, Err(Error::Timeout { .. })),
        "a read with no reply: {read:?}"
    );
    assert!(
        start.elapsed() < timeout + Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );

    // A write that was sent but not answered may have been applied.
    let write = store.incr(&k("n"), 1);
    match write {
        Err(e @ Error::Ambiguous { .. }) => assert!(e.to_string().contains("may or may not")),
        // A fresh dial to a stopped server fails in the handshake instead.
        Err(Error::Timeout { .. }) => {}
        other => panic!("expected Ambiguous or Timeout, got {other:?}"),
    }

    server.resume();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match store.get(&k("n")) {
            Ok(Some(item)) => {
                // The ambiguous incr was in fact applied once the server woke.
                assert!(matches!(item.counter(), Some(1) | Some(2)));
                break;
            }
            Ok(None) => panic!("value lost"),
            Err(e) if Instant::now() < deadline => {
                assert!(e.is_retryable() || e.is_ambiguous(), "{e}");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("did not recover: {e}"),
        }
    }
}

#[test]
fn dead_server_backs_off_then_reconnects() {
    let mut server = MemcachedServer::start_default();
    let store = MemcachedStore::builder()
        .down_backoff(Duration::from_millis(800), Duration::from_millis(1600))
        .connect([server.addr()])
        .unwrap();
    store.set(&k("a"), b"1", Ttl::Never).unwrap();
    server.kill();

    // The first failure dials and is refused; later ones in the backoff
    // window fail at once without dialing.
    let first = store.get(&k("a")).unwrap_err();
    assert!(first.is_retryable(), "{first}");
    let start = Instant::now();
    let mut down = 0;
    let mut calls = 0;
    // The first wait is at least 400 ms (half the 800 ms ceiling): 100 ms
    // of calls stay well inside it even on a loaded machine.
    while start.elapsed() < Duration::from_millis(100) {
        calls += 1;
        if let Err(Error::ServerDown { retry_in, .. }) = store.get(&k("a")) {
            assert!(retry_in <= Duration::from_millis(1600));
            down += 1;
        }
    }
    assert_eq!(
        down, calls,
        "every call inside the window is refused without a dial"
    );
    assert!(
        Error::ServerDown {
            server: String::new(),
            reason: String::new(),
            retry_in: Duration::ZERO
        }
        .is_retryable()
    );

    server.restart();
    let deadline = Instant::now() + Duration::from_secs(5);
    while store.set(&k("a"), b"2", Ttl::Never).is_err() {
        assert!(Instant::now() < deadline, "never reconnected");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(store.get(&k("a")).unwrap().unwrap().value, b"2");
}

#[test]
fn pool_with_a_dead_server_fails_only_its_keys() {
    let mut pool = ServerPool::start(3, ServerOptions::default());
    let store = MemcachedStore::connect(&pool.servers_arg()).unwrap();
    let keys: Vec<Key> = (0..30).map(|i| k(&format!("pk{i}"))).collect();
    for key in &keys {
        store.set(key, b"v", Ttl::Never).unwrap();
    }
    pool.servers[1].kill();
    for key in &keys {
        let owner = store.server_for(key);
        let got = store.get(key);
        if owner == 1 {
            let e = got.unwrap_err();
            assert!(e.is_retryable(), "{e}");
            assert!(e.to_string().contains(&pool.servers[1].addr()), "{e}");
            // A lock on a dead server is not taken elsewhere.
            assert!(store.add(key, b"other", Ttl::Never).is_err());
        } else {
            assert_eq!(got.unwrap().unwrap().value, b"v");
        }
    }
}

#[test]
fn out_of_memory_with_no_evict() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let value = vec![b'x'; 100_000];
    let mut stored = 0;
    let err = loop {
        match store.set(&k(&format!("fill{stored}")), &value, Ttl::Never) {
            Ok(_) => stored += 1,
            Err(e) => break e,
        }
        assert!(stored < 1000, "memcached -M never refused");
    };
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert!(err.to_string().contains("eviction is disabled"));
}

#[test]
fn larger_item_limit_when_configured() {
    let server = MemcachedServer::start(ServerOptions::default().item_size("2m"));
    let store = MemcachedStore::builder()
        .item_size_limit(2 * 1024 * 1024)
        .connect([server.addr()])
        .unwrap();
    let big = vec![b'b'; 1_500_000];
    store.set(&k("big"), &big, Ttl::Never).unwrap();
    assert_eq!(
        store.get(&k("big")).unwrap().unwrap().value.len(),
        big.len()
    );
    let default = MemcachedStore::connect(&server.addr()).unwrap();
    assert!(matches!(
        default.set(&k("big2"), &big, Ttl::Never),
        Err(Error::ValueTooLarge { .. })
    ));
}

#[test]
fn bad_server_list_is_a_clear_error() {
    for bad in ["", "no-port", "127.0.0.1:notaport"] {
        let e = MemcachedStore::connect(bad).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{bad:?}: {e}");
    }
}

#[test]
fn restart_keeps_the_handle_usable() {
    let mut server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    // Several pooled connections.
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = &store;
            s.spawn(move || {
                for i in 0..50 {
                    store
                        .set(&k(&format!("r{t}.{i}")), b"v", Ttl::Never)
                        .unwrap();
                }
            });
        }
    });
    server.restart();
    // Stale pooled connections are noticed before use; nothing fails.
    for i in 0..20 {
        assert_eq!(
            store.get(&k(&format!("r0.{i}"))).unwrap(),
            None,
            "cache is empty after a restart"
        );
        store
            .set(&k(&format!("r0.{i}")), b"again", Ttl::Never)
            .unwrap();
    }
    assert_eq!(store.get(&k("r0.3")).unwrap().unwrap().value, b"again");
}

#[test]
fn get_with_ttl_reads_the_time_left_on_the_servers_clock() {
    let server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    store.set(&k("short"), b"v1", Ttl::secs(100)).unwrap();
    store.set(&k("forever"), b"v2", Ttl::Never).unwrap();
    let (value, left) = store.get_with_ttl(&k("short")).unwrap().unwrap();
    assert_eq!(value, b"v1");
    // Whole seconds on the server's clock, which may have ticked since the
    // write (and the TTL was sent as an absolute time on that clock).
    let left = left.expect("a TTL");
    assert!(
        (Duration::from_secs(97)..=Duration::from_secs(101)).contains(&left),
        "{left:?}"
    );
    assert_eq!(
        store.get_with_ttl(&k("forever")).unwrap(),
        Some((b"v2".to_vec(), None))
    );
    assert_eq!(store.get_with_ttl(&k("missing")).unwrap(), None);
}

/// `stats` per server: every server of a pool answers with its own listing
/// (its pid, the installed version, its items), a dead one with a retryable
/// error for itself alone, and the exchange leaves pooled connections in
/// step: no second handshake, and ops work after it.
#[test]
fn stats_lists_every_servers_statistics() {
    let mut pool = ServerPool::start(3, ServerOptions::default().log_commands());
    let store = MemcachedStore::connect(&pool.servers_arg()).unwrap();
    let keys: Vec<Key> = (0..30).map(|i| k(&format!("st{i}"))).collect();
    for key in &keys {
        store.set(key, b"v", Ttl::Never).unwrap();
    }
    let stats = store.stats();
    assert_eq!(stats.len(), 3);
    for (i, (addr, listing)) in stats.iter().enumerate() {
        let server = &pool.servers[i];
        assert_eq!(*addr, server.addr());
        let listing = listing.as_ref().unwrap();
        let stat = |name: &str| {
            listing
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {name} in {listing:?}"))
        };
        assert_eq!(stat("pid"), server.pid().unwrap().to_string());
        assert_eq!(
            Version::parse(&format!("VERSION {}", stat("version"))),
            installed_version()
        );
        // This server's share of the keys, plus the incarnation marker and
        // the pool record.
        let mine = keys.iter().filter(|key| store.server_for(key) == i).count();
        assert_eq!(stat("curr_items"), (mine + 2).to_string());
        for name in ["uptime", "bytes", "get_hits", "get_misses", "evictions"] {
            stat(name).parse::<u64>().unwrap();
        }
        assert!(listing.len() > 40, "{} stats", listing.len());
    }
    // The pooled connections are still in step.
    for _ in 0..3 {
        assert!(store.stats().iter().all(|(_, s)| s.is_ok()));
    }
    for key in &keys {
        assert_eq!(store.get(key).unwrap().unwrap().value, b"v");
    }
    for server in &pool.servers {
        let handshakes = server.commands().iter().filter(|c| *c == "version").count();
        assert_eq!(handshakes, 1, "one connection per server, reused");
    }
    // A dead server fails alone, with a retryable error naming it.
    let dead = pool.servers[1].addr();
    pool.servers[1].kill();
    let stats = store.stats();
    assert!(stats[0].1.is_ok() && stats[2].1.is_ok());
    let e = stats[1].1.as_ref().unwrap_err();
    assert!(e.is_retryable() && e.to_string().contains(&dead), "{e}");
}

/// A server whose `-I` is smaller than the client's configured limit
/// refuses appends that mcds let through: that is a configuration error,
/// and it is reported as one (`ValueTooLarge` naming the server's `-I`),
/// never as contention ("the key is hot") after retries.
#[test]
fn a_smaller_server_item_limit_is_named_not_taken_for_contention() {
    let mut options = ServerOptions::default().item_size("64k");
    // memcached refuses an -I under its default 512 KiB slab chunk.
    options.extra_args = vec!["-o".into(), "slab_chunk_max=16384".into()];
    let server = MemcachedServer::start(options);
    let store = MemcachedStore::connect(&server.addr()).unwrap(); // limit 1 MiB
    let key = k("grows");
    let chunk = vec![b'a'; 10_000];
    let err = (0..10)
        .find_map(|_| store.append_or_add(&key, &chunk, Ttl::Never).err())
        .expect("a 64 KiB server stores 100 KB in one item");
    assert!(matches!(err, Error::ValueTooLarge { size: 0, .. }), "{err}");
    assert!(err.to_string().contains("server's -I is smaller"), "{err}");
    let len = store.get(&key).unwrap().unwrap().value.len();
    let err = store
        .append(&key, &chunk)
        .expect_err("the plain append is refused too");
    assert!(matches!(err, Error::ValueTooLarge { size: 0, .. }), "{err}");
    assert_eq!(
        store.get(&key).unwrap().unwrap().value.len(),
        len,
        "nothing lost"
    );
}

/// Contention is not a too-large item: writers appending to one key while
/// another client deletes and re-creates it make appends answer NS and
/// probes find the key again; none of that may be reported as the
/// server's refusal (`ValueTooLarge` with size 0). (An adversarial review
/// found 2,255 such false reports in 177k appends when refusals were told
/// apart by size; the CAS id tells them apart.)
#[test]
fn contention_with_deletes_is_never_a_false_too_large() {
    let server = MemcachedServer::start_default();
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let key = k("contended");
    let false_reports = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..8u8 {
            let (store, key, false_reports) = (&store, &key, &false_reports);
            s.spawn(move || {
                let v = [b'a' + w; 16];
                for i in 0..2_000 {
                    let r = if i % 2 == 0 {
                        store.append_or_add(key, &v, Ttl::Never)
                    } else {
                        store.append(key, &v).map(drop)
                    };
                    if let Err(Error::ValueTooLarge { size: 0, .. }) = r {
                        false_reports.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        let (store, key) = (&store, &key);
        s.spawn(move || {
            for _ in 0..8_000 {
                let _ = store.delete(key);
            }
        });
    });
    assert_eq!(false_reports.load(Ordering::Relaxed), 0);
}

/// On a server without CAS (`-C`), `update` is refused before its function
/// runs, on an existing key and a missing one alike: the function may be a
/// user's command with effects of its own (`mcds kv update`).
#[test]
fn update_without_cas_is_refused_before_the_function_runs() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let existing = Key::new("upd:existing").unwrap();
    store.set(&existing, b"1", Ttl::Never).unwrap();
    for key in [existing, Key::new("upd:missing").unwrap()] {
        let mut calls = 0;
        let r = store.update(&key, Ttl::Never, 4, &mut |_| {
            calls += 1;
            Some(b"2".to_vec())
        });
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
        assert_eq!(calls, 0, "{}", key.display());
    }
}
