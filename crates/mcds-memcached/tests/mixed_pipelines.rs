//! Pipelines whose every op's outcome is checked, against real memcached
//! (written by an adversarial review of the in-place reply parsing, the
//! guess of the next op in `read_replies` and one-digit numbers in
//! commands): a pipeline whose opaques run from 0 to 30, with numbers of
//! one digit and two in every field, error lines (CLIENT_ERROR for a
//! non-numeric counter, SERVER_ERROR for a value too large), quiet ops
//! that answer and that do not, text writes and their `mg`.

use mcds_core::{Error, Key, Op, Reply, Store, Stored, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::{MemcachedServer, ServerOptions};

/// What an op's result must satisfy.
type Check = Box<dyn Fn(&mcds_core::Result<Reply>) -> bool>;

fn k(s: &str) -> Key {
    Key::new(s).unwrap()
}

/// memcached's default 1 MiB items; the client allows 2 MiB, so a larger
/// value reaches the server and comes back SERVER_ERROR (in a payload of
/// its own: it is larger than a payload).
#[test]
fn every_op_of_a_mixed_pipeline_gets_its_own_outcome() {
    let server = MemcachedServer::start(ServerOptions::default());
    let store = MemcachedStore::builder()
        .item_size_limit(2 * 1024 * 1024)
        .connect([server.addr()])
        .unwrap();
    mixed_pipeline(&store, 1_100_000);
}

/// The same with `-I 2k`: the SERVER_ERROR comes mid-payload, between
/// replies with opaques of one digit and two.
#[test]
fn every_op_of_a_mixed_pipeline_gets_its_own_outcome_mid_payload() {
    let server = MemcachedServer::start({
        let mut o = ServerOptions::default().item_size("2k");
        o.extra_args = vec!["-o".into(), "slab_chunk_max=1024".into()];
        o
    });
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    mixed_pipeline(&store, 4000);
}

fn mixed_pipeline(store: &MemcachedStore, big: usize) {
    let keys: Vec<Key> = (0..31).map(|i| k(&format!("r10:c{i}"))).collect();
    for (i, key) in keys.iter().enumerate() {
        if ![4, 5, 7, 10, 12].contains(&i) {
            store
                .set(key, i.to_string().as_bytes(), Ttl::Never)
                .unwrap();
        }
    }
    store.set(&keys[3], b"abc", Ttl::Never).unwrap();
    let big = vec![b'b'; big];
    for round in 0..3u64 {
        let mut ops: Vec<Op<'_>> = Vec::new();
        let mut want: Vec<Check> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let n = i as u64;
            let (op, check): (Op<'_>, Check) = match i {
                2 | 28 => (
                    Op::Get(key),
                    Box::new(
                        move |r| matches!(r, Ok(Reply::Item(Some(it))) if it.value == n.to_string().as_bytes()),
                    ),
                ),
                3 => (
                    Op::Incr { key, delta: 1 },
                    Box::new(|r| matches!(r, Err(Error::NonNumeric { .. }))),
                ),
                4 => (
                    Op::Get(key),
                    Box::new(|r| matches!(r, Ok(Reply::Item(None)))),
                ),
                5 => (
                    Op::Delete(key),
                    Box::new(|r| matches!(r, Ok(Reply::Applied(false)))),
                ),
                6 => (
                    Op::Add {
                        key,
                        value: b"x",
                        ttl: Ttl::Never,
                    },
                    Box::new(|r| matches!(r, Ok(Reply::Stored(Stored::NotStored)))),
                ),
                7 => (
                    Op::Incr { key, delta: 1 },
                    Box::new(|r| matches!(r, Ok(Reply::Counter(None)))),
                ),
                8 => (
                    Op::Set {
                        key,
                        value: &big,
                        ttl: Ttl::Never,
                    },
                    Box::new(|r| matches!(r, Err(Error::ValueTooLarge { .. }))),
                ),
                10 => (
                    Op::IncrOrInit {
                        key,
                        delta: 1,
                        initial: 5,
                        ttl: Ttl::Never,
                    },
                    Box::new(move |r| matches!(r, Ok(Reply::Value(v)) if *v == 5 + round)),
                ),
                11 => (
                    Op::Touch {
                        key,
                        ttl: Ttl::Never,
                    },
                    Box::new(|r| matches!(r, Ok(Reply::Applied(true)))),
                ),
                12 => (
                    Op::Add {
                        key,
                        value: b"12",
                        ttl: Ttl::Never,
                    },
                    Box::new(move |r| {
                        if round == 0 {
                            matches!(r, Ok(Reply::Stored(Stored::Stored(_))))
                        } else {
                            matches!(r, Ok(Reply::Stored(Stored::NotStored)))
                        }
                    }),
                ),
                // A text write too large, then its `mg`.
                29 => (
                    Op::Add {
                        key,
                        value: &big,
                        ttl: Ttl::Never,
                    },
                    Box::new(|r| matches!(r, Err(Error::ValueTooLarge { .. }))),
                ),
                27 => (
                    Op::Incr {
                        key: &keys[3],
                        delta: 0,
                    },
                    Box::new(|r| matches!(r, Err(Error::NonNumeric { .. }))),
                ),
                26 => (
                    Op::Decr { key, delta: 9 },
                    // 26, 17, 8, then 0.
                    Box::new(
                        move |r| matches!(r, Ok(Reply::Counter(Some(v))) if *v == 26u64.saturating_sub(9 * (round + 1))),
                    ),
                ),
                _ => {
                    // Deltas of one digit and two: i % 12.
                    let delta = n % 12;
                    (
                        Op::Incr { key, delta },
                        Box::new(
                            move |r| matches!(r, Ok(Reply::Counter(Some(v))) if *v == n + delta * (round + 1)),
                        ),
                    )
                }
            };
            ops.push(op);
            want.push(check);
        }
        let replies = store.pipeline(&ops);
        assert_eq!(replies.len(), ops.len());
        for (i, (r, check)) in replies.iter().zip(&want).enumerate() {
            assert!(check(r), "round {round}, op {i} ({}): {r:?}", ops[i].name());
        }
    }
}
