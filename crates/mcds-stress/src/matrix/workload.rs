//! The matrix's workload: what a writer does to each structure, and how a
//! reader checks each structure against the writers' logs.
//!
//! Each structure has [`OBJECTS`] instances (so that on a pool some live
//! on each server). Call number `seq` of worker `w` goes to instance
//! `seq % OBJECTS` and writes something only that call writes: element
//! `w · 1,000,000 + seq`, or one increment. So the reader knows, from the
//! logs alone, what every instance must hold: everything acknowledged,
//! and nothing that was neither acknowledged nor maybe applied.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcds_core::{Error, ManualClock, Result, Scope, Store};
use mcds_counter::{
    Counter, CounterMap, RateLimiter, ShadowCounter, ViewCounter, Window, WindowCounter,
};
use mcds_eventlog::EventLog;
use mcds_lock::{Lock, Release};
use mcds_set::{IntArray, Set, ShardedSet, Table};
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};
use mcds_timeseries::{PackedSeries, Resolution, SlotWidth, TimeSeries};

use super::{Call, Outcome, Structure, Tally};

/// Instances of each structure.
pub const OBJECTS: u64 = 3;

/// A rate limiter instance's limit (per hour: the run stays in one window).
pub const RATE_LIMIT: u64 = 40;

/// Fields of each `CounterMap` instance, members of each `Leaderboard`.
const FIELDS: u64 = 4;

/// A lock's lease: longer than any run's pause, so a lease never ends by
/// expiry while its holder works.
const LOCK_TTL: Duration = Duration::from_secs(5);

/// The slot of the window counter and the period of the shadow counter.
const SLOT: Duration = Duration::from_secs(60);

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Element `seq` of worker `worker`: unique across the run.
pub fn element(worker: u64, seq: u64) -> u64 {
    worker * 1_000_000 + seq
}

/// The instance call `seq` goes to.
pub fn object(seq: u64) -> usize {
    (seq % OBJECTS) as usize
}

fn field(seq: u64) -> String {
    format!("f{}", (seq / OBJECTS) % FIELDS)
}

/// Every structure's instances, opened on one store with a clock that
/// stands at the run's time `t_ms` (so every windowed structure stays in
/// one window), and readers of the windowed counters a slot later.
pub struct Handles {
    t_ms: u64,
    counters: Vec<Counter>,
    views: Vec<ViewCounter>,
    shadows: Vec<ShadowCounter>,
    shadows_later: Vec<ShadowCounter>,
    windows: Vec<WindowCounter>,
    windows_later: Vec<WindowCounter>,
    limiters: Vec<RateLimiter>,
    maps: Vec<CounterMap>,
    locks: Vec<Lock>,
    logs: Vec<EventLog>,
    sets: Vec<Set>,
    sharded: Vec<ShardedSet>,
    ints: Vec<IntArray>,
    tables: Vec<Table>,
    blooms: Vec<BloomFilter>,
    scalable: Vec<ScalableBloomFilter>,
    hlls: Vec<HyperLogLog>,
    bitmaps: Vec<ActivityBitmap>,
    boards: Vec<Leaderboard>,
    series: Vec<TimeSeries>,
    packed: Vec<PackedSeries>,
}

fn each<T>(f: impl Fn(String) -> Result<T>) -> Result<Vec<T>> {
    (0..OBJECTS).map(|i| f(format!("mx{i}"))).collect()
}

impl Handles {
    /// Open every instance on `store` at time `t_ms` (a whole second, not
    /// ahead of the real clock, after the servers started: see
    /// `mcds_testkit::a_second_after_now`).
    pub fn open(store: Arc<dyn Store>, t_ms: u64) -> Result<Handles> {
        let at = |ms| Scope::new(Arc::clone(&store)).with_clock(Arc::new(ManualClock::new(ms)));
        let now = at(t_ms);
        let later = at(t_ms + SLOT.as_millis() as u64);
        let resolution = Resolution::new(Duration::from_secs(1), Duration::from_secs(3600))?;
        Ok(Handles {
            t_ms,
            counters: each(|n| Counter::new(&now, &n))?,
            views: each(|n| ViewCounter::new(&now, &n))?,
            shadows: each(|n| ShadowCounter::new(&now, &n, SLOT))?,
            shadows_later: each(|n| ShadowCounter::new(&later, &n, SLOT))?,
            windows: each(|n| WindowCounter::new(&now, &n, SLOT, 3))?,
            windows_later: each(|n| WindowCounter::new(&later, &n, SLOT, 3))?,
            limiters: each(|n| {
                RateLimiter::new(
                    &now,
                    &n,
                    RATE_LIMIT,
                    Duration::from_secs(3600),
                    Window::Fixed,
                )
            })?,
            maps: each(|n| CounterMap::new(&now, &n))?,
            locks: each(|n| Ok(Lock::new(&now, &n, LOCK_TTL)?.with_fencing(true)))?,
            logs: each(|n| EventLog::new(&now, &n, SLOT, 10))?,
            sets: each(|n| Set::new(&now, &n))?,
            sharded: each(|n| ShardedSet::new(&now, &n, 4))?,
            ints: each(|n| IntArray::new(&now, &n))?,
            tables: each(|n| Table::new(&now, &n))?,
            blooms: each(|n| BloomFilter::new(&now, &n, 2_000, 0.01))?,
            scalable: each(|n| ScalableBloomFilter::new(&now, &n, 50, 0.01))?,
            hlls: each(|n| HyperLogLog::new(&now, &n))?,
            bitmaps: each(|n| ActivityBitmap::new(&now, &n, 0, Duration::from_millis(1)))?,
            boards: each(|n| Leaderboard::new(&now, &n, FIELDS as u32))?,
            series: each(|n| {
                Ok(TimeSeries::new(&now, &n, &[resolution])?.with_max_clock_skew(Duration::ZERO))
            })?,
            packed: each(|n| {
                Ok(PackedSeries::new(
                    &now,
                    &n,
                    Duration::from_secs(1),
                    60,
                    SlotWidth::U32,
                    Duration::from_secs(3600),
                )?
                .with_max_clock_skew(Duration::ZERO))
            })?,
        })
    }

    /// Worker `worker`'s call number `seq` to `structure`. `Ok` carries
    /// what the reader needs to know of the answer (a lock's grant, a
    /// rate limiter's decision), or nothing.
    pub fn write(&self, structure: Structure, worker: u64, seq: u64) -> Result<String> {
        let i = object(seq);
        let u = element(worker, seq);
        let bytes = u.to_string();
        match structure {
            Structure::Counter => none(self.counters[i].incr(1)),
            Structure::ViewCounter => none(self.views[i].view(|| Ok(0))),
            Structure::ShadowCounter => none(self.shadows[i].incr(1)),
            Structure::WindowCounter => none(self.windows[i].incr(1)),
            Structure::RateLimiter => self.limiters[i]
                .check()
                .map(|d| if d.allowed { "1" } else { "0" }.into()),
            Structure::CounterMap => none(self.maps[i].incr(&field(seq), 1)),
            Structure::Lock => {
                let asked = now_us();
                let Some(guard) = self.locks[i].try_acquire()? else {
                    return Ok("n".into());
                };
                let granted = now_us();
                let token = guard.fencing_token().unwrap_or(0);
                let releasing = now_us();
                let release = match guard.release() {
                    Ok(Release::Released) => "released",
                    Ok(Release::Lost) => "lost",
                    Err(_) => "err",
                };
                Ok(format!(
                    "g {token} {asked} {granted} {releasing} {} {release}",
                    now_us()
                ))
            }
            Structure::EventLog => none(self.logs[i].put(bytes.as_bytes())),
            Structure::Set => none(self.sets[i].add(&[&bytes])),
            Structure::ShardedSet => none(self.sharded[i].add(&[&bytes])),
            Structure::IntArray => none(self.ints[i].add(&[u as i64])),
            Structure::Table => none(self.tables[i].set(&bytes, bytes.as_bytes())),
            Structure::BloomFilter => none(self.blooms[i].add(&bytes)),
            Structure::ScalableBloomFilter => none(self.scalable[i].add(&bytes)),
            Structure::HyperLogLog => none(self.hlls[i].add(&bytes)),
            Structure::ActivityBitmap => none(self.bitmaps[i].set(seq * 4 + worker)),
            Structure::Leaderboard => none(self.boards[i].incr(field(seq), 1)),
            Structure::TimeSeries => none(self.series[i].record(self.t_ms, 1)),
            Structure::PackedSeries => none(self.packed[i].incr(self.t_ms, 1)),
        }
    }

    /// Read every instance of `structure` and check it against `calls`
    /// (every worker's calls to it): count the calls and the reads into
    /// `tally`.
    pub fn check(&self, structure: Structure, calls: &[Call], tally: &mut Tally) {
        tally.count_calls(calls);
        for i in 0..OBJECTS as usize {
            let mine: Vec<&Call> = calls.iter().filter(|c| object(c.seq) == i).collect();
            let books = Books::of(&mine);
            let what = format!("{}[{i}]", structure.name());
            match structure {
                Structure::Counter => count(tally, &what, self.counters[i].get(), &books),
                Structure::ViewCounter => count(tally, &what, self.views[i].get(|| Ok(0)), &books),
                Structure::ShadowCounter => {
                    count(tally, &what, self.shadows_later[i].value(), &books)
                }
                Structure::WindowCounter => {
                    count(tally, &what, self.windows_later[i].value(), &books)
                }
                Structure::TimeSeries => count(
                    tally,
                    &what,
                    self.series[i].count(self.t_ms, self.t_ms + 999, Duration::from_secs(1)),
                    &books,
                ),
                Structure::PackedSeries => count(
                    tally,
                    &what,
                    self.packed[i].get(self.t_ms).map(u64::from),
                    &books,
                ),
                Structure::RateLimiter => rate(tally, &what, &mine),
                Structure::CounterMap => fields(tally, &what, self.maps[i].get_all(), &books),
                Structure::Leaderboard => fields(
                    tally,
                    &what,
                    self.boards[i].top(FIELDS as usize).map(|top| {
                        top.into_iter()
                            .map(|e| {
                                (
                                    String::from_utf8_lossy(&e.member).into_owned(),
                                    e.count as i64,
                                )
                            })
                            .collect()
                    }),
                    &books,
                ),
                Structure::Lock => lock(tally, &what, &mine),
                Structure::EventLog => members(
                    tally,
                    &what,
                    self.logs[i]
                        .fetch(self.t_ms.saturating_sub(120_000), self.t_ms + 120_000)
                        .map(|events| events.into_iter().map(|e| text(&e.payload)).collect()),
                    &books,
                ),
                Structure::Set => members(
                    tally,
                    &what,
                    self.sets[i]
                        .members()
                        .map(|m| m.iter().map(|m| text(m)).collect()),
                    &books,
                ),
                Structure::ShardedSet => members(
                    tally,
                    &what,
                    self.sharded[i]
                        .members()
                        .map(|m| m.iter().map(|m| text(m)).collect()),
                    &books,
                ),
                Structure::IntArray => members(
                    tally,
                    &what,
                    self.ints[i]
                        .members()
                        .map(|m| m.iter().map(|v| v.to_string()).collect()),
                    &books,
                ),
                Structure::Table => members(
                    tally,
                    &what,
                    self.tables[i].entries().map(|entries| {
                        entries
                            .into_iter()
                            .map(|(k, v)| {
                                if k == v {
                                    text(&k)
                                } else {
                                    format!("{}≠{}", text(&k), text(&v))
                                }
                            })
                            .collect()
                    }),
                    &books,
                ),
                Structure::BloomFilter => {
                    let acked: Vec<String> = books.acked_elements.iter().cloned().collect();
                    present(tally, &what, self.blooms[i].contains_many(&acked), &acked)
                }
                Structure::ScalableBloomFilter => {
                    let acked: Vec<String> = books.acked_elements.iter().cloned().collect();
                    present(tally, &what, self.scalable[i].contains_many(&acked), &acked)
                }
                Structure::HyperLogLog => registers(tally, &what, &self.hlls[i], &books),
                Structure::ActivityBitmap => {
                    let acked: Vec<u64> = mine
                        .iter()
                        .filter(|c| matches!(c.outcome, Outcome::Acked(_)))
                        .map(|c| c.seq * 4 + c.worker)
                        .collect();
                    let maybe = books.maybe;
                    let read = (|| -> Result<(u64, Vec<u64>)> {
                        let total = self.bitmaps[i].count_bits(0, 4_000_000)?;
                        let mut missing = Vec::new();
                        for &index in &acked {
                            if !self.bitmaps[i].get(index)? {
                                missing.push(index);
                            }
                        }
                        Ok((total, missing))
                    })();
                    match read {
                        Err(_) => tally.flagged += 1,
                        Ok((total, missing)) if missing.is_empty() && total <= acked.len() as u64 + maybe => {
                            tally.exact += 1
                        }
                        Ok((total, missing)) => tally.wrong(format!(
                            "{what}: {total} bits set for {} acknowledged (+{maybe} maybe); {} acknowledged bits clear",
                            acked.len(),
                            missing.len()
                        )),
                    }
                }
            }
        }
    }
}

/// A call's answer the reader does not need.
fn none<T>(result: Result<T>) -> Result<String> {
    result.map(|_| String::new())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What one instance's calls acknowledged and may have applied.
#[derive(Default)]
struct Books {
    acked: u64,
    maybe: u64,
    acked_elements: BTreeSet<String>,
    maybe_elements: BTreeSet<String>,
    acked_fields: BTreeMap<String, u64>,
    maybe_fields: BTreeMap<String, u64>,
}

impl Books {
    fn of(calls: &[&Call]) -> Books {
        let mut books = Books::default();
        for call in calls {
            let element = element(call.worker, call.seq).to_string();
            let field = field(call.seq);
            match call.outcome {
                Outcome::Acked(_) => {
                    books.acked += 1;
                    books.acked_elements.insert(element);
                    *books.acked_fields.entry(field).or_default() += 1;
                }
                Outcome::Maybe(_) => {
                    books.maybe += 1;
                    books.maybe_elements.insert(element);
                    *books.maybe_fields.entry(field).or_default() += 1;
                }
                Outcome::Failed(_) => {}
            }
        }
        books
    }
}

/// A count: every acknowledged increment, and at most the maybes more.
fn count(tally: &mut Tally, what: &str, read: Result<u64>, books: &Books) {
    match read {
        Err(_) => tally.flagged += 1,
        Ok(v) if (books.acked..=books.acked + books.maybe).contains(&v) => tally.exact += 1,
        Ok(v) => tally.wrong(format!(
            "{what} read {v}; {} increments acknowledged, {} maybe",
            books.acked, books.maybe
        )),
    }
}

/// Per-field counts: each field as [`count`] checks it, no field more.
fn fields(tally: &mut Tally, what: &str, read: Result<Vec<(String, i64)>>, books: &Books) {
    let read = match read {
        Err(_) => {
            tally.flagged += 1;
            return;
        }
        Ok(read) => read,
    };
    let got: BTreeMap<String, i64> = read.into_iter().collect();
    let mut problems = Vec::new();
    let names: BTreeSet<&String> = got
        .keys()
        .chain(books.acked_fields.keys())
        .chain(books.maybe_fields.keys())
        .collect();
    for name in names {
        let acked = books.acked_fields.get(name).copied().unwrap_or(0) as i64;
        let maybe = books.maybe_fields.get(name).copied().unwrap_or(0) as i64;
        let value = got.get(name).copied().unwrap_or(0);
        if value < acked || value > acked + maybe {
            problems.push(format!("{name}={value} ({acked} acked, {maybe} maybe)"));
        }
    }
    if problems.is_empty() {
        tally.exact += 1;
    } else {
        tally.wrong(format!("{what}: {}", problems.join(", ")));
    }
}

/// Members: every acknowledged one once, none that no call wrote.
fn members(tally: &mut Tally, what: &str, read: Result<Vec<String>>, books: &Books) {
    let read = match read {
        Err(_) => {
            tally.flagged += 1;
            return;
        }
        Ok(read) => read,
    };
    let mut seen = BTreeSet::new();
    let duplicates = read.iter().filter(|m| !seen.insert(m.as_str())).count();
    let missing = books
        .acked_elements
        .iter()
        .filter(|m| !seen.contains(m.as_str()))
        .count();
    let unknown = seen
        .iter()
        .filter(|m| !books.acked_elements.contains(**m) && !books.maybe_elements.contains(**m))
        .count();
    if duplicates == 0 && missing == 0 && unknown == 0 {
        tally.exact += 1;
    } else {
        tally.wrong(format!(
            "{what}: {} read, {} acknowledged: {missing} missing, {unknown} never written, {duplicates} twice",
            read.len(),
            books.acked_elements.len()
        ));
    }
}

/// A filter: every acknowledged element present (no false negative).
fn present(tally: &mut Tally, what: &str, read: Result<Vec<bool>>, acked: &[String]) {
    match read {
        Err(_) => tally.flagged += 1,
        Ok(found) => {
            let missing = found.iter().filter(|f| !**f).count();
            if missing == 0 {
                tally.exact += 1;
            } else {
                tally.wrong(format!(
                    "{what}: {missing} of {} acknowledged elements absent",
                    acked.len()
                ));
            }
        }
    }
}

/// A HyperLogLog: its registers lie between those of the acknowledged
/// elements and those of the acknowledged and maybe ones.
fn registers(tally: &mut Tally, what: &str, hll: &HyperLogLog, books: &Books) {
    let read = match hll.registers() {
        Err(_) => {
            tally.flagged += 1;
            return;
        }
        Ok(read) => read,
    };
    let mut low = mcds_sketch::hll::Registers::new();
    for e in &books.acked_elements {
        low.insert(e.as_bytes());
    }
    let mut high = low.clone();
    for e in &books.maybe_elements {
        high.insert(e.as_bytes());
    }
    let below = (0..mcds_sketch::hll::REGISTERS)
        .filter(|&r| read.get(r) < low.get(r))
        .count();
    let above = (0..mcds_sketch::hll::REGISTERS)
        .filter(|&r| read.get(r) > high.get(r))
        .count();
    if below == 0 && above == 0 {
        tally.exact += 1;
    } else {
        tally.wrong(format!(
            "{what}: {below} registers below the acknowledged elements', {above} above every written one's"
        ));
    }
}

/// A rate limiter: at most its limit allowed, and no refusal while the
/// limit was not reached. Each decision is one read.
fn rate(tally: &mut Tally, what: &str, calls: &[&Call]) {
    let decisions: Vec<&str> = calls
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Acked(d) => Some(d.as_str()),
            _ => None,
        })
        .collect();
    let maybe = calls
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Maybe(_)))
        .count() as u64;
    let allowed = decisions.iter().filter(|d| **d == "1").count() as u64;
    let denied = decisions.len() as u64 - allowed;
    let over = allowed.saturating_sub(RATE_LIMIT);
    let under = if allowed + maybe < RATE_LIMIT {
        denied
    } else {
        0
    };
    tally.exact += decisions.len() as u64 - over - under;
    for _ in 0..over + under {
        tally.wrong(format!(
            "{what}: {allowed} allowed (limit {RATE_LIMIT}), {denied} denied, {maybe} maybe"
        ));
    }
}

/// One grant of a lock, from its log detail, with the times (µs) its
/// holder saw.
struct Grant {
    worker: u64,
    token: u64,
    /// Before `try_acquire` was called.
    asked: u64,
    /// When `try_acquire` returned the grant.
    granted: u64,
    /// Before `release` was called.
    releasing: u64,
    /// When `release` returned; `None` if it failed (the lease may then
    /// have lasted to its TTL).
    released: Option<u64>,
    told_lost: bool,
}

/// A fenced lock: each grant is one read. Wrong: a token seen twice, a
/// token not above one whose release returned before this acquire began,
/// or two holders at once (both between the grant's return and the
/// release's call, so the server surely held both leases) where neither
/// was told it had lost the lease. Flagged: two holders at once, and one
/// of them was told (`Release::Lost`).
fn lock(tally: &mut Tally, what: &str, calls: &[&Call]) {
    let grants: Vec<Grant> = calls
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Acked(d) if d.starts_with("g ") => {
                let p: Vec<&str> = d.split(' ').collect();
                let n = |i: usize| p.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                let release = p.get(6).copied().unwrap_or("err");
                Some(Grant {
                    worker: c.worker,
                    token: n(1),
                    asked: n(2),
                    granted: n(3),
                    releasing: n(4),
                    released: (release != "err").then(|| n(5)),
                    // A release that failed told its holder nothing.
                    told_lost: release == "lost",
                })
            }
            _ => None,
        })
        .collect();
    for (i, a) in grants.iter().enumerate() {
        let mut wrong = None;
        let mut flagged = false;
        for (j, b) in grants.iter().enumerate() {
            if i == j {
                continue;
            }
            if a.token == b.token {
                wrong = Some(format!("token {} granted twice", a.token));
            } else if b.released.is_some_and(|r| r < a.asked) && b.token > a.token {
                wrong = Some(format!(
                    "token {} granted after token {} was released",
                    a.token, b.token
                ));
            } else if a.granted <= b.releasing && b.granted <= a.releasing {
                if a.told_lost || b.told_lost {
                    flagged = true;
                } else {
                    wrong = Some(format!(
                        "workers {} and {} held it at once (tokens {}, {}), neither told",
                        a.worker, b.worker, a.token, b.token
                    ));
                }
            }
        }
        match wrong {
            Some(w) => tally.wrong(format!("{what}: {w}")),
            None if flagged => tally.flagged += 1,
            None => tally.exact += 1,
        }
    }
}

/// Whether `error` says the call may have happened.
pub fn maybe_applied(error: &Error) -> bool {
    matches!(error, Error::Ambiguous { .. } | Error::Timeout { .. })
}
