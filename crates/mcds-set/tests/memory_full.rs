//! A table on a memcached that is out of memory and may not evict (`-M`).
//!
//! memcached answers a write it cannot allocate with `SERVER_ERROR out of
//! memory`, and for a `set` (text or meta) it also unlinks the key's
//! existing item, so that a stale value does not outlive the write that
//! failed. A `Table::set` that was a `set` therefore lost the row's
//! previous value when it was refused: the caller got `OutOfMemory`, and
//! `get` then said the row had no value. `Table::set` now writes with a
//! `replace` and an `add` (text commands, which leave the item in place);
//! this holds that against a real server.

use std::sync::Arc;

use mcds_core::{Error, Store};
use mcds_memcached::MemcachedStore;
use mcds_set::Table;
use mcds_testkit::{MemcachedServer, ServerOptions, fill_until_out_of_memory};

#[test]
fn a_refused_set_on_a_full_no_evict_server_keeps_the_old_value() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let users = Table::new(Arc::clone(&store), "users").unwrap();
    users.set("ann", b"admin").unwrap();
    users.add("bob").unwrap();
    let filled = fill_until_out_of_memory(&*store);
    println!("{} items fill the server", filled.len());

    // A new value for an existing row, in a full slab class: refused, and
    // the row keeps its old value.
    let refused = users.set("ann", &[b'y'; 300]);
    println!("set of an existing row on a full server: {refused:?}");
    assert!(
        matches!(refused, Err(Error::OutOfMemory { .. })),
        "{refused:?}"
    );
    assert_eq!(
        users.get("ann").unwrap().as_deref(),
        Some(&b"admin"[..]),
        "the refused set removed the row's previous value"
    );
    // A value too large to go out twice is written by its replace alone.
    // Its slab class may still have room, and the member list's append may
    // be the write refused; either way the row is never left without a
    // value.
    let large = users.set("ann", &[b'w'; 10_000]);
    let now = users.get("ann").unwrap();
    println!(
        "set of a 10 kB value on a full server: {large:?}; the row now holds {:?} bytes",
        now.as_ref().map(Vec::len)
    );
    assert!(
        now.as_deref() == Some(&b"admin"[..]) || now == Some(vec![b'w'; 10_000]),
        "the row lost its value: {:?} bytes",
        now.as_ref().map(Vec::len)
    );
    // A new row is refused too, and nothing else changes.
    let new_row = users.set("cyd", &[b'z'; 300]);
    println!("set of a new row on a full server: {new_row:?}");
    assert!(
        matches!(new_row, Err(Error::OutOfMemory { .. })),
        "{new_row:?}"
    );
    assert_eq!(users.get("cyd").unwrap(), None);
    assert!(users.has("bob").unwrap());

    // Room again: both writes go through.
    for key in filled.iter().take(4000) {
        store.delete(key).unwrap();
    }
    users.set("ann", &[b'y'; 300]).unwrap();
    users.set("cyd", b"new").unwrap();
    // A new row with a large value: the replace misses, the add stores it.
    users.set("dee", &[b'd'; 10_000]).unwrap();
    assert_eq!(users.get("dee").unwrap(), Some(vec![b'd'; 10_000]));
    assert_eq!(users.keys().unwrap().len(), 4);
    assert_eq!(users.get("ann").unwrap(), Some(vec![b'y'; 300]));
    assert_eq!(users.get("cyd").unwrap().as_deref(), Some(&b"new"[..]));
}

/// `Table::set` is a `replace` and an `add`: when another client creates
/// or deletes the row between the two, neither stores, and the pair is
/// sent again. Writers and deleters on one row, on real memcached: every
/// set succeeds (or, after 10 lost rounds, says `Conflict`), and a set
/// with nobody else writing is read back.
#[test]
fn sets_racing_deletes_of_one_member_land() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let users = Table::new(Arc::clone(&store), "race").unwrap();
    let (mut stored, mut conflicts) = (0, 0);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..3)
            .map(|t| {
                let users = users.clone();
                s.spawn(move || {
                    let (mut ok, mut conflict) = (0, 0);
                    for i in 0..300 {
                        match users.set("row", format!("{t}:{i}").as_bytes()) {
                            Ok(()) => ok += 1,
                            Err(Error::Conflict { .. }) => conflict += 1,
                            Err(e) => panic!("writer {t}, set {i}: {e}"),
                        }
                    }
                    (ok, conflict)
                })
            })
            .collect();
        let deleter = {
            let users = users.clone();
            s.spawn(move || {
                for _ in 0..600 {
                    users.delete("row").unwrap();
                }
            })
        };
        for w in writers {
            let (ok, conflict) = w.join().unwrap();
            stored += ok;
            conflicts += conflict;
        }
        deleter.join().unwrap();
    });
    println!("{stored} sets stored, {conflicts} gave Conflict, of 900");
    assert_eq!(stored + conflicts, 900);
    users.set("row", b"last").unwrap();
    assert_eq!(users.get("row").unwrap().as_deref(), Some(&b"last"[..]));
}
