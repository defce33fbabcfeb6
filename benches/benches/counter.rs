//! Counters: mcds against raw memcached, against DashMap, and pipelined
//! against sequential increments. Each group holds ours and its baseline,
//! measured in the same run; the comparison table is printed at the end.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use dashmap::DashMap;
use mcds_benches::{Comparison, Goal, criterion, print_table};
use mcds_core::{MemoryStore, Store};
use mcds_counter::Counter;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use memcache::exp::{MetaCommand, MetaConnection, MetaOp};

fn memcached(c: &mut Criterion, server: &MemcachedServer) {
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let counter = Counter::new(Arc::clone(&store), "bench").unwrap();
    counter.incr(1).unwrap();
    let mut raw = MetaConnection::connect(server.addr()).unwrap();
    raw.set_io_timeout(Some(Duration::from_secs(1)));
    let raw_key = b"raw:bench".to_vec();
    let init = MetaCommand::new(MetaOp::Arithmetic, raw_key.clone())
        .flag("N0")
        .flag("J0")
        .flag("D1")
        .flag("v");
    raw.execute(&init).unwrap();

    let mut g = c.benchmark_group("incr_memcached");
    g.bench_function("mcds_counter_incr", |b| {
        b.iter(|| black_box(counter.incr(1).unwrap()))
    });
    g.bench_function("raw_memcache_exp_ma", |b| {
        b.iter(|| {
            let cmd = MetaCommand::new(MetaOp::Arithmetic, raw_key.clone())
                .flag("D1")
                .flag("v");
            black_box(raw.execute(&cmd).unwrap())
        })
    });
    g.finish();

    let counters: Vec<Counter> = (0..100)
        .map(|i| Counter::new(Arc::clone(&store), &format!("many{i}")).unwrap())
        .collect();
    let batch: Vec<(&Counter, u64)> = counters.iter().map(|c| (c, 1)).collect();
    let mut g = c.benchmark_group("incr_100_memcached");
    g.bench_function("pipelined_incr_many", |b| {
        b.iter(|| {
            for r in Counter::incr_many(&batch) {
                black_box(r.unwrap());
            }
        })
    });
    g.bench_function("sequential_incr", |b| {
        b.iter(|| {
            for c in &counters {
                black_box(c.incr(1).unwrap());
            }
        })
    });
    g.finish();
}

/// `threads` threads share one counter and one map; the time per op is the
/// wall time over all ops (so 2 threads at full speed halve it).
fn memory(c: &mut Criterion, threads: u32) {
    let counter = Counter::new(Arc::new(MemoryStore::new()), "bench").unwrap();
    let map: DashMap<String, u64> = DashMap::new();
    let key = "counter:bench:value".to_string();
    let group = if threads == 1 {
        "incr_memory_1thread"
    } else {
        "incr_memory_2threads"
    };
    let mut g = c.benchmark_group(group);
    g.bench_function("mcds_counter_incr", |b| {
        b.iter_custom(|iters| on_threads(threads, iters, || black_box(counter.incr(1).unwrap())))
    });
    g.bench_function("dashmap_entry", |b| {
        b.iter_custom(|iters| {
            on_threads(threads, iters, || {
                let mut v = map.entry(key.clone()).or_insert(0);
                *v += 1;
                black_box(*v)
            })
        })
    });
    g.finish();
}

/// Run `op` `iters` times on each of `threads` threads at once; the wall
/// time per op over all of them.
fn on_threads<T>(threads: u32, iters: u64, op: impl Fn() -> T + Sync) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..iters {
                    op();
                }
            });
        }
    });
    start.elapsed() / threads
}

fn main() {
    let server = MemcachedServer::start_default();
    let mut c = criterion();
    memcached(&mut c, &server);
    memory(&mut c, 1);
    memory(&mut c, 2);
    c.final_summary();
    print_table(
        "counters",
        &[
            Comparison {
                name: "Counter::incr vs raw memcache::exp ma (memcached)",
                ours: ("incr_memcached", "mcds_counter_incr"),
                baseline: ("incr_memcached", "raw_memcache_exp_ma"),
                goal: Goal::SpeedRatio(0.9),
            },
            Comparison {
                name: "incr_many(100) pipelined vs 100 sequential incr",
                ours: ("incr_100_memcached", "pipelined_incr_many"),
                baseline: ("incr_100_memcached", "sequential_incr"),
                goal: Goal::SpeedRatio(5.0),
            },
            Comparison {
                name: "Counter::incr (MemoryStore) vs DashMap, 1 thread",
                ours: ("incr_memory_1thread", "mcds_counter_incr"),
                baseline: ("incr_memory_1thread", "dashmap_entry"),
                goal: Goal::SpeedRatio(0.5),
            },
            Comparison {
                name: "Counter::incr (MemoryStore) vs DashMap, 2 threads",
                ours: ("incr_memory_2threads", "mcds_counter_incr"),
                baseline: ("incr_memory_2threads", "dashmap_entry"),
                goal: Goal::SpeedRatio(0.5),
            },
        ],
    );
}
