//! TLS, unix sockets and ASCII auth when things go wrong, on both backends
//! (the meta protocol and the text protocol) against real memcached:
//! refused credentials and certificates give a clear error naming what to
//! change, never the password, and no storm of redials; restarts, pauses and
//! pipelines behave as over plain TCP. The second half holds an adversarial
//! review's tests, kept as regressions: what a request that may have landed
//! is reported as over TLS, deadlines against a frozen or trickling TLS
//! server, a TLS server at its connection limit, credentials sent to a
//! server without `-Y`, raw `@` in URL credentials, hostile batches and
//! replies, locks and pooled connections across kill -9 and restart. (The
//! conformance suite over these paths is `conformance_transports.rs`.)

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, Error, Key, Op, Store, Ttl};
use mcds_memcached::{Credentials, MemcachedStore, TlsOptions};
use mcds_testkit::{MemcachedServer, ServerOptions};
use mcds_text::TextStore;

/// Both backends over the same settings.
fn both_with(
    server: &str,
    tls: Option<TlsOptions>,
    credentials: Option<Credentials>,
    io_timeout: Duration,
    item_size_limit: Option<usize>,
) -> Vec<(&'static str, Arc<dyn Store>)> {
    let mut meta = MemcachedStore::builder().io_timeout(io_timeout);
    let mut text = TextStore::builder().io_timeout(io_timeout);
    if let Some(n) = item_size_limit {
        meta = meta.item_size_limit(n);
        text = text.item_size_limit(n);
    }
    if let Some(tls) = tls {
        meta = meta.tls(tls.clone());
        text = text.tls(tls);
    }
    if let Some(c) = credentials {
        meta = meta.credentials(c.clone());
        text = text.credentials(c);
    }
    vec![
        ("meta", Arc::new(meta.connect([server]).unwrap())),
        ("text", Arc::new(text.connect([server]).unwrap())),
    ]
}

fn both(
    server: &str,
    tls: Option<TlsOptions>,
    credentials: Option<Credentials>,
) -> Vec<(&'static str, Arc<dyn Store>)> {
    both_with(server, tls, credentials, Duration::from_millis(500), None)
}

fn tls_of(server: &MemcachedServer) -> Option<TlsOptions> {
    server.tls_files().map(|f| TlsOptions::new().ca_file(&f.ca))
}

fn key(name: &str) -> Key {
    Key::new(name).unwrap()
}

/// The message of a failed op, which must be an `Io` error saying `says`.
fn refused(store: &dyn Store, says: &[&str]) -> String {
    let e = store.get(&key("k")).unwrap_err();
    let message = e.to_string();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    for s in says {
        assert!(message.contains(s), "expected {s:?} in: {message}");
    }
    message
}

#[test]
fn wrong_credentials_are_refused_clearly_without_a_redial_storm() {
    let server = MemcachedServer::start(ServerOptions::default().auth("app", "right"));
    for (name, store) in both(
        &server.addr(),
        None,
        Some(Credentials::new("app", "wrong-hunter2").unwrap()),
    ) {
        let before = server.stat("total_connections");
        let message = refused(&*store, &["refused the credentials", "\"app\"", "-Y"]);
        assert!(!message.contains("hunter2"), "{name}: {message}");
        // Every op after it, for as long as the backoff lasts (the longest
        // one, 1 s: retrying cannot fix credentials), fails at once without
        // dialing.
        let started = Instant::now();
        let mut ops = 0;
        while started.elapsed() < Duration::from_millis(400) {
            let e = store.get(&key("k")).unwrap_err();
            assert!(matches!(e, Error::ServerDown { .. }), "{name}: {e:?}");
            assert!(!e.to_string().contains("hunter2"), "{name}: {e}");
            ops += 1;
        }
        // Less the refused dial and the kit's own `stats` connection.
        let dials = server.stat("total_connections") - before - 2;
        println!(
            "{name}: wrong password: 1 refused dial, then {ops} ops in 400 ms made {dials} more connections"
        );
        assert_eq!(dials, 0, "{name}: {dials} connections");
    }
}

#[test]
fn a_server_that_wants_credentials_says_so() {
    let server = MemcachedServer::start(ServerOptions::default().auth("app", "right"));
    for (_, store) in both(&server.addr(), None, None) {
        refused(&*store, &["requires authentication", "MCDS_USERNAME"]);
    }
    // With them, both work.
    for (name, store) in both(
        &server.addr(),
        None,
        Some(Credentials::new("app", "right").unwrap()),
    ) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
    }
}

#[test]
fn certificates_that_do_not_verify_are_refused_clearly() {
    let server = MemcachedServer::start(ServerOptions::default().tls());
    let files = server.tls_files().unwrap();
    // A CA that did not sign the server's certificate.
    for (_, store) in both(
        &server.addr(),
        Some(TlsOptions::new().ca_file(&files.other_ca)),
        None,
    ) {
        refused(&*store, &["did not verify", "UnknownIssuer", "ca_file"]);
    }
    // The right CA, the wrong name.
    for (_, store) in both(
        &server.addr(),
        Some(
            TlsOptions::new()
                .ca_file(&files.ca)
                .server_name("cache.example"),
        ),
        None,
    ) {
        refused(
            &*store,
            &["did not verify", "NotValidForName", "server_name"],
        );
    }
    // The right CA and name: works; by "localhost" too (the certificate
    // names both).
    for (name, store) in both(
        &server.addr(),
        Some(
            TlsOptions::new()
                .ca_file(&files.ca)
                .server_name("localhost"),
        ),
        None,
    ) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
    }
    // Verification off: works against the foreign CA (and warns on stderr).
    for (name, store) in both(
        &server.addr(),
        Some(
            TlsOptions::new()
                .ca_file(&files.other_ca)
                .danger_accept_invalid_certs(),
        ),
        None,
    ) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
    }
}

#[test]
fn a_server_that_checks_clients_refuses_missing_or_foreign_certificates() {
    let server = MemcachedServer::start(ServerOptions::default().tls_client_auth());
    let files = server.tls_files().unwrap();
    let ca = || TlsOptions::new().ca_file(&files.ca);
    for tls in [
        ca(),
        ca().client_cert(&files.other_client_cert, &files.other_client_key),
    ] {
        for (_, store) in both(&server.addr(), Some(tls.clone()), None) {
            let e = store.get(&key("k")).unwrap_err().to_string();
            // memcached refuses with an alert, during the handshake or
            // (TLS 1.3) with the first reply.
            assert!(e.contains("client certificate"), "{e}");
        }
    }
    for (name, store) in both(
        &server.addr(),
        Some(ca().client_cert(&files.client_cert, &files.client_key)),
        None,
    ) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
    }
}

#[test]
fn tls_to_a_plain_server_and_plain_to_a_tls_server_fail_clearly() {
    let plain = MemcachedServer::start_default();
    let tls = MemcachedServer::start(ServerOptions::default().tls());
    let ca = &tls.tls_files().unwrap().ca;
    for (name, store) in both(&plain.addr(), Some(TlsOptions::new().ca_file(ca)), None) {
        let e = store.get(&key("k")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{name}: {e:?}");
        assert!(e.to_string().contains("TLS"), "{name}: {e}");
    }
    for (name, store) in both(&tls.addr(), None, None) {
        let e = store.get(&key("k")).unwrap_err();
        assert!(
            matches!(e, Error::Io { .. } | Error::Timeout { .. }),
            "{name}: {e:?}"
        );
    }
}

#[test]
fn unknown_files_and_unix_tls_are_refused_when_the_store_is_built() {
    let e = MemcachedStore::builder()
        .tls(TlsOptions::new().ca_file("/nonexistent/ca.pem"))
        .connect(["127.0.0.1:1"])
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
    let e = TextStore::builder()
        .tls(TlsOptions::new())
        .connect(["unix:/run/memcached.sock"])
        .unwrap_err();
    assert!(e.to_string().contains("unix socket"), "{e}");
    let e = MemcachedStore::connect("unix:/nonexistent/m.sock")
        .unwrap()
        .get(&key("k"))
        .unwrap_err();
    assert!(e.to_string().contains("/nonexistent/m.sock"), "{e}");
}

/// kill -9 and a restart on the same address: the stores reconnect, and a
/// CAS id read before matches nothing after (restart-safe over every
/// transport, TLS and auth included).
#[test]
fn restarts_over_tls_unix_and_auth_keep_cas_ids_safe() {
    for options in [
        ServerOptions::default().tls().auth("app", "pw"),
        ServerOptions::default().unix_socket(),
    ] {
        let mut server = MemcachedServer::start(options.clone());
        let tls = server.tls_files().map(|f| TlsOptions::new().ca_file(&f.ca));
        let credentials = options
            .auth
            .as_ref()
            .map(|(u, p)| Credentials::new(u, p).unwrap());
        let stores = both(&server.addr(), tls, credentials);
        let mut ids = Vec::new();
        for (name, store) in &stores {
            let cas = store.set(&key(name), b"before", Ttl::Never).unwrap();
            ids.push(cas);
        }
        server.kill();
        server.restart();
        for ((name, store), cas) in stores.iter().zip(ids) {
            // The first op may fail on the dead connection (a pooled
            // connection's read is retried once); within a second it works.
            let deadline = Instant::now() + Duration::from_secs(3);
            let mut wrote = None;
            while wrote.is_none() {
                match store.set(&key(name), b"after", Ttl::Never) {
                    Ok(c) => wrote = Some(c),
                    Err(e) if Instant::now() < deadline => {
                        let _ = e;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(e) => panic!("{name} after a restart: {e}"),
                }
            }
            assert_eq!(
                store.cas(&key(name), b"stale", Ttl::Never, cas).unwrap(),
                CasOutcome::Exists,
                "{name}: an id from before the restart matched"
            );
        }
    }
}

/// A paused (SIGSTOPped) TLS server: an op gives up within its timeout and
/// says whether the request may have been applied; after SIGCONT the store
/// works again.
#[test]
fn a_frozen_tls_server_times_out_then_resumes() {
    let server = MemcachedServer::start(ServerOptions::default().tls());
    let ca = &server.tls_files().unwrap().ca;
    for (name, store) in both(&server.addr(), Some(TlsOptions::new().ca_file(ca)), None) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
        server.pause();
        let started = Instant::now();
        let e = store.incr_or_init(&key("n"), 1, 0, Ttl::Never).unwrap_err();
        let took = started.elapsed();
        server.resume();
        assert!(
            matches!(e, Error::Ambiguous { .. } | Error::Timeout { .. }),
            "{name}: {e:?}"
        );
        assert!(took < Duration::from_millis(600), "{name}: took {took:?}");
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match store.get(&key(name)) {
                Ok(item) => {
                    assert_eq!(item.unwrap().value, b"v");
                    break;
                }
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => panic!("{name} after resume: {e}"),
            }
        }
    }
}

/// A batch of large values and small commands through TLS: memcached
/// 1.6.18 never answers commands that share a TLS record with the end of a
/// data block it read past its buffer, or that it read only part of; each
/// command goes in records of its own, and every op gets its reply.
#[test]
fn pipelines_of_large_values_over_tls_get_every_reply() {
    let server = MemcachedServer::start(ServerOptions::default().tls());
    let ca = &server.tls_files().unwrap().ca;
    for (name, store) in both(&server.addr(), Some(TlsOptions::new().ca_file(ca)), None) {
        let keys: Vec<Key> = (0..40).map(|i| key(&format!("{name}:{i}"))).collect();
        let values: Vec<Vec<u8>> = (0..40)
            .map(|i| vec![b'a' + (i % 26) as u8; 1000 + i * 7919])
            .collect();
        let mut ops = Vec::new();
        for (k, v) in keys.iter().zip(&values) {
            ops.push(Op::Set {
                key: k,
                value: v,
                ttl: Ttl::Never,
            });
            ops.push(Op::Get(k));
            ops.push(Op::IncrOrInit {
                key: k,
                delta: 1,
                initial: 0,
                ttl: Ttl::Never,
            });
        }
        let replies = store.pipeline(&ops);
        for (i, r) in replies.into_iter().enumerate() {
            match i % 3 {
                0 => {
                    r.unwrap();
                }
                1 => assert_eq!(
                    r.unwrap().item().unwrap().unwrap().value,
                    values[i / 3],
                    "{name}: op {i}"
                ),
                // A counter op on a value that is not a number.
                _ => assert!(
                    matches!(r, Err(Error::NonNumeric { .. })),
                    "{name}: op {i}: {r:?}"
                ),
            }
        }
    }
}

// ---------------------------------------------------------------------
// 4. Auth: the password is stored in the cache of a server without -Y.
// ---------------------------------------------------------------------

/// : credentials given for a server that does not run -Y (a
/// misconfiguration, a restart without -Y, MCDS_USERNAME/MCDS_PASSWORD set
/// in the environment for another cluster) are `set` as a plain item:
/// anyone who can `get mcds_auth` reads the password.
#[test]
fn credentials_sent_to_a_server_without_auth_are_not_stored() {
    let server = MemcachedServer::start_default();
    let mut leaked = Vec::new();
    for (name, store) in both(
        &server.addr(),
        None,
        Some(Credentials::new("alice", "hunter2-SECRET").unwrap()),
    ) {
        store.set(&key(name), b"v", Ttl::Never).unwrap();
        let got = server.raw(b"get mcds_auth\r\n", |l| l == "END");
        println!("{name}: get mcds_auth -> {got:?}");
        if got.iter().any(|l| l.contains("SECRET")) {
            leaked.push(name);
        }
        server.raw(b"delete mcds_auth\r\n", |_| true);
    }
    assert!(
        leaked.is_empty(),
        "password readable from the cache via: {leaked:?}"
    );
}

// ---------------------------------------------------------------------
// 5. is_permanent: memcached's connection limit over TLS.
// ---------------------------------------------------------------------

/// Fill the server's connections with idle plain TCP connections until one
/// is refused with "ERROR Too many open connections"; gives the held ones.
fn fill_connections(addr: &str) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..200 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(150)))
            .unwrap();
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(n) if n > 0 => {
                println!(
                    "refused after {} held: {:?}",
                    held.len(),
                    String::from_utf8_lossy(&buf[..n])
                );
                return held;
            }
            _ => held.push(s),
        }
    }
    panic!("never refused");
}

/// : memcached refuses a connection over its limit (-c) by writing
/// "ERROR Too many open connections" in clear text before any TLS: rustls
/// sees a corrupt record, `tls_error` words every rustls error as
/// PermissionDenied, and `is_permanent` then leaves a healthy server alone
/// for the longest backoff (1 s) — over plain TCP the same refusal costs
/// the normal, short backoff.
#[test]
fn a_full_tls_server_is_not_taken_for_a_permanent_refusal() {
    let mut down = Vec::new();
    for tls in [false, true] {
        let mut options = ServerOptions {
            extra_args: vec!["-c".into(), "30".into()],
            ..ServerOptions::default()
        };
        if tls {
            options = options.tls();
        }
        let server = MemcachedServer::start(options);
        let stores = both(&server.addr(), tls_of(&server), None);
        let held = fill_connections(&server.addr());
        let mut outage = Vec::new();
        for (name, store) in &stores {
            let e = store.get(&key("k")).unwrap_err();
            let kind = match &e {
                Error::Io { source, .. } => format!("{:?}", source.kind()),
                other => format!("{other:?}").chars().take(40).collect(),
            };
            outage.push((name, kind, e.to_string()));
        }
        drop(held);
        std::thread::sleep(Duration::from_millis(20));
        for ((name, store), (_, kind, msg)) in stores.iter().zip(&outage) {
            let started = Instant::now();
            let mut failures = 0;
            while store.get(&key("k")).is_err() {
                failures += 1;
                std::thread::sleep(Duration::from_millis(5));
                assert!(started.elapsed() < Duration::from_secs(5));
            }
            println!(
                "tls={tls} {name}: full server gave {kind}: {msg}\n    server free again: usable after {:?} ({failures} failed ops)",
                started.elapsed()
            );
            if tls && started.elapsed() > Duration::from_millis(300) {
                down.push(format!(
                    "{name}: a transient connection limit kept a healthy server down for {:?}",
                    started.elapsed()
                ));
            }
        }
    }
    assert!(down.is_empty(), "{down:#?}");
}

// ---------------------------------------------------------------------
// 1/2. Deadlines and "sent or not" under TLS.
// ---------------------------------------------------------------------

/// : over TLS a large `set` to a server that stalls past the
/// deadline and then resumes is (meta backend) reported `Timeout` — "not
/// sent, safe to retry" — although the whole command went out and was
/// applied; and the op blocks well past its io_timeout.
#[test]
fn a_tls_write_that_may_have_landed_is_reported_ambiguous() {
    const MB: usize = 1 << 20;
    let mut wrong = Vec::new();
    for tls in [false, true] {
        let mut options = ServerOptions::default().item_size("64m").memory_mb(512);
        if tls {
            options = options.tls();
        }
        let server = MemcachedServer::start(options);
        let io = Duration::from_millis(500);
        for (name, store) in both_with(&server.addr(), tls_of(&server), None, io, Some(64 * MB)) {
            let k = key(&format!("big-{name}"));
            store.set(&key("warm"), b"v", Ttl::Never).unwrap();
            let value = vec![b'x'; 24 * MB];
            server.pause();
            let (result, took) = std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(Duration::from_millis(800));
                    server.resume();
                });
                let started = Instant::now();
                let r = store.set(&k, &value, Ttl::Never);
                (r, started.elapsed())
            });
            std::thread::sleep(Duration::from_millis(300));
            let stored = loop {
                match store.get(&k) {
                    Ok(item) => break item.map(|i| i.value.len()),
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            };
            let shown = match &result {
                Ok(_) => "Ok".to_string(),
                Err(e) => format!("{e}"),
            };
            if took > io * 3 / 2 {
                wrong.push(format!("tls={tls} {name}: took {took:?}"));
            }
            println!(
                "tls={tls} {name}: set of 24 MiB to a server paused 800 ms (io_timeout 500 ms) took {took:?}: {shown}; stored afterwards: {stored:?}"
            );
            if stored.is_some() && matches!(result, Err(Error::Timeout { .. } | Error::Io { .. })) {
                wrong.push(format!(
                    "tls={tls} {name}: applied but reported as not sent: {shown}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A TCP relay in front of `target` that, once `trickle` is set, passes the
/// server's bytes on one at a time, `gap` apart.
struct Relay {
    addr: String,
    trickle: Arc<AtomicBool>,
}

fn relay(target: &str, gap: Duration) -> Relay {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let trickle = Arc::new(AtomicBool::new(false));
    let flag = trickle.clone();
    let target = target.to_string();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let Ok(server) = TcpStream::connect(&target) else {
                continue;
            };
            client.set_nodelay(true).ok();
            server.set_nodelay(true).ok();
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c_in, &mut s_out);
                let _ = s_out.shutdown(Shutdown::Write);
            });
            let flag = flag.clone();
            let (mut s_in, mut c_out) = (server, client);
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                loop {
                    let n = match s_in.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if flag.load(Ordering::SeqCst) {
                        for b in &buf[..n] {
                            if c_out.write_all(&[*b]).is_err() {
                                return;
                            }
                            std::thread::sleep(gap);
                        }
                    } else if c_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = c_out.shutdown(Shutdown::Write);
            });
        }
    });
    Relay { addr, trickle }
}

/// : a TLS read is one `Stream::read` under one armed timeout, but
/// rustls makes one blocking `recv` per piece of a record, each with the
/// full armed timeout: a reply that trickles in (a byte every 60 ms, well
/// within the 300 ms timeout each) is read for as long as it trickles.
/// Over plain TCP the same trickle times out at the deadline.
#[test]
fn a_trickling_tls_reply_is_bounded_by_the_deadline() {
    let mut slow = Vec::new();
    for tls in [false, true] {
        let server = MemcachedServer::start(if tls {
            ServerOptions::default().tls()
        } else {
            ServerOptions::default()
        });
        let relay = relay(&server.addr(), Duration::from_millis(60));
        let io = Duration::from_millis(300);
        for (name, store) in both_with(&relay.addr, tls_of(&server), None, io, None) {
            store.set(&key("k"), b"value", Ttl::Never).unwrap();
            relay.trickle.store(true, Ordering::SeqCst);
            let started = Instant::now();
            let r = store.get(&key("k"));
            let took = started.elapsed();
            relay.trickle.store(false, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            println!(
                "tls={tls} {name}: get with io_timeout {io:?} through a trickling relay took {took:?}: {:?}",
                r.as_ref().map(|i| i.is_some()).map_err(|e| e.to_string())
            );
            if took > io * 2 {
                slow.push(format!(
                    "tls={tls} {name}: an op with io_timeout {io:?} took {took:?}"
                ));
            }
        }
    }
    assert!(slow.is_empty(), "{slow:#?}");
}

/// Low, deterministic: a TCP `flush` has nothing to do, yet past the
/// deadline it fails with TimedOut, after `write_all` put every byte of a
/// request on the wire. `Session::exchange` maps a failed send to "not
/// sent" (`Timeout`), so a request that is on its way is reported safe to
/// retry. (The sleep stands for a preemption or a write that returned
/// within SLACK past the deadline.)
#[test]
fn a_flush_with_nothing_to_flush_succeeds_after_the_deadline() {
    use mcds_net::transport::{Endpoint, Security, Stream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let endpoint = Endpoint::resolve(&addr).unwrap();
    let security = Security::new(None, None).unwrap();
    let mut stream = Stream::connect(
        &addr,
        &endpoint,
        &security,
        Duration::from_secs(1),
        Duration::from_secs(1),
    )
    .unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    stream.set_deadline(Instant::now() + Duration::from_millis(20));
    stream.write_all(b"mn\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(25));
    let flushed = stream.flush();
    let mut got = [0u8; 4];
    peer.read_exact(&mut got).unwrap();
    println!(
        "peer received {:?}; flush said {flushed:?}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        flushed.is_ok(),
        "flush failed after every byte left: {flushed:?}"
    );
}

// ---------------------------------------------------------------------
// 2. Batches that might stall over TLS.
// ---------------------------------------------------------------------

#[test]
fn hostile_batches_over_tls_get_every_reply() {
    let server = MemcachedServer::start(
        ServerOptions::default()
            .tls()
            .item_size("4m")
            .memory_mb(256),
    );
    let io = Duration::from_secs(2);
    for (name, store) in both_with(&server.addr(), tls_of(&server), None, io, Some(4 << 20)) {
        let started = Instant::now();
        // (a) values around the 16 KiB record and read-buffer sizes, with
        // command-like text and CRLFs inside, each followed by a get.
        let tricky = b"\r\nEND\r\nset x 0 0 5\r\nhello\r\nVA 5\r\nmn\r\nms k 2\r\n";
        let sizes: Vec<usize> = (16_300..16_420)
            .chain(32_700..32_800)
            .chain([1, 2, 16_384, 65_536, 1 << 20, (1 << 20) + 1, 3 << 20])
            .collect();
        let keys: Vec<Key> = sizes
            .iter()
            .enumerate()
            .map(|(i, _)| key(&format!("{name}-{i}-{}", "k".repeat(200))))
            .collect();
        let values: Vec<Vec<u8>> = sizes
            .iter()
            .map(|&n| tricky.iter().copied().cycle().take(n).collect())
            .collect();
        let mut ops = Vec::new();
        for (k, v) in keys.iter().zip(&values) {
            ops.push(Op::Set {
                key: k,
                value: v,
                ttl: Ttl::Never,
            });
            ops.push(Op::Get(k));
        }
        let replies = store.pipeline(&ops);
        let mut bad = 0;
        for (i, r) in replies.iter().enumerate() {
            let ok = match (i % 2, r) {
                (0, Ok(_)) => true,
                (1, Ok(reply)) => reply
                    .clone()
                    .item()
                    .ok()
                    .flatten()
                    .is_some_and(|it| it.value == values[i / 2]),
                _ => false,
            };
            if !ok {
                bad += 1;
                if bad < 4 {
                    println!(
                        "{name}: op {i} (size {}): {:?}",
                        sizes[i / 2],
                        r.as_ref().err()
                    );
                }
            }
        }
        println!(
            "{name}: (a) {} ops, {bad} bad, {:?}",
            ops.len(),
            started.elapsed()
        );
        assert_eq!(bad, 0, "{name}");

        // (b) 20 000 small counter ops in one pipeline.
        let started = Instant::now();
        let ck: Vec<Key> = (0..50).map(|i| key(&format!("{name}-c{i}"))).collect();
        let ops: Vec<Op> = (0..20_000)
            .map(|i| Op::IncrOrInit {
                key: &ck[i % 50],
                delta: 1,
                initial: 0,
                ttl: Ttl::Never,
            })
            .collect();
        let replies = store.pipeline(&ops);
        let failed = replies.iter().filter(|r| r.is_err()).count();
        println!(
            "{name}: (b) 20000 incr ops: {failed} failed, {:?}",
            started.elapsed()
        );
        assert_eq!(failed, 0, "{name}");

        // (c) get_multi of 2000 keys with 250-byte keys, half missing.
        let started = Instant::now();
        let gk: Vec<Key> = (0..2000)
            .map(|i| {
                let s = format!("{name}-g{i}-");
                key(&format!("{s}{}", "z".repeat(250 - s.len())))
            })
            .collect();
        let ops: Vec<Op> = gk
            .iter()
            .step_by(2)
            .map(|k| Op::Set {
                key: k,
                value: b"\r\nEND\r\n",
                ttl: Ttl::Never,
            })
            .collect();
        assert!(store.pipeline(&ops).iter().all(|r| r.is_ok()));
        let got = store.get_multi(&gk).unwrap();
        let hits = got.iter().filter(|x| x.is_some()).count();
        println!(
            "{name}: (c) get_multi 2000 keys: {hits} hits, {:?}",
            started.elapsed()
        );
        assert_eq!(hits, 1000);
    }
}

// ---------------------------------------------------------------------
// 4. URL credentials.
// ---------------------------------------------------------------------

/// : the URL's credentials end at the *first* '@': a password with
/// a raw '@' puts its tail into the server list, where `Debug` and the
/// resolve error show it; an '@' in an option value is taken for
/// credentials.
#[test]
fn url_credentials_with_a_raw_at_sign_stay_hidden() {
    let url = "memcached://app:p@ss-SECRET@127.0.0.1:11211";
    let parsed = mcds_url::StoreUrl::parse(url);
    let debug = format!("{parsed:?}");
    let opened = parsed.as_ref().map(|u| u.open().map(|_| ()));
    let shown = format!(
        "{debug} / {:?}",
        opened
            .as_ref()
            .map(|r| r.as_ref().map_err(|e| e.to_string()))
    );
    println!("{shown}");
    let prefix = mcds_url::StoreUrl::parse("memcached://127.0.0.1:11211?prefix=team@x");
    println!("prefix=team@x -> {prefix:?}");
    assert!(!shown.contains("SECRET"), "password tail shown: {shown}");
}

#[test]
fn credentials_with_odd_characters_work() {
    // memcached's auth file splits each line at its first ':', and the
    // password ends at the line's end.
    for password in ["p%40ss:w@rd", "pässwörd✓", "a:b:c", "x%", "tab\there"] {
        let server = MemcachedServer::start(ServerOptions::default().auth("app", password));
        let c = Credentials::new("app", password).unwrap();
        for (name, store) in both(&server.addr(), None, Some(c.clone())) {
            let r = store.set(&key(name), b"v", Ttl::Never);
            println!(
                "password {password:?} {name}: {:?}",
                r.as_ref().map(|_| ()).map_err(|e| e.to_string())
            );
            assert!(r.is_ok());
        }
        // Through the URL, percent-encoded.
        let enc: String = password
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let url = format!("memcached://app:{enc}@{}", server.addr());
        let scope = mcds_url::StoreUrl::parse(&url).unwrap().open().unwrap();
        let _ = scope;
    }
}

// ---------------------------------------------------------------------
// 6. Hostile replies.
// ---------------------------------------------------------------------

#[test]
fn hostile_replies_do_not_panic_or_allocate_from_claims() {
    let mut cases: Vec<Vec<u8>> = vec![
        b"VA 1073741824 \r\nabc".to_vec(),
        b"VA 1073741825\r\n".to_vec(),
        b"VA 18446744073709551615\r\n".to_vec(),
        b"VA 18446744073709551616\r\n".to_vec(),
        b"VA -1\r\n".to_vec(),
        b"VA 3\r\nabcXY".to_vec(),
        b"VA 3 c1 f\r\nabc\r\n".to_vec(),
        b"VA\r\n".to_vec(),
        b"VA 0\r\n\r\nHD\r\n".to_vec(),
        b"HD \xff\xfe c-1 t99999999999999999999\r\n".to_vec(),
        b"\r\n\r\n\r\n".to_vec(),
        b"EN".to_vec(),
        vec![b'A'; 10 << 20],
        [b"VA 5 ".as_slice(), &vec![b'f'; 100_000], b"\r\nhello\r\n"].concat(),
        b"SERVER_ERROR \r\nCLIENT_ERROR\r\nERROR\r\n".to_vec(),
    ];
    let mut seed = 0x2545F4914F6CDD1Du64;
    let toks: [&[u8]; 16] = [
        b"VA ",
        b"HD",
        b"EN",
        b"NF",
        b"NS",
        b"EX",
        b"MN",
        b"\r\n",
        b" ",
        b"c",
        b"O",
        b"t-1",
        b"1",
        b"18446744073709551615",
        b"\n",
        b"k",
    ];
    for _ in 0..2_000 {
        let mut v = Vec::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        for i in 0..(seed % 24) {
            v.extend_from_slice(toks[((seed >> (i * 2 % 60)) % 16) as usize]);
        }
        cases.push(v);
    }
    let started = Instant::now();
    for (i, c) in cases.iter().enumerate() {
        let r = std::panic::catch_unwind(|| mcds_memcached::fuzzing::replies(c));
        assert!(
            r.is_ok(),
            "case {i} panicked: {:?}",
            String::from_utf8_lossy(&c[..c.len().min(80)])
        );
    }
    println!(
        "{} hostile replies, no panic, {:?}",
        cases.len(),
        started.elapsed()
    );
}

// ---------------------------------------------------------------------
// 3/4/7. Pooled TLS connections, restarts, locks.
// ---------------------------------------------------------------------

#[test]
fn locks_over_tls_auth_and_unix_across_kill_and_restart() {
    for options in [
        ServerOptions::default().tls().auth("app", "pw"),
        ServerOptions::default().unix_socket(),
    ] {
        let mut server = MemcachedServer::start(options.clone());
        let credentials = options
            .auth
            .as_ref()
            .map(|(u, p)| Credentials::new(u, p).unwrap());
        for (name, store) in both(&server.addr(), tls_of(&server), credentials) {
            let lock = mcds_lock::Lock::with_key(
                store.clone(),
                key(&format!("lock-{name}")),
                Duration::from_secs(30),
            )
            .unwrap()
            .with_fencing(true);
            let a = lock.try_acquire().unwrap().expect("free");
            assert!(lock.try_acquire().unwrap().is_none());
            server.kill();
            server.restart();
            let deadline = Instant::now() + Duration::from_secs(3);
            let b = loop {
                match lock.try_acquire() {
                    Ok(Some(g)) => break g,
                    Ok(None) => panic!("{name}: still held after a restart"),
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    Err(e) => panic!("{name}: {e}"),
                }
            };
            let (ta, tb) = (a.fencing_token().unwrap(), b.fencing_token().unwrap());
            let released = a.release();
            println!(
                "{name}: after kill -9 + restart: a={ta} b={tb}; a.release -> {released:?}; holder now {:?}",
                lock.holder()
            );
            assert!(tb > ta, "{name}: fencing went backwards");
            assert!(
                !matches!(released, Ok(mcds_lock::Release::Released)),
                "{name}: stale guard released the new holder's lock"
            );
            assert!(
                lock.try_acquire().unwrap().is_none(),
                "{name}: b's lock was deleted"
            );
            b.release().unwrap();
        }
    }
}

/// The TLS liveness check on pooled connections: idle connections after a
/// restart are found dead, and many ops keep working across idle periods.
#[test]
fn pooled_tls_connections_survive_idle_and_die_with_restarts() {
    let mut server = MemcachedServer::start(ServerOptions::default().tls());
    let stores = both(&server.addr(), tls_of(&server), None);
    for round in 0..3 {
        for (name, store) in &stores {
            for i in 0..50 {
                store
                    .set(&key(&format!("{name}{i}")), b"v", Ttl::Never)
                    .unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(300));
        server.kill();
        server.restart();
        for (name, store) in &stores {
            // A read after a restart: the pooled connections are stale.
            let r = store.get(&key("x"));
            println!(
                "round {round} {name}: first read after restart: {:?}",
                r.as_ref().map(|_| ()).map_err(|e| e.to_string())
            );
            // A write right after a restart must not be reported Ambiguous
            // because of a stale pooled connection that the check missed.
            let w = store.set(&key("y"), b"v", Ttl::Never);
            println!(
                "round {round} {name}: first write: {:?}",
                w.as_ref().map(|_| ()).map_err(|e| e.to_string())
            );
        }
    }
}

/// How long a TLS write to a server paused for good blocks (io_timeout 500 ms).
#[test]
fn how_long_a_tls_write_to_a_frozen_server_blocks() {
    const MB: usize = 1 << 20;
    let server = MemcachedServer::start(
        ServerOptions::default()
            .tls()
            .item_size("64m")
            .memory_mb(512),
    );
    let io = Duration::from_millis(500);
    let mut slow = Vec::new();
    for (name, store) in both_with(&server.addr(), tls_of(&server), None, io, Some(64 * MB)) {
        store.set(&key("warm"), b"v", Ttl::Never).unwrap();
        let value = vec![b'x'; 24 * MB];
        server.pause();
        let started = Instant::now();
        let r = store.set(&key("big"), &value, Ttl::Never);
        let took = started.elapsed();
        server.resume();
        println!(
            "{name}: 24 MiB set to a frozen TLS server, io_timeout {io:?}: took {took:?}: {:?}",
            r.map(|_| ()).map_err(|e| e.to_string())
        );
        if took > io * 3 / 2 {
            slow.push(format!("{name}: {took:?}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(slow.is_empty(), "{slow:#?}");
}
