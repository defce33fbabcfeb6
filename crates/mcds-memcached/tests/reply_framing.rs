//! From an adversarial review: the in-place reply parser (04c4e18) against real memcached
//! bytes that straddle the connection's 16 KiB read buffer at every
//! offset: pipelines (`get_multi`, mixed ops) of values of random sizes
//! whose contents look like replies (`VA 2 O5\r\nhi\r\n`, `HD O7`, `MN`),
//! read back and compared, on 4 connections from threads. Random: prints
//! its seed (MCDS_TEST_SEED to repeat).

use std::sync::Arc;

use mcds_core::{Key, Op, Reply, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_testserver::MemcachedServer;

mod support;
use support::{Rng, k};

fn value(rng: &mut Rng) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"VA 2 O5\r\nhi\r\n",
        b"HD O7\r\n",
        b"MN\r\n",
        b"\r\n",
        b"\n",
        b"EN\r\n",
        b"SERVER_ERROR x\r\n",
        b"VA 99999 c1\r\n",
        b"x",
    ];
    let len = match rng.below(4) {
        0 => rng.below(20),
        1 => rng.below(600),
        2 => 16 * 1024 - 40 + rng.below(80),
        _ => rng.below(40_000),
    } as usize;
    let mut v = Vec::with_capacity(len + 20);
    while v.len() < len {
        v.extend_from_slice(PIECES[rng.below(PIECES.len() as u64) as usize]);
    }
    v.truncate(len);
    v
}

#[test]
fn values_that_look_like_replies_straddling_buffers() {
    let seed = support::seed();
    let server = MemcachedServer::start_default();
    let store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(4)
            .connect([server.addr()])
            .unwrap(),
    );
    let checked = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (store, checked) = (&store, &checked);
            s.spawn(move || {
                let mut rng = Rng(seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                for round in 0..40 {
                    let n = 1 + rng.below(60) as usize;
                    let keys: Vec<Key> =
                        (0..n).map(|i| k(&format!("t{t}:r{round}:{i}"))).collect();
                    let values: Vec<Vec<u8>> = (0..n).map(|_| value(&mut rng)).collect();
                    let sets: Vec<Op<'_>> = keys
                        .iter()
                        .zip(&values)
                        .map(|(key, v)| Op::Set {
                            key,
                            value: v,
                            ttl: Ttl::Never,
                        })
                        .collect();
                    for (i, r) in store.pipeline(&sets).into_iter().enumerate() {
                        assert!(
                            matches!(r, Ok(Reply::Cas(_))),
                            "seed {seed} t{t} round {round} set {i}: {r:?}"
                        );
                    }
                    // Reads interleaved with counters (digits inline) and misses.
                    let counter = k(&format!("t{t}:counter"));
                    let missing = k(&format!("t{t}:missing"));
                    let mut ops = Vec::new();
                    let mut expect = Vec::new();
                    for (i, key) in keys.iter().enumerate() {
                        ops.push(Op::Get(key));
                        expect.push(Some(values[i].clone()));
                        if rng.below(3) == 0 {
                            ops.push(Op::Get(&missing));
                            expect.push(None);
                        }
                    }
                    let got = store.pipeline(&ops);
                    for (i, (r, e)) in got.into_iter().zip(&expect).enumerate() {
                        match (r, e) {
                            (Ok(Reply::Item(Some(item))), Some(v)) => assert!(
                                item.value == *v,
                                "seed {seed} t{t} round {round} op {i}: value of {} bytes read as {} bytes",
                                v.len(),
                                item.value.len()
                            ),
                            (Ok(Reply::Item(None)), None) => {}
                            (r, e) => panic!(
                                "seed {seed} t{t} round {round} op {i}: {r:?}, expected {:?}",
                                e.as_ref().map(Vec::len)
                            ),
                        }
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    let c = store.incr_or_init(&counter, 1, 0, Ttl::Never).unwrap();
                    assert!(c >= round as u64, "seed {seed}: counter {c}");
                }
            });
        }
    });
    println!(
        "framing: {} replies checked",
        checked.load(std::sync::atomic::Ordering::Relaxed)
    );
}
