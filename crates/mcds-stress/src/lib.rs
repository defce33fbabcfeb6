//! # mcds-stress
//!
//! Workloads that tests run in separate OS processes (`mcds-stress-worker`),
//! so that concurrency claims are checked across processes, not only
//! threads. Each workload prints one line of results on stdout.

pub mod history;
pub mod matrix;

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Clock, Key, Result, Store, Ttl};
use mcds_counter::{Counter, CounterMap, RateLimiter, Window};
use mcds_eventlog::EventLog;
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_set::{Set, ShardedSet};
use mcds_timeseries::{Resolution, Stats, TimeSeries};

/// Connect to `servers` (`host:port[,host:port...]`).
pub fn connect(servers: &str) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(MemcachedStore::connect(servers)?))
}

/// Write `count` small items (`flood:<n>`, 32-byte values: the slab class
/// of a lock item or a counter) from number `start` on, in one pipelined
/// batch: memory pressure that makes memcached evict. Returns how many
/// writes failed.
pub fn flood(store: &dyn Store, start: u64, count: u64) -> usize {
    let keys: Vec<Key> = (start..start.saturating_add(count))
        .filter_map(|i| Key::new(format!("flood:{i:09}")).ok())
        .collect();
    let ops: Vec<mcds_core::Op<'_>> = keys
        .iter()
        .map(|key| mcds_core::Op::Set {
            key,
            value: &[b'x'; 32],
            ttl: Ttl::Never,
        })
        .collect();
    store.pipeline(&ops).iter().filter(|r| r.is_err()).count()
}

/// Connect with short timeouts (300 ms), for workloads run against
/// servers that are being frozen and restarted.
pub fn connect_impatient(servers: &str) -> Result<Arc<dyn Store>> {
    impatient_store(servers, 0)
}

/// [`connect_impatient`] for SERVERS of the form `quorum:a,b,c`: a
/// [`QuorumStore`](mcds_core::QuorumStore) of one impatient store per
/// server (the workers' quorum-lock runs); any other form as
/// [`connect_impatient`].
pub fn connect_lock_store(servers: &str) -> Result<Arc<dyn Store>> {
    let Some(list) = servers.strip_prefix("quorum:") else {
        return connect_impatient(servers);
    };
    let members = list
        .split(',')
        .map(|server| Ok((server.to_string(), connect_impatient(server)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(mcds_core::QuorumStore::new(members)?))
}

/// [`connect_impatient`]'s store, with an item size limit of
/// `item_limit` bytes (0: the default).
pub fn impatient_store(servers: &str, item_limit: usize) -> Result<Arc<dyn Store>> {
    let short = Duration::from_millis(300);
    let mut builder = MemcachedStore::builder()
        .io_timeout(short)
        .connect_timeout(short)
        .down_backoff(Duration::from_millis(20), Duration::from_millis(200));
    if item_limit > 0 {
        builder = builder.item_size_limit(item_limit);
    }
    Ok(Arc::new(builder.connect(servers.split(','))?))
}

/// `threads` threads each increment counter `name` `n` times. Prints
/// `incremented <total>`.
pub fn counter(store: Arc<dyn Store>, name: &str, threads: usize, n: u64) -> Result<String> {
    let counter = Counter::new(store, name)?;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<u64> {
                    for _ in 0..n {
                        counter.incr(1)?;
                    }
                    Ok(n)
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h.join().map_err(|_| panic_error())??;
        }
        Ok(format!("incremented {total}"))
    })
}

/// The processes of [`counter_map_race`]: two increment, one removes.
pub const COUNTER_MAP_RACERS: u64 = 3;

/// `remove` racing the first touches of a brand-new `CounterMap`, as
/// process `id` of [`COUNTER_MAP_RACERS`]: in round `r` the map is
/// `<name><r>` (its registry missing at the start of every round) and
/// its field `f`; processes 0 and 1 `incr("f", 1)` three times, process
/// 2 `remove("f")` twice. The processes start each round together: each
/// increments `barrier:<name>:<r>` and waits until all have, then for a
/// stagger of its own. Prints
/// `raced <rounds>`; the test then checks every map.
pub fn counter_map_race(store: Arc<dyn Store>, name: &str, id: u64, rounds: u64) -> Result<String> {
    for round in 0..rounds {
        let barrier = Key::new(format!("barrier:{name}:{round}"))?;
        store.incr_or_init(&barrier, 1, 1, Ttl::secs(600))?;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while store.get(&barrier)?.and_then(|i| i.counter()) < Some(COUNTER_MAP_RACERS) {
            if std::time::Instant::now() > deadline {
                return Err(mcds_core::Error::Internal(format!(
                    "round {round}: the other racers did not arrive within 10 s"
                )));
            }
            std::thread::yield_now();
        }
        // Then each waits 0 to 149 µs, a different time every round (the
        // same in every run): the race needs the removal to land between
        // an increment's miss and its create.
        let stagger = mcds_core::stable_hash128(format!("{round}:{id}").as_bytes()) % 150;
        let go = std::time::Instant::now() + Duration::from_micros(stagger as u64);
        while std::time::Instant::now() < go {
            std::hint::spin_loop();
        }
        let map = CounterMap::new(Arc::clone(&store), &format!("{name}{round}"))?;
        if id + 1 < COUNTER_MAP_RACERS {
            for _ in 0..3 {
                map.incr("f", 1)?;
            }
        } else {
            for _ in 0..2 {
                map.remove("f")?;
            }
        }
    }
    Ok(format!("raced {rounds}"))
}

/// The resolutions of the `timeseries` workload's series: 1 s kept an
/// hour, 1 min kept a day, 1 h kept 30 days.
pub fn timeseries_resolutions() -> Result<Vec<Resolution>> {
    let (hour, day) = (Duration::from_secs(3600), Duration::from_secs(86_400));
    Ok(vec![
        Resolution::new(Duration::from_secs(1), hour)?,
        Resolution::new(Duration::from_secs(60), day)?,
        Resolution::new(hour, 30 * day)?,
    ])
}

/// `threads` threads each record `n` samples into time series `name` (at
/// [`timeseries_resolutions`]), at times `t0_ms` to `t0_ms + 3999` (with a
/// clock standing at `t0_ms`, so every worker agrees on retention), with
/// values drawn from a generator seeded by `id` and the thread: small,
/// large and full-range `i64`. Prints
/// `recorded <n> sum <sum> min <min> max <max>` of the acknowledged records.
pub fn timeseries(
    store: Arc<dyn Store>,
    name: &str,
    id: u64,
    t0_ms: u64,
    threads: u64,
    n: u64,
) -> Result<String> {
    let clock = Arc::new(mcds_core::ManualClock::new(t0_ms));
    let scope = mcds_core::Scope::new(store).with_clock(clock);
    let series = TimeSeries::new(&scope, name, &timeseries_resolutions()?)?;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let series = &series;
                s.spawn(move || -> Result<Option<Stats>> {
                    // xorshift64*, seeded per process and thread.
                    let mut state = (id << 32 | thread) ^ 0x9e37_79b9_7f4a_7c15;
                    let mut next = move || {
                        state ^= state >> 12;
                        state ^= state << 25;
                        state ^= state >> 27;
                        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
                    };
                    let mut done: Option<Stats> = None;
                    for _ in 0..n {
                        let r = next();
                        let value = match r % 100 {
                            0..70 => (next() % 2001) as i64 - 1000,
                            70..95 => (next() >> 18) as i64 - (1 << 45),
                            _ => next() as i64,
                        };
                        series.record(t0_ms + (r >> 40) % 4000, value)?;
                        merge_into(&mut done, Stats::of(value));
                    }
                    Ok(done)
                })
            })
            .collect();
        let mut total: Option<Stats> = None;
        for h in handles {
            if let Some(part) = h.join().map_err(|_| panic_error())?? {
                merge_into(&mut total, part);
            }
        }
        let t = total.unwrap_or(Stats {
            count: 0,
            sum: 0,
            min: 0,
            max: 0,
        });
        Ok(format!(
            "recorded {} sum {} min {} max {}",
            t.count, t.sum, t.min, t.max
        ))
    })
}

/// Merge `stats` into `total` (`None`: no sample yet).
fn merge_into(total: &mut Option<Stats>, stats: Stats) {
    match total {
        Some(t) => t.merge(&stats),
        None => *total = Some(stats),
    }
}

fn panic_error() -> mcds_core::Error {
    mcds_core::Error::Internal("a worker thread panicked".into())
}

/// Take `lock` (waiting up to `wait`), count ourselves in `inside` (which
/// must then read 1), run `body`, count ourselves out and release: whether
/// someone else was inside, and whether the lease was lost.
fn critical_section(
    store: &dyn Store,
    lock: &Lock,
    inside: &Key,
    wait: Duration,
    body: impl FnOnce() -> Result<()>,
) -> Result<(bool, bool)> {
    let guard = lock.acquire(wait)?;
    let overlapped = store.incr_or_init(inside, 1, 1, Ttl::Never)? != 1;
    body()?;
    store.decr(inside, 1)?;
    Ok((overlapped, guard.release()? == Release::Lost))
}

/// Take lock `name` `rounds` times. Inside the critical section: mark
/// ourselves inside (a shared counter that must read 1), do a non-atomic
/// read-modify-write of `<name>:shared`, unmark. Prints
/// `rounds <n> overlaps <m> lost <k>`.
pub fn lock(store: Arc<dyn Store>, name: &str, rounds: usize) -> Result<String> {
    let lock = Lock::new(Arc::clone(&store), name, Duration::from_secs(30))?
        .with_backoff(Duration::from_micros(50), Duration::from_millis(2));
    let inside = Key::new(format!("{name}:inside"))?;
    let shared = Key::new(format!("{name}:shared"))?;
    let (mut overlaps, mut lost) = (0, 0);
    for _ in 0..rounds {
        let (overlapped, was_lost) = critical_section(
            store.as_ref(),
            &lock,
            &inside,
            Duration::from_secs(120),
            || {
                let n = store.get(&shared)?.and_then(|i| i.counter()).unwrap_or(0);
                store
                    .set(&shared, (n + 1).to_string().as_bytes(), Ttl::Never)
                    .map(drop)
            },
        )?;
        overlaps += u64::from(overlapped);
        lost += u64::from(was_lost);
    }
    Ok(format!("rounds {rounds} overlaps {overlaps} lost {lost}"))
}

/// Worker `id` adds `rounds` batches of 10 members `"<id>:<n>"` to set
/// `name` and removes the odd ones again. Prints `set <id> kept <k>`.
pub fn set(store: Arc<dyn Store>, name: &str, id: u64, rounds: u64) -> Result<String> {
    let set = Set::new(store, name)?;
    for round in 0..rounds {
        let batch: Vec<String> = (0..10)
            .map(|i| format!("{id}:{}", round * 10 + i))
            .collect();
        set.add(&batch)?;
        let odd: Vec<&String> = batch.iter().skip(1).step_by(2).collect();
        set.remove(&odd)?;
        if round % 10 == 0 {
            set.members()?;
        }
    }
    Ok(format!("set {id} kept {}", rounds * 5))
}

/// Which structure a [`grow`] worker writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grown {
    /// A [`Set`] (`add`, `remove`, `contains`).
    Set,
    /// A [`mcds_set::Table`] (`set`, `delete`, `has`): its member list is
    /// a growing set.
    Table,
    /// A [`mcds_sketch::Leaderboard`] of [`GROW_BOARD_CAPACITY`] members,
    /// kept in shards (`incr_many`, `incr` of a member every writer
    /// shares, `score`).
    Leaderboard,
    /// A [`mcds_counter::CounterMap`] (`incr`, `remove`, `get`): its field
    /// registry is a growing set.
    CounterMap,
}

/// The capacity of a [`grow`] workload's leaderboard: more than the
/// members 4 writers of 150 rounds count (4 800), so that it stays exact,
/// in 75 shards.
pub const GROW_BOARD_CAPACITY: u32 = 10_000;

/// The count a [`grow`] leaderboard writer gives member `"<id>:<n>"`.
pub fn grow_board_count(n: u64) -> u64 {
    n % 5 + 1
}

/// The buckets of a [`grow`] workload's set: 512 bytes, so that a few
/// thousand members split them hundreds of times while the writers run.
pub const GROW_BUCKET_BYTES: usize = 512;

/// One writer of a structure whose buckets split while it runs: `rounds`
/// rounds of adding 8 members `"<id>:<n>"` (one batch for a set, one call
/// each for a table), removing the odd ones, and checking that every
/// member it added in the previous round reads as present or absent as it
/// should. Prints `grow <id> kept <n> wrong <reads that were wrong>`.
pub fn grow(
    store: Arc<dyn Store>,
    what: Grown,
    name: &str,
    id: u64,
    rounds: u64,
) -> Result<String> {
    let set = Set::new(Arc::clone(&store), name)?.with_bucket_bytes(GROW_BUCKET_BYTES);
    let table =
        mcds_set::Table::new(Arc::clone(&store), name)?.with_bucket_bytes(GROW_BUCKET_BYTES);
    let board = mcds_sketch::Leaderboard::new(Arc::clone(&store), name, GROW_BOARD_CAPACITY)?;
    let map = CounterMap::new(Arc::clone(&store), name)?.with_bucket_bytes(GROW_BUCKET_BYTES);
    let mut wrong = 0;
    let mut previous: Vec<String> = Vec::new();
    for round in 0..rounds {
        let batch: Vec<String> = (0..8).map(|i| format!("{id}:{}", round * 8 + i)).collect();
        let odd: Vec<&String> = batch.iter().skip(1).step_by(2).collect();
        match what {
            Grown::Set => {
                set.add(&batch)?;
                set.remove(&odd)?;
            }
            Grown::Table => {
                for m in &batch {
                    table.set(m, m.as_bytes())?;
                }
                for m in &odd {
                    table.delete(m)?;
                }
            }
            Grown::Leaderboard => {
                let increments: Vec<(&String, u64)> = (0..8)
                    .map(|i| (&batch[i as usize], grow_board_count(round * 8 + i)))
                    .collect();
                board.incr_many(&increments)?;
                board.incr("hot", 1)?;
            }
            Grown::CounterMap => {
                for (i, m) in batch.iter().enumerate() {
                    map.incr(m, grow_board_count(round * 8 + i as u64) as i64)?;
                }
                for m in &odd {
                    map.remove(m)?;
                }
            }
        }
        for (i, m) in previous.iter().enumerate() {
            let right = match what {
                Grown::Set => set.contains(m)? == (i % 2 == 0),
                Grown::Table => table.has(m)? == (i % 2 == 0),
                Grown::Leaderboard => {
                    let n = (round - 1) * 8 + i as u64;
                    board.score(m)?.map(|e| e.count) == Some(grow_board_count(n))
                }
                Grown::CounterMap => {
                    let n = (round - 1) * 8 + i as u64;
                    let want = if i % 2 == 0 {
                        grow_board_count(n) as i64
                    } else {
                        0
                    };
                    map.get(m)? == want
                }
            };
            if !right {
                wrong += 1;
            }
        }
        previous = batch;
    }
    Ok(format!("grow {id} kept {} wrong {wrong}", rounds * 4))
}

/// One writer of an event log: puts events `"<id>:<n>"` as fast as one
/// connection takes them for `millis` ms into the log `name` with chunks
/// of `chunk_secs` seconds (one hour puts every event in one chunk, whose
/// slices outgrow one item), with a client item limit of `item_limit`
/// bytes (the server's `-I`). Prints `events <id> put <n> in <ms> ms`:
/// every put acknowledged, and the time from the first put to the last
/// reply.
pub fn events(
    servers: &str,
    name: &str,
    id: u64,
    millis: u64,
    item_limit: usize,
    chunk_secs: u64,
) -> Result<String> {
    let store = impatient_store(servers, item_limit)?;
    let log = EventLog::new(store, name, Duration::from_secs(chunk_secs), 3)?;
    let started = std::time::Instant::now();
    let deadline = started + Duration::from_millis(millis);
    let mut n = 0u64;
    while std::time::Instant::now() < deadline {
        log.put(format!("{id}:{n}").as_bytes())?;
        n += 1;
    }
    Ok(format!(
        "events {id} put {n} in {} ms",
        started.elapsed().as_millis()
    ))
}

/// Read back the log the [`events`] writers put into: `puts` is each
/// writer's id and how many puts it had acknowledged. Prints
/// `checked <n> events: <lost> lost, <twice> returned twice, <other> not put`
/// and fails unless all three are 0.
pub fn events_check(
    servers: &str,
    name: &str,
    item_limit: usize,
    chunk_secs: u64,
    puts: &[(u64, u64)],
) -> Result<String> {
    let store = impatient_store(servers, item_limit)?;
    let log = EventLog::new(store, name, Duration::from_secs(chunk_secs), 3)?;
    let mut want: std::collections::HashSet<String> = puts
        .iter()
        .flat_map(|&(id, n)| (0..n).map(move |i| format!("{id}:{i}")))
        .collect();
    let events = log.fetch(0, u64::MAX)?;
    let (mut twice, mut other) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    for event in &events {
        let payload = String::from_utf8_lossy(&event.payload).into_owned();
        if !seen.insert(payload.clone()) {
            twice += 1;
        } else if !want.remove(&payload) {
            other += 1;
        }
    }
    let line = format!(
        "checked {} events: {} lost, {twice} returned twice, {other} not put",
        events.len(),
        want.len()
    );
    if want.is_empty() && twice == 0 && other == 0 {
        Ok(line)
    } else {
        Err(mcds_core::Error::Corrupt {
            key: name.to_string(),
            reason: line,
        })
    }
}

/// What one [`mixed`] worker did, as printed on its line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MixedReport {
    /// The worker's id.
    pub id: u64,
    /// Loop iterations (each iteration's set member is `"<id>:<i>"`).
    pub iterations: u64,
    /// Acknowledged counter increments.
    pub increments: u64,
    /// Lock rounds.
    pub lock_rounds: u64,
    /// Critical sections that found someone else inside.
    pub overlaps: u64,
    /// Releases that reported the lease lost.
    pub lost: u64,
    /// Events put (payload `"<id>:<n>"` for n in 0..events).
    pub events: u64,
    /// Rate limiter checks.
    pub rate_checks: u64,
    /// Allowed checks per fixed window number (checks that straddled a
    /// window boundary are left out).
    pub allowed: Vec<(u64, u64)>,
}

impl MixedReport {
    /// The one-line form the worker prints.
    pub fn line(&self) -> String {
        let allowed: Vec<String> = self
            .allowed
            .iter()
            .map(|(w, n)| format!("{w}:{n}"))
            .collect();
        format!(
            "mixed id={} iterations={} increments={} lock_rounds={} overlaps={} lost={} events={} rate_checks={} allowed={}",
            self.id,
            self.iterations,
            self.increments,
            self.lock_rounds,
            self.overlaps,
            self.lost,
            self.events,
            self.rate_checks,
            allowed.join(",")
        )
    }

    /// Parse [`line`](Self::line).
    pub fn parse(line: &str) -> Option<MixedReport> {
        let mut r = MixedReport::default();
        let mut fields = line.strip_prefix("mixed ")?.split(' ');
        for field in fields.by_ref() {
            let (name, value) = field.split_once('=')?;
            let number = || value.parse::<u64>().ok();
            match name {
                "id" => r.id = number()?,
                "iterations" => r.iterations = number()?,
                "increments" => r.increments = number()?,
                "lock_rounds" => r.lock_rounds = number()?,
                "overlaps" => r.overlaps = number()?,
                "lost" => r.lost = number()?,
                "events" => r.events = number()?,
                "rate_checks" => r.rate_checks = number()?,
                "allowed" => {
                    for pair in value.split(',').filter(|p| !p.is_empty()) {
                        let (w, n) = pair.split_once(':')?;
                        r.allowed.push((w.parse().ok()?, n.parse().ok()?));
                    }
                }
                _ => return None,
            }
        }
        Some(r)
    }
}

/// The structures the mixed load shares, by name (every worker and the
/// checking test build the same ones).
pub struct Mixed {
    /// The exact counter.
    pub counter: Counter,
    /// The lock.
    pub lock: Lock,
    /// `<name>:inside`: holders inside the critical section.
    pub inside: Key,
    /// Members `"<id>:<i>"`, the ones with `i % 3 == 0` removed again.
    pub set: ShardedSet,
    /// Events `"<id>:<n>"`: 2 s chunks, 60 of them (118 s kept).
    pub log: EventLog,
    /// [`MIXED_RATE_LIMIT`] checks per 2 s fixed window.
    pub limiter: RateLimiter,
}

/// Allowed requests per window of the mixed load's rate limiter.
pub const MIXED_RATE_LIMIT: u64 = 400;

/// The mixed load's rate limiter window.
pub const MIXED_RATE_WINDOW: Duration = Duration::from_secs(2);

impl Mixed {
    /// The structures named `name` on `store`.
    pub fn new(store: Arc<dyn Store>, name: &str) -> Result<Mixed> {
        Ok(Mixed {
            counter: Counter::new(Arc::clone(&store), name)?,
            lock: Lock::new(Arc::clone(&store), name, Duration::from_secs(30))?
                .with_backoff(Duration::from_micros(100), Duration::from_millis(5)),
            inside: Key::new(format!("{name}:inside"))?,
            set: ShardedSet::new(Arc::clone(&store), name, 32)?,
            log: EventLog::new(Arc::clone(&store), name, Duration::from_secs(2), 60)?,
            limiter: RateLimiter::new(
                store,
                name,
                MIXED_RATE_LIMIT,
                MIXED_RATE_WINDOW,
                Window::Fixed,
            )?,
        })
    }
}

/// Worker `id` runs mixed ops on the structures named `name` for `secs`
/// seconds: every iteration increments the counter, adds a set member (and
/// removes every third one again), puts an event and checks the rate
/// limiter; every fourth takes the lock around a non-atomic section. Any
/// error ends the worker (no faults are injected in the load test).
pub fn mixed(store: Arc<dyn Store>, name: &str, id: u64, secs: u64) -> Result<MixedReport> {
    let m = Mixed::new(Arc::clone(&store), name)?;
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    let mut r = MixedReport {
        id,
        ..MixedReport::default()
    };
    let mut allowed = std::collections::BTreeMap::new();
    let window_ms = MIXED_RATE_WINDOW.as_millis() as u64;
    while std::time::Instant::now() < deadline {
        let i = r.iterations;
        m.counter.incr(1)?;
        r.increments += 1;
        let member = format!("{id}:{i}");
        m.set.add(&[&member])?;
        if i % 3 == 0 {
            m.set.remove(&[&member])?;
        }
        m.log.put(format!("{id}:{}", r.events).as_bytes())?;
        r.events += 1;
        let before = mcds_core::SystemClock.now_ms() / window_ms;
        let decision = m.limiter.check()?;
        let after = mcds_core::SystemClock.now_ms() / window_ms;
        r.rate_checks += 1;
        // A check that straddles a window boundary cannot be attributed to
        // a window: left out of the per-window counts.
        if decision.allowed && before == after {
            *allowed.entry(before).or_insert(0) += 1;
        }
        if i % 4 == 0 {
            let (overlapped, lost) = critical_section(
                store.as_ref(),
                &m.lock,
                &m.inside,
                Duration::from_secs(60),
                || Ok(()),
            )?;
            r.overlaps += u64::from(overlapped);
            r.lost += u64::from(lost);
            r.lock_rounds += 1;
        }
        r.iterations += 1;
    }
    r.allowed = allowed.into_iter().collect();
    Ok(r)
}
