//! Sets and tables at the item limit: a write either applies whole and
//! returns `Ok`, or applies nothing and returns the error.

use std::sync::Arc;

use mcds_core::{Error, MemoryStore, Store};
use mcds_memcached::MemcachedStore;
use mcds_set::{Set, Table};
use mcds_testkit::MemcachedServer;

fn memcached(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

fn member(i: usize, len: usize) -> Vec<u8> {
    format!("{i:0>len$}").into_bytes()
}

/// A set filled with live members (nothing to compact): a remove still
/// goes through, by a compacting rewrite (before, it was refused, so a
/// full set could never shrink), and frees room for the refused add.
fn full_set(store: Arc<dyn Store>, len: usize) {
    let set = Set::new(store, "full").unwrap();
    let mut acknowledged = Vec::new();
    let refused = loop {
        let m = member(acknowledged.len(), len);
        match set.add(&[&m]) {
            Ok(()) => acknowledged.push(m),
            Err(Error::ValueTooLarge { .. }) => break m,
            Err(e) => panic!("{e}"),
        }
        assert!(acknowledged.len() < 100_000, "the set never filled");
    };
    assert_eq!(
        set.members().unwrap(),
        acknowledged,
        "the refused add is not in"
    );
    let gone = acknowledged.remove(0);
    set.remove(&[&gone]).unwrap();
    assert_eq!(set.members().unwrap(), acknowledged);
    set.add(&[&refused]).unwrap();
    acknowledged.push(refused);
    assert_eq!(set.members().unwrap(), acknowledged);
}

/// A table whose member list fills its item: a new member is refused
/// whole (no row is left that `has` sees and `keys` never lists); a new
/// value for a listed member is written; a delete unlists and deletes,
/// both (before: refused but the row gone, and still listed).
fn full_table(store: Arc<dyn Store>, len: usize) {
    let table = Table::new(store, "full").unwrap();
    let mut acknowledged = Vec::new();
    let refused = loop {
        let m = member(acknowledged.len(), len);
        match table.set(&m, b"v") {
            Ok(()) => acknowledged.push(m),
            Err(Error::ValueTooLarge { .. }) => break m,
            Err(e) => panic!("{e}"),
        }
        assert!(acknowledged.len() < 100_000, "the table never filled");
    };
    assert!(!table.has(&refused).unwrap(), "a refused member has a row");
    assert!(matches!(
        table.set(&refused, b"w"),
        Err(Error::ValueTooLarge { .. })
    ));
    assert!(!table.has(&refused).unwrap(), "a refused retry left a row");
    assert_eq!(table.keys().unwrap(), acknowledged);
    // A listed member's new value: written, and Ok.
    table.set(&acknowledged[0], b"new").unwrap();
    assert_eq!(table.get(&acknowledged[0]).unwrap(), Some(b"new".to_vec()));
    // A delete from the full list: gone and unlisted.
    let gone = acknowledged.remove(1);
    assert!(table.delete(&gone).unwrap());
    assert!(!table.has(&gone).unwrap());
    assert_eq!(table.keys().unwrap(), acknowledged);
    // The room it freed takes the refused member.
    table.set(&refused, b"w").unwrap();
    acknowledged.push(refused.clone());
    assert_eq!(table.keys().unwrap(), acknowledged);
    assert_eq!(table.get(&refused).unwrap(), Some(b"w".to_vec()));
    assert_eq!(table.entries().unwrap().len(), acknowledged.len());
}

#[test]
fn a_full_set_still_shrinks_on_memory() {
    full_set(
        Arc::new(MemoryStore::builder().item_size_limit(4096).build()),
        100,
    );
}

#[test]
fn a_full_set_still_shrinks_on_memcached() {
    let server = MemcachedServer::start_default();
    full_set(memcached(&server), 1000);
}

#[test]
fn a_full_table_refuses_a_new_member_whole_on_memory() {
    full_table(
        Arc::new(MemoryStore::builder().item_size_limit(4096).build()),
        100,
    );
}

#[test]
fn a_full_table_refuses_a_new_member_whole_on_memcached() {
    let server = MemcachedServer::start_default();
    full_table(memcached(&server), 1000);
}
