//! From an adversarial review: the per-shard expiry bound (`Shard::soonest`) of a no-evict
//! `MemoryStore`. Every write, touch and sweep moves the bound; a random
//! sequence on a small store, checked against a model of what is live:
//! an unexpired item never vanishes, and a write is refused for memory
//! only if the live items (plus the one written) really leave no room.
//! Single-threaded (the bound, not the locking): prints its seed.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use mcds_core::backend::item_size;
use mcds_core::{Error, Eviction, Key, ManualClock, MemoryStore, Store, Ttl};

#[test]
fn no_evict_store_expiry_bound_against_a_model() {
    // The workspace's replay variable (see `mcds_testkit::seed`).
    let seed = std::env::var("MCDS_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("seed: {seed} (MCDS_TEST_SEED={seed} replays it)");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut refusals_checked = 0;
    let mut ops = 0;
    for run in 0..40 {
        let clock = ManualClock::new(1_000_000_000);
        let shards = [1usize, 2, 4, 16][run % 4];
        let limit = 40 * item_size(4, 50);
        let store = MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .shards(shards)
            .memory_limit(limit)
            .eviction(Eviction::Error)
            .build();
        // key -> (value len, expiry second or 0)
        let mut model: std::collections::HashMap<String, (usize, u64)> = Default::default();
        let mut now = 1_000_000u64;
        for _ in 0..3000 {
            ops += 1;
            let key = format!("k{:03}", rng.random_range(0..120));
            let k = Key::new(&key).unwrap();
            let live = |m: &std::collections::HashMap<String, (usize, u64)>, now: u64| {
                m.iter()
                    .filter(|(_, (_, exp))| *exp == 0 || *exp > now)
                    .map(|(k, (len, _))| item_size(k.len(), *len))
                    .sum::<usize>()
            };
            match rng.random_range(0..10) {
                0..=4 => {
                    let len = 1 + rng.random_range(0..50) as usize;
                    let ttl = match rng.random_range(0..4) {
                        0 => Ttl::Never,
                        n => Ttl::secs(n as u32 * (1 + rng.random_range(0..3) as u32)),
                    };
                    let exp = ttl.as_secs().map_or(0, |s| now + u64::from(s));
                    match store.set(&k, &vec![b'v'; len], ttl) {
                        Ok(_) => {
                            model.insert(key, (len, exp));
                        }
                        Err(Error::OutOfMemory { .. }) => {
                            // Refused: the live items other than this key, plus it, must not fit.
                            let mut others = model.clone();
                            others.remove(&key);
                            let need = live(&others, now) + item_size(key.len(), len);
                            refusals_checked += 1;
                            assert!(
                                need > limit,
                                "seed {seed} run {run}: set {key} ({len} B) refused, but live data + it is {need} B of {limit}"
                            );
                            // memcached's set unlinks on a refusal; the embedded store
                            // keeps the old value: follow the store.
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                5 | 6 => {
                    let got = store.get(&k).unwrap();
                    let want = model
                        .get(&key)
                        .filter(|(_, exp)| *exp == 0 || *exp > now)
                        .map(|(len, _)| *len);
                    assert_eq!(
                        got.map(|i| i.value.len()),
                        want,
                        "seed {seed} run {run}: get {key} at {now}"
                    );
                }
                7 => {
                    let ttl = Ttl::secs(1 + rng.random_range(0..5) as u32);
                    let touched = store.touch(&k, ttl).unwrap();
                    let alive = model
                        .get(&key)
                        .is_some_and(|(_, exp)| *exp == 0 || *exp > now);
                    assert_eq!(touched, alive, "seed {seed} run {run}: touch {key}");
                    if touched {
                        model.get_mut(&key).unwrap().1 = now + u64::from(ttl.as_secs().unwrap());
                    }
                }
                8 => {
                    let deleted = store.delete(&k).unwrap();
                    let alive = model
                        .get(&key)
                        .is_some_and(|(_, exp)| *exp == 0 || *exp > now);
                    assert_eq!(deleted, alive, "seed {seed} run {run}: delete {key}");
                    model.remove(&key);
                }
                _ => {
                    let secs = rng.random_range(0..3);
                    clock.advance(Duration::from_secs(secs));
                    now += secs;
                }
            }
        }
    }
    println!("{ops} ops, {refusals_checked} refusals checked against the live data");
}
