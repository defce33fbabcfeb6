//! mcds's time series side by side with Redis doing the same job the
//! classic way, against real servers the bench starts itself (issue 19):
//! `TimeSeries` (count, sum, min, max per bucket) against a sorted set of
//! every sample (`ZADD series <ts> <ts>:<value>`, read back with
//! `ZRANGEBYSCORE` and aggregated by the client), and `PackedSeries` (a
//! `u8` counter per minute, a day per item) against `BITFIELD`. One
//! process, interleaved rounds, medians of throughput (see
//! `mcds_benches::peers`); then the bytes of server memory per sample.
//! Not a timed test: nothing is asserted about speed.
//!
//! ```text
//! cargo bench -p mcds-benches --bench timeseries_peers   # a measuring run; prints the README's tables
//! cargo test  -p mcds-benches --benches                  # smoke: one tiny round of everything
//! ```
//!
//! redis-server comes from `PATH` (or `$MCDS_REDIS_BIN`); without it only
//! the mcds arms run. Both servers die with the bench.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcds_benches::is_bench_run;
use mcds_benches::peers::{
    Arm, FastMode, RedisServer, arm, median, mode_line, raw_incr_arm, run_rounds, thousands,
};
use mcds_core::Store;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use mcds_timeseries::{PackedSeries, Resolution, SlotWidth, Stats, TimeSeries};

const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

/// The buckets (minutes) one range read covers.
const RANGE_BUCKETS: u64 = 60;

/// Round sizes and data sizes.
#[derive(Clone, Copy)]
struct Sizes {
    rounds: usize,
    /// Single-sample records and increments per round.
    records: u64,
    /// Range reads per round.
    reads: u64,
    /// Samples per minute in the series the range reads read.
    read_densities: [u64; 2],
    /// Samples recorded per density for the memory figures.
    memory_samples: u64,
    /// Samples per bucket of the memory figures.
    memory_densities: [u64; 3],
}

impl Sizes {
    fn get() -> Sizes {
        if is_bench_run() {
            Sizes {
                rounds: 31,
                records: 200,
                reads: 20,
                read_densities: [10, 100],
                memory_samples: 6_000,
                memory_densities: [1, 10, 100],
            }
        } else {
            Sizes {
                rounds: 1,
                records: 5,
                reads: 1,
                read_densities: [1, 2],
                memory_samples: 20,
                memory_densities: [1, 2, 4],
            }
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The `i`-th sample's value: spread over 0..1000 so that a bucket's min
/// and max settle after a few samples, as with real measurements.
fn value(i: u64) -> i64 {
    (i.wrapping_mul(7919) % 1000) as i64
}

/// Per minute, the aggregates of sorted-set members `<ts>:<value>`: the
/// client side of the article's `ZRANGEBYSCORE` read.
fn aggregate(members: &[String]) -> BTreeMap<u64, Stats> {
    let mut out: BTreeMap<u64, Stats> = BTreeMap::new();
    for m in members {
        let (ts, v) = m.split_once(':').expect("a <ts>:<value> member");
        let (ts, v): (u64, i64) = (ts.parse().unwrap(), v.parse().unwrap());
        let one = Stats::of(v);
        out.entry(ts / 60_000)
            .and_modify(|s| s.merge(&one))
            .or_insert(one);
    }
    out
}

/// A redis INFO field as a number.
fn info_field(con: &mut redis::Connection, section: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg(section).query(con).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
}

/// One line of the speed table: an mcds arm against a redis arm.
struct Row {
    job: String,
    mcds: (String, String),
    redis: (String, String),
}

fn row(job: &str, mcds: (&str, &str), redis: (&str, &str)) -> Row {
    Row {
        job: job.to_string(),
        mcds: (mcds.0.to_string(), mcds.1.to_string()),
        redis: (redis.0.to_string(), redis.1.to_string()),
    }
}

/// Time `n` calls of `op(i)`, `i` counting on from the last call's.
fn timed(next: &mut u64, n: u64, mut op: impl FnMut(u64)) -> Duration {
    let started = Instant::now();
    for _ in 0..n {
        op(*next);
        *next += 1;
    }
    started.elapsed()
}

fn main() {
    let sizes = Sizes::get();
    let memcached = MemcachedServer::start_default();
    let addr = memcached.addr();
    let redis = RedisServer::start();
    // The VM's fast mode, held for the run (see `FastMode`).
    let _fast = is_bench_run().then(FastMode::hold);
    let redis_client = redis
        .as_ref()
        .map(|r| redis::Client::open(r.url()).expect("redis URL"));
    let con = || {
        redis_client
            .as_ref()
            .map(|c| c.get_connection().expect("sync connection to redis"))
    };
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addr).unwrap());
    let series = |name: &str, resolutions: &[(Duration, Duration)]| {
        let resolutions: Vec<Resolution> = resolutions
            .iter()
            .map(|&(step, keep)| Resolution::new(step, keep).unwrap())
            .collect();
        // The samples go an hour back into a server started now, which the
        // loss check cannot vouch for; Redis's reads check nothing either.
        // With the check a read costs one `stats` more per server.
        TimeSeries::new(Arc::clone(&store), name, &resolutions)
            .unwrap()
            .with_loss_check(false)
    };
    let packed = |name: &str| {
        PackedSeries::new(
            Arc::clone(&store),
            name,
            MINUTE,
            1440,
            SlotWidth::U8,
            7 * DAY,
        )
        .unwrap()
        .with_loss_check(false)
    };
    let start = now_ms();
    // Yesterday (UTC), whole: the packed series' slots all lie in the past
    // (a series refuses times more than its clock skew ahead, and today's
    // later minutes are ahead until the day ends).
    let day_start = (start - 86_400_000) / 86_400_000 * 86_400_000;

    let one_res = series("rec1", &[(MINUTE, DAY)]);
    let three_res = series("rec3", &[(SECOND, HOUR), (MINUTE, DAY), (HOUR, 7 * DAY)]);
    let per_minute = packed("logins");

    // The series the range reads read: the last hour, `density` samples a
    // minute, the same samples in mcds and in a sorted set.
    let hour_ago = (start - RANGE_BUCKETS * 60_000) / 60_000 * 60_000;
    let (from, to) = (hour_ago, hour_ago + RANGE_BUCKETS * 60_000 - 1);
    let mut readable = Vec::new();
    for density in sizes.read_densities {
        let name = format!("read{density}");
        let s = series(&name, &[(MINUTE, DAY)]);
        let mut redis_con = con();
        for b in 0..RANGE_BUCKETS {
            let mut pipe = redis::pipe();
            for k in 0..density {
                let ts = from + b * 60_000 + k * 60_000 / density;
                let v = value(b * density + k);
                s.record(ts, v).unwrap();
                pipe.cmd("ZADD").arg(&name).arg(ts).arg(format!("{ts}:{v}"));
            }
            if let Some(c) = redis_con.as_mut() {
                let _: Vec<i64> = pipe.query(c).unwrap();
            }
        }
        let check = s.range(from, to, MINUTE).unwrap();
        assert_eq!(check.len() as u64, RANGE_BUCKETS);
        if let Some(c) = redis_con.as_mut() {
            let members: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                .arg(&name)
                .arg(from)
                .arg(to)
                .query(c)
                .unwrap();
            let theirs: Vec<Stats> = aggregate(&members).into_values().collect();
            let ours: Vec<Stats> = check.iter().map(|b| b.stats).collect();
            assert_eq!(ours, theirs, "both sides hold the same samples");
        }
        readable.push((density, name, s));
    }
    let packed_read = packed("views");
    for m in 0..RANGE_BUCKETS {
        packed_read
            .incr(day_start + m * 60_000, m as u32 + 1)
            .unwrap();
    }
    if let Some(c) = con().as_mut() {
        let mut cmd = redis::cmd("BITFIELD");
        cmd.arg("views");
        for m in 0..RANGE_BUCKETS {
            cmd.arg("INCRBY").arg("u8").arg(format!("#{m}")).arg(m + 1);
        }
        let _: Vec<i64> = cmd.query(c).unwrap();
    }

    let mut groups: Vec<Vec<Arm<'_>>> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();

    // The round-trip probe: one raw meta-protocol increment per op.
    groups.push(vec![raw_incr_arm(
        &addr,
        "raw:probe",
        "raw incr",
        sizes.records,
    )]);

    // Record: one sample per op, 10 ms apart, into the current minutes.
    let mut record = Vec::new();
    for (id, s) in [("mcds record 1", &one_res), ("mcds record 3", &three_res)] {
        let mut next = 0;
        record.push(arm(
            id,
            sizes.records,
            Box::new(move |n| {
                timed(&mut next, n, |i| {
                    s.record(start + i * 10, value(i)).unwrap()
                })
            }),
        ));
    }
    if let Some(mut c) = con() {
        let mut next = 0;
        record.push(arm(
            "redis zadd",
            sizes.records,
            Box::new(move |n| {
                timed(&mut next, n, |i| {
                    let ts = start + i * 10;
                    let added: i64 = redis::cmd("ZADD")
                        .arg("rec")
                        .arg(ts)
                        .arg(format!("{ts}:{}", value(i)))
                        .query(&mut c)
                        .unwrap();
                    black_box(added);
                })
            }),
        ));
    }
    let zadd = ("`ZADD series <ts> <ts>:<value>`", "redis zadd");
    rows.push(row(
        "record a sample, 1 resolution (1 min)",
        ("`TimeSeries::record`", "mcds record 1"),
        zadd,
    ));
    rows.push(row(
        "record a sample, 3 resolutions (1 s, 1 min, 1 h)",
        ("`TimeSeries::record`, one batch", "mcds record 3"),
        zadd,
    ));
    groups.push(record);

    // Packed: one increment per op, cycling over the day's 1440 minutes
    // (11 a minute at most in a run: no slot saturates).
    let mut incr = Vec::new();
    let per_minute = &per_minute;
    let mut next = 0;
    incr.push(arm(
        "mcds packed incr",
        sizes.records,
        Box::new(move |n| {
            timed(&mut next, n, |i| {
                black_box(per_minute.incr(day_start + i % 1440 * 60_000, 1).unwrap());
            })
        }),
    ));
    if let Some(mut c) = con() {
        let mut next = 0;
        incr.push(arm(
            "redis bitfield incrby",
            sizes.records,
            Box::new(move |n| {
                timed(&mut next, n, |i| {
                    let v: Vec<i64> = redis::cmd("BITFIELD")
                        .arg("logins")
                        .arg(&["OVERFLOW", "SAT", "INCRBY", "u8"])
                        .arg(format!("#{}", i % 1440))
                        .arg(1)
                        .query(&mut c)
                        .unwrap();
                    black_box(v);
                })
            }),
        ));
    }
    rows.push(row(
        "count an event in its minute (`u8`, a day per item)",
        ("`PackedSeries::incr`", "mcds packed incr"),
        (
            "`BITFIELD key OVERFLOW SAT INCRBY u8 #<minute> 1`",
            "redis bitfield incrby",
        ),
    ));
    groups.push(incr);

    // Range reads: 60 one-minute buckets.
    for (density, name, s) in &readable {
        let mut read = Vec::new();
        let mcds_id = format!("mcds range {density}");
        let redis_id = format!("redis zrangebyscore {density}");
        read.push(arm(
            &mcds_id,
            sizes.reads,
            Box::new(move |n| {
                let started = Instant::now();
                for _ in 0..n {
                    black_box(s.range(from, to, MINUTE).unwrap());
                }
                started.elapsed()
            }),
        ));
        if let Some(mut c) = con() {
            read.push(arm(
                &redis_id,
                sizes.reads,
                Box::new(move |n| {
                    let started = Instant::now();
                    for _ in 0..n {
                        let members: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                            .arg(name.as_str())
                            .arg(from)
                            .arg(to)
                            .query(&mut c)
                            .unwrap();
                        black_box(aggregate(&members));
                    }
                    started.elapsed()
                }),
            ));
        }
        rows.push(row(
            &format!("read 60 minutes' count/sum/min/max, {density} samples a minute"),
            ("`TimeSeries::range`", mcds_id.as_str()),
            (
                "`ZRANGEBYSCORE` + aggregation in the client",
                redis_id.as_str(),
            ),
        ));
        groups.push(read);
    }
    let mut read = Vec::new();
    let packed_read = &packed_read;
    let last = day_start + (RANGE_BUCKETS - 1) * 60_000;
    read.push(arm(
        "mcds packed range",
        sizes.reads,
        Box::new(move |n| {
            let started = Instant::now();
            for _ in 0..n {
                black_box(packed_read.range(day_start, last).unwrap());
            }
            started.elapsed()
        }),
    ));
    if let Some(mut c) = con() {
        read.push(arm(
            "redis getrange",
            sizes.reads,
            Box::new(move |n| {
                let started = Instant::now();
                for _ in 0..n {
                    let bytes: Vec<u8> = redis::cmd("GETRANGE")
                        .arg("views")
                        .arg(0)
                        .arg(RANGE_BUCKETS - 1)
                        .query(&mut c)
                        .unwrap();
                    black_box(bytes.iter().map(|&b| u32::from(b)).collect::<Vec<_>>());
                }
                started.elapsed()
            }),
        ));
    }
    if let Some(mut c) = con() {
        let mut cmd = redis::cmd("BITFIELD");
        cmd.arg("views");
        for m in 0..RANGE_BUCKETS {
            cmd.arg("GET").arg("u8").arg(format!("#{m}"));
        }
        read.push(arm(
            "redis bitfield get",
            sizes.reads,
            Box::new(move |n| {
                let started = Instant::now();
                for _ in 0..n {
                    let v: Vec<u32> = cmd.query(&mut c).unwrap();
                    black_box(v);
                }
                started.elapsed()
            }),
        ));
    }
    let packed_range = ("`PackedSeries::range`", "mcds packed range");
    let job = "read 60 minutes' counts (`u8`)";
    rows.push(row(
        job,
        packed_range,
        ("`GETRANGE key 0 59`", "redis getrange"),
    ));
    rows.push(row(
        job,
        packed_range,
        (
            "`BITFIELD key GET u8 #0 … GET u8 #59`",
            "redis bitfield get",
        ),
    ));
    groups.push(read);

    run_rounds(&mut groups, sizes.rounds, &memcached);

    let all: Vec<&Arm<'_>> = groups.iter().flatten().collect();
    let rate = |id: &str| {
        all.iter()
            .find(|a| a.id == id)
            .map(|a| median(a.samples.clone()))
    };
    println!();
    println!(
        "mcds time series against Redis: {} interleaved rounds{}; medians of throughput, ratio mcds / redis (above 1: mcds is faster)",
        sizes.rounds,
        if is_bench_run() {
            ""
        } else {
            " (smoke run: tiny rounds, the figures mean nothing)"
        }
    );
    if let Some(raw) = all.iter().find(|a| a.id == "raw incr") {
        println!("{}", mode_line(&raw.samples));
    }
    if redis.is_none() {
        println!("(no redis-server: the redis rows are missing)");
    }
    println!();
    println!("| job | mcds | mcds ops/s | Redis | Redis ops/s | mcds / Redis |");
    println!("|---|---|---:|---|---:|---:|");
    for r in &rows {
        let (Some(ours), Some(theirs)) = (rate(&r.mcds.1), rate(&r.redis.1)) else {
            continue;
        };
        println!(
            "| {} | {} | {} | {} | {} | {:.2}× |",
            r.job,
            r.mcds.0,
            thousands(ours),
            r.redis.0,
            thousands(theirs),
            ours / theirs
        );
    }

    // Memory: the same samples into a fresh series / sorted set per
    // density, one-second buckets, the server's own accounting before and
    // after.
    println!();
    println!(
        "bytes of server memory per sample, {} samples per row: mcds keeps a bucket's aggregates (one 42-byte item: count, sum, min, max), Redis's sorted set keeps every sample",
        sizes.memory_samples
    );
    println!();
    println!(
        "| samples per 1 s bucket | mcds: memcached `bytes` Δ / sample | memcached items | Redis: `used_memory` Δ / sample | Redis: `MEMORY USAGE` / sample |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let mut redis_con = con();
    let n = sizes.memory_samples;
    for density in sizes.memory_densities {
        let name = format!("mem{density}");
        let s = series(&name, &[(SECOND, DAY)]);
        let first = (start - n / density * 1000) / 1000 * 1000;
        let ts = |i: u64| first + i / density * 1000 + i % density;
        let (bytes, items) = (memcached.stat("bytes"), memcached.stat("curr_items"));
        for i in 0..n {
            s.record(ts(i), value(i)).unwrap();
        }
        let (bytes, items) = (
            memcached.stat("bytes") - bytes,
            memcached.stat("curr_items") - items,
        );
        let theirs = redis_con.as_mut().map(|c| {
            let before = info_field(c, "memory", "used_memory");
            for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
                let mut pipe = redis::pipe();
                for &i in chunk {
                    let t = ts(i);
                    pipe.cmd("ZADD")
                        .arg(&name)
                        .arg(t)
                        .arg(format!("{t}:{}", value(i)));
                }
                let _: Vec<i64> = pipe.query(c).unwrap();
            }
            let used = info_field(c, "memory", "used_memory").saturating_sub(before);
            let usage: u64 = redis::cmd("MEMORY")
                .arg(&["USAGE", name.as_str(), "SAMPLES", "0"])
                .query(c)
                .unwrap();
            (used, usage)
        });
        let per = |b: u64| format!("{:.1}", b as f64 / n as f64);
        let (used, usage) = theirs.map_or(("–".into(), "–".into()), |(u, m)| (per(u), per(m)));
        println!(
            "| {density} | {} | {items} | {used} | {usage} |",
            per(bytes)
        );
    }
    // Packed: one day of u8 minutes is one item of 1442 bytes / a string.
    let mem = packed("mem-packed");
    let bytes = memcached.stat("bytes");
    mem.incr(day_start, 1).unwrap();
    let bytes = memcached.stat("bytes") - bytes;
    let theirs = redis_con.as_mut().map(|c| {
        let _: Vec<i64> = redis::cmd("BITFIELD")
            .arg(&["mem-packed", "INCRBY", "u8", "#1439", "1"])
            .query(c)
            .unwrap();
        let usage: u64 = redis::cmd("MEMORY")
            .arg(&["USAGE", "mem-packed", "SAMPLES", "0"])
            .query(c)
            .unwrap();
        usage
    });
    println!();
    println!(
        "a day of `u8` per-minute counters (1440 slots): mcds {bytes} bytes (memcached `bytes` Δ, one item), {:.2} a slot; Redis {} (`MEMORY USAGE` of the `BITFIELD` string)",
        bytes as f64 / 1440.0,
        theirs.map_or("–".to_string(), |u| format!(
            "{u} bytes, {:.2} a slot",
            u as f64 / 1440.0
        ))
    );
    println!(
        "(memcached's `bytes` counts items with their headers and keys, not the unused tail of their slab chunks; Redis's `used_memory` is what its allocator holds)"
    );
}
