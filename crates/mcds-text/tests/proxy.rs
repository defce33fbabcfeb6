//! The text-protocol backend behind a real twemproxy (nutcracker) in front
//! of three memcached servers: no CAS by design, and refused loudly.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, Op, Store, Stored, Ttl};
use mcds_lock::Lock;
use mcds_testserver::{NutcrackerServer, ServerOptions};
use mcds_text::TextStore;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn proxied(proxy: &NutcrackerServer) -> Arc<TextStore> {
    Arc::new(
        TextStore::builder()
            .behind_proxy(true)
            .io_timeout(Duration::from_secs(3))
            .connect([proxy.addr()])
            .unwrap(),
    )
}

/// Everything that needs a CAS id is Unsupported before anything is sent,
/// update included (even on a missing key), ids are 0, and a lock is
/// refused.
#[test]
fn cas_is_refused_loudly_behind_a_proxy() {
    let proxy = NutcrackerServer::start(3, ServerOptions::default());
    let s = proxied(&proxy);
    let key = k("doc");
    assert!(!s.supports_cas(&key).unwrap());
    assert_eq!(s.set(&key, b"v", Ttl::Never).unwrap(), 0);
    assert_eq!(s.get(&key).unwrap().unwrap().cas, 0);
    assert_eq!(
        s.add(&k("new"), b"v", Ttl::Never).unwrap(),
        Stored::Stored(0)
    );
    let refused = |r: mcds_core::Result<String>| match r {
        Err(e @ Error::Unsupported { .. }) => e.to_string(),
        other => panic!("expected Unsupported, got {other:?}"),
    };
    let message = refused(s.cas(&key, b"w", Ttl::Never, 0).map(|o| format!("{o:?}")));
    assert!(
        message.contains("connect to the memcached servers directly"),
        "{message}"
    );
    refused(s.delete_cas(&key, 0).map(|o| format!("{o:?}")));
    let missing = k("missing");
    refused(
        s.update(&missing, Ttl::Never, 3, &mut |_| Some(b"x".to_vec()))
            .map(|o| format!("{o:?}")),
    );
    assert_eq!(s.get(&missing).unwrap(), None);
    let piped = s.pipeline(&[
        Op::Cas {
            key: &key,
            value: b"w",
            ttl: Ttl::Never,
            cas: 0,
        },
        Op::Get(&key),
    ]);
    assert!(matches!(piped[0], Err(Error::Unsupported { .. })));
    assert_eq!(
        piped[1]
            .as_ref()
            .unwrap()
            .clone()
            .item()
            .unwrap()
            .unwrap()
            .value,
        b"v"
    );
    let lock = Lock::new(s.clone(), "job", Duration::from_secs(5)).unwrap();
    let refused_lock = lock.try_acquire();
    println!("behind nutcracker: Lock::try_acquire gave {refused_lock:?}");
    assert!(
        matches!(refused_lock, Err(Error::Unsupported { .. })),
        "{refused_lock:?}"
    );
    // The message names the method called and reads as a sentence.
    let message = match mcds_core::block_on(lock.acquire_async(Duration::from_secs(1))) {
        Err(e @ Error::Unsupported { .. }) => e.to_string(),
        other => panic!("expected Unsupported, got {other:?}"),
    };
    println!("{message}");
    assert!(
        message.starts_with(
            "Lock::acquire_async is not supported by this store (no CAS ids: memcached started with -C, or a proxy such as twemproxy) — "
        ),
        "{message}"
    );
    assert_eq!(s.get(&k("lock:job:owner")).unwrap(), None);
}

/// Keys spread over the proxy's servers; a batch through the proxy is one
/// round trip; only a key is colocated with itself.
#[test]
fn keys_spread_over_the_servers_behind_the_proxy() {
    let proxy = NutcrackerServer::start(3, ServerOptions::default());
    let s = proxied(&proxy);
    let keys: Vec<Key> = (0..60).map(|i| k(&format!("spread{i}"))).collect();
    let ops: Vec<Op<'_>> = keys
        .iter()
        .map(|key| Op::Set {
            key,
            value: b"v",
            ttl: Ttl::Never,
        })
        .collect();
    for r in s.pipeline(&ops) {
        r.unwrap();
    }
    let per_server: Vec<u64> = proxy
        .backends()
        .iter()
        .map(|b| b.stat("curr_items"))
        .collect();
    println!("items per server behind nutcracker: {per_server:?}");
    assert_eq!(per_server.iter().sum::<u64>(), 60);
    assert!(per_server.iter().all(|&n| n > 0), "{per_server:?}");
    assert!(s.get_multi(&keys).unwrap().iter().all(Option::is_some));
    assert!(!s.colocated(&keys[0], &keys[1]));
    assert!(s.colocated(&keys[0], &keys[0]));
}

/// A server behind the proxy dies: the ops on its keys fail with an error
/// (never a panic, never a wrong answer), the others keep working.
#[test]
fn a_dead_server_behind_the_proxy_fails_only_its_keys() {
    let mut proxy = NutcrackerServer::start(3, ServerOptions::default());
    let s = proxied(&proxy);
    let keys: Vec<Key> = (0..30).map(|i| k(&format!("dead{i}"))).collect();
    for key in &keys {
        s.set(key, b"v", Ttl::Never).unwrap();
    }
    proxy.backends_mut()[0].kill();
    let (mut ok, mut failed) = (0, 0);
    for key in &keys {
        match s.get(key) {
            Ok(Some(item)) => {
                assert_eq!(item.value, b"v");
                ok += 1;
            }
            Ok(None) => panic!("a key read as missing instead of failing"),
            Err(e) => {
                println!("a key on the dead server: {e}");
                failed += 1;
            }
        }
    }
    let write = s.incr_or_init(&k("dead-counter"), 1, 1, Ttl::Never);
    println!("{ok} keys read, {failed} failed; a counter write: {write:?}");
    assert!(ok > 0 && failed > 0, "{ok} ok, {failed} failed");
}

/// A direct store pointed at the proxy fails to connect, and says why.
#[test]
fn a_direct_store_on_a_proxy_says_so() {
    let proxy = NutcrackerServer::start(1, ServerOptions::default());
    let s = TextStore::connect(&proxy.addr()).unwrap();
    let err = s.get(&k("x")).unwrap_err();
    let text = err.to_string();
    println!("{text}");
    assert!(text.contains("behind_proxy(true)"), "{text}");
}
