//! The change-tracking recipe of ATOMICITY.md (Redis's `INCR` plus `SADD
//! keys:changed`): a producer increments a counter and appends `+name ` to
//! the current period's "changed" set in one pipelined batch; a consumer
//! reads only closed periods. Checked with 8 threads against a model of
//! what was acknowledged, on the embedded store, one memcached and a pool
//! of 3.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcds_core::{Clock, Key, ManualClock, MemoryStore, Op, Result, Store, Ttl};
use mcds_memcached::MemcachedStore;
use mcds_set::Set;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};
use rand::RngExt;

/// One period of the "changed" sets.
const PERIOD_MS: u64 = 60_000;

fn counter_key(name: &str) -> Key {
    Key::new(format!("ct:counter:{name}")).unwrap()
}

fn changed_key(period: u64) -> Key {
    Key::new(format!("ct:changed:{period}")).unwrap()
}

/// The producer's side: the increment and the mark, one batch (one round
/// trip per server). Names are plain (no whitespace, control bytes or
/// `%`), so `+name ` is exactly `Set`'s text encoding. Gives the period the
/// mark went to.
fn produce(store: &dyn Store, clock: &dyn Clock, name: &str) -> Result<u64> {
    let period = clock.now_ms() / PERIOD_MS;
    let counter = counter_key(name);
    let changed = changed_key(period);
    let mark = format!("+{name} ");
    let ops = [
        Op::IncrOrInit {
            key: &counter,
            delta: 1,
            initial: 1,
            ttl: Ttl::Never,
        },
        // Expiry only frees memory, long after the consumer read it.
        Op::AppendOrAdd {
            key: &changed,
            value: mark.as_bytes(),
            ttl: Ttl::secs(24 * 3600),
        },
    ];
    for reply in store.pipeline(&ops) {
        reply?;
    }
    Ok(period)
}

/// The consumer's side, for one closed period: the names marked in it and
/// their counters, read in one `get_multi`.
fn consume(store: Arc<dyn Store>, period: u64) -> Result<BTreeMap<String, u64>> {
    let names = Set::with_key(store.clone(), changed_key(period)).members_utf8()?;
    let keys: Vec<Key> = names.iter().map(|n| counter_key(n)).collect();
    let items = store.get_multi(&keys)?;
    Ok(names
        .into_iter()
        .zip(items)
        .map(|(name, item)| (name, item.and_then(|i| i.counter()).unwrap_or(0)))
        .collect())
}

/// What was acknowledged: (period, name) marks, and increments per name.
type Acknowledged = (BTreeSet<(u64, String)>, BTreeMap<String, u64>);

fn run(label: &str, store: Arc<dyn Store>) {
    let clock = ManualClock::new(1_800_000_000_000);
    let mut rng = mcds_testkit::seed::rng("change tracking");
    let seeds: Vec<u64> = (0..8).map(|_| rng.random()).collect();
    let acknowledged: Arc<Mutex<Acknowledged>> = Arc::default();
    std::thread::scope(|s| {
        for (t, seed) in seeds.into_iter().enumerate() {
            let (store, clock, acknowledged) = (store.clone(), clock.clone(), acknowledged.clone());
            s.spawn(move || {
                let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
                for i in 0..300 {
                    let name = format!("item{}", rng.random_range(0..40));
                    let period = produce(&*store, &clock, &name).unwrap();
                    let mut a = acknowledged.lock().unwrap();
                    a.0.insert((period, name.clone()));
                    *a.1.entry(name).or_default() += 1;
                    // One thread moves time on now and then: marks spread
                    // over several periods.
                    if t == 0 && i % 50 == 49 {
                        clock.advance(Duration::from_millis(PERIOD_MS));
                    }
                }
            });
        }
    });
    // Every period is closed, a whole period ago.
    clock.advance(Duration::from_millis(2 * PERIOD_MS));
    let (marks, increments) = Arc::try_unwrap(acknowledged).unwrap().into_inner().unwrap();
    let periods: BTreeSet<u64> = marks.iter().map(|(p, _)| *p).collect();
    let mut seen_marks = BTreeSet::new();
    let mut last_values = BTreeMap::new();
    for &period in &periods {
        assert!(
            period + 2 <= clock.now_ms() / PERIOD_MS,
            "only closed periods are read"
        );
        for (name, value) in consume(store.clone(), period).unwrap() {
            seen_marks.insert((period, name.clone()));
            last_values.insert(name, value);
        }
    }
    assert_eq!(
        seen_marks, marks,
        "{label}: every acknowledged mark, nothing else"
    );
    assert_eq!(last_values, increments, "{label}: counters exact");
    println!(
        "{label}: {} increments by 8 threads over {} periods: {} marks read back of {} acknowledged, counters exact",
        increments.values().sum::<u64>(),
        periods.len(),
        seen_marks.len(),
        marks.len()
    );
}

#[test]
fn change_tracking_on_the_embedded_store() {
    run("embedded", Arc::new(MemoryStore::new()));
}

#[test]
fn change_tracking_on_memcached() {
    let server = MemcachedServer::start_default();
    run(
        "memcached",
        Arc::new(MemcachedStore::connect(&server.addr()).unwrap()),
    );
}

#[test]
fn change_tracking_on_a_pool_of_3() {
    let pool = ServerPool::start(3, ServerOptions::default());
    run(
        "pool of 3",
        Arc::new(MemcachedStore::connect(&pool.servers_arg()).unwrap()),
    );
}
