//! The fault matrix: every structure, written from several OS processes
//! while memcached does one thing wrong, then every read checked against
//! what the writers were told.
//!
//! A run is one [`Fault`]. Worker processes (`mcds-stress-worker matrix`)
//! write to all nineteen structures in turn, each call logged before it is
//! made (`B`) and after it returns (`E`, with its outcome), while the test
//! that started them does the fault. A call begun and never ended (its
//! process was killed) may have happened. Afterwards one reader checks
//! every structure against the logs ([`workload::Handles::check`]) and
//! counts, per structure: calls acknowledged, failed and maybe applied,
//! reads exact, reads flagged (an error) and reads silently wrong.
//!
//! What each cell may show is declared here ([`expected`]) and is what
//! RELIABILITY.md prints ([`markdown`]): a run that sees anything worse
//! fails. A cell may allow silently wrong reads only where the
//! structure's docs say, with the reason, that the loss cannot be seen
//! ([`LOSS_DOC_HEADING`]).

pub mod workload;

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What memcached does during one run of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// Nothing: the baseline, where every read must be exact.
    None,
    /// The structures' only server is killed mid-run and started again,
    /// empty.
    Restart,
    /// The server evicts: it is flooded mid-run and again after the
    /// writes, so that the structures' items are the least recently used.
    Eviction,
    /// A `-M` server fills up mid-run: writes are refused.
    NoEvictFull,
    /// The server is stopped (SIGSTOP) past the clients' timeout, then
    /// continued.
    Pause,
    /// One writer process is killed (SIGKILL) mid-run, perhaps mid-call.
    ClientKilled,
    /// One member of a pool of 3 is killed mid-run and started again,
    /// empty.
    PoolMemberRestart,
    /// Two writers use servers [A, B] and the third [A, B, C].
    PoolViewsDiffer,
    /// The server's item limit is 1 KiB (`-I 1k`), so the structures
    /// that grow an item reach it.
    ItemLimit,
}

impl Fault {
    /// Every fault, in the matrix's column order.
    pub const ALL: [Fault; 9] = [
        Fault::None,
        Fault::Restart,
        Fault::Eviction,
        Fault::NoEvictFull,
        Fault::Pause,
        Fault::ClientKilled,
        Fault::PoolMemberRestart,
        Fault::PoolViewsDiffer,
        Fault::ItemLimit,
    ];

    /// The fault's name on the command line and in test output.
    pub fn name(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Restart => "restart",
            Fault::Eviction => "eviction",
            Fault::NoEvictFull => "no-evict-full",
            Fault::Pause => "pause",
            Fault::ClientKilled => "client-killed",
            Fault::PoolMemberRestart => "pool-member-restart",
            Fault::PoolViewsDiffer => "pool-views-differ",
            Fault::ItemLimit => "item-limit",
        }
    }

    /// The column title in RELIABILITY.md.
    pub fn title(self) -> &'static str {
        match self {
            Fault::None => "no fault",
            Fault::Restart => "restart (its server)",
            Fault::Eviction => "eviction",
            Fault::NoEvictFull => "`-M` full",
            Fault::Pause => "pause past the timeout",
            Fault::ClientKilled => "client killed mid-call",
            Fault::PoolMemberRestart => "one pool member restarted",
            Fault::PoolViewsDiffer => "pool views differ",
            Fault::ItemLimit => "item limit",
        }
    }
}

/// The structures the matrix runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Structure {
    /// `mcds_counter::Counter`.
    Counter,
    /// `mcds_counter::ViewCounter`.
    ViewCounter,
    /// `mcds_counter::ShadowCounter`.
    ShadowCounter,
    /// `mcds_counter::WindowCounter`.
    WindowCounter,
    /// `mcds_counter::RateLimiter`.
    RateLimiter,
    /// `mcds_counter::CounterMap`.
    CounterMap,
    /// `mcds_lock::Lock` with fencing tokens.
    Lock,
    /// `mcds_eventlog::EventLog`.
    EventLog,
    /// `mcds_set::Set`.
    Set,
    /// `mcds_set::ShardedSet`.
    ShardedSet,
    /// `mcds_set::IntArray`.
    IntArray,
    /// `mcds_set::Table`.
    Table,
    /// `mcds_sketch::BloomFilter`.
    BloomFilter,
    /// `mcds_sketch::ScalableBloomFilter`.
    ScalableBloomFilter,
    /// `mcds_sketch::HyperLogLog`.
    HyperLogLog,
    /// `mcds_sketch::ActivityBitmap`.
    ActivityBitmap,
    /// `mcds_sketch::Leaderboard`.
    Leaderboard,
    /// `mcds_timeseries::TimeSeries`.
    TimeSeries,
    /// `mcds_timeseries::PackedSeries`.
    PackedSeries,
}

impl Structure {
    /// Every structure, in the matrix's row order.
    pub const ALL: [Structure; 19] = [
        Structure::Counter,
        Structure::ViewCounter,
        Structure::ShadowCounter,
        Structure::WindowCounter,
        Structure::RateLimiter,
        Structure::CounterMap,
        Structure::Lock,
        Structure::EventLog,
        Structure::Set,
        Structure::ShardedSet,
        Structure::IntArray,
        Structure::Table,
        Structure::BloomFilter,
        Structure::ScalableBloomFilter,
        Structure::HyperLogLog,
        Structure::ActivityBitmap,
        Structure::Leaderboard,
        Structure::TimeSeries,
        Structure::PackedSeries,
    ];

    /// The type's name.
    pub fn name(self) -> &'static str {
        match self {
            Structure::Counter => "Counter",
            Structure::ViewCounter => "ViewCounter",
            Structure::ShadowCounter => "ShadowCounter",
            Structure::WindowCounter => "WindowCounter",
            Structure::RateLimiter => "RateLimiter",
            Structure::CounterMap => "CounterMap",
            Structure::Lock => "Lock",
            Structure::EventLog => "EventLog",
            Structure::Set => "Set",
            Structure::ShardedSet => "ShardedSet",
            Structure::IntArray => "IntArray",
            Structure::Table => "Table",
            Structure::BloomFilter => "BloomFilter",
            Structure::ScalableBloomFilter => "ScalableBloomFilter",
            Structure::HyperLogLog => "HyperLogLog",
            Structure::ActivityBitmap => "ActivityBitmap",
            Structure::Leaderboard => "Leaderboard",
            Structure::TimeSeries => "TimeSeries",
            Structure::PackedSeries => "PackedSeries",
        }
    }

    /// The structure named `name` (as [`name`](Structure::name) prints it).
    pub fn parse(name: &str) -> Option<Structure> {
        Structure::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The source file, from the workspace root, whose docs of the type
    /// must carry [`LOSS_DOC_HEADING`] where the matrix allows it
    /// undetected losses.
    pub fn source(self) -> &'static str {
        match self {
            Structure::Counter => "crates/mcds-counter/src/counter.rs",
            Structure::ViewCounter => "crates/mcds-counter/src/view.rs",
            Structure::ShadowCounter => "crates/mcds-counter/src/shadow.rs",
            Structure::WindowCounter => "crates/mcds-counter/src/window.rs",
            Structure::RateLimiter => "crates/mcds-counter/src/rate.rs",
            Structure::CounterMap => "crates/mcds-counter/src/map.rs",
            Structure::Lock => "crates/mcds-lock/src/lib.rs",
            Structure::EventLog => "crates/mcds-eventlog/src/lib.rs",
            Structure::Set => "crates/mcds-set/src/set.rs",
            Structure::ShardedSet => "crates/mcds-set/src/sharded.rs",
            Structure::IntArray => "crates/mcds-set/src/intarray.rs",
            Structure::Table => "crates/mcds-set/src/table.rs",
            Structure::BloomFilter => "crates/mcds-sketch/src/bloom.rs",
            Structure::ScalableBloomFilter => "crates/mcds-sketch/src/scalable.rs",
            Structure::HyperLogLog => "crates/mcds-sketch/src/hll.rs",
            Structure::ActivityBitmap => "crates/mcds-sketch/src/bitmap.rs",
            Structure::Leaderboard => "crates/mcds-sketch/src/topk.rs",
            Structure::TimeSeries => "crates/mcds-timeseries/src/series.rs",
            Structure::PackedSeries => "crates/mcds-timeseries/src/packed.rs",
        }
    }
}

/// The heading of the section, in a structure's type docs, that says what
/// a restart or an eviction loses and why a read cannot see it. The matrix
/// allows a cell silently wrong reads only when that section is there.
pub const LOSS_DOC_HEADING: &str = "# What a restart or an eviction loses";

/// What a run may show in one cell: the cell's declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every read is exact (calls may fail).
    Exact,
    /// A read is exact or fails with an error that says so.
    Flagged,
    /// A read may return less than was acknowledged, without an error:
    /// the loss cannot be seen, and the structure's docs say why.
    Undetected,
}

impl Expect {
    fn cell(self) -> &'static str {
        match self {
            Expect::Exact => "exact",
            Expect::Flagged => "exact, or an error",
            Expect::Undetected => "**loss not seen** †",
        }
    }
}

/// What the matrix declares for `structure` under `fault`, which a run
/// must not be worse than.
pub fn expected(structure: Structure, fault: Fault) -> Expect {
    use Structure as S;
    match fault {
        // A growing set on a full `-M` server: a split whose directory
        // record the server refuses for memory is completed by readers
        // only when the server has lost nothing since the split began, and
        // a server younger than the clock margin (2 s) cannot show that:
        // the read says `Lost` rather than guess.
        Fault::NoEvictFull
            if matches!(
                structure,
                S::Set | S::ShardedSet | S::IntArray | S::Table | S::CounterMap
            ) =>
        {
            Expect::Flagged
        }
        Fault::None | Fault::NoEvictFull | Fault::Pause | Fault::ClientKilled => Expect::Exact,
        Fault::PoolViewsDiffer | Fault::ItemLimit => Expect::Exact,
        Fault::Restart | Fault::Eviction | Fault::PoolMemberRestart => match structure {
            S::TimeSeries | S::PackedSeries => Expect::Flagged,
            // A lease cut short is told to its holder (`Lost`), and
            // fencing tokens still increase.
            S::Lock => Expect::Flagged,
            _ => Expect::Undetected,
        },
    }
}

/// How a logged call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It returned `Ok`, with the detail the workload logged (a lock's
    /// token, a rate limiter's decision).
    Acked(String),
    /// It returned an error that says it did not happen.
    Failed(String),
    /// It may have happened: `Ambiguous`, a `Timeout`, or its process was
    /// killed before it returned.
    Maybe(String),
}

/// One logged call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The writer process's number.
    pub worker: u64,
    /// The call's number within its worker and structure.
    pub seq: u64,
    /// How it ended.
    pub outcome: Outcome,
}

/// The calls of every worker, by structure.
pub type History = BTreeMap<Structure, Vec<Call>>;

/// Read worker `worker`'s log into `history`. Lines: `B STRUCTURE SEQ`
/// before a call, `E STRUCTURE SEQ ok|fail|maybe DETAIL` after it. A `B`
/// with no `E` is a call whose process died in it: [`Outcome::Maybe`].
pub fn parse_log(worker: u64, log: &str, history: &mut History) {
    let mut open: BTreeMap<(Structure, u64), ()> = BTreeMap::new();
    for line in log.lines() {
        let mut parts = line.splitn(5, ' ');
        let (tag, structure, seq) = (parts.next(), parts.next(), parts.next());
        let (Some(tag), Some(structure), Some(seq)) = (
            tag,
            structure.and_then(Structure::parse),
            seq.and_then(|s| s.parse::<u64>().ok()),
        ) else {
            continue; // a line cut short by a kill
        };
        match tag {
            "B" => {
                open.insert((structure, seq), ());
            }
            "E" => {
                open.remove(&(structure, seq));
                let kind = parts.next().unwrap_or("");
                let detail = parts.next().unwrap_or("").to_string();
                let outcome = match kind {
                    "ok" => Outcome::Acked(detail),
                    "fail" => Outcome::Failed(detail),
                    _ => Outcome::Maybe(detail),
                };
                history.entry(structure).or_default().push(Call {
                    worker,
                    seq,
                    outcome,
                });
            }
            _ => {}
        }
    }
    for (structure, seq) in open.into_keys() {
        history.entry(structure).or_default().push(Call {
            worker,
            seq,
            outcome: Outcome::Maybe("killed mid-call".into()),
        });
    }
}

/// What one structure showed in one run.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Calls that returned `Ok`.
    pub acked: u64,
    /// Calls that returned an error saying they did not happen.
    pub failed: u64,
    /// Calls that may have happened.
    pub maybe: u64,
    /// Reads equal to what the history allows.
    pub exact: u64,
    /// Reads that returned an error.
    pub flagged: u64,
    /// Reads that returned `Ok` with an answer the history does not allow.
    pub wrong: u64,
    /// The first few wrong reads, described.
    pub examples: Vec<String>,
}

impl Tally {
    /// Count `calls`' outcomes.
    pub fn count_calls(&mut self, calls: &[Call]) {
        for call in calls {
            match call.outcome {
                Outcome::Acked(_) => self.acked += 1,
                Outcome::Failed(_) => self.failed += 1,
                Outcome::Maybe(_) => self.maybe += 1,
            }
        }
    }

    /// Count a read that was wrong, described by `what`.
    pub fn wrong(&mut self, what: String) {
        self.wrong += 1;
        if self.examples.len() < 3 {
            self.examples.push(what);
        }
    }

    /// Whether this tally is within `expect`.
    pub fn within(&self, expect: Expect) -> bool {
        match expect {
            Expect::Exact => self.flagged == 0 && self.wrong == 0,
            Expect::Flagged => self.wrong == 0,
            Expect::Undetected => true,
        }
    }
}

/// The line the harness prints for `structure` under `fault`.
pub fn line(fault: Fault, structure: Structure, tally: &Tally) -> String {
    let verdict = if tally.within(expected(structure, fault)) {
        "ok"
    } else {
        "WORSE THAN DECLARED"
    };
    let mut out = format!(
        "{:<20} {:<20} calls {:>5} acked {:>4} failed {:>4} maybe | reads {:>4} exact {:>3} flagged {:>3} silently wrong | {verdict}",
        fault.name(),
        structure.name(),
        tally.acked,
        tally.failed,
        tally.maybe,
        tally.exact,
        tally.flagged,
        tally.wrong,
    );
    for example in &tally.examples {
        let _ = write!(out, "\n    wrong: {example}");
    }
    out
}

/// Writer process `worker` of a run: until `millis` have passed, one call
/// to every structure in turn (then a 2 ms pause), each logged to
/// `log` (created) before and after. `servers` is this writer's server
/// list; `item_limit` (0: the default) the store's item size limit.
/// Returns how many calls it made.
pub fn write_run(
    servers: &str,
    worker: u64,
    t_ms: u64,
    millis: u64,
    log: &std::path::Path,
    item_limit: usize,
) -> mcds_core::Result<String> {
    use std::io::Write as _;
    let store = crate::impatient_store(servers, item_limit)?;
    let handles = workload::Handles::open(store, t_ms)?;
    let mut file = std::fs::File::create(log)
        .map_err(|e| mcds_core::Error::Internal(format!("creating {}: {e}", log.display())))?;
    let end = std::time::Instant::now() + std::time::Duration::from_millis(millis);
    let mut calls = 0;
    let mut seq = 0;
    while std::time::Instant::now() < end {
        for structure in Structure::ALL {
            let _ = file.write_all(format!("B {} {seq}\n", structure.name()).as_bytes());
            let line = match handles.write(structure, worker, seq) {
                Ok(detail) => format!("E {} {seq} ok {detail}\n", structure.name()),
                Err(e) if workload::maybe_applied(&e) => {
                    format!("E {} {seq} maybe {}\n", structure.name(), one_line(&e))
                }
                Err(e) => format!("E {} {seq} fail {}\n", structure.name(), one_line(&e)),
            };
            let _ = file.write_all(line.as_bytes());
            calls += 1;
        }
        seq += 1;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Ok(format!("calls {calls}"))
}

fn one_line(error: &mcds_core::Error) -> String {
    error.to_string().replace('\n', " ")
}

/// The marker lines around the generated matrix in RELIABILITY.md.
pub const MARKERS: (&str, &str) = (
    "<!-- fault-matrix: generated by `MCDS_BLESS=1 cargo test -p mcds-stress --test fault_matrix` -->",
    "<!-- fault-matrix: end -->",
);

/// The matrix as RELIABILITY.md prints it, between [`MARKERS`].
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("| structure |");
    for fault in Fault::ALL {
        let _ = write!(out, " {} |", fault.title());
    }
    out.push_str("\n|---|");
    for _ in Fault::ALL {
        out.push_str("---|");
    }
    out.push('\n');
    for structure in Structure::ALL {
        let _ = write!(out, "| `{}` |", structure.name());
        for fault in Fault::ALL {
            let _ = write!(out, " {} |", expected(structure, fault).cell());
        }
        out.push('\n');
    }
    out
}
