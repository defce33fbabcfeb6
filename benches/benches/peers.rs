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
//! cargo bench -p mcds-benches --bench peers   # a measuring run; prints the README's table
//! cargo test  -p mcds-benches --benches       # smoke: one tiny round of everything
//! PEERS_FILTER="1 caller" cargo bench -p mcds-benches --bench peers   # only matching cases
//! PEERS_VERBOSE=1 cargo bench -p mcds-benches --bench peers   # and every round's figures
//! PEERS_ARMS="mcds incr" strace -c -f target/release/deps/peers-* --bench   # one arm alone
//! ```
//!
//! redis-server comes from `PATH` (or `$MCDS_REDIS_BIN`); without it the
//! redis arms are skipped with a message and the rest still runs.
//! memcached is started through `mcds_testkit::MemcachedServer`, redis
//! through `mcds_testkit::spawn_tied`: both die with the bench.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use mcds_benches::is_bench_run;
use mcds_core::{MemoryStore, Store};
use mcds_counter::Counter;
use mcds_memcached::MemcachedStore;
use mcds_sketch::HyperLogLog;
use mcds_testkit::{MemcachedServer, spawn_tied};
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
    /// Batches of 100 increments.
    batches: u64,
    /// HyperLogLog adds.
    hll: u64,
    /// In-process increments.
    embedded: u64,
}

impl Sizes {
    fn get() -> Sizes {
        if is_bench_run() {
            // Many short rounds: on this VM the round trip flips between
            // two modes within seconds (see the mode line), and short
            // rounds give every arm the same mixture of both.
            Sizes {
                rounds: 51,
                single: 300,
                concurrent: 1_280,
                batches: 6,
                hll: 150,
                embedded: 200_000,
            }
        } else {
            Sizes {
                rounds: 1,
                single: 10,
                concurrent: 64,
                batches: 1,
                hll: 5,
                embedded: 1_000,
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---------------------------------------------------------------------------
// The floor: a raw socket speaking the meta protocol.

/// One TCP connection to memcached that writes prepared meta commands and
/// reads their replies, with nothing in between.
struct Raw {
    stream: TcpStream,
    buf: Box<[u8; 64 * 1024]>,
}

impl Raw {
    fn connect(addr: &str) -> Raw {
        let stream = TcpStream::connect(addr).expect("raw socket to memcached");
        stream.set_nodelay(true).unwrap();
        // A malformed exchange fails the bench instead of hanging it.
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Raw {
            stream,
            buf: Box::new([0; 64 * 1024]),
        }
    }

    /// Send `commands` (one write) and read `replies` `VA` replies (two
    /// lines each); the value of the last one.
    fn exchange(&mut self, commands: &[u8], replies: usize) -> u64 {
        self.stream.write_all(commands).unwrap();
        let mut len = 0;
        let mut lines = 0;
        while lines < 2 * replies {
            let n = self.stream.read(&mut self.buf[len..]).unwrap();
            assert!(n > 0, "memcached closed the raw socket");
            lines += self.buf[len..len + n]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            len += n;
        }
        let reply = &self.buf[..len];
        assert!(
            reply.starts_with(b"VA "),
            "{}",
            String::from_utf8_lossy(reply)
        );
        let last = reply[..len - 2].rsplit(|&b| b == b'\n').next().unwrap();
        std::str::from_utf8(last).unwrap().parse().unwrap()
    }
}

/// `ma <key> D1 v` for each key, concatenated.
fn ma_incr(keys: &[String]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| format!("ma {k} D1 v\r\n").into_bytes())
        .collect()
}

/// Create each key at 0 (`ma <key> N0 J0 D0 v`: on a miss, create it with
/// the initial value and return that).
fn ma_create(raw: &mut Raw, keys: &[String]) {
    let commands: Vec<u8> = keys
        .iter()
        .flat_map(|k| format!("ma {k} N0 J0 D0 v\r\n").into_bytes())
        .collect();
    raw.exchange(&commands, keys.len());
}

// ---------------------------------------------------------------------------
// redis-server, started on a free loopback port, dying with the bench.

struct RedisServer {
    child: Child,
    port: u16,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn redis_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("MCDS_REDIS_BIN") {
        return Some(PathBuf::from(bin)).filter(|p| p.is_file());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file())
}

impl RedisServer {
    /// redis-server with no persistence on a free loopback port; `None`
    /// (with a message) if there is no redis-server.
    fn start() -> Option<RedisServer> {
        let Some(binary) = redis_binary() else {
            println!(
                "redis-server not found (on PATH, or at $MCDS_REDIS_BIN if set): skipping every redis row \
                 (apt-get install redis-server; scripts/test.sh installs it)"
            );
            return None;
        };
        // A free port can be taken between the probe and the start: retry.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .unwrap()
                .port();
            let mut child = spawn_tied(&binary, |c| {
                c.args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--save", "", "--appendonly", "no"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
            })
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if child.try_wait().unwrap().is_some() {
                    break; // exited: most likely the port was taken
                }
                if ping(port) {
                    return Some(RedisServer { child, port });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server ({}) did not start", binary.display());
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut reply).is_ok() && reply == *b"+PONG\r\n"
}

// ---------------------------------------------------------------------------
// Arms, cases and the interleaved rounds.

/// One measured thing: performs `ops` operations and returns the time they
/// took (for threads and tasks, from when all are ready until all are done).
type Run<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

struct Arm<'a> {
    id: String,
    ops: u64,
    run: Run<'a>,
    /// Throughput of each round, ops/s.
    samples: Vec<f64>,
    /// Connections memcached accepted during this arm, over all rounds.
    new_connections: u64,
}

/// One line of the table: an mcds arm (or `None`: no async API yet)
/// against a peer arm.
struct Row {
    case: String,
    peer: &'static str,
    mcds: Option<String>,
    peer_arm: String,
}

/// Run `op` `per_thread` times on one thread per state, all started
/// together; the wall time from the start to the last one's end.
fn on_threads<S: Send>(states: &mut [S], per_thread: u64, op: impl Fn(&mut S) + Sync) -> Duration {
    let barrier = Barrier::new(states.len() + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = states
            .iter_mut()
            .map(|state| {
                let (barrier, op) = (&barrier, &op);
                s.spawn(move || {
                    barrier.wait();
                    for _ in 0..per_thread {
                        op(state);
                    }
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        started.elapsed()
    })
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

fn arm<'a>(id: &str, ops: u64, run: Run<'a>) -> Arm<'a> {
    Arm {
        id: id.to_string(),
        ops,
        run,
        samples: Vec::new(),
        new_connections: 0,
    }
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

fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn main() {
    let sizes = Sizes::get();
    let filter = std::env::var("PEERS_FILTER").ok();
    let wanted = |case: &str| filter.as_deref().is_none_or(|f| case.contains(f));

    let memcached = MemcachedServer::start_default();
    let addr = memcached.addr();
    let redis = RedisServer::start();
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
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addr).unwrap());
    let counter = Counter::new(Arc::clone(&store), "peers").unwrap();
    let max_level = *LEVELS.iter().max().unwrap();
    // The store keeps 8 idle connections by default; the same store with
    // room for one per thread shows what the default costs at 16 and 64.
    let roomy: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .max_idle(max_level)
            .connect([addr.as_str()])
            .unwrap(),
    );
    let many: Vec<Counter> = (0..100)
        .map(|i| Counter::new(Arc::clone(&store), &format!("many{i}")).unwrap())
        .collect();
    let batch: Vec<(&Counter, u64)> = many.iter().map(|c| (c, 1)).collect();
    let hll = HyperLogLog::new(Arc::clone(&store), "peers").unwrap();
    let embedded = Counter::new(Arc::new(MemoryStore::new()), "peers").unwrap();
    let map: DashMap<String, u64> = DashMap::new();
    let map_key = embedded.key().to_string();
    map.insert(map_key.clone(), 0);

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
        let mut raw = Raw::connect(&addr);
        let raw_key = keys("raw:one", 1);
        ma_create(&mut raw, &raw_key);
        let command = ma_incr(&raw_key);
        group.push(arm(
            "raw incr",
            sizes.single,
            Box::new(move |n| {
                let started = Instant::now();
                for _ in 0..n {
                    black_box(raw.exchange(&command, 1));
                }
                started.elapsed()
            }),
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
        if let Some(mux) = &mux {
            let rt = &rt;
            let task_keys = keys("task1:", 1);
            group.push(arm(
                "redis mux 1",
                sizes.single,
                Box::new(move |n| on_tasks(rt, mux, &task_keys, n)),
            ));
            rows.push(row(
                "`incr`, 1 async task",
                "redis-rs `INCR`, `MultiplexedConnection`",
                None,
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
        for (id, store) in [("mcds", &store), ("mcds roomy", &roomy)] {
            if id == "mcds roomy" && n <= 8 {
                continue; // the default pool already has room
            }
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
        let raw_keys = keys(&format!("raw:t{n}-"), n);
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
        let mcds = format!("mcds {n}");
        rows.push(row(
            &case,
            "N raw sockets `ma` (floor)",
            Some(&mcds),
            &format!("raw {n}"),
        ));
        if n > 8 {
            rows.push(row(
                &format!("{case} with `max_idle({max_level})`"),
                "N raw sockets `ma` (floor)",
                Some(&format!("mcds roomy {n}")),
                &format!("raw {n}"),
            ));
        }
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
                &format!("`incr`, {n} async tasks"),
                "redis-rs, one `MultiplexedConnection`, N tokio tasks",
                None,
                &format!("redis mux {n}"),
            ));
        }
        arms.push(group);
    }

    // Pipelines of 100 increments.
    let case = "`Counter::incr_many`, 100 counters";
    if wanted(case) {
        let ops = sizes.batches * 100;
        let mut group = Vec::new();
        let batch = &batch;
        group.push(arm(
            "mcds many",
            ops,
            Box::new(move |ops| {
                let started = Instant::now();
                for _ in 0..ops / 100 {
                    for r in Counter::incr_many(batch) {
                        black_box(r.unwrap());
                    }
                }
                started.elapsed()
            }),
        ));
        let mut raw = Raw::connect(&addr);
        let raw_keys = keys("raw:many", 100);
        ma_create(&mut raw, &raw_keys);
        let burst = ma_incr(&raw_keys);
        group.push(arm(
            "raw many",
            ops,
            Box::new(move |ops| {
                let started = Instant::now();
                for _ in 0..ops / 100 {
                    black_box(raw.exchange(&burst, 100));
                }
                started.elapsed()
            }),
        ));
        rows.push(row(
            case,
            "raw pipelined burst of 100 `ma` (floor)",
            Some("mcds many"),
            "raw many",
        ));
        if let Some(mut con) = sync_con() {
            let mut pipe = redis::pipe();
            for k in keys("many", 100) {
                pipe.cmd("INCR").arg(k);
            }
            group.push(arm(
                "redis many",
                ops,
                Box::new(move |ops| {
                    let started = Instant::now();
                    for _ in 0..ops / 100 {
                        let v: Vec<i64> = pipe.query(&mut con).unwrap();
                        black_box(v);
                    }
                    started.elapsed()
                }),
            ));
            rows.push(row(
                case,
                "redis-rs pipeline of 100 `INCR`",
                Some("mcds many"),
                "redis many",
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

    // For profiling one arm (e.g. under `strace -c -f`): keep only the
    // arms whose id contains $PEERS_ARMS.
    if let Ok(only) = std::env::var("PEERS_ARMS") {
        for group in arms.iter_mut() {
            group.retain(|a| a.id.contains(&only));
        }
        arms.retain(|g| !g.is_empty());
    }

    // A warm-up round (connections dialled, counters created, caches
    // warm), then the measured rounds: groups in a rotating order, and the
    // arms of each group in a rotating order, back to back.
    for group in arms.iter_mut() {
        for a in group.iter_mut() {
            (a.run)(a.ops);
        }
    }
    for round in 0..sizes.rounds {
        let groups = arms.len();
        for g in 0..groups {
            let group = &mut arms[(round + g) % groups];
            let len = group.len();
            for k in 0..len {
                let a = &mut group[(round + k) % len];
                let before = memcached.stat("total_connections");
                let took = (a.run)(a.ops);
                // The second `stats` call opens a connection of its own.
                a.new_connections += memcached.stat("total_connections") - before - 1;
                a.samples.push(a.ops as f64 / took.as_secs_f64());
            }
        }
    }

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
    match find("raw incr") {
        Some(raw) => {
            let rtt = 1e6 / median(raw.samples.clone());
            let fast = raw.samples.iter().filter(|&&x| 1e6 / x < 25.0).count();
            let share = fast as f64 / raw.samples.len() as f64;
            let mode = if share >= 2.0 / 3.0 {
                "fast mode (CPUs kept busy by other work, ~7.5 µs round trips)"
            } else if share <= 1.0 / 3.0 {
                "slow mode (CPUs idle, ~60 µs round trips)"
            } else {
                "mixed: the VM switched between its fast and slow modes during the run"
            };
            println!(
                "mode: the raw socket's median round trip is {rtt:.1} µs: {mode}; \
                 {fast} of {} rounds had it under 25 µs",
                raw.samples.len()
            );
        }
        None => println!("mode: unknown (the 1-caller case did not run)"),
    }
    if redis.is_none() {
        println!("(no redis-server: the redis rows are missing)");
    }
    println!();
    println!("| case | peer | mcds ops/s | peer ops/s | mcds / peer |");
    println!("|---|---|---:|---:|---:|");
    for r in &rows {
        let Some(peer) = rate(&r.peer_arm) else {
            continue; // left out by $PEERS_ARMS
        };
        match r.mcds.as_deref().map(rate) {
            Some(None) => continue,
            Some(Some(ours)) => println!(
                "| {} | {} | {} | {} | {:.2}× |",
                r.case,
                r.peer,
                thousands(ours),
                thousands(peer),
                ours / peer
            ),
            None => println!(
                "| {} | {} | no async API yet | {} | – |",
                r.case,
                r.peer,
                thousands(peer)
            ),
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
}
