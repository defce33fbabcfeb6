//! mcds-set on the embedded store and on real memcached.

use std::collections::BTreeSet;
use std::sync::Arc;

use mcds_core::{CountingStore, Error, Key, MemoryStore, Store, traffic};
use mcds_memcached::MemcachedStore;
use mcds_set::{Codec, Compaction, IntArray, Set, ShardedSet, Table};
use mcds_testkit::MemcachedServer;

fn rt(f: impl FnOnce()) -> u64 {
    traffic::measure(f).1.round_trips
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let set = Set::new(Arc::clone(&store), "rt").unwrap();
    set.len().unwrap(); // warm the connection
    let first = rt(|| set.add(&["a", "b"]).unwrap());
    assert!(
        first <= 2,
        "first add: {first} (2 on 1.6.18: append, then add)"
    );
    let batch: Vec<String> = (0..500).map(|i| format!("m{i}")).collect();
    assert_eq!(
        rt(|| set.add(&batch).unwrap()),
        1,
        "Set::add of 500 members"
    );
    assert_eq!(
        rt(|| set.remove(&batch[..100]).unwrap()),
        1,
        "Set::remove of 100 members"
    );
    assert_eq!(
        rt(|| drop(set.members().unwrap())),
        1,
        "members, clean enough"
    );
    // A clone shares the handle's cached directory.
    let dirty = set.clone().with_compaction(Compaction {
        min_dirt: 0,
        ratio: 0.0,
    });
    assert_eq!(
        rt(|| drop(dirty.members().unwrap())),
        2,
        "members with compaction"
    );
    assert_eq!(
        rt(|| drop(dirty.members().unwrap())),
        1,
        "compacted: nothing to do"
    );
    let missing = Set::new(Arc::clone(&store), "never").unwrap();
    missing.remove(&["x"]).unwrap();
    assert_eq!(
        store.get(missing.key()).unwrap(),
        None,
        "remove on a missing set creates nothing"
    );

    let sharded = ShardedSet::new(Arc::clone(&store), "srt", 4).unwrap();
    sharded.add(&batch).unwrap();
    assert_eq!(
        rt(|| drop(sharded.members().unwrap())),
        1,
        "ShardedSet::members on one server"
    );
    assert_eq!(
        rt(|| sharded.add(&batch).unwrap()),
        1,
        "ShardedSet::add: one append per shard, one pipelined batch"
    );
    assert_eq!(
        rt(|| sharded.remove(&batch[..50]).unwrap()),
        1,
        "ShardedSet::remove"
    );

    let table = Table::new(Arc::clone(&store), "trt").unwrap();
    let table_first = rt(|| table.set("ann", b"1").unwrap());
    assert!(
        table_first <= 4,
        "first Table::set of a new handle: the directory read, the row, the root bucket, the directory: {table_first}"
    );
    assert_eq!(rt(|| table.set("bob", b"2").unwrap()), 1, "Table::set");
    assert_eq!(
        rt(|| table.set("bob", b"3").unwrap()),
        2,
        "Table::set of an existing member: its add, then its replace"
    );
    assert_eq!(rt(|| table.add("cy").unwrap()), 1, "Table::add");
    assert_eq!(
        rt(|| assert!(table.delete("bob").unwrap())),
        1,
        "Table::delete"
    );
    assert_eq!(
        rt(|| assert!(!table.delete("zed").unwrap())),
        1,
        "Table::delete miss"
    );
    assert_eq!(table.keys().unwrap(), [b"ann".to_vec(), b"cy".to_vec()]);
    println!(
        "set round trips on memcached: first add {first}, add 1, remove 1, members 1 (2 compacting), \
         sharded members 1, sharded add 1, sharded remove 1, Table::set 1 (first {table_first}), Table::add 1, Table::delete 1"
    );
}

/// 8 threads add and remove their own members; the result equals a model.
fn concurrent(store: Arc<dyn Store>) {
    let set = Set::new(Arc::clone(&store), "concurrent")
        .unwrap()
        .with_compaction(Compaction {
            min_dirt: 50,
            ratio: 0.5,
        });
    std::thread::scope(|s| {
        for t in 0..8 {
            let set = &set;
            s.spawn(move || {
                for round in 0..20 {
                    let batch: Vec<String> = (0..10)
                        .map(|i| format!("t{t}:{}", round * 10 + i))
                        .collect();
                    set.add(&batch).unwrap();
                    // Remove the odd ones again, and read (which compacts).
                    let odd: Vec<&String> = batch.iter().skip(1).step_by(2).collect();
                    set.remove(&odd).unwrap();
                    if round % 5 == 0 {
                        set.members().unwrap();
                    }
                }
            });
        }
    });
    let got: BTreeSet<String> = set.members_utf8().unwrap().into_iter().collect();
    let model: BTreeSet<String> = (0..8)
        .flat_map(|t| (0..200).step_by(2).map(move |i| format!("t{t}:{i}")))
        .collect();
    assert_eq!(got, model);
}

#[test]
fn concurrent_add_remove_memory() {
    concurrent(Arc::new(MemoryStore::new()));
}

#[test]
fn concurrent_add_remove_memcached() {
    let server = MemcachedServer::start_default();
    concurrent(Arc::new(MemcachedStore::connect(&server.addr()).unwrap()));
}

#[test]
fn compaction_racing_with_adds_loses_nothing() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let eager = Compaction {
        min_dirt: 0,
        ratio: 0.0,
    };
    let set = Set::new(Arc::clone(&store), "race")
        .unwrap()
        .with_compaction(eager);
    let done = std::sync::atomic::AtomicBool::new(false);
    let compactions = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|s| {
        // Two compactors reading (and rewriting) as fast as they can.
        for _ in 0..2 {
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    if set.compact().unwrap() {
                        compactions.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    set.members().unwrap();
                }
            });
        }
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let set = &set;
                s.spawn(move || {
                    for i in 0..300 {
                        set.add(&[format!("w{t}:{i}")]).unwrap();
                        set.remove(&[format!("w{t}:{i}:never")]).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let got: BTreeSet<String> = set.members_utf8().unwrap().into_iter().collect();
    assert_eq!(
        got.len(),
        1200,
        "every add survived {} compactions",
        compactions.into_inner()
    );
}

#[test]
fn a_set_past_the_item_limit_splits_and_every_acknowledged_member_is_there() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let set = Set::new(Arc::clone(&store), "big").unwrap();
    let mut acknowledged = Vec::new();
    for _ in 0..25 {
        let batch: Vec<String> = (0..100)
            .map(|i| format!("{:0>990}", acknowledged.len() + i))
            .collect();
        set.add(&batch).unwrap();
        acknowledged.extend(batch);
    }
    // 2.5 MB of members: more than two items' worth.
    let mut members = set.members_utf8().unwrap();
    members.sort();
    assert_eq!(
        members, acknowledged,
        "every acknowledged member is there, nothing else"
    );
    // Removals past the limit go through, and adds after them.
    for chunk in acknowledged[..1500].chunks(50) {
        set.remove(chunk).unwrap();
    }
    assert_eq!(set.len().unwrap(), 1000);
    set.add(&acknowledged[..300]).unwrap();
    assert_eq!(set.len().unwrap(), 1300);
    // A sharded set's shards grow the same way.
    let sharded = ShardedSet::new(Arc::clone(&store), "big", 4).unwrap();
    sharded.add(&acknowledged).unwrap();
    sharded.add(&acknowledged).unwrap(); // duplicates are dirt
    assert_eq!(sharded.len().unwrap(), acknowledged.len());
}

#[test]
fn sharded_set_on_a_pool() {
    let pool = mcds_testkit::ServerPool::start(3, Default::default());
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap());
    let set = ShardedSet::new(Arc::clone(&store), "pooled", 16).unwrap();
    let members: Vec<String> = (0..1000).map(|i| format!("u{i}")).collect();
    set.add(&members).unwrap();
    set.remove(&members[..500]).unwrap();
    let (_, t) = traffic::measure(|| set.add(&members[500..]).unwrap());
    assert!(
        t.round_trips <= 3,
        "ShardedSet::add: one round trip per server, {t:?}"
    );
    assert!(
        (48..=64).contains(&t.commands),
        "one append, one read of the life item and one touch of the directory per shard, and now and then a bucket read back: {t:?}"
    );
    let (got, t) = traffic::measure(|| set.members().unwrap());
    assert_eq!(got.len(), 500);
    assert!(
        t.round_trips <= 16,
        "one batch per shard (each its directory and buckets): {t:?}"
    );
    assert!(set.contains("u999").unwrap() && !set.contains("u0").unwrap());
}

#[test]
fn table_and_int_array() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let table = Table::new(Arc::clone(&store), "t").unwrap();
    table.set("ann", b"1").unwrap();
    table.set("with space", b"2").unwrap();
    table.set("#hash", b"3").unwrap();
    table.set([0xffu8, 0], b"4").unwrap();
    assert!(table.has("with space").unwrap() && table.has([0xffu8, 0]).unwrap());
    assert!(!table.has("nobody").unwrap());
    assert_eq!(table.get("#hash").unwrap(), Some(b"3".to_vec()));
    assert!(table.delete("ann").unwrap());
    assert!(!table.delete("ann").unwrap());
    assert_eq!(table.keys().unwrap().len(), 3);
    let entries = table.entries().unwrap();
    assert_eq!(entries[0], (b"with space".to_vec(), b"2".to_vec()));
    let long = table.member_key(&[b'x'; 151]).unwrap();
    assert!(long.to_string().starts_with("table:t:v:#"), "{long}");

    let ints = IntArray::new(Arc::clone(&store), "i").unwrap();
    ints.add(&[5, -7, 5, 12]).unwrap();
    ints.remove(&[12]).unwrap();
    assert_eq!(ints.members().unwrap(), vec![5, -7]);
    assert!(ints.contains(-7).unwrap());
    store
        .append(&Key::new("ints:i:log").unwrap(), b"+x ")
        .unwrap();
    assert!(matches!(ints.members(), Err(Error::Corrupt { .. })));
}

#[test]
fn garbage_under_a_set_key() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let text_set = Set::new(Arc::clone(&store), "g").unwrap();
    server.raw_set("set:g:log", b"\x00\xff junk +a ++ -- +b \r\n");
    // Text: documented recovery — unknown tokens are ignored.
    assert_eq!(text_set.members_utf8().unwrap(), vec!["a", "+", "b"]);
    let bin = Set::new(Arc::clone(&store), "gb")
        .unwrap()
        .with_codec(Codec::Binary);
    server.raw_set("set:gb:log", b"+\x05ab");
    match bin.members() {
        Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("past the end"), "{reason}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// A scope's prefix reaches every key of every set structure (Table,
/// ShardedSet and IntArray had no prefix before `Scope`).
#[test]
fn a_scope_prefix_reaches_every_key() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let app = mcds_core::Scope::new(Arc::clone(&store))
        .with_prefix("app/")
        .unwrap();
    let has = |k: &str| store.get(&Key::new(k).unwrap()).unwrap().is_some();

    Set::new(&app, "s").unwrap().add(&["a"]).unwrap();
    assert!(has("app/set:s:log") && !has("set:s:log"));

    let table = Table::new(&app, "t").unwrap();
    table.set("ann", b"1").unwrap();
    assert!(has("app/table:t:members") && has("app/table:t:v:ann"));
    assert!(!has("table:t:members") && !has("table:t:v:ann"));

    IntArray::new(&app, "i").unwrap().add(&[7]).unwrap();
    assert!(has("app/ints:i:log") && !has("ints:i:log"));

    let sharded = ShardedSet::new(&app, "h", 4).unwrap();
    sharded.add(&["m"]).unwrap();
    let shard = sharded.shard_of(b"m");
    assert!(has(&format!("app/sset:h:{shard}")) && !has(&format!("sset:h:{shard}")));
}
