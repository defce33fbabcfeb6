//! Text-protocol injection through keys is impossible: bad keys are
//! `InvalidKey` before anything reaches a server, and the server proves it.

use mcds_core::{Error, Key, Result, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions};

const INJECTIONS: &[&str] = &[
    "x\r\nflush_all",
    "k\r\nset victim 0 0 4\r\npwnd\r\nset k2",
    "x\nflush_all",
    "x flush_all",
    "x\0flush_all",
    "x\tflush_all",
    "x\x7f",
    "",
];

const BUILDERS: [&str; 4] = ["new", "parts", "with_suffix", "bytes"];

const OPS: [&str; 16] = [
    "get",
    "get_multi",
    "set",
    "add",
    "replace",
    "cas",
    "append",
    "prepend",
    "append_or_add",
    "incr",
    "decr",
    "incr_or_init",
    "delete",
    "delete_cas",
    "touch",
    "update",
];

/// Build a key from `raw` the way `how` says.
fn build(how: &str, raw: &str) -> Result<Key> {
    match how {
        "new" => Key::new(raw),
        "parts" => Key::parts("p/", "set", raw, 0),
        // An empty suffix is fine on a valid key, so pad to an over-long key.
        "with_suffix" if raw.is_empty() => Key::new("ok")?.with_suffix("k".repeat(249)),
        "with_suffix" => Key::new("ok")?.with_suffix(raw),
        _ => Key::new(raw.as_bytes()),
    }
}

/// Run the op named `op` on `key`.
fn run(store: &dyn Store, op: &str, k: &Key) -> Result<()> {
    match op {
        "get" => store.get(k).map(drop),
        "get_multi" => store.get_multi(std::slice::from_ref(k)).map(drop),
        "set" => store.set(k, b"pwnd", Ttl::Never).map(drop),
        "add" => store.add(k, b"pwnd", Ttl::Never).map(drop),
        "replace" => store.replace(k, b"pwnd", Ttl::Never).map(drop),
        "cas" => store.cas(k, b"pwnd", Ttl::Never, 1).map(drop),
        "append" => store.append(k, b"pwnd").map(drop),
        "prepend" => store.prepend(k, b"pwnd").map(drop),
        "append_or_add" => store.append_or_add(k, b"pwnd", Ttl::Never),
        "incr" => store.incr(k, 1).map(drop),
        "decr" => store.decr(k, 1).map(drop),
        "incr_or_init" => store.incr_or_init(k, 1, 1, Ttl::Never).map(drop),
        "delete" => store.delete(k).map(drop),
        "delete_cas" => store.delete_cas(k, 1).map(drop),
        "touch" => store.touch(k, Ttl::Never).map(drop),
        _ => store
            .update(k, Ttl::Never, 1, &mut |_| Some(b"pwnd".to_vec()))
            .map(drop),
    }
}

#[test]
fn injection_through_keys_reaches_no_server() {
    let server = MemcachedServer::start(ServerOptions::default().log_commands());
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let victims: Vec<Key> = (0..5)
        .map(|i| Key::new(format!("victim{i}")).unwrap())
        .collect();
    for v in &victims {
        store.set(v, b"safe", Ttl::Never).unwrap();
    }
    store
        .set(&Key::new("victim").unwrap(), b"safe", Ttl::Never)
        .unwrap();
    let items_before = server.stat("curr_items");
    let commands_before = server.command_count();

    let mut attempts = 0;
    for raw in INJECTIONS {
        for how in BUILDERS {
            for op in OPS {
                attempts += 1;
                match build(how, raw).and_then(|k| run(&store, op, &k)) {
                    Err(Error::InvalidKey { .. }) => {}
                    other => panic!(
                        "{raw:?} via Key::{how} and {op}: expected InvalidKey, got {other:?}"
                    ),
                }
            }
        }
    }

    assert_eq!(
        server.command_count(),
        commands_before,
        "no command reached the server"
    );
    assert_eq!(server.stat("cmd_flush"), 0, "flush_all never ran");
    assert_eq!(server.stat("curr_items"), items_before);
    for v in victims.iter().chain([&Key::new("victim").unwrap()]) {
        assert_eq!(store.get(v).unwrap().unwrap().value, b"safe", "{v:?}");
    }
    assert!(store.get(&Key::new("k2").unwrap()).unwrap().is_none());
    println!("security: {attempts} injection attempts, all InvalidKey, server untouched");
}
