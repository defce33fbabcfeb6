//! TLS, unix sockets and ASCII auth when things go wrong, on both backends
//! (the meta protocol and the text protocol) against real memcached:
//! refused credentials and certificates give a clear error naming what to
//! change, never the password, and no storm of redials; restarts, pauses and
//! pipelines behave as over plain TCP. (The conformance suite over these
//! paths is `conformance_transports.rs`.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{CasOutcome, Error, Key, Op, Store, Ttl};
use mcds_memcached::{Credentials, MemcachedStore, TlsOptions};
use mcds_testkit::{MemcachedServer, ServerOptions};
use mcds_text::TextStore;

/// Both backends over the same settings.
fn both(
    server: &str,
    tls: Option<TlsOptions>,
    credentials: Option<Credentials>,
) -> Vec<(&'static str, Arc<dyn Store>)> {
    let mut meta = MemcachedStore::builder().io_timeout(Duration::from_millis(500));
    let mut text = TextStore::builder().io_timeout(Duration::from_millis(500));
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
