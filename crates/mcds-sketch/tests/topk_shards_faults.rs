//! A sharded `Leaderboard` under faults on real memcached: an increment
//! held past its board's expiry (a paused client thread), a write refused
//! for memory, and handles of the same name on either side of the 200-member
//! line. A `HookStore` runs a hook just before the first batch with a CAS:
//! a client descheduled between two round trips.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{Error, Key, Op, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_sketch::Leaderboard;
use mcds_testkit::{HookStore, MemcachedServer};

fn mc(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(MemcachedStore::connect(&server.addr()).unwrap())
}

fn marker_exists(server: &MemcachedServer, board: &Leaderboard) -> bool {
    let k = board.key().with_suffix(".m").unwrap();
    mc(server).get(&k).unwrap().is_some()
}

/// With a TTL, an increment reads life N's marker and shard, then its
/// thread stalls until N's marker expires and another client starts life
/// M. Its CAS lands in N's shard (shards outlive markers); it reads the
/// marker again, finds M, and says `Ambiguous`: it cannot tell whether its
/// write landed before N ended (and went with it) or after. It is not
/// written again (that would count it twice if a reader saw it in N).
#[test]
fn an_increment_held_past_its_boards_expiry_is_ambiguous_and_never_written_twice() {
    let server = MemcachedServer::start_default();
    let stall = HookStore::new(mc(&server));
    let a = Leaderboard::new(stall.clone() as Arc<dyn Store>, "lb", 1000)
        .unwrap()
        .with_ttl(Ttl::secs(2));
    let b = Leaderboard::new(mc(&server), "lb", 1000)
        .unwrap()
        .with_ttl(Ttl::secs(2));
    let observer = Leaderboard::new(mc(&server), "lb", 1000).unwrap();
    assert_eq!(a.incr("x", 1).unwrap(), 1);
    // A's next increment reads marker N + shard, then stalls before its CAS
    // until the marker has expired and B has written (creating life M).
    let srv_addr = server.addr();
    let b2 = b.clone();
    let key = a.key().clone();
    let cas = |ops: &[Op<'_>]| ops.iter().any(|o| matches!(o, Op::Cas { .. }));
    stall.once_before(cas, move || {
        let probe = MemcachedStore::connect(&srv_addr).unwrap();
        let mk = key.with_suffix(".m").unwrap();
        let t0 = Instant::now();
        while probe.get(&mk).unwrap().is_some() {
            std::thread::sleep(Duration::from_millis(20));
            assert!(t0.elapsed() < Duration::from_secs(10));
        }
        println!(
            "[stall] marker expired after {:?}; B increments y",
            t0.elapsed()
        );
        assert_eq!(b2.incr("y", 1).unwrap(), 1, "B starts a new life");
    });
    let acked = a.incr("x", 1);
    println!("A.incr(x, 1) after the stall returned {acked:?}");
    assert!(marker_exists(&server, &a));
    let top = observer.top(10).unwrap();
    let sum = observer.summary().unwrap();
    println!(
        "top after both acknowledged: {top:?}; total {}",
        sum.total()
    );
    let x = observer.score("x").unwrap();
    println!("score(x) = {x:?}");
    assert!(
        matches!(&acked, Err(Error::Ambiguous { reason, .. }) if reason.contains("expired")),
        "{acked:?}"
    );
    assert_eq!(x, None, "not written again in the new life: {top:?}");
    assert_eq!(sum.total(), 1, "y alone");
}

/// Handles of one name with capacities on either side of 200 would keep
/// two boards (one item, and shards under a marker): each sees the other's
/// and refuses.
#[test]
fn handles_of_one_name_on_either_side_of_the_shard_line_are_corrupt() {
    let server = MemcachedServer::start_default();
    let big = Leaderboard::new(mc(&server), "cap", 1000).unwrap();
    let small = Leaderboard::new(mc(&server), "cap", 100).unwrap();
    big.incr("ann", 5).unwrap();
    for r in [small.incr("bob", 7).map(drop), small.top(1).map(drop)] {
        assert!(
            matches!(&r, Err(Error::Corrupt { reason, .. }) if reason.contains("capacity 1000")),
            "{r:?}"
        );
    }
    let other = Leaderboard::new(mc(&server), "cap2", 100).unwrap();
    let big2 = Leaderboard::new(mc(&server), "cap2", 1000).unwrap();
    other.incr("ann", 5).unwrap();
    for r in [big2.incr("bob", 7).map(drop), big2.top(1).map(drop)] {
        assert!(
            matches!(&r, Err(Error::Corrupt { reason, .. }) if reason.contains("capacity 100")),
            "{r:?}"
        );
    }
    assert!(small.summary().unwrap_err().to_string().contains("1000"));
}

/// On a full `-M` server a shard's CAS is refused for memory (nothing
/// stored): the increment fails with that error, and is not reported as
/// applied.
#[test]
fn a_shard_write_refused_for_memory_is_not_reported_as_applied() {
    use mcds_testkit::ServerOptions;
    let server = MemcachedServer::start(ServerOptions {
        memory_mb: 2,
        no_evict: true,
        ..Default::default()
    });
    let store = mc(&server);
    let board = Leaderboard::new(Arc::clone(&store), "oom", 1000).unwrap();
    let mut acked = 0u64;
    let mut junk = 0u64;
    let filler = vec![b'z'; 3000];
    for round in 0..20000u64 {
        // Grow the shards with new members, and fill memory with junk of the
        // shards' sizes so no chunk is free for a grown shard.
        let m = format!("member-{round:06}");
        match board.incr(&m, 1) {
            Ok(_) => acked += 1,
            Err(e) => {
                let total = board.summary().map(|s| s.total());
                println!("incr #{round} failed: {e:?}\n  acked {acked}, board total {total:?}");
                assert!(
                    matches!(e, Error::OutOfMemory { .. }),
                    "refused for memory, nothing applied: {e:?}"
                );
                assert_eq!(
                    total.unwrap(),
                    acked,
                    "the board holds the acknowledged ones"
                );
                return;
            }
        }
        for _ in 0..4 {
            let k = Key::new(format!("junk{junk}")).unwrap();
            junk += 1;
            let len = 500 + (junk as usize * 977) % 2500;
            if store.set(&k, &filler[..len], Ttl::Never).is_err() {
                break;
            }
        }
    }
    panic!("memory never ran out");
}
