//! mcds side by side with its peers, against real servers the bench starts
//! itself: a raw `TcpStream` speaking memcached's meta protocol (the
//! floor), redis-rs on redis-server (sync connections and one
//! `MultiplexedConnection` shared by tokio tasks) and the `memcache`
//! crate. Everything runs in one process, in interleaved rounds: each
//! round runs every case's arms back to back (mcds and its peers, in an
//! order that rotates from round to round), and the table gives each arm's
//! median throughput over the rounds and the ratio mcds / peer (above 1:
//! mcds is faster). Not a timed test: nothing is asserted about speed.
//!
//! ```text
//! cargo bench -p mcds-benches --bench peers   # a measuring run; prints the guide's table
//! cargo test  -p mcds-benches --benches       # smoke: one tiny round of everything
//! PEERS_FILTER="1 caller" cargo bench -p mcds-benches --bench peers   # only matching cases
//! PEERS_VERBOSE=1 cargo bench -p mcds-benches --bench peers   # and every round's figures
//! PEERS_README=1 cargo bench -p mcds-benches --bench peers    # and write the table into docs/src/benchmarks.md
//! PEERS_IDLE=1 cargo bench -p mcds-benches --bench peers      # let the VM halt idle CPUs (see `FastMode`)
//! PEERS_ARMS="mcds incr" strace -c -f target/release/deps/peers-* --bench   # one arm alone
//! PEERS_SCALE=20 PEERS_ARMS="mcds many" perf record -g target/release/deps/peers-* --bench   # 20× the work
//! # the client's instructions (repeatable whatever the VM's mode): compare the two
//! # functions' inclusive counts in `callgrind_annotate --inclusive=yes callgrind.out.*`
//! PEERS_FILTER="1 caller" PEERS_ARMS=incr valgrind --tool=callgrind --collect-atstart=no \
//!   --toggle-collect='*Counter::incr*' --toggle-collect='*Raw::exchange*' target/release/deps/peers-* --bench
//! ```
//!
//! redis-server comes from `PATH` (or `$MCDS_REDIS_BIN`); without it the
//! redis arms are skipped with a message and the rest still runs. The
//! Python row (mcds's `Counter.incr` against pylibmc) runs in a Python
//! process the bench drives (`mcds_benches::python`), when
//! `$PEERS_PYTHON` names an interpreter that has both:
//!
//! ```text
//! PEERS_PYTHON=$(scripts/bench-python-env.sh) cargo bench -p mcds-benches --bench peers   # every row
//! ```
//! memcached is started through `mcds_testkit::MemcachedServer`, redis
//! through `mcds_testkit::spawn_tied`: both die with the bench. The
//! servers, the raw socket and the rounds are `mcds_benches::peers`'s,
//! shared with the `timeseries_peers` bench.

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use mcds_benches::is_bench_run;
use mcds_benches::peers::{
    Arm, FastMode, Raw, RedisServer, arm, counter_keys, ma_create, ma_incr, median, mode_line,
    raw_incr_arm, run_rounds, thousands,
};
use mcds_benches::python::PythonArms;
use mcds_core::{MemoryStore, QuorumStore, Store};
use mcds_counter::Counter;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_sketch::{HyperLogLog, ScalableBloomFilter};
use mcds_testkit::MemcachedServer;
use redis::aio::MultiplexedConnection;

/// Concurrency levels of the many-callers cases.
const LEVELS: [usize; 3] = [4, 16, 64];

/// Round sizes: the number of rounds, and the operations one arm performs
/// per round, by kind of arm.
#[derive(Clone, Copy)]
struct Sizes {
    rounds: usize,
    /// One caller, one round trip per op.
    single: u64,
    /// N callers together (divisible by every level).
    concurrent: u64,
    /// Thousands of pipelined increments (in batches of 100 or 1,000).
    batches: u64,
    /// HyperLogLog adds.
    hll: u64,
    /// Scalable Bloom filter adds one by one, and per `add_many` batch.
    sbf_one: u64,
    sbf_many: u64,
    /// In-process increments.
    embedded: u64,
}

impl Sizes {
    fn get() -> Sizes {
        if is_bench_run() {
            // Many short rounds: on this VM the round trip flips between
            // two modes within seconds (see the mode line), and short
            // rounds give every arm the same mixture of both.
            // $PEERS_SCALE multiplies every round's work (for profiling).
            let scale = std::env::var("PEERS_SCALE")
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(1)
                .max(1);
            Sizes {
                rounds: 51,
                single: 300 * scale,
                concurrent: 1_280 * scale,
                batches: 6 * scale,
                hll: 150 * scale,
                sbf_one: 100 * scale,
                sbf_many: 5_000 * scale,
                embedded: 200_000 * scale,
            }
        } else {
            Sizes {
                rounds: 1,
                single: 10,
                concurrent: 64,
                batches: 1,
                hll: 5,
                sbf_one: 5,
                sbf_many: 50,
                embedded: 1_000,
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Cases: their arms and table rows.

/// One line of the table: an mcds arm (or `None`: no async API yet)
/// against a peer arm.
struct Row {
    case: String,
    peer: &'static str,
    mcds: Option<String>,
    peer_arm: String,
}

/// Run `op` `per_thread` times on one thread per state, all started
/// together; the wall time from the first one's start to the last one's
/// end, as the threads read the clock (the thread that started them may
/// not run again until they are done: with as many busy threads as cores,
/// a start taken there came after the work).
fn on_threads<S: Send>(states: &mut [S], per_thread: u64, op: impl Fn(&mut S) + Sync) -> Duration {
    let barrier = Barrier::new(states.len());
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .iter_mut()
            .map(|state| {
                let (barrier, op) = (&barrier, &op);
                s.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    for _ in 0..per_thread {
                        op(state);
                    }
                    (started, Instant::now())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = spans.iter().map(|s| s.0).min();
    let last = spans.iter().map(|s| s.1).max();
    match (first, last) {
        (Some(first), Some(last)) => last - first,
        _ => Duration::ZERO,
    }
}

/// `INCR` of each key `per_task` times, one tokio task per key, all on
/// clones of the one multiplexed connection.
fn on_tasks(
    rt: &tokio::runtime::Runtime,
    con: &MultiplexedConnection,
    keys: &[String],
    per_task: u64,
) -> Duration {
    rt.block_on(async {
        let started = Instant::now();
        let tasks: Vec<_> = keys
            .iter()
            .map(|key| {
                let (mut con, key) = (con.clone(), key.clone());
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        let v: i64 = redis::cmd("INCR")
                            .arg(&key)
                            .query_async(&mut con)
                            .await
                            .unwrap();
                        black_box(v);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        started.elapsed()
    })
}

/// `Counter::incr_async(1)` `per_task` times on each counter, one tokio
/// task per counter, all on one store.
fn on_mcds_tasks(rt: &tokio::runtime::Runtime, counters: &[Counter], per_task: u64) -> Duration {
    rt.block_on(async {
        let started = Instant::now();
        let tasks: Vec<_> = counters
            .iter()
            .map(|c| {
                let c = c.clone();
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        black_box(c.incr_async(1).await.unwrap());
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        started.elapsed()
    })
}

/// Replace the guide's peers table (docs/src/benchmarks.md) (between `<!-- peers:begin -->` and
/// `<!-- peers:end -->`) with `table`.
fn write_readme(table: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/benchmarks.md");
    let readme = std::fs::read_to_string(path).expect("docs/src/benchmarks.md");
    let (begin, end) = ("<!-- peers:begin -->\n", "<!-- peers:end -->");
    let (Some(b), Some(e)) = (readme.find(begin), readme.find(end)) else {
        println!("(PEERS_README: docs/src/benchmarks.md has no peers markers; not written)");
        return;
    };
    let updated = format!("{}{begin}{table}{}", &readme[..b], &readme[e..]);
    std::fs::write(path, updated).expect("write docs/src/benchmarks.md");
    println!("(PEERS_README: the table is written into docs/src/benchmarks.md)");
}

fn row(case: &str, peer: &'static str, mcds: Option<&str>, peer_arm: &str) -> Row {
    Row {
        case: case.to_string(),
        peer,
        mcds: mcds.map(str::to_string),
        peer_arm: peer_arm.to_string(),
    }
}

fn keys(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn main() {
    let sizes = Sizes::get();
    let filter = std::env::var("PEERS_FILTER").ok();
    let wanted = |case: &str| filter.as_deref().is_none_or(|f| case.contains(f));

    let memcached = MemcachedServer::start_default();
    let addr = memcached.addr();
    let redis = RedisServer::start();
    // The VM's fast mode, held for the run (a smoke run measures nothing).
    let fast = is_bench_run().then(FastMode::hold);
    let held = fast.as_ref().is_some_and(FastMode::is_held);
    let redis_client = redis
        .as_ref()
        .map(|r| redis::Client::open(r.url()).expect("redis URL"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mux: Option<MultiplexedConnection> = redis_client.as_ref().map(|c| {
        rt.block_on(c.get_multiplexed_async_connection())
            .expect("multiplexed connection to redis")
    });
    let sync_con = || {
        redis_client
            .as_ref()
            .map(|c| c.get_connection().expect("sync connection to redis"))
    };

    // Everything the arms borrow lives here, before them.
    // $PEERS_CONNECTIONS: another number of connections per server for the
    // default store (to compare; the table then says so in its mode line).
    let mut builder = MemcachedStore::builder();
    if let Some(n) = std::env::var("PEERS_CONNECTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        println!("the default store has {n} connections per server ($PEERS_CONNECTIONS)");
        builder = builder.connections_per_server(n);
    }
    let store_mc = Arc::new(builder.connect([addr.as_str()]).unwrap());
    let store: Arc<dyn Store> = store_mc.clone();
    let counter = Counter::new(Arc::clone(&store), "peers").unwrap();
    // The store keeps up to 4 connections per server by default (2 carry
    // the batches); the same store with 2, the default before, shows what
    // the other two are worth at each number of callers.
    const NARROW: usize = 2;
    let narrow_store = Arc::new(
        MemcachedStore::builder()
            .connections_per_server(NARROW)
            .connect([addr.as_str()])
            .unwrap(),
    );
    let narrow: Arc<dyn Store> = narrow_store.clone();
    // The same store with async calls on the connections' helper threads
    // (what they were before the `tokio` feature): the async rows' own
    // baseline, in the same run.
    let helper_store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .drive_on_runtime(false)
            .connect([addr.as_str()])
            .unwrap(),
    );
    let many: Vec<Counter> = (0..100)
        .map(|i| Counter::new(Arc::clone(&store), &format!("many{i}")).unwrap())
        .collect();
    let hll = HyperLogLog::new(Arc::clone(&store), "peers").unwrap();
    // A first layer of 10,000: the one-by-one arm stays in it; the batched
    // arm (51 rounds of 5,000) grows to about 5 layers, which its probes
    // then read too, as a growing filter's do.
    let sbf = |name: &str| ScalableBloomFilter::new(Arc::clone(&store), name, 10_000, 0.01);
    let (sbf_one, sbf_many) = (sbf("peers-one").unwrap(), sbf("peers-many").unwrap());
    let embedded = Counter::new(Arc::new(MemoryStore::new()), "peers").unwrap();
    let map: DashMap<String, u64> = DashMap::new();
    let map_key = embedded.key().to_string();
    map.insert(map_key.clone(), 0);
    // The Python arms' process, when `$PEERS_PYTHON` names an interpreter
    // (see `mcds_benches::python`).
    let python_case = "Python `Counter.incr`, 1 caller";
    let python = if wanted(python_case) {
        match PythonArms::start(&addr) {
            Ok(arms) => Some(RefCell::new(arms)),
            Err(why) => {
                println!("the Python row is left out: {why}");
                None
            }
        }
    } else {
        None
    };

    let mut arms: Vec<Vec<Arm<'_>>> = Vec::new(); // groups, compared within
    let mut rows: Vec<Row> = Vec::new();

    // One caller.
    let case = "`Counter::incr`, 1 caller";
    if wanted(case) {
        let mut group = Vec::new();
        group.push(arm(
            "mcds incr",
            sizes.single,
            Box::new(|n| {
                let started = Instant::now();
                for _ in 0..n {
                    black_box(counter.incr(1).unwrap());
                }
                started.elapsed()
            }),
        ));
        group.push(raw_incr_arm(
            &addr,
            // As long as the counter's name, "peers".
            &counter_keys("rawp", 1)[0],
            "raw incr",
            sizes.single,
        ));
        let crate_client =
            memcache::Client::connect(format!("memcache://{addr}")).expect("memcache crate");
        group.push(arm(
            "memcache crate incr",
            sizes.single,
            Box::new(move |n| {
                let started = Instant::now();
                for _ in 0..n {
                    black_box(crate_client.increment("memcache-crate:one", 1).unwrap());
                }
                started.elapsed()
            }),
        ));
        rows.push(row(
            case,
            "raw socket `ma` (floor)",
            Some("mcds incr"),
            "raw incr",
        ));
        rows.push(row(
            case,
            "`memcache` crate `Client::increment`",
            Some("mcds incr"),
            "memcache crate incr",
        ));
        if let Some(mut con) = sync_con() {
            group.push(arm(
                "redis sync incr",
                sizes.single,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        let v: i64 = redis::cmd("INCR").arg("one").query(&mut con).unwrap();
                        black_box(v);
                    }
                    started.elapsed()
                }),
            ));
            rows.push(row(
                case,
                "redis-rs `INCR`, sync `Connection`",
                Some("mcds incr"),
                "redis sync incr",
            ));
        }
        {
            let rt = &rt;
            let one = vec![Counter::new(Arc::clone(&store), "async1").unwrap()];
            group.push(arm(
                "mcds async 1",
                sizes.single,
                Box::new(move |n| on_mcds_tasks(rt, &one, n)),
            ));
            rows.push(row(
                "`Counter::incr_async`, 1 task",
                "raw socket `ma` (floor)",
                Some("mcds async 1"),
                "raw incr",
            ));
            let one = vec![Counter::new(Arc::clone(&helper_store), "async1h").unwrap()];
            group.push(arm(
                "mcds async 1 helper",
                sizes.single,
                Box::new(move |n| on_mcds_tasks(rt, &one, n)),
            ));
            rows.push(row(
                "`Counter::incr_async`, 1 task",
                "mcds, `drive_on_runtime(false)` (helper threads)",
                Some("mcds async 1"),
                "mcds async 1 helper",
            ));
        }
        if let Some(mux) = &mux {
            let rt = &rt;
            let task_keys = keys("task1:", 1);
            group.push(arm(
                "redis mux 1",
                sizes.single,
                Box::new(move |n| on_tasks(rt, mux, &task_keys, n)),
            ));
            rows.push(row(
                "`Counter::incr_async`, 1 task",
                "redis-rs `INCR`, `MultiplexedConnection`",
                Some("mcds async 1"),
                "redis mux 1",
            ));
        }
        arms.push(group);
    }

    // N callers: threads on one store (and N connections or one
    // multiplexed connection for the peers), then async tasks.
    for n in LEVELS {
        let case = format!("`Counter::incr`, {n} threads, one store");
        if !wanted(&case) {
            continue;
        }
        let per = sizes.concurrent / n as u64;
        let mut group = Vec::new();
        for (id, store) in [("mcds", &store), ("mcds narrow", &narrow)] {
            let mut counters: Vec<Counter> = (0..n)
                .map(|i| Counter::new(Arc::clone(store), &format!("t{n}-{i}")).unwrap())
                .collect();
            group.push(arm(
                &format!("{id} {n}"),
                per * n as u64,
                Box::new(move |_| {
                    on_threads(&mut counters, per, |c| {
                        black_box(c.incr(1).unwrap());
                    })
                }),
            ));
        }
        {
            let rt = &rt;
            let counters: Vec<Counter> = (0..n)
                .map(|i| Counter::new(Arc::clone(&store), &format!("a{n}-{i}")).unwrap())
                .collect();
            group.push(arm(
                &format!("mcds async {n}"),
                per * n as u64,
                Box::new(move |_| on_mcds_tasks(rt, &counters, per)),
            ));
            let helper: Vec<Counter> = (0..n)
                .map(|i| Counter::new(Arc::clone(&helper_store), &format!("h{n}-{i}")).unwrap())
                .collect();
            group.push(arm(
                &format!("mcds async {n} helper"),
                per * n as u64,
                Box::new(move |_| on_mcds_tasks(rt, &helper, per)),
            ));
        }
        // As long as the mcds counters' names, "a{n}-{i}".
        let raw_keys = counter_keys(&format!("r{n}-"), n);
        let mut raws: Vec<(Raw, Vec<u8>)> = raw_keys
            .iter()
            .map(|k| {
                let mut raw = Raw::connect(&addr);
                let key = std::slice::from_ref(k);
                ma_create(&mut raw, key);
                (raw, ma_incr(key))
            })
            .collect();
        group.push(arm(
            &format!("raw {n}"),
            per * n as u64,
            Box::new(move |_| {
                on_threads(&mut raws, per, |(raw, command)| {
                    black_box(raw.exchange(command, 1));
                })
            }),
        ));
        // One socket, N `ma` per write: what N callers' requests cost
        // when they go out together (the async rows' other floor).
        let mut burst_raw = Raw::connect(&addr);
        let burst_keys = counter_keys(&format!("b{n}-"), n);
        ma_create(&mut burst_raw, &burst_keys);
        let burst = ma_incr(&burst_keys);
        group.push(arm(
            &format!("raw burst {n}"),
            per * n as u64,
            Box::new(move |_| {
                let started = Instant::now();
                for _ in 0..per {
                    black_box(burst_raw.exchange(&burst, n));
                }
                started.elapsed()
            }),
        ));
        let mcds = format!("mcds {n}");
        rows.push(row(
            &case,
            "N raw sockets `ma` (floor)",
            Some(&mcds),
            &format!("raw {n}"),
        ));
        rows.push(row(
            &format!("`Counter::incr_async`, {n} tasks, one store"),
            "raw pipelined burst of N `ma`, one socket",
            Some(&format!("mcds async {n}")),
            &format!("raw burst {n}"),
        ));
        rows.push(row(
            &format!("`Counter::incr_async`, {n} tasks, one store"),
            "mcds, `drive_on_runtime(false)` (helper threads)",
            Some(&format!("mcds async {n}")),
            &format!("mcds async {n} helper"),
        ));
        rows.push(row(
            &format!("`Counter::incr_async`, {n} tasks, one store"),
            "N raw sockets `ma` (floor)",
            Some(&format!("mcds async {n}")),
            &format!("raw {n}"),
        ));
        rows.push(row(
            &format!("{case} with `connections_per_server({NARROW})`"),
            "N raw sockets `ma` (floor)",
            Some(&format!("mcds narrow {n}")),
            &format!("raw {n}"),
        ));
        if redis_client.is_some() {
            let mut cons: Vec<(redis::Connection, String)> = keys(&format!("t{n}-"), n)
                .into_iter()
                .map(|k| (sync_con().unwrap(), k))
                .collect();
            group.push(arm(
                &format!("redis sync {n}"),
                per * n as u64,
                Box::new(move |_| {
                    on_threads(&mut cons, per, |(con, key)| {
                        let v: i64 = redis::cmd("INCR").arg(&*key).query(con).unwrap();
                        black_box(v);
                    })
                }),
            ));
            rows.push(row(
                &case,
                "redis-rs, N sync connections",
                Some(&mcds),
                &format!("redis sync {n}"),
            ));
        }
        if let Some(mux) = &mux {
            let rt = &rt;
            let task_keys = keys(&format!("task{n}-"), n);
            group.push(arm(
                &format!("redis mux {n}"),
                per * n as u64,
                Box::new(move |_| on_tasks(rt, mux, &task_keys, per)),
            ));
            rows.push(row(
                &case,
                "redis-rs, one `MultiplexedConnection`, N tokio tasks",
                Some(&mcds),
                &format!("redis mux {n}"),
            ));
            rows.push(row(
                &format!("`Counter::incr_async`, {n} tasks, one store"),
                "redis-rs, one `MultiplexedConnection`, N tokio tasks",
                Some(&format!("mcds async {n}")),
                &format!("redis mux {n}"),
            ));
        }
        arms.push(group);
    }

    // Pipelines of 100 and 1,000 increments.
    for (case, width) in [
        ("`Counter::incr_many`, 100 counters", 100usize),
        ("`Counter::incr_many`, 1,000 counters", 1_000),
    ] {
        if !wanted(case) {
            continue;
        }
        // The same number of increments per round for both widths.
        let ops = sizes.batches * 1_000;
        let batches = ops / width as u64;
        let mut group = Vec::new();
        let (mcds_id, raw_id, redis_id) = (
            format!("mcds many {width}"),
            format!("raw many {width}"),
            format!("redis many {width}"),
        );
        let counters: Vec<Counter> = if width == 100 {
            many.clone()
        } else {
            (0..width)
                .map(|i| Counter::new(Arc::clone(&store), &format!("wide{i}")).unwrap())
                .collect()
        };
        group.push(arm(
            &mcds_id,
            batches * width as u64,
            Box::new(move |_| {
                let batch: Vec<(&Counter, u64)> = counters.iter().map(|c| (c, 1)).collect();
                let started = Instant::now();
                for _ in 0..batches {
                    for r in Counter::incr_many(&batch) {
                        black_box(r.unwrap());
                    }
                }
                started.elapsed()
            }),
        ));
        let mut raw = Raw::connect(&addr);
        // As long as the mcds counters' names, "many{i}".
        let raw_keys = counter_keys(&format!("rany{width}-"), width);
        ma_create(&mut raw, &raw_keys);
        let burst = ma_incr(&raw_keys);
        group.push(arm(
            &raw_id,
            batches * width as u64,
            Box::new(move |_| {
                let started = Instant::now();
                for _ in 0..batches {
                    black_box(raw.exchange(&burst, width));
                }
                started.elapsed()
            }),
        ));
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        rows.push(row(
            case,
            leak(format!("raw pipelined burst of {width} `ma` (floor)")),
            Some(&mcds_id),
            &raw_id,
        ));
        if let Some(mut con) = sync_con() {
            let mut pipe = redis::pipe();
            for k in keys(&format!("many{width}-"), width) {
                pipe.cmd("INCR").arg(k);
            }
            group.push(arm(
                &redis_id,
                batches * width as u64,
                Box::new(move |_| {
                    let started = Instant::now();
                    for _ in 0..batches {
                        let v: Vec<i64> = pipe.query(&mut con).unwrap();
                        black_box(v);
                    }
                    started.elapsed()
                }),
            ));
            rows.push(row(
                case,
                leak(format!("redis-rs pipeline of {width} `INCR`")),
                Some(&mcds_id),
                &redis_id,
            ));
        }
        arms.push(group);
    }

    // HyperLogLog: the same elements, one new element per add.
    let case = "`HyperLogLog::add`, 1 caller";
    if wanted(case) {
        if let Some(mut con) = sync_con() {
            let mut group = Vec::new();
            let hll = &hll;
            let mut next = 0u64;
            group.push(arm(
                "mcds hll",
                sizes.hll,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        next += 1;
                        black_box(hll.add(format!("element{next}")).unwrap());
                    }
                    started.elapsed()
                }),
            ));
            let mut next = 0u64;
            group.push(arm(
                "redis hll",
                sizes.hll,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        next += 1;
                        let v: i64 = redis::cmd("PFADD")
                            .arg("hll")
                            .arg(format!("element{next}"))
                            .query(&mut con)
                            .unwrap();
                        black_box(v);
                    }
                    started.elapsed()
                }),
            ));
            rows.push(row(case, "redis-rs `PFADD`", Some("mcds hll"), "redis hll"));
            arms.push(group);
        }
    }

    // HyperLogLog::count of 100,000 elements against PFCOUNT (loaded
    // once: locally built registers merged in, PFADD in chunks).
    let case = "`HyperLogLog::count` of 100,000";
    if wanted(case)
        && let Some(mut con) = sync_con()
    {
        let counted = HyperLogLog::new(Arc::clone(&store), "peers-count").unwrap();
        let mut local = mcds_sketch::hll::Registers::new();
        let elements: Vec<String> = (0..100_000).map(|i| format!("e{i}")).collect();
        for e in &elements {
            local.insert(e.as_bytes());
        }
        counted.merge_registers(&local).unwrap();
        for chunk in elements.chunks(1000) {
            let _: i64 = redis::cmd("PFADD")
                .arg("peers-count")
                .arg(chunk)
                .query(&mut con)
                .unwrap();
        }
        // The floor: the segments' bytes read with one write of `mg <key>
        // v` on a raw socket, nothing decoded (what any client of
        // memcached must move to count).
        let segments: Vec<u8> = counted
            .keys()
            .iter()
            .flat_map(|k| [&b"mg "[..], k.as_bytes(), b" v\r\n"].concat())
            .collect();
        let n_segments = counted.keys().len();
        let mut raw_segments = Raw::connect(&addr);
        let counted = Box::leak(Box::new(counted));
        arms.push(vec![
            arm(
                "raw hll segments",
                sizes.single,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        black_box(raw_segments.exchange_values(&segments, n_segments));
                    }
                    started.elapsed()
                }),
            ),
            arm(
                "mcds hll count",
                sizes.single,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        black_box(counted.count().unwrap());
                    }
                    started.elapsed()
                }),
            ),
            arm(
                "redis pfcount",
                sizes.single,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        let v: i64 = redis::cmd("PFCOUNT")
                            .arg("peers-count")
                            .query(&mut con)
                            .unwrap();
                        black_box(v);
                    }
                    started.elapsed()
                }),
            ),
        ]);
        rows.push(row(
            case,
            "redis-rs `PFCOUNT`",
            Some("mcds hll count"),
            "redis pfcount",
        ));
        rows.push(row(
            case,
            "raw `mg` of its 16 segments, one write (floor)",
            Some("mcds hll count"),
            "raw hll segments",
        ));
        rows.push(row(
            "raw `mg` of the 16 segments `count` reads (the floor, in the mcds column)",
            "redis-rs `PFCOUNT`",
            Some("raw hll segments"),
            "redis pfcount",
        ));
    }

    // Scalable Bloom filter: add_many of a batch against add one by one,
    // new elements each (throughput per element).
    let case = "`ScalableBloomFilter::add_many` (batches of 5,000)";
    if wanted(case) {
        let (sbf_one, sbf_many) = (&sbf_one, &sbf_many);
        let mut next_one = 0u64;
        let mut next_many = 0u64;
        arms.push(vec![
            arm(
                "sbf add_many",
                sizes.sbf_many,
                Box::new(move |n| {
                    let batch: Vec<String> = (next_many..next_many + n)
                        .map(|i| format!("element{i}"))
                        .collect();
                    next_many += n;
                    let started = Instant::now();
                    black_box(sbf_many.add_many(&batch).unwrap());
                    started.elapsed()
                }),
            ),
            arm(
                "sbf add",
                sizes.sbf_one,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        next_one += 1;
                        black_box(sbf_one.add(format!("element{next_one}")).unwrap());
                    }
                    started.elapsed()
                }),
            ),
        ]);
        rows.push(row(
            case,
            "`ScalableBloomFilter::add` one by one",
            Some("sbf add_many"),
            "sbf add",
        ));
    }

    // In process: MemoryStore against a DashMap.
    let case = "`Counter::incr` on `MemoryStore`, 1 caller";
    if wanted(case) {
        let (embedded, map, map_key) = (&embedded, &map, map_key.as_str());
        arms.push(vec![
            arm(
                "mcds embedded",
                sizes.embedded,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        black_box(embedded.incr(1).unwrap());
                    }
                    started.elapsed()
                }),
            ),
            arm(
                "dashmap",
                sizes.embedded,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        let mut v = map.get_mut(map_key).unwrap();
                        *v += 1;
                        black_box(*v);
                    }
                    started.elapsed()
                }),
            ),
        ]);
        rows.push(row(
            case,
            "`DashMap::get_mut(&str)` increment",
            Some("mcds embedded"),
            "dashmap",
        ));
    }

    // In process, 2 threads: each on a key of its own, then both on one
    // key (what the threads share shows here: a store-wide counter every
    // operation writes halves the speed of two threads on their own keys).
    for (case, own) in [
        (
            "`Counter::incr` on `MemoryStore`, 2 threads, own keys",
            true,
        ),
        (
            "`Counter::incr` on `MemoryStore`, 2 threads, one key",
            false,
        ),
    ] {
        if !wanted(case) {
            continue;
        }
        let tag = if own { "own" } else { "one" };
        let shared = Arc::new(MemoryStore::new());
        let names = if own { ["e2-a", "e2-b"] } else { ["e2", "e2"] };
        let mut counters: Vec<Counter> = names
            .iter()
            .map(|name| Counter::new(shared.clone() as Arc<dyn Store>, name).unwrap())
            .collect();
        let map2: Arc<DashMap<String, u64>> = Arc::new(DashMap::new());
        let mut map_keys: Vec<(Arc<DashMap<String, u64>>, String)> = counters
            .iter()
            .map(|c| {
                map2.insert(c.key().to_string(), 0);
                (Arc::clone(&map2), c.key().to_string())
            })
            .collect();
        let per = sizes.embedded / 2;
        let (mcds_id, map_id) = (format!("mcds embedded 2 {tag}"), format!("dashmap 2 {tag}"));
        arms.push(vec![
            arm(
                &mcds_id,
                per * 2,
                Box::new(move |_| {
                    on_threads(&mut counters, per, |c| {
                        black_box(c.incr(1).unwrap());
                    })
                }),
            ),
            arm(
                &map_id,
                per * 2,
                Box::new(move |_| {
                    on_threads(&mut map_keys, per, |(map, key)| {
                        let mut v = map.get_mut(key.as_str()).unwrap();
                        *v += 1;
                        black_box(*v);
                    })
                }),
            ),
        ]);
        rows.push(row(
            case,
            "`DashMap::get_mut(&str)` increment, 2 threads",
            Some(&mcds_id),
            &map_id,
        ));
    }

    // Locks: a quorum over 3 memcached servers (`?quorum`) against the
    // single-server lock, and against Redlock as redis users run it: `SET
    // key token NX PX ttl` to 3 redis-servers at once (redis-rs,
    // multiplexed, on tokio), granted on 2, released on all 3 by the
    // usual script (delete only if the value is still the token). Each op
    // is an acquire and its release, one caller.
    let lock_case = "`Lock::try_acquire` + `release`, 1 caller";
    let quorum_servers: Vec<MemcachedServer> = if wanted(lock_case) {
        (0..3).map(|_| MemcachedServer::start_default()).collect()
    } else {
        Vec::new()
    };
    let redlock_servers: Vec<RedisServer> = if wanted(lock_case) && redis.is_some() {
        (0..3).filter_map(|_| RedisServer::start()).collect()
    } else {
        Vec::new()
    };
    if wanted(lock_case) {
        let members: Vec<(String, Arc<dyn Store>)> = quorum_servers
            .iter()
            .map(|s| {
                let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&s.addr()).unwrap());
                (s.addr(), store)
            })
            .collect();
        let quorum: Arc<dyn Store> = Arc::new(QuorumStore::new(members).unwrap());
        let ttl = Duration::from_secs(30);
        let locks = [
            (
                "mcds quorum lock",
                Lock::new(Arc::clone(&quorum), "peers-q", ttl).unwrap(),
            ),
            (
                "mcds quorum lock fenced",
                Lock::new(Arc::clone(&quorum), "peers-qf", ttl)
                    .unwrap()
                    .with_fencing(true),
            ),
            (
                "mcds single lock",
                Lock::new(Arc::clone(&store), "peers-1", ttl).unwrap(),
            ),
        ];
        let mut group = Vec::new();
        for (id, lock) in locks {
            group.push(arm(
                id,
                sizes.single,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        let guard = lock.try_acquire().unwrap().expect("free");
                        black_box(guard.release().unwrap());
                    }
                    started.elapsed()
                }),
            ));
        }
        {
            // The same quorum lock, async, on a task of the tokio runtime
            // (the `tokio` feature: each server's exchange on the runtime).
            let rt = &rt;
            let lock = Arc::new(Lock::new(Arc::clone(&quorum), "peers-qa", ttl).unwrap());
            group.push(arm(
                "mcds quorum lock async",
                sizes.single,
                Box::new(move |n| {
                    let lock = Arc::clone(&lock);
                    rt.block_on(rt.spawn(async move {
                        let started = Instant::now();
                        for _ in 0..n {
                            let guard = lock.try_acquire_async().await.unwrap().expect("free");
                            black_box(guard.release_async().await.unwrap());
                        }
                        started.elapsed()
                    }))
                    .unwrap()
                }),
            ));
        }
        if redlock_servers.len() == 3 {
            let rt = &rt;
            let cons: Vec<MultiplexedConnection> = redlock_servers
                .iter()
                .map(|r| {
                    let client = redis::Client::open(r.url()).expect("redis URL");
                    rt.block_on(client.get_multiplexed_async_connection())
                        .expect("multiplexed connection to redis")
                })
                .collect();
            group.push(arm(
                "redlock 3",
                sizes.single,
                Box::new(move |n| {
                    const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
                    rt.block_on(async {
                        let started = Instant::now();
                        for i in 0..n {
                            let token = format!("token-{i}");
                            let set = |c: &MultiplexedConnection| {
                                let (mut c, token) = (c.clone(), token.clone());
                                async move {
                                    redis::cmd("SET")
                                        .arg("redlock")
                                        .arg(token)
                                        .arg("NX")
                                        .arg("PX")
                                        .arg(30_000)
                                        .query_async::<Option<String>>(&mut c)
                                        .await
                                }
                            };
                            let (a, b, c) = tokio::join!(set(&cons[0]), set(&cons[1]), set(&cons[2]));
                            let granted = [a, b, c]
                                .iter()
                                .filter(|r| matches!(r, Ok(Some(_))))
                                .count();
                            assert!(granted >= 2, "redlock refused: {granted} of 3");
                            let del = |c: &MultiplexedConnection| {
                                let (mut c, token) = (c.clone(), token.clone());
                                async move {
                                    redis::cmd("EVAL")
                                        .arg(RELEASE)
                                        .arg(1)
                                        .arg("redlock")
                                        .arg(token)
                                        .query_async::<i64>(&mut c)
                                        .await
                                }
                            };
                            let (a, b, c) = tokio::join!(del(&cons[0]), del(&cons[1]), del(&cons[2]));
                            black_box((a.unwrap(), b.unwrap(), c.unwrap()));
                        }
                        started.elapsed()
                    })
                }),
            ));
        }
        arms.push(group);
        rows.push(row(
            lock_case,
            "the single-server `Lock` (one memcached)",
            Some("mcds quorum lock"),
            "mcds single lock",
        ));
        if redlock_servers.len() == 3 {
            rows.push(row(
                lock_case,
                "Redlock: redis-rs `SET NX PX` to 3 redis-servers at once, release script",
                Some("mcds quorum lock"),
                "redlock 3",
            ));
            rows.push(row(
                "`Lock::try_acquire_async` + `release_async`, 1 task",
                "Redlock: redis-rs `SET NX PX` to 3 redis-servers at once, release script",
                Some("mcds quorum lock async"),
                "redlock 3",
            ));
            rows.push(row(
                "`Lock::try_acquire` + `release` with fencing tokens, 1 caller",
                "Redlock: redis-rs `SET NX PX` to 3 redis-servers at once, release script",
                Some("mcds quorum lock fenced"),
                "redlock 3",
            ));
        }
    }

    // Python: mcds's `Counter.incr` through the C ABI and cffi, against
    // pylibmc (libmemcached's C client), each a loop of sequential calls in
    // one Python process.
    if let Some(python) = &python {
        arms.push(vec![
            arm(
                "py mcds incr",
                sizes.single,
                Box::new(move |n| python.borrow_mut().run("mcds", n)),
            ),
            arm(
                "py pylibmc incr",
                sizes.single,
                Box::new(move |n| python.borrow_mut().run("pylibmc", n)),
            ),
        ]);
        rows.push(row(
            python_case,
            "pylibmc `Client.incr` (C, libmemcached), Python",
            Some("py mcds incr"),
            "py pylibmc incr",
        ));
    }

    // For profiling one arm (e.g. under `strace -c -f`): keep only the
    // arms whose id contains $PEERS_ARMS.
    if let Ok(only) = std::env::var("PEERS_ARMS") {
        for group in arms.iter_mut() {
            group.retain(|a| a.id.contains(&only));
        }
        arms.retain(|g| !g.is_empty());
    }

    run_rounds(&mut arms, sizes.rounds, &memcached);

    let all: Vec<&Arm<'_>> = arms.iter().flatten().collect();
    let find = |id: &str| all.iter().find(|a| a.id == id).copied();
    let rate = |id: &str| find(id).map(|a| median(a.samples.clone()));

    println!();
    println!(
        "mcds against its peers: {} interleaved rounds{}; medians of throughput, ratio mcds / peer (above 1: mcds is faster)",
        sizes.rounds,
        if is_bench_run() {
            ""
        } else {
            " (smoke run: tiny rounds, the figures mean nothing)"
        }
    );
    // The table, as printed and (with $PEERS_README) as written into the
    // guide (docs/src/benchmarks.md) between its `peers:begin`/`peers:end` markers.
    let mut table = String::new();
    let mut line = |l: String| {
        println!("{l}");
        table.push_str(&l);
        table.push('\n');
    };
    match find("raw incr") {
        Some(raw) => line(format!(
            "{} rounds, {}{}",
            sizes.rounds,
            mode_line(&raw.samples),
            if held {
                "; CPU idle states held at polling (`/dev/cpu_dma_latency` = 0)"
            } else {
                ""
            }
        )),
        None => line("mode: unknown (the 1-caller case did not run)".into()),
    }
    if redis.is_none() {
        line("(no redis-server: the redis rows are missing)".into());
    }
    if python.is_none() && wanted(python_case) {
        line(
            "(no `$PEERS_PYTHON`: the Python row is missing; see `scripts/bench-python-env.sh`)"
                .into(),
        );
    }
    line(String::new());
    line("| case | peer | mcds ops/s | peer ops/s | mcds / peer |".into());
    line("|---|---|---:|---:|---:|".into());
    for r in &rows {
        let Some(peer) = rate(&r.peer_arm) else {
            continue; // left out by $PEERS_ARMS
        };
        match r.mcds.as_deref().map(rate) {
            Some(None) => continue,
            Some(Some(ours)) => line(format!(
                "| {} | {} | {} | {} | {:.2}× |",
                r.case,
                r.peer,
                thousands(ours),
                thousands(peer),
                ours / peer
            )),
            None => line(format!(
                "| {} | {} | – | {} | – |",
                r.case,
                r.peer,
                thousands(peer)
            )),
        }
    }
    if std::env::var_os("PEERS_README").is_some() {
        if is_bench_run() && std::env::var_os("PEERS_FILTER").is_none() {
            write_readme(&table);
        } else {
            println!("(PEERS_README: not written: a smoke or filtered run)");
        }
    }
    if std::env::var_os("PEERS_VERBOSE").is_some() {
        println!();
        println!("every round's ops/s, by arm, in the order of the rounds:");
        for a in &all {
            let samples: Vec<String> = a.samples.iter().map(|&x| thousands(x)).collect();
            println!("  {:<22} {}", a.id, samples.join(" "));
        }
    }
    println!();
    println!(
        "connections memcached accepted per 1,000 operations, by arm (0 for a pooled client):"
    );
    for a in all.iter().filter(|a| {
        a.id.starts_with("mcds") || a.id.starts_with("raw") || a.id.starts_with("memcache")
    }) {
        let ops = a.ops * sizes.rounds as u64;
        if a.id != "mcds embedded" && ops > 0 {
            println!(
                "  {:<22} {:>8.1}",
                a.id,
                a.new_connections as f64 * 1000.0 / ops as f64
            );
        }
    }
    println!();
    println!("mcds's connections over the whole run (`MemcachedStore::connection_stats`):");
    for (id, st) in [
        ("default (4 a server)", &store_mc),
        ("narrow (2 a server)", &narrow_store),
    ] {
        let c = st.connection_stats();
        println!(
            "  {id:<22} {} open, {} dialed; {} requests in {} writes ({:.1} a write), {} handoffs",
            c.open,
            c.dials,
            c.requests,
            c.writes,
            c.requests as f64 / c.writes.max(1) as f64,
            c.handoffs
        );
    }
}
