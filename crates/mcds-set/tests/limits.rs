//! The sets' limits, each at the limit and one past it: names, one
//! member's size, a table's value size, a sharded set's shard count, an
//! int array's value range. Past a limit the documented error comes back
//! and the structure reads back as it was.

use std::sync::Arc;

use mcds_core::{Error, Key, MemoryStore, Scope, Store};
use mcds_memcached::MemcachedStore;
use mcds_set::{Codec, IntArray, Set, ShardedSet, Table};
use mcds_testkit::{MemcachedServer, ServerOptions};

/// memcached's bytes per item on top of key and value.
const OVERHEAD: usize = mcds_core::backend::ITEM_OVERHEAD;

/// The most a bucket's key adds to its set's key.
const BUCKET_SUFFIX: usize = 32;

fn memory(item_size_limit: usize) -> Arc<dyn Store> {
    Arc::new(
        MemoryStore::builder()
            .item_size_limit(item_size_limit)
            .build(),
    )
}

fn memcached(server: &MemcachedServer, item_size_limit: usize) -> Arc<dyn Store> {
    Arc::new(
        MemcachedStore::builder()
            .item_size_limit(item_size_limit)
            .connect([server.addr()])
            .unwrap(),
    )
}

/// A memcached with `-I 64k` (and the slab chunk size that needs).
fn memcached_64k() -> MemcachedServer {
    MemcachedServer::start(ServerOptions {
        item_size: Some("64k".into()),
        extra_args: vec!["-o".into(), "slab_chunk_max=32768".into()],
        ..Default::default()
    })
}

/// The bytes `codec` stores for one add of a `len`-byte member of plain
/// letters (nothing to escape).
fn token_len(codec: Codec, len: usize) -> usize {
    match codec {
        Codec::Text => len + 2,
        Codec::Binary => {
            let mut varint = 1;
            while len >> (7 * varint) != 0 {
                varint += 1;
            }
            1 + varint + len
        }
    }
}

/// The longest member whose token takes at most `budget` bytes.
fn longest_member(codec: Codec, budget: usize) -> usize {
    (0..=budget)
        .rev()
        .find(|&len| token_len(codec, len) <= budget)
        .unwrap()
}

/// The members that fill a few buckets.
fn small_members(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("s{i:06}").into_bytes()).collect()
}

/// On a set that has split: the longest member that fits any bucket (its
/// token, the set's key and the longest bucket suffix fill one item) goes
/// in and the set stays writable; the shortest member that cannot fit
/// even under the set's bare key is `ValueTooLarge` before anything is
/// sent (the directory is unchanged) and nothing is listed.
fn member_at_and_past_the_limit(store: Arc<dyn Store>, codec: Codec) {
    let limit = store.item_size_limit();
    let set = Set::new(Arc::clone(&store), "limit")
        .unwrap()
        .with_codec(codec);
    let key_len = set.key().len();
    let before = small_members(2000);
    set.add(&before).unwrap();

    let at = vec![b'a'; longest_member(codec, limit - OVERHEAD - key_len - BUCKET_SUFFIX)];
    set.add(&[&at]).unwrap();
    assert!(set.contains(&at).unwrap());
    let after = small_members(2050).split_off(2000);
    set.add(&after).unwrap();
    assert_eq!(set.len().unwrap(), 2051, "the set stays writable");

    let directory = store.get(set.key()).unwrap().map(|item| item.value);
    let past = vec![b'p'; longest_member(codec, limit - OVERHEAD - key_len) + 1];
    let err = set.add(&[&past]).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert!(!set.contains(&past).unwrap());
    assert_eq!(set.len().unwrap(), 2051, "nothing listed");
    assert_eq!(
        store.get(set.key()).unwrap().map(|item| item.value),
        directory,
        "no bucket split for it"
    );
    let mut members = set.members().unwrap();
    members.sort();
    let mut want: Vec<Vec<u8>> = before.into_iter().chain(after).chain([at]).collect();
    want.sort();
    assert_eq!(members, want);
}

#[test]
fn a_member_filling_a_bucket_item_goes_in_and_one_past_the_set_key_s_item_is_value_too_large_on_memory()
 {
    member_at_and_past_the_limit(memory(4096), Codec::Text);
    member_at_and_past_the_limit(memory(4096), Codec::Binary);
}

#[test]
fn a_member_filling_a_bucket_item_goes_in_and_one_past_the_set_key_s_item_is_value_too_large_on_memcached()
 {
    let server = MemcachedServer::start_default();
    member_at_and_past_the_limit(memcached(&server, 1024 * 1024), Codec::Text);
    let small = memcached_64k();
    member_at_and_past_the_limit(memcached(&small, 64 * 1024), Codec::Binary);
}

/// The directory takes a split's tokens (about 60 bytes) until it fills
/// its item: then buckets stop splitting and grow to an item each, and an
/// add to a bucket that is full is `ValueTooLarge`, with nothing written;
/// every acknowledged member stays. With 1 KiB items this comes after a
/// few thousand members, with 1 MiB after millions.
#[test]
fn when_the_directory_fills_its_item_an_add_to_a_full_bucket_is_value_too_large_and_nothing_is_written()
 {
    let store = memory(1024);
    let set = Set::new(Arc::clone(&store), "dir").unwrap();
    let mut acknowledged = Vec::new();
    let mut refused = None;
    for i in 0..100_000 {
        let member = format!("m{i:06}").into_bytes();
        match set.add(&[&member]) {
            Ok(()) => acknowledged.push(member),
            Err(e) => {
                refused = Some((member, e));
                break;
            }
        }
    }
    let (member, err) = refused.expect("the directory fills");
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    let directory = store.get(set.key()).unwrap().unwrap().value;
    assert!(
        directory.len() + set.key().len() + OVERHEAD > 1024 - 64,
        "the directory is full: {} bytes",
        directory.len()
    );
    assert!(
        !set.contains(&member).unwrap(),
        "the refused member is not in"
    );
    let mut members = set.members().unwrap();
    members.sort();
    assert_eq!(members, acknowledged, "every acknowledged member, once");
}

/// `set:<name>:log` plus a bucket's 32 bytes must fit 250 bytes: a name of
/// 210 bytes does, 211 is `InvalidKey`; a scope's prefix counts against it.
#[test]
fn a_set_name_of_210_bytes_works_and_211_is_invalid_key() {
    let store = memory(4096);
    let set = Set::new(Arc::clone(&store), &"n".repeat(210)).unwrap();
    set.add(&small_members(1000)).unwrap();
    assert_eq!(set.len().unwrap(), 1000, "its buckets' keys fit");
    let err = Set::new(Arc::clone(&store), &"n".repeat(211)).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    let prefixed = Scope::new(Arc::clone(&store)).with_prefix("ab:").unwrap();
    Set::new(prefixed.clone(), &"n".repeat(207)).unwrap();
    let err = Set::new(prefixed, &"n".repeat(208)).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
}

/// 1 and 4096 shards are accepted, 0 and 4097 are `InvalidArgument`.
#[test]
fn a_sharded_set_takes_1_to_4096_shards_and_refuses_0_and_4097() {
    let store = memory(4096);
    for shards in [1, 4096] {
        let set = ShardedSet::new(Arc::clone(&store), &format!("s{shards}"), shards).unwrap();
        set.add(&small_members(3000)).unwrap();
        assert_eq!(set.len().unwrap(), 3000);
        assert!(set.contains(b"s002999").unwrap());
    }
    for shards in [0, 4097] {
        let err = ShardedSet::new(Arc::clone(&store), "bad", shards).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{shards}: {err}");
    }
}

/// A sharded set's member limit is its shard's: a member filling a bucket
/// of its shard goes in, one past the shard key's item is `ValueTooLarge`
/// and nothing is written.
#[test]
fn a_sharded_member_one_past_its_shard_s_item_is_value_too_large_and_nothing_is_written() {
    let store = memory(4096);
    let limit = store.item_size_limit();
    let set = ShardedSet::new(Arc::clone(&store), "big", 16).unwrap();
    let shard_key_len = |member: &[u8]| format!("sset:big:{}", set.shard_of(member)).len();
    set.add(&small_members(100)).unwrap();
    let budget = |m: &[u8]| limit - OVERHEAD - shard_key_len(m) - BUCKET_SUFFIX - 2;
    // The member's length decides its shard, and its shard's key the
    // length: a length that is its own answer.
    let at_len = (0..limit)
        .rev()
        .find(|&len| len <= budget(&vec![b'a'; len]))
        .unwrap();
    let at = vec![b'a'; at_len];
    set.add(&[&at]).unwrap();
    assert!(set.contains(&at).unwrap());
    let past_len = (0..limit)
        .find(|&len| len + 2 + shard_key_len(&vec![b'p'; len]) + OVERHEAD > limit)
        .unwrap();
    let past = vec![b'p'; past_len];
    assert!(
        past_len - 1 + 2 + shard_key_len(&vec![b'p'; past_len - 1]) + OVERHEAD <= limit,
        "one byte shorter fits the shard key's item"
    );
    let err = set.add(&[&past]).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert!(!set.contains(&past).unwrap());
    assert_eq!(set.len().unwrap(), 101);
}

/// Every `i64` is a value: the extremes round-trip exactly.
#[test]
fn an_int_array_holds_i64_min_and_max() {
    let store = memory(4096);
    let ints = IntArray::new(Arc::clone(&store), "extremes").unwrap();
    ints.add(&[i64::MIN, -1, 0, i64::MAX]).unwrap();
    assert_eq!(ints.members().unwrap(), [i64::MIN, -1, 0, i64::MAX]);
    assert!(ints.contains(i64::MIN).unwrap() && ints.contains(i64::MAX).unwrap());
    ints.remove(&[i64::MIN]).unwrap();
    assert_eq!(ints.members().unwrap(), [-1, 0, i64::MAX]);
}

/// `ints:<name>:log` plus a bucket's 32 bytes fits 250 bytes with a name
/// of 209 bytes: such an array grows through splits. A name of 210 bytes
/// (or a sharded set's whose shard keys leave no room) is `InvalidKey`
/// from `new`, before anything is written.
#[test]
fn an_int_array_named_with_209_bytes_grows_through_splits() {
    let store = memory(4096);
    assert!(matches!(
        IntArray::new(Arc::clone(&store), &"n".repeat(210)),
        Err(Error::InvalidKey { .. })
    ));
    // `sset:<name>:999` for 1000 shards, `sset:<name>:4095` for 4096.
    for (shards, longest) in [(1000, 209), (4096, 208)] {
        assert!(matches!(
            ShardedSet::new(Arc::clone(&store), &"n".repeat(longest + 1), shards),
            Err(Error::InvalidKey { .. })
        ));
        assert!(ShardedSet::new(Arc::clone(&store), &"n".repeat(longest), shards).is_ok());
    }
    let ints = IntArray::new(Arc::clone(&store), &"n".repeat(209)).unwrap();
    let values: Vec<i64> = (0..3000).collect();
    for chunk in values.chunks(100) {
        ints.add(chunk).unwrap();
    }
    let mut got = ints.members().unwrap();
    got.sort();
    assert_eq!(got, values);
}

/// A row's value fills an item under the member's key; one byte more is
/// `ValueTooLarge` before anything is sent: the old value and the member
/// list stay. Both for a member named in its key and one named by hash.
fn value_at_and_past_the_limit(store: Arc<dyn Store>) {
    let limit = store.item_size_limit();
    let table = Table::new(Arc::clone(&store), "values").unwrap();
    let hashed = vec![b'h'; 151];
    for member in [b"plain".as_slice(), &hashed] {
        let key: Key = table.member_key(member).unwrap();
        let max = limit - OVERHEAD - key.len();
        let at = vec![b'v'; max];
        table.set(member, &at).unwrap();
        assert_eq!(table.get(member).unwrap(), Some(at.clone()));
        let err = table.set(member, &vec![b'w'; max + 1]).unwrap_err();
        assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
        assert_eq!(table.get(member).unwrap(), Some(at), "the old value stays");
    }
    let fresh = b"fresh";
    let max = limit - OVERHEAD - table.member_key(fresh).unwrap().len();
    let err = table.set(fresh, &vec![b'w'; max + 1]).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert!(!table.has(fresh).unwrap(), "no row");
    let mut keys = table.keys().unwrap();
    keys.sort();
    assert_eq!(keys, [hashed, b"plain".to_vec()], "not listed");
}

#[test]
fn a_table_value_filling_an_item_is_stored_and_one_byte_more_is_value_too_large_on_memory() {
    value_at_and_past_the_limit(memory(4096));
}

#[test]
fn a_table_value_filling_an_item_is_stored_and_one_byte_more_is_value_too_large_on_memcached() {
    let server = MemcachedServer::start_default();
    value_at_and_past_the_limit(memcached(&server, 1024 * 1024));
}

/// A table's member is a member of its list (a set): the longest that
/// fits a bucket of the list is listed and has its row; the shortest too
/// long for the list key's item is `ValueTooLarge`, with no row and
/// nothing listed.
#[test]
fn a_table_member_one_past_its_list_s_item_is_value_too_large_and_nothing_is_written() {
    let store = memory(4096);
    let limit = store.item_size_limit();
    let table = Table::new(Arc::clone(&store), "members").unwrap();
    let list_key_len = "table:members:members".len();
    table.add(b"first").unwrap();
    let at = vec![b'a'; limit - OVERHEAD - list_key_len - BUCKET_SUFFIX - 2];
    table.set(&at, b"v").unwrap();
    assert_eq!(table.get(&at).unwrap(), Some(b"v".to_vec()));
    let past = vec![b'p'; limit - OVERHEAD - list_key_len - 2 + 1];
    let err = table.set(&past, b"v").unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert!(!table.has(&past).unwrap(), "no row");
    assert_eq!(table.keys().unwrap().len(), 2, "not listed");
    assert_eq!(table.entries().unwrap().len(), 2);
}

/// Its longest member key, `table:<name>:v:<150 bytes>`, must fit 250
/// bytes: a name of 91 bytes does, 92 is `InvalidKey`.
#[test]
fn a_table_name_of_91_bytes_works_and_92_is_invalid_key() {
    let store = memory(4096);
    let table = Table::new(Arc::clone(&store), &"n".repeat(91)).unwrap();
    let member = vec![b'm'; 150];
    table.set(&member, b"v").unwrap();
    assert_eq!(table.get(&member).unwrap(), Some(b"v".to_vec()));
    let err = Table::new(Arc::clone(&store), &"n".repeat(92)).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
}
