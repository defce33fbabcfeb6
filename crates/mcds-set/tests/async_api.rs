//! The async API of mcds-set, on the embedded store and on real memcached:
//! every `*_async` method runs inside `tokio::spawn` on a multi-thread
//! runtime (so its future is `Send`), agrees with the blocking API, and
//! concurrent adds from many tasks all land.

use mcds_testkit::runtime;
use std::collections::BTreeSet;
use std::sync::Arc;

use mcds_core::{Error, MemoryStore, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_set::{Codec, Compaction, IntArray, Set, ShardedSet, Table};
use mcds_testkit::MemcachedServer;

const TASKS: usize = 16;
const PER_TASK: usize = 25;

/// Run `f` as a spawned task on a 2-worker runtime and wait for it.
fn spawned<F>(f: F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    runtime().block_on(async { tokio::spawn(f).await.unwrap() });
}

fn set_methods(store: Arc<dyn Store>) {
    let set = Set::new(Arc::clone(&store), "async-set")
        .unwrap()
        .with_compaction(Compaction {
            min_dirt: 2,
            ratio: 0.0,
        });
    let check = set.clone();
    spawned(async move {
        set.clear_async().await.unwrap();
        assert!(set.is_empty_async().await.unwrap());
        set.add_async(&["a", "b", "c", "d"]).await.unwrap();
        set.remove_async(&["b", "c", "d"]).await.unwrap();
        set.add_async::<&str>(&[]).await.unwrap();
        let decoded = set.decoded_async().await.unwrap();
        assert_eq!(decoded.members, [b"a".to_vec()]);
        assert_eq!(decoded.dirtiness, 6);
        assert!(set.contains_async("a").await.unwrap());
        assert!(!set.contains_async("b").await.unwrap());
        assert_eq!(set.len_async().await.unwrap(), 1);
        assert!(!set.is_empty_async().await.unwrap());
        // Dirty enough: members compacts (best effort, by CAS).
        assert_eq!(set.members_async().await.unwrap(), [b"a".to_vec()]);
        assert_eq!(set.decoded_async().await.unwrap().dirtiness, 0);
        assert!(!set.compact_async().await.unwrap(), "nothing left to do");
        set.add_async(&["e"]).await.unwrap();
        set.remove_async(&["e"]).await.unwrap();
        assert!(set.compact_async().await.unwrap());
        assert_eq!(set.members_utf8_async().await.unwrap(), ["a"]);
        set.add_async(&["z"]).await.unwrap();
    });
    // The blocking API sees what the async one wrote.
    assert_eq!(check.members_utf8().unwrap(), ["a", "z"]);
    let binary = Set::new(store, "async-set-bin")
        .unwrap()
        .with_codec(Codec::Binary);
    spawned(async move {
        binary
            .add_async(&[b"x y\n".as_slice(), b"\0"])
            .await
            .unwrap();
        assert_eq!(
            binary.members_async().await.unwrap(),
            [b"x y\n".to_vec(), b"\0".to_vec()]
        );
        binary.clear_async().await.unwrap();
        assert!(binary.is_empty_async().await.unwrap());
    });
}

fn sharded_methods(store: Arc<dyn Store>) {
    let set = ShardedSet::new(store, "async-sset", 8).unwrap();
    let check = set.clone();
    spawned(async move {
        set.clear_async().await.unwrap();
        assert!(set.is_empty_async().await.unwrap());
        let members: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
        set.add_async(&members).await.unwrap();
        set.remove_async(&members[..10]).await.unwrap();
        assert_eq!(set.len_async().await.unwrap(), 30);
        assert!(set.contains_async("m10").await.unwrap());
        assert!(!set.contains_async("m9").await.unwrap());
        let got: BTreeSet<Vec<u8>> = set.members_async().await.unwrap().into_iter().collect();
        let want: BTreeSet<Vec<u8>> = members[10..]
            .iter()
            .map(|m| m.clone().into_bytes())
            .collect();
        assert_eq!(got, want);
        set.compact_async().await.unwrap();
        assert_eq!(set.len_async().await.unwrap(), 30);
        assert!(!set.is_empty_async().await.unwrap());
    });
    assert_eq!(check.len().unwrap(), 30);
    spawned({
        let set = check.clone();
        async move {
            set.clear_async().await.unwrap();
            assert!(set.is_empty_async().await.unwrap());
        }
    });
    assert!(check.is_empty().unwrap());
}

fn int_array_methods(store: Arc<dyn Store>) {
    let ids = IntArray::new(store, "async-ints").unwrap();
    let check = ids.clone();
    spawned(async move {
        ids.clear_async().await.unwrap();
        ids.add_async(&[3, -1, 7]).await.unwrap();
        ids.remove_async(&[3]).await.unwrap();
        assert_eq!(ids.members_async().await.unwrap(), [-1, 7]);
        assert!(ids.contains_async(-1).await.unwrap());
        assert!(!ids.contains_async(3).await.unwrap());
    });
    assert_eq!(check.members().unwrap(), [-1, 7]);
    spawned({
        let ids = check.clone();
        async move { ids.clear_async().await.unwrap() }
    });
    assert!(check.members().unwrap().is_empty());
}

fn table_methods(store: Arc<dyn Store>) {
    let users = Table::new(store, "async-users").unwrap();
    let check = users.clone();
    spawned(async move {
        users.set_async("ann", b"admin").await.unwrap();
        users.add_async("bob").await.unwrap();
        users.set_async("two words", b"hashed key").await.unwrap();
        assert!(users.has_async("ann").await.unwrap());
        assert!(!users.has_async("cy").await.unwrap());
        assert_eq!(
            users.get_async("ann").await.unwrap(),
            Some(b"admin".to_vec())
        );
        assert_eq!(users.get_async("bob").await.unwrap(), Some(Vec::new()));
        assert_eq!(users.get_async("cy").await.unwrap(), None);
        assert!(users.delete_async("bob").await.unwrap());
        assert!(!users.delete_async("bob").await.unwrap());
        assert_eq!(
            users.keys_async().await.unwrap(),
            [b"ann".to_vec(), b"two words".to_vec()]
        );
        assert_eq!(
            users.entries_async().await.unwrap(),
            [
                (b"ann".to_vec(), b"admin".to_vec()),
                (b"two words".to_vec(), b"hashed key".to_vec())
            ]
        );
        // An oversized value is refused before anything is written.
        let big = vec![0u8; 2 << 20];
        assert!(matches!(
            users.set_async("huge", &big).await,
            Err(Error::ValueTooLarge { .. })
        ));
        assert!(!users.has_async("huge").await.unwrap());
    });
    assert_eq!(
        check.get("two words").unwrap(),
        Some(b"hashed key".to_vec())
    );
    assert_eq!(check.keys().unwrap().len(), 2);
}

/// 16 tasks add distinct members to one set, one `add_async` each (and a
/// batch to a sharded set): every acknowledged member is there.
fn concurrent_adds(store: Arc<dyn Store>) {
    let set = Set::new(Arc::clone(&store), "async-shared").unwrap();
    let sharded = ShardedSet::new(store, "async-shared-sharded", 4).unwrap();
    set.clear().unwrap();
    sharded.clear().unwrap();
    let acked: Vec<String> = runtime().block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| {
                let (set, sharded) = (set.clone(), sharded.clone());
                tokio::spawn(async move {
                    let mut acked = Vec::new();
                    for i in 0..PER_TASK {
                        let member = format!("t{t}-m{i}");
                        set.add_async(&[&member]).await.unwrap();
                        acked.push(member);
                    }
                    sharded.add_async(&acked).await.unwrap();
                    acked
                })
            })
            .collect();
        let mut acked = Vec::new();
        for t in tasks {
            acked.extend(t.await.unwrap());
        }
        acked
    });
    assert_eq!(acked.len(), TASKS * PER_TASK);
    let want: BTreeSet<String> = acked.into_iter().collect();
    let got: BTreeSet<String> = set.members_utf8().unwrap().into_iter().collect();
    assert_eq!(got, want, "Set");
    let got: BTreeSet<String> = sharded
        .members()
        .unwrap()
        .into_iter()
        .map(|m| String::from_utf8(m).unwrap())
        .collect();
    assert_eq!(got, want, "ShardedSet");
    assert_eq!(set.len().unwrap(), TASKS * PER_TASK);
}

fn every_async_method(store: Arc<dyn Store>) {
    set_methods(Arc::clone(&store));
    sharded_methods(Arc::clone(&store));
    int_array_methods(Arc::clone(&store));
    table_methods(store);
}

#[test]
fn every_async_method_on_the_embedded_store() {
    every_async_method(Arc::new(MemoryStore::new()));
}

#[test]
fn every_async_method_on_memcached() {
    let server = MemcachedServer::start_default();
    every_async_method(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
}

#[test]
fn concurrent_adds_on_the_embedded_store() {
    concurrent_adds(Arc::new(MemoryStore::new()));
}

#[test]
fn concurrent_adds_on_memcached() {
    let server = MemcachedServer::start_default();
    concurrent_adds(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
}

/// A set an older mcds wrote in one item, full of dead tokens: the first
/// async add moves it into a bucket, and compacts the bucket when the item
/// limit refuses the append.
#[test]
fn async_add_moves_an_old_full_item_and_compacts_it() {
    let store = Arc::new(MemoryStore::builder().item_size_limit(400).build());
    let set = Set::new(Arc::clone(&store) as Arc<dyn Store>, "full").unwrap();
    // Fill the item with dead tokens, bypassing the set.
    store.set(set.key(), b"+x -x ", Ttl::Never).unwrap();
    loop {
        match store.append(set.key(), b"+x -x ") {
            Ok(true) => {}
            Err(Error::ValueTooLarge { .. }) => break,
            other => panic!("{other:?}"),
        }
    }
    let check = set.clone();
    spawned(async move {
        set.add_async(&["kept"]).await.unwrap();
        assert_eq!(set.members_utf8_async().await.unwrap(), ["kept"]);
    });
    assert_eq!(check.decoded().unwrap().dirtiness, 0, "compacted");
}
