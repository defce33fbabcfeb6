//! `Leaderboard` on the embedded store and real memcached: the Space-Saving
//! error bound and recall on a Zipf stream, exact mode against a model,
//! 8 concurrent writers, round trips, restarts and garbage.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcds_core::{Error, MemoryStore, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_sketch::Leaderboard;
use mcds_sketch::topk::{MAX_MEMBER_LEN, SpaceSaving};
use mcds_testkit::MemcachedServer;
use proptest::prelude::*;
use rand::RngExt;

fn memcached(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

/// `n` draws from a Zipf distribution over members `0..members` with
/// exponent `s` (inverse CDF), seeded and printed.
fn zipf_stream(what: &str, n: usize, members: usize, s: f64) -> Vec<Vec<u8>> {
    let mut rng = mcds_testkit::seed::rng(what);
    let mut cdf = Vec::with_capacity(members);
    let mut sum = 0.0;
    for rank in 1..=members {
        sum += 1.0 / (rank as f64).powf(s);
        cdf.push(sum);
    }
    (0..n)
        .map(|_| {
            let u = rng.random::<f64>() * sum;
            let rank = cdf.partition_point(|&c| c < u).min(members - 1);
            format!("member-{rank}").into_bytes()
        })
        .collect()
}

/// Check the Space-Saving guarantees of `board` against the true counts:
/// `count − error ≤ true ≤ count`, `error ≤ N/m`, every member above `N/m`
/// on the board. Returns the largest |reported − true| on the board.
fn check_guarantees(board: &SpaceSaving, truth: &HashMap<Vec<u8>, u64>) -> u64 {
    let n: u64 = truth.values().sum();
    assert_eq!(board.total(), n, "N is the sum of every increment");
    let bound = n / u64::from(board.capacity());
    assert!(board.max_error() <= bound);
    let mut worst = 0;
    for e in board.top(board.len()) {
        let t = truth.get(&e.member).copied().unwrap_or(0);
        assert!(
            e.lower_bound() <= t && t <= e.count,
            "{:?}: count {} error {} true {t}",
            String::from_utf8_lossy(&e.member),
            e.count,
            e.error
        );
        assert!(e.error <= bound, "error {} above N/m = {bound}", e.error);
        if board.is_exact() {
            assert_eq!(e.count, t);
        }
        worst = worst.max(e.count - t);
    }
    for (member, &t) in truth {
        if t > bound {
            assert!(
                board.get(member).is_some(),
                "a member counted {t} > N/m = {bound} is missing"
            );
        } else if board.get(member).is_none() {
            assert!(t <= board.max_error());
        }
    }
    worst
}

/// The true top `k` (ties by member bytes) and the board's top `k`: how
/// many of the true ones the board reports.
fn recall(board: &SpaceSaving, truth: &HashMap<Vec<u8>, u64>, k: usize) -> f64 {
    let mut sorted: Vec<(&Vec<u8>, &u64)> = truth.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let reported: Vec<Vec<u8>> = board.top(k).into_iter().map(|e| e.member).collect();
    let hits = sorted[..k]
        .iter()
        .filter(|(m, _)| reported.contains(m))
        .count();
    hits as f64 / k as f64
}

#[test]
fn zipf_stream_error_bound_and_recall() {
    let (n, members, m) = (200_000, 100_000, 1000u32);
    let stream = zipf_stream("topk zipf", n, members, 1.1);
    let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut local = SpaceSaving::new(m);
    for member in &stream {
        *truth.entry(member.clone()).or_default() += 1;
        local.insert(member, 1).unwrap();
    }
    assert!(!local.is_exact());
    let worst = check_guarantees(&local, &truth);
    let bound = n as u64 / u64::from(m);
    let (r10, r100) = (recall(&local, &truth, 10), recall(&local, &truth, 100));
    let worst_top = |k: usize| {
        local
            .top(k)
            .iter()
            .map(|e| e.count - truth[&e.member])
            .max()
            .unwrap()
    };
    assert_eq!(r10, 1.0, "top-10 recall");
    assert!(r100 >= 0.8, "top-100 recall {r100}");
    // The same stream through a stored one-item board of 200, 100 CAS
    // updates of 2000 increments, on both stores: the same board as a
    // local one of 200. And through a sharded board of 1000: the
    // Space-Saving bounds hold shard by shard, and the top 10 are found.
    let mut local200 = SpaceSaving::new(200);
    for member in &stream {
        local200.insert(member, 1).unwrap();
    }
    let server = MemcachedServer::start_default();
    for (what, store) in [
        ("embedded", Arc::new(MemoryStore::new()) as Arc<dyn Store>),
        ("memcached", memcached(&server)),
    ] {
        let board = Leaderboard::new(Arc::clone(&store), "zipf", 200).unwrap();
        let sharded = Leaderboard::new(store, "zipf-sharded", m).unwrap();
        for chunk in stream.chunks(2000) {
            let batch: Vec<(&[u8], u64)> = chunk.iter().map(|e| (e.as_slice(), 1)).collect();
            board.incr_many(&batch).unwrap();
            sharded.incr_many(&batch).unwrap();
        }
        assert!(board.summary().unwrap() == local200, "{what}");
        let summary = sharded.summary().unwrap();
        assert_eq!(summary.total(), n as u64, "{what}");
        for e in summary.top(summary.len()) {
            let t = truth[&e.member];
            assert!(
                e.lower_bound() <= t && t <= e.count,
                "{what}: {e:?} true {t}"
            );
        }
        for (member, &t) in &truth {
            if summary.get(member).is_none() {
                assert!(t <= summary.max_error(), "{what}: {t} off the board");
            }
        }
        assert_eq!(recall(&summary, &truth, 10), 1.0, "{what}: sharded top-10");
    }
    println!(
        "leaderboard, Zipf s=1.1: {n} increments over {members} members, {} distinct seen, m = {m} counters: \
         recall top-10 {r10:.2}, top-100 {r100:.2}; max |reported - true| {} (top-10), {} (top-100), {worst} (whole board) \
         vs bound N/m = {bound}; smallest count (bound for members off the board) {}; same board stored on embedded and memcached",
        truth.len(),
        worst_top(10),
        worst_top(100),
        local.max_error()
    );
}

#[test]
fn exact_mode_matches_a_model() {
    let mut rng = mcds_testkit::seed::rng("topk exact");
    let board = Leaderboard::new(Arc::new(MemoryStore::new()), "exact", 500).unwrap();
    let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
    for _ in 0..3000 {
        let member = format!("m{}", rng.random_range(0..500u32)).into_bytes();
        let by = rng.random_range(1..100u64);
        let count = board.incr(&member, by).unwrap();
        *truth.entry(member.clone()).or_default() += by;
        assert_eq!(count, truth[&member]);
    }
    let summary = board.summary().unwrap();
    assert!(summary.is_exact());
    check_guarantees(&summary, &truth);
    let mut sorted: Vec<(Vec<u8>, u64)> = truth.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let top: Vec<(Vec<u8>, u64)> = board
        .top(20)
        .unwrap()
        .into_iter()
        .map(|e| {
            assert_eq!(e.error, 0);
            (e.member, e.count)
        })
        .collect();
    assert_eq!(top, sorted[..20]);
}

proptest! {
    #![proptest_config(mcds_testkit::seed::proptest_config(file!(), 256))]
    /// Any sequence of increments on a small board: the guarantees hold,
    /// and the stored form round-trips.
    #[test]
    fn space_saving_guarantees(
        capacity in 1u32..12,
        ops in prop::collection::vec((0u8..40, 1u64..1000), 0..300),
    ) {
        let mut board = SpaceSaving::new(capacity);
        let mut truth: HashMap<Vec<u8>, u64> = HashMap::new();
        for (m, by) in ops {
            let member = vec![b'a' + m % 26, m];
            board.insert(&member, by).unwrap();
            *truth.entry(member).or_default() += by;
        }
        check_guarantees(&board, &truth);
        prop_assert_eq!(SpaceSaving::decode(&board.encode()).unwrap(), board);
    }

    /// Arbitrary bytes, and a stored board with bytes overwritten, decode
    /// to an error or to a board that re-encodes to the same bytes; never
    /// a panic.
    #[test]
    fn decoding_garbage_never_panics(
        junk in prop::collection::vec(any::<u8>(), 0..200),
        at in any::<prop::sample::Index>(),
    ) {
        if let Ok(board) = SpaceSaving::decode(&junk) {
            prop_assert_eq!(board.encode(), junk.clone());
        }
        let mut board = SpaceSaving::new(3);
        for m in ["a", "b", "c", "d"] {
            board.insert(m.as_bytes(), 2).unwrap();
        }
        let mut stored = board.encode();
        let i = at.index(stored.len());
        let end = (i + junk.len()).min(stored.len());
        stored[i..end].copy_from_slice(&junk[..end - i]);
        match SpaceSaving::decode(&stored) {
            Ok(decoded) => prop_assert_eq!(decoded.encode(), stored),
            Err(reason) => prop_assert!(!reason.is_empty()),
        }
    }
}

/// 8 threads increment one board on memcached: exact mode gives exact
/// totals per member; sketched mode's N equals the acknowledged increments.
#[test]
fn eight_concurrent_writers_lose_nothing() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let base: u64 = mcds_testkit::seed::rng("topk concurrent").random();
    for (capacity, members) in [(100u32, 50u32), (16, 400)] {
        let board =
            Leaderboard::new(Arc::clone(&store), &format!("c{capacity}"), capacity).unwrap();
        let acknowledged = AtomicU64::new(0);
        let refused = AtomicU64::new(0);
        let per_member: Vec<AtomicU64> = (0..members).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (board, acknowledged, refused, per_member) =
                    (&board, &acknowledged, &refused, &per_member);
                s.spawn(move || {
                    use rand::SeedableRng;
                    let mut rng =
                        rand::rngs::StdRng::seed_from_u64(base ^ t ^ (u64::from(capacity) << 32));
                    for _ in 0..200 {
                        let m = rng.random_range(0..members);
                        let by = rng.random_range(1..5u64);
                        match board.incr(format!("m{m}"), by) {
                            Ok(_) => {
                                acknowledged.fetch_add(by, Ordering::Relaxed);
                                per_member[m as usize].fetch_add(by, Ordering::Relaxed);
                            }
                            Err(Error::Conflict { .. }) => {
                                refused.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                });
            }
        });
        let summary = board.summary().unwrap();
        let truth: HashMap<Vec<u8>, u64> = per_member
            .iter()
            .enumerate()
            .map(|(m, c)| (format!("m{m}").into_bytes(), c.load(Ordering::Relaxed)))
            .filter(|(_, c)| *c > 0)
            .collect();
        assert_eq!(summary.total(), acknowledged.load(Ordering::Relaxed));
        check_guarantees(&summary, &truth);
        assert_eq!(summary.is_exact(), capacity >= members);
        println!(
            "leaderboard, 8 threads x 200 increments on memcached, capacity {capacity}, {members} members: N = {} = acknowledged, {} refused (Conflict), {}",
            summary.total(),
            refused.load(Ordering::Relaxed),
            if summary.is_exact() {
                "every count exact"
            } else {
                "sketch guarantees hold"
            }
        );
    }
}

#[test]
fn round_trips_and_arguments() {
    let server = MemcachedServer::start_default();
    let store = mcds_testkit::counting_memcached(&server);
    let rt = |f: &dyn Fn()| mcds_testkit::round_trips(f);
    let board = Leaderboard::new(Arc::clone(&store), "rt", 200).unwrap();
    // The first makes the board, then looks for a sharded board's marker
    // made at the same moment by a handle of another capacity.
    assert_eq!(
        rt(&|| assert_eq!(board.incr("a", 3).unwrap(), 3)),
        3,
        "incr (first)"
    );
    assert_eq!(
        rt(&|| assert_eq!(board.incr("a", 2).unwrap(), 5)),
        2,
        "incr"
    );
    assert_eq!(
        rt(&|| assert_eq!(board.top(10).unwrap().len(), 1)),
        1,
        "top"
    );
    assert_eq!(
        rt(&|| assert_eq!(board.score("a").unwrap().unwrap().count, 5)),
        1,
        "score"
    );
    let batch: Vec<(String, u64)> = (0..100).map(|i| (format!("m{i}"), 1)).collect();
    assert_eq!(rt(&|| board.incr_many(&batch).unwrap()), 2, "incr_many");
    assert!(matches!(board.incr("a", 0), Err(Error::InvalidArgument(_))));
    let long = vec![b'x'; MAX_MEMBER_LEN + 1];
    assert!(matches!(
        board.incr(&long, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(board.incr(&long[..MAX_MEMBER_LEN], 1).unwrap(), 1);
    assert!(matches!(
        board.incr("a", u64::MAX),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        board.summary().unwrap().total(),
        106,
        "a refused increment changes nothing"
    );
    assert!(Leaderboard::new(Arc::clone(&store), "zero", 0).is_err());
    assert!(Leaderboard::new(Arc::clone(&store), "huge", (1 << 20) + 1).is_err());
    assert!(Leaderboard::new(Arc::clone(&store), "max", 1 << 20).is_ok());
}

/// A restart loses the board (it reads as empty); increments go on, by CAS,
/// on the new server.
#[test]
fn a_restart_empties_the_board() {
    let mut server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "restart", 10).unwrap();
    board.incr("a", 5).unwrap();
    server.restart();
    // The first op after a restart may fail while the client redials.
    let _ = board.top(1);
    assert!(board.summary().unwrap().is_empty());
    assert_eq!(board.incr("b", 2).unwrap(), 2);
    assert_eq!(board.summary().unwrap().total(), 2);
}

#[test]
fn garbage_is_corrupt() {
    let server = MemcachedServer::start_default();
    let store = memcached(&server);
    let board = Leaderboard::new(Arc::clone(&store), "junk", 4).unwrap();
    for i in 0..6 {
        board.incr(format!("m{i}"), i + 1).unwrap();
    }
    let good = store.get(board.key()).unwrap().unwrap().value;
    let mut flipped = good.clone();
    flipped[30] ^= 1;
    let other = SpaceSaving::new(5).encode();
    let junk: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("magic only", b"MTK1".to_vec()),
        ("text", b"garbage".to_vec()),
        ("a flipped bit", flipped),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("another capacity", other),
    ];
    for (what, bytes) in junk {
        store.set(board.key(), &bytes, Ttl::Never).unwrap();
        let e = board.top(3).unwrap_err();
        assert!(matches!(e, Error::Corrupt { .. }), "{what}: {e}");
        assert!(
            matches!(board.incr("x", 1), Err(Error::Corrupt { .. })),
            "{what}"
        );
        assert_eq!(
            store.get(board.key()).unwrap().unwrap().value,
            bytes,
            "{what}: left as it was"
        );
    }
    board.clear().unwrap();
    assert_eq!(board.incr("x", 1).unwrap(), 1);
}
