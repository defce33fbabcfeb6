//! A `Leaderboard` of more than 200 members, kept in shards under a marker:
//! exact counts of 100 000 members against a model, an increment that
//! moves one shard (round trips and bytes on real memcached), racing
//! first increments, writers on separate handles, a lost shard that is an
//! error rather than a zero, the move of an older one-item board, a TTL
//! that expires the board whole, and the Space-Saving bounds once sketched.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_sketch::Leaderboard;
use mcds_sketch::topk::{SHARD_MEMBERS, SpaceSaving};
use mcds_testkit::MemcachedServer;
use rand::RngExt;

fn memcached(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

/// The bytes memcached read and wrote during `f` (its `stats` counters,
/// less what the two `stats` calls themselves move, about 1 KiB).
fn bytes_moved(server: &MemcachedServer, f: impl FnOnce()) -> u64 {
    let before = server.stat("bytes_read") + server.stat("bytes_written");
    f();
    server.stat("bytes_read") + server.stat("bytes_written") - before
}

#[test]
fn a_board_of_100_000_members_is_exact_and_an_increment_moves_one_shard() {
    let server = MemcachedServer::start_default();
    let store = mcds_testkit::counting_memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "big", 100_000).unwrap();
    let mut rng = mcds_testkit::seed::rng("topk shards 100k");
    let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
    let members: Vec<String> = (0..100_000).map(|i| format!("player-{i:06}")).collect();
    for chunk in members.chunks(5_000) {
        let batch: Vec<(&str, u64)> = chunk
            .iter()
            .map(|m| (m.as_str(), rng.random_range(1..1_000u64)))
            .collect();
        for (m, by) in &batch {
            *truth.entry(m.as_bytes().to_vec()).or_default() += by;
        }
        board.incr_many(&batch).unwrap();
    }
    let summary = board.summary().unwrap();
    assert!(summary.is_exact(), "100 000 members fit a 100 000 board");
    assert_eq!(summary.len(), 100_000);
    assert_eq!(summary.total(), truth.values().sum::<u64>());
    for e in summary.top(summary.len()) {
        assert_eq!(e.count, truth[&e.member], "{:?}", e.member);
    }

    use mcds_testkit::round_trips as rt;
    let mut count = 0;
    let moved = bytes_moved(&server, || {
        assert_eq!(rt(|| count = board.incr("player-000007", 5).unwrap()), 2);
    });
    assert_eq!(count, truth[&b"player-000007"[..]] + 5);
    println!("leaderboard of 100 000: incr moved {moved} bytes in 2 round trips");
    assert!(moved <= 64 * 1024, "an increment moved {moved} bytes");
    let mut top = Vec::new();
    // 751 keys: one request, within the request budget (it took 2 of
    // 32 KiB).
    assert_eq!(rt(|| top = board.top(10).unwrap()), 1, "top (cached life)");
    assert_eq!(top.len(), 10);
    let summary = board.summary().unwrap();
    assert_eq!(top, summary.top(10), "top(k) selects as the summary sorts");
    assert_eq!(board.top(0).unwrap(), Vec::new());
    assert_eq!(board.top(200_000).unwrap().len(), 100_000);
    let fresh = Leaderboard::new(Arc::clone(&store), "big", 100_000).unwrap();
    assert_eq!(
        rt(|| top = fresh.top(10).unwrap()),
        2,
        "top (new handle): the marker, then every shard"
    );
    assert_eq!(rt(|| drop(fresh.score("player-000007").unwrap())), 1);
    let first = Leaderboard::new(Arc::clone(&store), "big", 100_000).unwrap();
    assert_eq!(
        rt(|| assert!(first.incr("player-000001", 1).unwrap() > 1)),
        3,
        "incr (new handle)"
    );
}

#[test]
fn writers_on_separate_handles_and_racing_first_increments_lose_nothing() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let base: u64 = mcds_testkit::seed::rng("topk shards racing").random();
    // The items of the server's own bookkeeping (mcds's incarnation and pool
    // records), made by the first connection.
    memcached(&server).get(&Key::new("warm").unwrap()).unwrap();
    let baseline = server.stat("curr_items");
    for round in 0..5u64 {
        let name = format!("race{round}");
        let acknowledged: Vec<HashMap<String, u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6u64)
                .map(|t| {
                    let (addr, name) = (addr.clone(), name.clone());
                    s.spawn(move || {
                        use rand::SeedableRng;
                        let store: Arc<dyn Store> =
                            Arc::new(MemcachedStore::connect(&addr).unwrap());
                        let board = Leaderboard::new(store, &name, 1_000).unwrap();
                        let mut rng = rand::rngs::StdRng::seed_from_u64(base ^ (round << 8) ^ t);
                        let mut mine: HashMap<String, u64> = HashMap::new();
                        for _ in 0..60 {
                            let m = format!("m{}", rng.random_range(0..300u32));
                            let by = rng.random_range(1..4u64);
                            board.incr(&m, by).unwrap();
                            *mine.entry(m).or_default() += by;
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
        for mine in acknowledged {
            for (m, by) in mine {
                *truth.entry(m.into_bytes()).or_default() += by;
            }
        }
        let board = Leaderboard::new(memcached(&server), &name, 1_000).unwrap();
        let summary = board.summary().unwrap();
        assert!(summary.is_exact());
        assert_eq!(summary.len(), truth.len(), "round {round}");
        for (m, t) in &truth {
            assert_eq!(summary.get(m).map(|e| e.count), Some(*t), "round {round}");
        }
        // One life: the racing first increments agreed on one marker, and
        // the losers' shards were deleted.
        let items = server.stat("curr_items") - baseline;
        assert_eq!(
            items,
            (round + 1) * (1 + 8),
            "round {round}: a marker and 8 shards a board"
        );
    }
}

#[test]
fn a_lost_shard_is_an_error_not_a_zero() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "lossy", 1_000).unwrap();
    board.incr_many(&[("ann", 5), ("bob", 7)]).unwrap();
    // Delete ann's shard behind the board's back, as an eviction would.
    let mut deleted = 0;
    for key in shard_keys(&*store, "lossy") {
        let item = store.get(&key).unwrap().unwrap();
        let part = SpaceSaving::decode(&item.value).unwrap();
        if part.get(b"ann").is_some() {
            store.delete(&key).unwrap();
            deleted += 1;
        }
    }
    assert_eq!(deleted, 1);
    for result in [
        board.top(2).map(drop),
        board.score("ann").map(drop),
        board.incr("ann", 1).map(drop),
        Leaderboard::new(Arc::clone(&store), "lossy", 1_000)
            .unwrap()
            .summary()
            .map(drop),
    ] {
        assert!(
            matches!(&result, Err(Error::Lost { reason, .. }) if reason.contains("clear()")),
            "{result:?}"
        );
    }
    board.clear().unwrap();
    assert!(board.summary().unwrap().is_empty());
    assert_eq!(board.incr("ann", 2).unwrap(), 2);
    assert_eq!(shard_keys(&*store, "lossy").len(), 8);
}

/// The keys of the shards of the live board `name` (capacity 1 000): its
/// marker names their nonce.
fn shard_keys(store: &dyn Store, name: &str) -> Vec<Key> {
    let marker = store
        .get(&Key::new(format!("topk:{name}:board.m")).unwrap())
        .unwrap()
        .expect("a marker");
    let nonce = u32::from_le_bytes(marker.value[8..12].try_into().unwrap());
    (0..8u32)
        .map(|s| Key::new(format!("topk:{name}:board.{nonce:08x}.{s:x}")).unwrap())
        .collect()
}

/// A board of more than 200 members that an older mcds wrote in one item
/// keeps that item: reads and increments use it (any member, even one new
/// to a sketched board), until it is cleared; the next board is made in
/// shards.
#[test]
fn an_older_one_item_board_keeps_its_item_until_cleared() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    for (name, members) in [("exact", 800u32), ("sketched", 3_000)] {
        // What mcds 0.1 wrote: one item of capacity 1 000 under the key.
        let mut old = SpaceSaving::new(1_000);
        let mut rng = mcds_testkit::seed::rng(&format!("topk old board {name}"));
        for _ in 0..20_000 {
            let m = format!("m{}", rng.random_range(0..members));
            old.insert(m.as_bytes(), rng.random_range(1..10)).unwrap();
        }
        let board = Leaderboard::new(Arc::clone(&store), name, 1_000).unwrap();
        store.set(board.key(), &old.encode(), Ttl::Never).unwrap();
        assert_eq!(board.top(5).unwrap(), old.top(5), "{name}: read as it is");
        for (m, by) in [(old.top(1)[0].member.clone(), 4), (b"new".to_vec(), 2)] {
            board.incr(&m, by).unwrap();
            old.insert(&m, by).unwrap();
        }
        let item = store.get(board.key()).unwrap().expect("still one item");
        assert!(SpaceSaving::decode(&item.value).unwrap() == old, "{name}");
        let fresh = Leaderboard::new(Arc::clone(&store), name, 1_000).unwrap();
        assert!(fresh.summary().unwrap() == old, "{name}");
        assert_eq!(
            fresh.score("new").unwrap().map(|e| e.count),
            old.get(b"new").map(|e| e.count)
        );
        board.clear().unwrap();
        assert!(store.get(board.key()).unwrap().is_none());
        assert!(fresh.summary().unwrap().is_empty(), "{name}: cleared");
        assert_eq!(fresh.incr("ann", 1).unwrap(), 1);
        assert_eq!(shard_keys(&*store, name).len(), 8, "{name}: now in shards");
        assert!(store.get(board.key()).unwrap().is_none());
    }
}

#[test]
fn a_board_with_a_ttl_expires_whole_and_its_shards_outlive_its_marker() {
    let (store, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    let board = Leaderboard::new(scope.clone(), "daily", 1_000)
        .unwrap()
        .with_ttl(Ttl::secs(100));
    board
        .incr_many(&[("ann", 1), ("bob", 2), ("cy", 3)])
        .unwrap();
    // Only ann is incremented, every 30 s, for 20 minutes: bob's and cy's
    // shards must live as long as the board does.
    for _ in 0..40 {
        clock.advance(Duration::from_secs(30));
        board.incr("ann", 1).unwrap();
        let fresh = Leaderboard::new(scope.clone(), "daily", 1_000).unwrap();
        let summary = fresh.summary().unwrap();
        assert_eq!(summary.get(b"cy").map(|e| e.count), Some(3));
    }
    clock.advance(Duration::from_secs(101));
    assert!(board.summary().unwrap().is_empty(), "expired whole");
    assert!(
        Leaderboard::new(scope.clone(), "daily", 1_000)
            .unwrap()
            .summary()
            .unwrap()
            .is_empty()
    );
    assert_eq!(board.incr("bob", 1).unwrap(), 1, "a new life");
    clock.advance(Duration::from_secs(400));
    let left = store.get(&Key::new("topk:daily:board.m").unwrap()).unwrap();
    assert!(left.is_none());
}

#[test]
fn a_sketched_sharded_board_keeps_the_space_saving_bounds() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "zipf", 300).unwrap();
    let mut rng = mcds_testkit::seed::rng("topk shards zipf");
    let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut batch = Vec::new();
    for _ in 0..60_000 {
        // Half the increments on 20 heavy hitters, half spread over 20 000.
        let spread = if rng.random_bool(0.5) { 20 } else { 20_000 };
        let m = format!("m{}", rng.random_range(0..spread));
        *truth.entry(m.clone().into_bytes()).or_default() += 1;
        batch.push((m, 1u64));
        if batch.len() == 2_000 {
            board.incr_many(&batch).unwrap();
            batch.clear();
        }
    }
    let summary = board.summary().unwrap();
    assert!(!summary.is_exact());
    assert_eq!(summary.total(), 60_000);
    for e in summary.top(summary.len()) {
        let t = truth.get(&e.member).copied().unwrap_or(0);
        assert!(e.lower_bound() <= t && t <= e.count, "{e:?} true {t}");
        assert!(e.error <= summary.max_error());
    }
    for (m, &t) in &truth {
        if summary.get(m).is_none() {
            assert!(
                t <= summary.max_error(),
                "{m:?} counted {t} is off the board"
            );
        }
    }
    println!(
        "sharded board of 300 ({} counters): max error {}, N/m = {}",
        summary.capacity(),
        summary.max_error(),
        60_000 / 300
    );
    assert_eq!(summary.capacity(), 3 * SHARD_MEMBERS, "3 shards of 200");
    assert_eq!(
        summary.len() as u32,
        summary.capacity(),
        "every counter used"
    );
}

#[test]
fn another_capacity_and_garbage_are_errors() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "cap", 1_000).unwrap();
    board.incr("a", 1).unwrap();
    let other = Leaderboard::new(Arc::clone(&store), "cap", 2_000).unwrap();
    assert!(matches!(other.top(1), Err(Error::Corrupt { .. })));
    assert!(matches!(other.incr("a", 1), Err(Error::Corrupt { .. })));
    store
        .set(&Key::new("topk:cap:board.m").unwrap(), b"junk", Ttl::Never)
        .unwrap();
    let fresh = Leaderboard::new(Arc::clone(&store), "cap", 1_000).unwrap();
    assert!(matches!(fresh.top(1), Err(Error::Corrupt { .. })));
    assert!(Leaderboard::new(Arc::clone(&store), "huge", 1 << 21).is_err());
}

#[test]
fn a_shard_whose_total_would_pass_2_64_refuses_the_increment_and_writes_nothing() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "overflow", 1_000).unwrap();
    board.incr("ann", u64::MAX - 1).unwrap();
    // A member of ann's shard other than ann, and one of another shard.
    let shard = |m: &str| {
        shard_keys(&*store, "overflow").iter().position(|k| {
            SpaceSaving::decode(&store.get(k).unwrap().unwrap().value)
                .unwrap()
                .get(m.as_bytes())
                .is_some()
        })
    };
    let ann = shard("ann").unwrap();
    let mut same = None;
    let mut other = None;
    for i in 0..200 {
        let m = format!("m{i}");
        board.incr(&m, 1).ok();
        match shard(&m) {
            Some(s) if s == ann => same = Some(m),
            Some(_) => other = Some(m),
            None => {}
        }
        if same.is_some() && other.is_some() {
            break;
        }
    }
    let (same, other) = (same.unwrap(), other.unwrap());
    // ann's shard holds u64::MAX - 1 + 1: full to the last unit.
    let before = board.score(&same).unwrap();
    assert!(matches!(
        board.incr(&same, 1),
        Err(Error::InvalidArgument(m)) if m.contains("2^64")
    ));
    assert!(matches!(
        board.incr_many(&[(other.as_str(), 1), (same.as_str(), 1)]),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(board.score(&same).unwrap(), before, "nothing written");
    // The shards' sum passes 2^64 - 1: the summary says so, top still reads.
    board.incr(&other, u64::MAX - 10).unwrap();
    assert!(matches!(board.summary(), Err(Error::InvalidArgument(m)) if m.contains("2^64")));
    assert_eq!(board.top(1).unwrap()[0].member, b"ann");
}
