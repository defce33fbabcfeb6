//! The text-protocol backend against real memcached: restart safety (a CAS
//! id from before a `kill -9` and restart matches nothing after it), the
//! conditional delete, servers without CAS, timeouts, and what it shares
//! with the meta-protocol backend.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{CasOutcome, DeleteOutcome, Error, Key, Op, Store, Ttl, traffic};
use mcds_lock::{Extend, Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions, ServerPool};
use mcds_text::TextStore;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn store(addr: &str) -> Arc<TextStore> {
    Arc::new(TextStore::connect(addr).unwrap())
}

/// The server's own CAS id of `key`, read with a raw `gets`.
fn raw_cas(server: &MemcachedServer, key: &str) -> u64 {
    let lines = server.raw(format!("gets {key}\r\n").as_bytes(), |l| l == "END");
    lines[0].split(' ').nth(4).unwrap().parse().unwrap()
}

/// `cas <k> 0 -1 0 <id>` with an empty value deletes only on a CAS match,
/// on real memcached: a stale id keeps the item, the current one removes
/// it (the key then reads as missing and `add` works at once), a missing
/// key is NOT_FOUND.
#[test]
fn an_expired_cas_write_deletes_only_on_a_match() {
    let server = MemcachedServer::start_default();
    server.raw_set("d", b"v");
    let id = raw_cas(&server, "d");
    let reply = |cmd: String| server.raw(cmd.as_bytes(), |_| true)[0].clone();
    assert_eq!(reply(format!("cas d 0 -1 0 {}\r\n\r\n", id + 1)), "EXISTS");
    assert_eq!(raw_cas(&server, "d"), id, "a stale id kept the item");
    assert_eq!(reply(format!("cas d 0 -1 0 {id}\r\n\r\n")), "STORED");
    assert_eq!(server.raw(b"get d\r\n", |l| l == "END"), ["END"]);
    assert_eq!(reply("add d 0 0 1\r\nx\r\n".into()), "STORED");
    assert_eq!(reply("cas nothere 0 -1 0 5\r\n\r\n".into()), "NOT_FOUND");

    // And through the store.
    let s = store(&server.addr());
    let key = k("doc");
    let old = s.set(&key, b"v1", Ttl::Never).unwrap();
    let new = s.set(&key, b"v2", Ttl::Never).unwrap();
    assert_eq!(s.delete_cas(&key, old).unwrap(), DeleteOutcome::Exists);
    assert_eq!(s.get(&key).unwrap().unwrap().value, b"v2");
    assert_eq!(s.delete_cas(&key, new).unwrap(), DeleteOutcome::Deleted);
    assert_eq!(s.get(&key).unwrap(), None);
    assert!(s.add(&key, b"v3", Ttl::Never).unwrap().is_stored());
}

/// A CAS id read before `kill -9` and a restart (memcached numbers CAS ids
/// from 1 again, so the server's raw ids collide) matches nothing after
/// it: cas and delete_cas answer EXISTS and touch nothing. Fresh ids work.
#[test]
fn a_cas_id_from_before_a_kill_and_restart_matches_nothing_after_it() {
    let mut server = MemcachedServer::start_default();
    let old = store(&server.addr());
    let key = k("doc");
    old.set(&key, b"v1", Ttl::Never).unwrap();
    let stale = old.get(&key).unwrap().unwrap().cas;
    let raw_before = raw_cas(&server, "doc");
    server.kill(); // SIGKILL
    server.restart();
    let new = store(&server.addr());
    // Another client writes the key on the new incarnation until the
    // server's raw id is the one the old client read.
    let mut tries = 0;
    new.set(&key, b"v2", Ttl::Never).unwrap();
    while raw_cas(&server, "doc") < raw_before && tries < 100 {
        new.set(&key, b"v2", Ttl::Never).unwrap();
        tries += 1;
    }
    assert_eq!(
        raw_cas(&server, "doc"),
        raw_before,
        "the raw ids collide, as memcached restarts them"
    );
    let cas = old.cas(&key, b"v3", Ttl::Never, stale).unwrap();
    let deleted = old.delete_cas(&key, stale).unwrap();
    println!("after kill -9 and restart, the old CAS id: cas {cas:?}, delete_cas {deleted:?}");
    assert_eq!(cas, CasOutcome::Exists);
    assert_eq!(deleted, DeleteOutcome::Exists);
    assert_eq!(new.get(&key).unwrap().unwrap().value, b"v2");
    // The old client's pooled connections were dropped; ids it reads now
    // work from either client.
    let fresh = old.get(&key).unwrap().unwrap().cas;
    assert_ne!(fresh, stale);
    assert!(matches!(
        new.cas(&key, b"v4", Ttl::Never, fresh).unwrap(),
        CasOutcome::Stored(_)
    ));
}

/// A holds a lock; the server is killed and restarted; B takes the lock.
/// A's extend and release report Lost and leave B's lock alone.
#[test]
fn a_restart_never_lets_an_old_lock_guard_act_on_the_next_lock() {
    let ttl = Duration::from_secs(30);
    let mut server = MemcachedServer::start_default();
    let a = Lock::new(store(&server.addr()), "job", ttl)
        .unwrap()
        .try_acquire()
        .unwrap()
        .unwrap();
    server.kill();
    server.restart();
    let lock_b = Lock::new(store(&server.addr()), "job", ttl).unwrap();
    let b = lock_b
        .try_acquire()
        .unwrap()
        .expect("the restarted server is empty");
    assert_eq!(a.extend(ttl).unwrap(), Extend::Lost, "A extended B's lock");
    assert_eq!(a.release().unwrap(), Release::Lost, "A released B's lock");
    assert_eq!(lock_b.holder().unwrap().as_deref(), Some(b.owner_token()));
    assert_eq!(b.release().unwrap(), Release::Released);
}

/// memcached `-C` hands out CAS id 0 everywhere: the handshake sees it,
/// `supports_cas` is false, cas and delete_cas are Unsupported before
/// anything is sent, and a lock is refused.
#[test]
fn a_server_without_cas_refuses_cas_and_locks() {
    let server = MemcachedServer::start(ServerOptions {
        extra_args: vec!["-C".into()],
        ..ServerOptions::default()
    });
    let s = store(&server.addr());
    let key = k("x");
    assert!(!s.supports_cas(&key).unwrap());
    assert_eq!(s.set(&key, b"v", Ttl::Never).unwrap(), 0);
    assert!(matches!(
        s.cas(&key, b"w", Ttl::Never, 0),
        Err(Error::Unsupported { .. })
    ));
    assert!(matches!(
        s.delete_cas(&key, 0),
        Err(Error::Unsupported { .. })
    ));
    assert_eq!(s.get(&key).unwrap().unwrap().value, b"v");
    let acquired = Lock::new(s, "job", Duration::from_secs(5))
        .unwrap()
        .try_acquire();
    assert!(
        matches!(acquired, Err(Error::Unsupported { .. })),
        "{acquired:?}"
    );
}

/// Both backends read the same marker and mask ids the same way, so a CAS
/// id from one works with the other on the same server.
#[test]
fn text_and_meta_clients_share_cas_ids() {
    let server = MemcachedServer::start_default();
    let text = store(&server.addr());
    let meta = MemcachedStore::connect(&server.addr()).unwrap();
    let key = k("shared");
    let id = text.set(&key, b"t", Ttl::Never).unwrap();
    assert_eq!(meta.get(&key).unwrap().unwrap().cas, id);
    let CasOutcome::Stored(id2) = meta.cas(&key, b"m", Ttl::Never, id).unwrap() else {
        panic!("the meta client refused the text client's id");
    };
    assert_eq!(text.get(&key).unwrap().unwrap().cas, id2);
    assert_eq!(text.delete_cas(&key, id2).unwrap(), DeleteOutcome::Deleted);
}

/// A stopped server: a write sent without a reply is Ambiguous, a read
/// times out (not applied); after SIGCONT the store works again.
#[test]
fn a_frozen_server_is_ambiguous_for_writes_and_a_timeout_for_reads() {
    let server = MemcachedServer::start_default();
    let s = TextStore::builder()
        .io_timeout(Duration::from_millis(200))
        .connect([server.addr()])
        .unwrap();
    let key = k("n");
    s.set(&key, b"1", Ttl::Never).unwrap();
    server.pause();
    let incr = s.incr(&key, 1);
    let get = s.get(&key);
    server.resume();
    assert!(matches!(incr, Err(Error::Ambiguous { .. })), "{incr:?}");
    assert!(
        matches!(get, Err(Error::Timeout { .. } | Error::Io { .. })),
        "{get:?}"
    );
    assert!(get.unwrap_err().is_retryable());
    // The incr was applied once the server resumed.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(s.get(&key).unwrap().unwrap().counter(), Some(2));
}

/// A dead server: its keys fail with a retryable error, then the store
/// backs off (ServerDown), and works again after a restart.
#[test]
fn a_dead_server_is_not_applied_then_down_then_back() {
    let mut server = MemcachedServer::start_default();
    let s = store(&server.addr());
    let key = k("k");
    s.set(&key, b"v", Ttl::Never).unwrap();
    server.kill();
    let first = s.set(&key, b"w", Ttl::Never);
    assert!(first.as_ref().is_err_and(Error::is_retryable), "{first:?}");
    let second = s.get(&key);
    assert!(
        matches!(second, Err(Error::ServerDown { .. } | Error::Io { .. })),
        "{second:?}"
    );
    server.restart();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(s.get(&key).unwrap(), None, "a restarted server is empty");
}

/// Round trips: one per op (the read-back of a write rides in the same
/// payload), one per server for a batch.
#[test]
fn round_trips() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let s = TextStore::connect(&pool.servers_arg()).unwrap();
    let key = k("rt");
    s.get(&key).unwrap(); // dial first
    let (_, t) = traffic::measure(|| s.set(&key, b"v", Ttl::Never).unwrap());
    assert_eq!(t.round_trips, 1);
    let keys: Vec<Key> = (0..30).map(|i| k(&format!("rt{i}"))).collect();
    for key in &keys {
        s.set(key, b"x", Ttl::Never).unwrap();
    }
    let (items, t) = traffic::measure(|| s.get_multi(&keys).unwrap());
    assert!(items.iter().all(Option::is_some));
    assert!(t.round_trips <= 3, "{t:?}");
    assert_eq!(t.commands, 30);
    let ops: Vec<Op<'_>> = keys
        .iter()
        .map(|key| Op::IncrOrInit {
            key,
            delta: 1,
            initial: 0,
            ttl: Ttl::Never,
        })
        .collect();
    let fresh: Vec<Key> = (0..30).map(|i| k(&format!("rtn{i}"))).collect();
    let create: Vec<Op<'_>> = fresh
        .iter()
        .map(|key| Op::IncrOrInit {
            key,
            delta: 1,
            initial: 7,
            ttl: Ttl::Never,
        })
        .collect();
    let (replies, t) = traffic::measure(|| s.pipeline(&create));
    assert!(
        replies
            .into_iter()
            .all(|r| r.unwrap().value().unwrap() == 7)
    );
    assert!(t.round_trips <= 6, "a miss round and an add round: {t:?}");
    // "x" is not a number: every op of the batch fails alone.
    for r in s.pipeline(&ops) {
        assert!(matches!(r, Err(Error::NonNumeric { .. })), "{r:?}");
    }
}

/// A TTL over 30 days is an absolute time on the server's clock (memcached
/// reads such exptimes as Unix times): the item lives.
#[test]
fn long_ttls_live() {
    let server = MemcachedServer::start_default();
    let s = store(&server.addr());
    let key = k("long");
    s.set(&key, b"v", Ttl::secs(90 * 86_400)).unwrap();
    s.touch(&key, Ttl::secs(40 * 86_400)).unwrap();
    assert!(s.get(&key).unwrap().is_some());
}

/// A bad server list is a clear error.
#[test]
fn bad_server_list_is_a_clear_error() {
    assert!(matches!(
        TextStore::connect(""),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        TextStore::connect("not a host"),
        Err(Error::InvalidArgument(_))
    ));
}

/// `Distribution::Ketama` places keys as `MemcachedStore` with it does
/// (libmemcached's placement).
#[test]
fn ketama_routing_matches_the_meta_backends() {
    let pool = ServerPool::start(3, ServerOptions::default());
    let s = TextStore::builder()
        .distribution(mcds_text::Distribution::Ketama)
        .connect(pool.addrs())
        .unwrap();
    for i in 0..50 {
        let key = k(&format!("ketama{i}"));
        assert_eq!(
            s.server_for(&key),
            mcds_net::ketama(key.as_bytes(), &pool.addrs())
        );
        s.set(&key, b"v", Ttl::Never).unwrap();
    }
    let per: Vec<u64> = pool.servers.iter().map(|m| m.stat("curr_items")).collect();
    // 50 keys and each server's incarnation marker.
    assert_eq!(per.iter().sum::<u64>(), 53, "{per:?}");
}
