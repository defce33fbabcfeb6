//! `cargo bench -p mcds-benches --bench scale`: how `Set`, `Table` and
//! `CounterMap` behave as they grow, next to Redis in the same run.
//!
//! For each N (10× steps from 100, or `MCDS_SCALE_MIN`; `MCDS_SCALE_MAX`
//! sets the last, default 1,000,000; 10,000,000 runs on a pool of 3), a fresh memcached (`-M`,
//! so running out of memory is an error, never a silent eviction) and a
//! fresh redis-server are loaded with N members, and then each op is timed
//! over interleaved rounds (mcds, Redis, mcds, …: the ratio of medians).
//! Columns: per-op time, bytes moved per op (the servers' own byte
//! counters: memcached `bytes_read` + `bytes_written`, Redis
//! `total_net_input_bytes` + `total_net_output_bytes`), and server memory
//! per member (memcached `bytes`, Redis `used_memory` above the empty
//! server's). The whole-collection reads (`members`, `entries`,
//! `get_all`) are timed once per round up to 1e6.
//!
//! The printed table is the one in the guide (`docs/src/scale.md`), with
//! the VM mode line of the run.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use mcds_benches::peers::{FastMode, RedisServer, median, mode_line};
use mcds_core::Store;
use mcds_counter::CounterMap;
use mcds_memcached::MemcachedStore;
use mcds_set::{Set, Table};
use mcds_sketch::Leaderboard;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};

/// Interleaved rounds per op.
const ROUNDS: usize = 7;
/// Point ops per round.
const OPS: usize = 300;

fn member(i: usize) -> String {
    format!("m{i:08}")
}

/// A server's `stats`, or `INFO` for Redis, as numbers.
fn memcached_stats(addr: &str) -> HashMap<String, u64> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"stats\r\n").unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    while !text.ends_with("END\r\n") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "stats: connection closed");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next()? == "STAT").then_some(())?;
            let name = parts.next()?.to_string();
            let value = parts.next()?.parse().ok()?;
            Some((name, value))
        })
        .collect()
}

fn redis_info(con: &mut redis::Connection) -> HashMap<String, u64> {
    let text: String = redis::cmd("INFO").query(con).unwrap();
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once(':')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// The memcached servers of one N: one, or a pool of 3 for 1e7.
struct Servers {
    _one: Option<MemcachedServer>,
    _pool: Option<ServerPool>,
    addrs: Vec<String>,
}

impl Servers {
    fn start(n: usize) -> Servers {
        let options = ServerOptions {
            memory_mb: (n / 1000).clamp(64, 4096) as u32,
            no_evict: true,
            ..Default::default()
        };
        if n >= 10_000_000 {
            let pool = ServerPool::start(3, options);
            let addrs = pool.addrs();
            Servers {
                _one: None,
                _pool: Some(pool),
                addrs,
            }
        } else {
            let one = MemcachedServer::start(options);
            let addrs = vec![one.addr()];
            Servers {
                _one: Some(one),
                _pool: None,
                addrs,
            }
        }
    }

    fn stat(&self, name: &str) -> u64 {
        self.addrs
            .iter()
            .map(|a| memcached_stats(a).get(name).copied().unwrap_or(0))
            .sum()
    }

    fn moved(&self) -> u64 {
        self.stat("bytes_read") + self.stat("bytes_written")
    }
}

fn redis_moved(con: &mut redis::Connection) -> u64 {
    let info = redis_info(con);
    info["total_net_input_bytes"] + info["total_net_output_bytes"]
}

/// One row of the table.
struct Row {
    structure: &'static str,
    op: String,
    n: usize,
    mcds_us: f64,
    redis_us: f64,
    /// The median of the rounds' ratios (each round's mcds time over the
    /// Redis round next to it, so both ran in the same VM mode).
    ratio: f64,
    mcds_bytes: f64,
    redis_bytes: f64,
}

/// Time `ops` calls of `mcds` and of `redis`, interleaved over rounds:
/// the medians of the per-call means, the median of the rounds' ratios,
/// and the bytes moved per call.
fn compare(
    servers: &Servers,
    con: &mut redis::Connection,
    ops: usize,
    mut mcds: impl FnMut(usize),
    mut redis: impl FnMut(&mut redis::Connection, usize),
) -> (f64, f64, f64, f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut bytes_a, mut bytes_b) = (0u64, 0u64);
    for round in 0..ROUNDS {
        let before = servers.moved();
        let t = Instant::now();
        for i in 0..ops {
            mcds(round * ops + i);
        }
        a.push(t.elapsed().as_secs_f64() * 1e6 / ops as f64);
        bytes_a += servers.moved() - before;
        let before = redis_moved(con);
        let t = Instant::now();
        for i in 0..ops {
            redis(con, round * ops + i);
        }
        b.push(t.elapsed().as_secs_f64() * 1e6 / ops as f64);
        // INFO's own reply counts too: subtract nothing, it is the same
        // for every row and small next to the ops.
        bytes_b += redis_moved(con) - before;
    }
    let calls = (ROUNDS * ops) as f64;
    let ratios: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x / y).collect();
    (
        median(a),
        median(b),
        median(ratios),
        bytes_a as f64 / calls,
        bytes_b as f64 / calls,
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo nextest` asks for the list: none
    }
    // `cargo test --benches` runs this once as a smoke test (no
    // `--bench`): one small N.
    let smoke = !mcds_benches::is_bench_run();
    let max: usize = std::env::var("MCDS_SCALE_MAX")
        .ok()
        .filter(|_| !smoke)
        .and_then(|v| v.replace('_', "").parse::<f64>().ok())
        .map_or(if smoke { 100 } else { 1_000_000 }, |v| v as usize);
    // The VM's fast mode for the whole run (as the peers bench): a
    // round's mcds and Redis halves then meet the same loopback latency.
    let _fast = FastMode::hold();
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let mut rows = Vec::new();
    let mut memory = Vec::new();
    let mut rtts = Vec::new();
    // `MCDS_SCALE_MIN` starts higher (to run 1e7 alone).
    let mut n: usize = std::env::var("MCDS_SCALE_MIN")
        .ok()
        .filter(|_| !smoke)
        .and_then(|v| v.replace('_', "").parse::<f64>().ok())
        .map_or(100, |v| v as usize);
    while n <= max {
        let servers = Servers::start(n);
        // A longer I/O timeout than the default second: loading millions
        // of members on 2 busy cores, a reply was once more than a second
        // late (an `Ambiguous` that would end the run).
        let store: Arc<dyn Store> = Arc::new(
            MemcachedStore::builder()
                .io_timeout(std::time::Duration::from_secs(10))
                .connect(servers.addrs.iter().map(String::as_str))
                .unwrap(),
        );
        let client = redis::Client::open(redis_server.url()).unwrap();
        let mut con = client.get_connection().unwrap();
        let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
        let base_redis = redis_info(&mut con)["used_memory"];
        let base_mc = servers.stat("bytes");
        rtts.push(raw_round_trip(&servers.addrs[0]));

        // Load: sets and tables in batches, maps one field at a time from
        // 8 threads (a first touch is 3 round trips).
        let set = Set::new(Arc::clone(&store), "scale").unwrap();
        let table = Table::new(Arc::clone(&store), "scale").unwrap();
        let map = CounterMap::new(Arc::clone(&store), "scale").unwrap();
        let load = Instant::now();
        let names: Vec<String> = (0..n).map(member).collect();
        for chunk in names.chunks(1000) {
            set.add(chunk).unwrap();
        }
        let set_load = load.elapsed();
        let t = Instant::now();
        parallel(n, |i| table.set(member(i), b"v").unwrap());
        let table_load = t.elapsed();
        let t = Instant::now();
        parallel(n, |i| {
            map.incr(&member(i), 1).unwrap();
        });
        let map_load = t.elapsed();
        for chunk in names.chunks(1000) {
            let mut pipe = redis::pipe();
            for m in chunk {
                pipe.cmd("SADD").arg("s").arg(m).ignore();
                pipe.cmd("HSET").arg("t").arg(m).arg("v").ignore();
                pipe.cmd("HINCRBY").arg("c").arg(m).arg(1).ignore();
            }
            let _: () = pipe.query(&mut con).unwrap();
        }
        let mc_bytes = servers.stat("bytes") - base_mc;
        let redis_bytes = redis_info(&mut con)["used_memory"] - base_redis;
        memory.push((n, mc_bytes as f64 / n as f64, redis_bytes as f64 / n as f64));
        println!(
            "N = {n}: loaded in {:.1} s (set), {:.1} s (table), {:.1} s (map); memcached {} bytes, redis {} bytes",
            set_load.as_secs_f64(),
            table_load.as_secs_f64(),
            map_load.as_secs_f64(),
            mc_bytes,
            redis_bytes
        );

        let pick = |i: usize| member((i * 7919) % n);
        let mut row = |structure, op: &str, r: (f64, f64, f64, f64, f64)| {
            rows.push(Row {
                structure,
                op: op.to_string(),
                n,
                mcds_us: r.0,
                redis_us: r.1,
                ratio: r.2,
                mcds_bytes: r.3,
                redis_bytes: r.4,
            })
        };
        let fresh = |i: usize| format!("new{n}-{i}");
        row(
            "Set",
            "add (1 new member) / SADD",
            compare(
                &servers,
                &mut con,
                OPS,
                |i| set.add(&[fresh(i)]).unwrap(),
                |c, i| redis::cmd("SADD").arg("s").arg(fresh(i)).exec(c).unwrap(),
            ),
        );
        row(
            "Set",
            "contains / SISMEMBER",
            compare(
                &servers,
                &mut con,
                OPS,
                |i| assert!(set.contains(pick(i)).unwrap()),
                |c, i| {
                    let b: bool = redis::cmd("SISMEMBER")
                        .arg("s")
                        .arg(pick(i))
                        .query(c)
                        .unwrap();
                    assert!(b);
                },
            ),
        );
        row(
            "Table",
            "set (existing member) / HSET",
            compare(
                &servers,
                &mut con,
                OPS,
                |i| table.set(pick(i), b"w").unwrap(),
                |c, i| {
                    redis::cmd("HSET")
                        .arg("t")
                        .arg(pick(i))
                        .arg("w")
                        .exec(c)
                        .unwrap()
                },
            ),
        );
        row(
            "Table",
            "has / HEXISTS",
            compare(
                &servers,
                &mut con,
                OPS,
                |i| assert!(table.has(pick(i)).unwrap()),
                |c, i| {
                    let b: bool = redis::cmd("HEXISTS")
                        .arg("t")
                        .arg(pick(i))
                        .query(c)
                        .unwrap();
                    assert!(b);
                },
            ),
        );
        row(
            "CounterMap",
            "incr (existing field) / HINCRBY",
            compare(
                &servers,
                &mut con,
                OPS,
                |i| {
                    map.incr(&pick(i), 1).unwrap();
                },
                |c, i| {
                    redis::cmd("HINCRBY")
                        .arg("c")
                        .arg(pick(i))
                        .arg(1)
                        .exec(c)
                        .unwrap()
                },
            ),
        );
        // A leaderboard of capacity N, loaded with N members (up to 1e5:
        // past that the load alone, every batch writing every shard, takes
        // minutes). Kept in shards of 200 past 200 members.
        if n <= 100_000 {
            let board = Leaderboard::new(Arc::clone(&store), "scale", n as u32).unwrap();
            for chunk in names.chunks(10_000) {
                let batch: Vec<(&String, u64)> = chunk.iter().map(|m| (m, 1)).collect();
                board.incr_many(&batch).unwrap();
                let mut pipe = redis::pipe();
                for m in chunk {
                    pipe.cmd("ZINCRBY").arg("z").arg(1).arg(m).ignore();
                }
                let _: () = pipe.query(&mut con).unwrap();
            }
            row(
                "Leaderboard",
                "incr (existing member) / ZINCRBY",
                compare(
                    &servers,
                    &mut con,
                    OPS,
                    |i| assert!(board.incr(pick(i), 1).unwrap() >= 2),
                    |c, i| {
                        let v: f64 = redis::cmd("ZINCRBY")
                            .arg("z")
                            .arg(1)
                            .arg(pick(i))
                            .query(c)
                            .unwrap();
                        assert!(v >= 2.0);
                    },
                ),
            );
            row(
                "Leaderboard",
                "top(10) / ZREVRANGE 0 9 WITHSCORES",
                compare(
                    &servers,
                    &mut con,
                    if n >= 100_000 { 3 } else { 30 },
                    |_| assert_eq!(board.top(10).unwrap().len(), 10.min(n)),
                    |c, _| {
                        let v: Vec<(String, f64)> = redis::cmd("ZREVRANGE")
                            .arg("z")
                            .arg(0)
                            .arg(9)
                            .arg("WITHSCORES")
                            .query(c)
                            .unwrap();
                        assert_eq!(v.len(), 10.min(n));
                    },
                ),
            );
        }
        if n <= 1_000_000 {
            let whole = if n >= 100_000 { 1 } else { 10 };
            row(
                "Set",
                "members (all) / SMEMBERS",
                compare(
                    &servers,
                    &mut con,
                    whole,
                    |_| assert!(set.members().unwrap().len() >= n),
                    |c, _| {
                        let v: Vec<String> = redis::cmd("SMEMBERS").arg("s").query(c).unwrap();
                        assert!(v.len() >= n);
                    },
                ),
            );
            row(
                "Table",
                "entries (all) / HGETALL",
                compare(
                    &servers,
                    &mut con,
                    whole,
                    |_| assert!(table.entries().unwrap().len() >= n),
                    |c, _| {
                        let v: Vec<(String, String)> =
                            redis::cmd("HGETALL").arg("t").query(c).unwrap();
                        assert!(v.len() >= n);
                    },
                ),
            );
            row(
                "CounterMap",
                "get_all / HGETALL",
                compare(
                    &servers,
                    &mut con,
                    whole,
                    |_| assert!(map.get_all().unwrap().len() >= n),
                    |c, _| {
                        let v: Vec<(String, i64)> =
                            redis::cmd("HGETALL").arg("c").query(c).unwrap();
                        assert!(v.len() >= n);
                    },
                ),
            );
        }
        n *= 10;
    }
    println!();
    println!("{}", mode_line(&rtts));
    println!();
    println!(
        "| structure | op (mcds / Redis) | N | mcds µs | Redis µs | mcds ÷ Redis (median of rounds) | bytes moved: mcds | Redis |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {:.2} | {} | {} |",
            r.structure,
            r.op,
            r.n,
            us(r.mcds_us),
            us(r.redis_us),
            r.ratio,
            bytes(r.mcds_bytes),
            bytes(r.redis_bytes)
        );
    }
    println!();
    println!("| N | server memory per member: memcached (set + table + map) | Redis (s + t + c) |");
    println!("|---|---|---|");
    for (n, mc, rd) in memory {
        println!("| {n} | {mc:.0} B | {rd:.0} B |");
    }
}

/// Run `f(i)` for `i` in `0..n` on 8 threads.
fn parallel(n: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for t in 0..8 {
            let f = &f;
            s.spawn(move || {
                for i in (t..n).step_by(8) {
                    f(i);
                }
            });
        }
    });
}

/// Raw `mn` round trips per second on a fresh socket (for the VM mode line).
fn raw_round_trip(addr: &str) -> f64 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut buf = [0u8; 64];
    let t = Instant::now();
    for _ in 0..2000 {
        s.write_all(b"mn\r\n").unwrap();
        let mut got = 0;
        while got < 4 {
            got += s.read(&mut buf[got..]).unwrap();
        }
    }
    2000.0 / t.elapsed().as_secs_f64()
}

fn us(x: f64) -> String {
    if x >= 10_000.0 {
        format!("{:.0} ms", x / 1000.0)
    } else {
        format!("{x:.1}")
    }
}

fn bytes(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1} MB", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0} KB", x / 1e3)
    } else {
        format!("{x:.0} B")
    }
}
