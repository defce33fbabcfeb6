//! Sets and tables past the item limit: they split into more items and
//! lose nothing; a member too large for any item is refused whole, with
//! nothing written.

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

/// Members worth three items go in, one add at a time and in batches; all
/// of them read back, removals shrink it, and a member larger than an item
/// is refused with nothing written.
fn grows(store: Arc<dyn Store>, len: usize) {
    let limit = store.item_size_limit();
    let n = 3 * limit / len;
    let set = Set::new(Arc::clone(&store), "grows").unwrap();
    let members: Vec<Vec<u8>> = (0..n).map(|i| member(i, len)).collect();
    for m in &members[..n / 2] {
        set.add(&[m]).unwrap();
    }
    for chunk in members[n / 2..].chunks(37) {
        set.add(chunk).unwrap();
    }
    let mut got = set.members().unwrap();
    got.sort();
    assert_eq!(got, members, "every member of {n} ({} bytes each)", len);
    let buckets: Vec<Vec<Vec<u8>>> = set.members_iter(3).collect::<Result<_, _>>().unwrap();
    assert!(buckets.len() > 3, "{} buckets", buckets.len());
    let mut streamed: Vec<Vec<u8>> = buckets.into_iter().flatten().collect();
    streamed.sort();
    assert_eq!(streamed, members, "members_iter streams every member once");
    assert!(set.contains(&members[n - 1]).unwrap());
    set.remove(&members[..n / 3]).unwrap();
    assert_eq!(set.len().unwrap(), n - n / 3);
    assert!(!set.contains(&members[0]).unwrap());
    let huge = vec![b'h'; limit + 1];
    assert!(matches!(
        set.add(&[&huge]),
        Err(Error::ValueTooLarge { .. })
    ));
    assert!(!set.contains(&huge).unwrap(), "a refused member is not in");
    assert_eq!(set.len().unwrap(), n - n / 3);
}

/// A table past one item of members: every row listed; a member whose
/// list token cannot fit an item is refused before its row is written.
fn table_grows(store: Arc<dyn Store>, len: usize) {
    let limit = store.item_size_limit();
    let n = 3 * limit / len;
    let table = Table::new(Arc::clone(&store), "grows").unwrap();
    let members: Vec<Vec<u8>> = (0..n).map(|i| member(i, len)).collect();
    for m in &members {
        table.set(m, b"v").unwrap();
    }
    let mut keys = table.keys().unwrap();
    keys.sort();
    assert_eq!(keys, members);
    assert_eq!(table.entries().unwrap().len(), n);
    let mut streamed: Vec<Vec<u8>> = table
        .entries_iter(2)
        .map(|e| {
            e.map(|(m, v)| {
                assert_eq!(v, b"v");
                m
            })
        })
        .collect::<Result<_, _>>()
        .unwrap();
    streamed.sort();
    assert_eq!(streamed, members, "entries_iter streams every row once");
    assert!(table.delete(&members[1]).unwrap());
    assert!(!table.has(&members[1]).unwrap());
    assert_eq!(table.keys().unwrap().len(), n - 1);
    let huge = vec![b'h'; limit + 1];
    assert!(matches!(
        table.set(&huge, b"w"),
        Err(Error::ValueTooLarge { .. })
    ));
    assert!(!table.has(&huge).unwrap(), "a refused member has a row");
    assert_eq!(table.keys().unwrap().len(), n - 1);
}

#[test]
fn a_set_grows_past_the_item_limit_on_memory() {
    grows(
        Arc::new(MemoryStore::builder().item_size_limit(4096).build()),
        100,
    );
}

#[test]
fn a_set_grows_past_the_item_limit_on_memcached() {
    let server = MemcachedServer::start_default();
    grows(memcached(&server), 1000);
}

#[test]
fn a_table_grows_past_the_item_limit_on_memory() {
    table_grows(
        Arc::new(MemoryStore::builder().item_size_limit(4096).build()),
        100,
    );
}

#[test]
fn a_table_grows_past_the_item_limit_on_memcached() {
    let server = MemcachedServer::start_default();
    table_grows(memcached(&server), 1000);
}
