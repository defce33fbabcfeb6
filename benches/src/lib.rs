//! # mcds-benches
//!
//! Criterion benchmarks of mcds, each measured in the same run as its
//! baseline (raw `memcache::exp`, `DashMap`, sequential round trips), and
//! the helpers that print the comparison table after a run.
//!
//! ```text
//! cargo bench -p mcds-benches            # counter, codec, transport and peer benches
//! cargo bench -p mcds-ffi --bench c_abi    # the C ABI's overhead
//! cargo test  --benches                  # smoke: every bench once
//! ```
//!
//! After a real run (`cargo bench`) each bench binary prints its
//! comparisons with the medians read back from criterion's
//! `estimates.json`, e.g.
//!
//! ```text
//! comparison                                  ours (median)   baseline (median)  ratio   goal
//! Counter::incr vs raw ma (memcached)         31.2 µs         29.8 µs            0.95    >= 0.9
//! ```

use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;

pub mod peers;
pub mod python;

/// Whether this is a measuring run (`cargo bench`), not the one-iteration
/// smoke run of `cargo test --benches`.
pub fn is_bench_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// Where criterion writes its results: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else the workspace's `target/criterion`.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/criterion"))
}

/// A criterion configured for this 2-core, shared machine: short warm-up,
/// a few seconds per bench, results in [`criterion_dir`].
pub fn criterion() -> Criterion {
    Criterion::default()
        .output_directory(&criterion_dir())
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args()
}

/// The median time per iteration of bench `group/id` in the latest run, in
/// nanoseconds (`None` if it has not run).
pub fn median_ns(group: &str, id: &str) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(id)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("median")?.get("point_estimate")?.as_f64()
}

/// What a comparison should show.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    /// `baseline / ours` at least this (ours is at least this fast,
    /// relative to the baseline).
    SpeedRatio(f64),
    /// `ours − baseline` at most this many nanoseconds.
    OverheadNs(f64),
    /// Bytes per iteration over the median time, at least this many MB/s
    /// (no baseline).
    Throughput {
        /// Bytes processed per iteration.
        bytes: u64,
        /// The goal in MB/s (10^6 bytes per second).
        mb_per_s: f64,
    },
}

/// One line of the comparison table: our bench against its baseline, both
/// `(group, id)` as given to criterion.
#[derive(Clone, Copy, Debug)]
pub struct Comparison {
    /// What is compared.
    pub name: &'static str,
    /// Our bench.
    pub ours: (&'static str, &'static str),
    /// The baseline bench (ignored for [`Goal::Throughput`]).
    pub baseline: (&'static str, &'static str),
    /// The goal.
    pub goal: Goal,
}

fn human(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if ns >= 1_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{ns:.1} ns")
    }
}

/// The comparison table for `comparisons` from the latest run: medians,
/// ratio, goal and whether it is met. Lines whose benches have not run say
/// so.
pub fn table(comparisons: &[Comparison]) -> String {
    let mut out = format!(
        "{:<52} {:>12} {:>12} {:>12} {:>12} {}\n",
        "comparison", "ours", "baseline", "result", "goal", "met"
    );
    for c in comparisons {
        let ours = median_ns(c.ours.0, c.ours.1);
        let base = median_ns(c.baseline.0, c.baseline.1);
        let line = match (c.goal, ours, base) {
            (Goal::SpeedRatio(goal), Some(o), Some(b)) => {
                let ratio = b / o;
                format!(
                    "{:<52} {:>12} {:>12} {:>11.2}x {:>11}x {}",
                    c.name,
                    human(o),
                    human(b),
                    ratio,
                    format!(">={goal}"),
                    if ratio >= goal { "yes" } else { "NO" }
                )
            }
            (Goal::OverheadNs(goal), Some(o), Some(b)) => {
                let over = o - b;
                format!(
                    "{:<52} {:>12} {:>12} {:>9.1} ns {:>9} ns {}",
                    c.name,
                    human(o),
                    human(b),
                    over,
                    format!("<={goal}"),
                    if over <= goal { "yes" } else { "NO" }
                )
            }
            (Goal::Throughput { bytes, mb_per_s }, Some(o), _) => {
                let rate = bytes as f64 / o * 1_000.0; // bytes/ns -> MB/s
                format!(
                    "{:<52} {:>12} {:>12} {:>7.0} MB/s {:>7} MB/s {}",
                    c.name,
                    human(o),
                    "-",
                    rate,
                    format!(">={mb_per_s}"),
                    if rate >= mb_per_s { "yes" } else { "NO" }
                )
            }
            _ => format!("{:<52} (not measured in this run)", c.name),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Print [`table`] after a measuring run; nothing in the smoke run.
pub fn print_table(title: &str, comparisons: &[Comparison]) {
    if is_bench_run() {
        println!(
            "\n== {title} (medians of this run) ==\n{}",
            table(comparisons)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_handles_missing_results() {
        let t = table(&[Comparison {
            name: "nothing",
            ours: ("no-such-group", "a"),
            baseline: ("no-such-group", "b"),
            goal: Goal::SpeedRatio(1.0),
        }]);
        assert!(t.contains("not measured"), "{t}");
        assert_eq!(human(1500.0), "1.50 µs");
    }
}
