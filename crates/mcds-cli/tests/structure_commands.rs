//! `mcds series`, `packed`, `map`, `leaderboard` and `sbloom`, as the real
//! binary against real memcached (cases an adversarial review found). Each test states a finding that failed when reviewed; the
//! fixed ones pass now (the default read range, a reversed range, `--round`
//! through digits not floats, `sbloom clear` of a grown filter, a record
//! applied in part reported as ambiguous, a series named twice), and the
//! ignored ones say what is still open (`cargo test -p mcds-cli --test
//! structure_commands -- --ignored`).

use std::process::Output;

use assert_cmd::Command;
use mcds_testkit::MemcachedServer;
use serde_json::Value;

mod common;
use common::minute_half_an_hour_ago;

fn mcds(servers: &str) -> Command {
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    cmd.env("MCDS_SERVERS", servers);
    cmd
}

/// (exit code, stdout, stderr) of a command.
fn run(cmd: &mut Command) -> (i32, String, String) {
    let out: Output = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Stdout of a command that must succeed.
fn ok(cmd: &mut Command) -> String {
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{cmd:?}: {stderr}");
    stdout
}

/// MEDIUM. A read with no --from-ms/--last reads "from the oldest one
/// kept" (the help), which at everyday resolutions is more than 10 000
/// buckets: `mcds series count s --resolution 1s:1d` exits 3 with "split
/// the range" although the operator gave no range. The default should be
/// readable (clamp to what one read may cover, or say which --last to give).
#[test]
fn series_read_without_a_range_works_at_everyday_resolutions() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    for resolution in ["1s:1d", "1m:7d", "1m:30d"] {
        let name = format!("default-{}", resolution.replace(':', "-"));
        // No loss check: the default range starts a day or more ago, before
        // this memcached started.
        let shape = ["--resolution", resolution, "--no-loss-check"];
        ok(mcds(&addr)
            .args(["series", "record", &name, "5"])
            .args(shape));
        let (code, stdout, stderr) = run(mcds(&addr).args(["series", "count", &name]).args(shape));
        assert_eq!(
            (code, stdout.as_str()),
            (0, "1\n"),
            "series count {name} --resolution {resolution}: {stderr}"
        );
    }
}

/// MEDIUM (same default, packed): `--slot 1m --period 1d --retention 90d`
/// and no range: `packed sum` exits 3 ("this range holds 131040 slots").
#[test]
fn packed_read_without_a_range_works_with_a_long_retention() {
    let server = MemcachedServer::start_default();
    let shape = [
        "--slot",
        "1m",
        "--period",
        "1d",
        "--retention",
        "90d",
        "--no-loss-check",
    ];
    assert_eq!(
        ok(mcds(&server.addr())
            .args(["packed", "incr", "p", "3"])
            .args(shape)),
        "3\n"
    );
    let (code, stdout, stderr) = run(mcds(&server.addr())
        .args(["packed", "sum", "p"])
        .args(shape));
    assert_eq!((code, stdout.as_str()), (0, "3\n"), "{stderr}");
}

/// MEDIUM. --from-ms is "the first Unix millisecond read" and --to-ms "the
/// last" (the help), but a read takes whole buckets: samples before
/// --from-ms and after --to-ms (up to a step away) are counted. With
/// `--last 1ms` a sample 59 s after --to-ms is counted.
#[test]
#[ignore = "reads take whole buckets: the --from-ms/--to-ms help says so now"]
fn series_reads_only_the_milliseconds_asked_for() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let t0 = minute_half_an_hour_ago();
    let shape = ["--resolution", "1m:1d"];
    ok(mcds(&addr)
        .args(["series", "record", "edge", "100"])
        .args(["--at-ms", &(t0 + 59_000).to_string()])
        .args(shape));
    for (range, what) in [
        (
            vec![
                "--from-ms".to_string(),
                t0.to_string(),
                "--to-ms".into(),
                (t0 + 1_000).to_string(),
            ],
            "a sample 58 s after --to-ms",
        ),
        (
            vec![
                "--from-ms".to_string(),
                (t0 + 59_500).to_string(),
                "--to-ms".into(),
                (t0 + 59_999).to_string(),
            ],
            "a sample before --from-ms",
        ),
        (
            vec![
                "--last".to_string(),
                "1ms".into(),
                "--to-ms".into(),
                (t0 + 1_000).to_string(),
            ],
            "a sample 58 s after --to-ms, with --last",
        ),
    ] {
        let count = ok(mcds(&addr)
            .args(["series", "count", "edge"])
            .args(&range)
            .args(shape));
        assert_eq!(count, "0\n", "{what} is counted: {range:?}");
    }
}

/// MEDIUM. --from-ms after --to-ms (a typo, or --from-ms in the future
/// without --to-ms) is not refused: exit 0 with a count of 0, or the
/// bucket's whole count when both fall in one bucket. A script cannot tell
/// a typo from an empty range.
#[test]
fn series_reversed_range_is_refused() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let t0 = minute_half_an_hour_ago();
    let shape = ["--resolution", "1m:1d"];
    ok(mcds(&addr)
        .args([
            "series",
            "record",
            "rev",
            "5",
            "--at-ms",
            &(t0 + 1_000).to_string(),
        ])
        .args(shape));
    let (code, stdout, stderr) = run(mcds(&addr)
        .args(["series", "count", "rev"])
        .args(["--from-ms", &(t0 + 120_000).to_string()])
        .args(["--to-ms", &(t0 + 1_000).to_string()])
        .args(shape));
    assert!(
        (code == 2 || code == 3) && stderr.contains("--from-ms"),
        "a reversed range: exit {code}, stdout {stdout:?}, stderr {stderr:?}"
    );
}

/// HIGH. `map incr --round` parses BY as an f64 before rounding, so an
/// amount that needs no rounding at all is changed: 9007199254740993 adds
/// 9007199254740992, and 12345678901234.565 at --scale 3 adds
/// 12345678901234.564. Exit 0: a wrong value stored silently (without
/// --round both are exact).
#[test]
fn map_round_keeps_amounts_that_need_no_rounding() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    for (by, scale) in [("9007199254740993", "0"), ("12345678901234.565", "3")] {
        let field = format!("f{scale}");
        let value = ok(mcds(&addr).args([
            "map", "incr", "rounded", &field, by, "--round", "--scale", scale,
        ]));
        assert_eq!(value.trim(), by, "map incr {by} --round --scale {scale}");
    }
}

/// LOW. `--round` also widens the accepted grammar: "1e3" and " 5" are
/// refused without it (exit 3, "write it as [+-]digits[.digits]") and
/// accepted with it.
#[test]
fn map_round_accepts_the_same_amounts_as_without_it() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    for by in ["1e3", " 5"] {
        let (code, _, stderr) = run(mcds(&addr).args(["map", "incr", "grammar", "f", by]));
        assert_eq!(code, 3, "{by:?} without --round: {stderr}");
        let (code, stdout, _) =
            run(mcds(&addr).args(["map", "incr", "grammar", "f", by, "--round"]));
        assert_eq!(code, 3, "{by:?} with --round is accepted: {stdout}");
    }
}

/// HIGH. `sbloom clear` with another --capacity than the filter's deletes
/// the blocks of a filter of that capacity only: a filter of 2 000 000
/// (3 blocks on a 1 MiB memcached) cleared with --capacity 10 exits 0,
/// and about half its elements are still "maybe present". (`leaderboard
/// clear` needs no shape; `sbloom clear` silently depends on it.) Fixed:
/// the clear is refused, nothing deleted, saying to give the capacity.
#[test]
fn sbloom_clear_with_another_capacity_clears_or_refuses() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let elements: Vec<String> = (1..=30).map(|i| format!("el{i}")).collect();
    let shape = ["--capacity", "2000000"];
    assert_eq!(
        ok(mcds(&addr)
            .args(["sbloom", "add", "big"])
            .args(&elements)
            .args(shape)),
        "30\n"
    );
    let (code, _, stderr) = run(mcds(&addr).args(["sbloom", "clear", "big", "--capacity", "10"]));
    if code == 0 {
        let (check, stdout, stderr) = run(mcds(&addr)
            .args(["--json", "sbloom", "check", "big"])
            .args(&elements)
            .args(shape));
        let present: Vec<String> = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["maybe_present"] == Value::Bool(true))
            .map(|v| v["element"].to_string())
            .collect();
        assert!(
            check == 1 && present.is_empty(),
            "`sbloom clear big --capacity 10` exited 0, yet {} of 30 elements are still maybe present: {present:?} {stderr}",
            present.len()
        );
    } else {
        assert!(stderr.contains("capacity"), "refused, saying why: {stderr}");
    }
}

/// MEDIUM. A grown filter opened with other parameters is refused with
/// "open it with the numbers it was created with, or clear it", but
/// `sbloom clear` with those other numbers is refused the same way (exit 3,
/// "corrupt data … another program may be writing this key"): an operator
/// who lost the numbers cannot clear it from the CLI.
#[test]
fn sbloom_clear_works_without_the_original_parameters() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let elements: Vec<String> = (1..=300).map(|i| format!("g{i}")).collect();
    ok(mcds(&addr)
        .args(["sbloom", "add", "grown"])
        .args(&elements)
        .args(["--capacity", "50"]));
    let (code, _, stderr) =
        run(mcds(&addr).args(["sbloom", "check", "grown", "g1", "--capacity", "51"]));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("or clear it"), "{stderr}");
    let (code, _, stderr) = run(mcds(&addr).args(["sbloom", "clear", "grown", "--capacity", "51"]));
    assert_eq!(code, 0, "the clear the error suggests: {stderr}");
    let (code, _, _) =
        run(mcds(&addr).args(["sbloom", "check", "grown", "g1", "--capacity", "50"]));
    assert_eq!(code, 1, "g1 is gone after the clear");
}

/// HIGH. `series record` on a pool with one server down exits 4 saying
/// "the request was not applied, so retrying is safe", but the parts of
/// the sample on the live server were applied. The retry the message
/// invites counts the sample twice at some resolution, or leaves a bucket
/// whose parts disagree (exit 3 "corrupt data" on every read covering it,
/// for the retention). Here: 12 series recorded with server B down; B
/// restarts; each record that failed saying so is retried once, as told;
/// each of those series must then read count 1 at every step. (A fix that
/// stops calling the retry safe passes too.)
#[test]
fn series_record_failure_saying_retry_is_safe_is_safe_to_retry() {
    let live = MemcachedServer::start_default();
    let mut down = MemcachedServer::start_default();
    let pool = format!("{},{}", live.addr(), down.addr());
    down.kill();
    let t0 = minute_half_an_hour_ago();
    let at = (t0 + 1_000).to_string();
    // No loss check: half an hour ago is before these servers started.
    let shape = [
        "--resolution",
        "1s:1h",
        "--resolution",
        "1m:1d",
        "--resolution",
        "1h:30d",
        "--no-loss-check",
    ];
    let names: Vec<String> = (0..12).map(|i| format!("retry{i}")).collect();
    // The series whose failed record said retrying is safe.
    let mut claimed = Vec::new();
    let mut failed = 0;
    for name in &names {
        let (code, _, stderr) = run(mcds(&pool)
            .args(["series", "record", name, "5", "--at-ms", &at])
            .args(shape));
        failed += usize::from(code == 4);
        if code == 4 && stderr.contains("retrying is safe") {
            claimed.push(name);
        }
    }
    assert!(failed > 0, "no record failed with a server down");
    down.restart();
    for name in &claimed {
        ok(mcds(&pool)
            .args(["series", "record", name, "5", "--at-ms", &at])
            .args(shape));
    }
    let mut wrong = Vec::new();
    for name in &claimed {
        for step in ["1s", "1m", "1h"] {
            let (code, stdout, stderr) = run(mcds(&pool)
                .args(["series", "count", name, "--step", step])
                .args(["--from-ms", &at, "--to-ms", &at])
                .args(shape));
            if (code, stdout.as_str()) != (0, "1\n") {
                wrong.push(format!(
                    "{name} at {step}: exit {code} {stdout:?} {}",
                    stderr.trim()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "after a retry the error called safe:\n{}",
        wrong.join("\n")
    );
}

/// MEDIUM. --json numbers past 2^53 lose precision in every reader that
/// parses JSON numbers as doubles (jq 1.6 on this machine, JavaScript,
/// most dashboards): `series sum` of 2^53 + 1 reads 9007199254740992 through
/// `jq .sum`. The sum switches to a string only past 2^63, so its JSON
/// type also changes with its magnitude; min and max are always numbers.
/// (The map at --scale 0 and leaderboard counts and totals are numbers up
/// to 2^61 and 2^64 − 1 the same way.) Expected: each field either a string,
/// or a number no double misreads. Fixed: every integer past 2^53 − 1 in
/// --json output is a string of its digits.
#[test]
fn series_json_numbers_survive_a_double_reader() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let at = (minute_half_an_hour_ago() + 1_000).to_string();
    // No loss check: half an hour ago is before this memcached started.
    let shape = ["--resolution", "1m:1d", "--no-loss-check"];
    ok(mcds(&addr)
        .args([
            "series",
            "record",
            "big",
            "9007199254740993",
            "--at-ms",
            &at,
        ])
        .args(shape));
    let text = ok(mcds(&addr)
        .args([
            "--json",
            "series",
            "aggregate",
            "big",
            "--from-ms",
            &at,
            "--to-ms",
            &at,
        ])
        .args(shape));
    let json: Value = serde_json::from_str(&text).unwrap();
    let mut lossy = Vec::new();
    for field in ["sum", "min", "max"] {
        let value = &json[field];
        if let Some(n) = value
            .as_i64()
            .map(i128::from)
            .or(value.as_u64().map(i128::from))
        {
            if (n as f64) as i128 != n {
                lossy.push(format!("{field}={n}"));
            }
        }
    }
    assert!(
        lossy.is_empty(),
        "numbers a double misreads: {lossy:?} in {text}"
    );
}

/// LOW. The duration grammar adds its terms as f64 seconds, so a whole
/// number of milliseconds can reach the structures as a fraction of one:
/// `--resolution 1m:365d7ms` is refused as "not a whole number of
/// milliseconds; got 31536000.006999999s" (also 1000d3ms). Fixed: terms
/// are added as integer nanoseconds.
#[test]
fn whole_millisecond_durations_are_accepted() {
    let server = MemcachedServer::start_default();
    for retention in ["365d7ms", "1000d3ms"] {
        let resolution = format!("1m:{retention}");
        let (code, _, stderr) = run(mcds(&server.addr()).args([
            "series",
            "record",
            "d",
            "1",
            "--resolution",
            &resolution,
        ]));
        assert_eq!(code, 0, "--resolution {resolution}: {stderr}");
    }
}

/// LOW. `leaderboard incr` documents MEMBER as "1 to 128 bytes", but an
/// empty member is counted (exit 0); `top` then prints a line starting
/// with a tab.
#[test]
#[ignore = "the library counts the empty member (C, Python and PHP too); the help now says so"]
fn leaderboard_refuses_an_empty_member() {
    let server = MemcachedServer::start_default();
    let (code, stdout, _) =
        run(mcds(&server.addr()).args(["leaderboard", "incr", "board", "", "--capacity", "5"]));
    assert_eq!(code, 3, "an empty member was counted: {stdout:?}");
}

/// LOW. `--json series record` of a sample past every retention warns on
/// stderr ("recorded": false there) and exits 0, but its stdout line is the
/// same as for a recorded sample: a script reading stdout only cannot tell.
/// Fixed: the stdout line says `"recorded"` too.
#[test]
fn series_record_json_says_whether_it_recorded() {
    let server = MemcachedServer::start_default();
    let (code, stdout, stderr) = run(mcds(&server.addr())
        .args(["--json", "series", "record", "old", "5", "--at-ms", "0"])
        .args(["--resolution", "1m:1d"]));
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(json["recorded"], Value::Bool(false), "stdout: {stdout}");
}

/// LOW. `series union a a` merges a series with itself: every count and
/// sum doubled (Redis's TS.MRANGE would list the series once).
#[test]
fn series_union_counts_a_repeated_series_once() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let at = (minute_half_an_hour_ago() + 1_000).to_string();
    let shape = ["--resolution", "1m:1d"];
    ok(mcds(&addr)
        .args(["series", "record", "twice", "10", "--at-ms", &at])
        .args(shape));
    // Fixed: a series named twice is refused, not counted twice.
    let (code, _, err) = run(mcds(&addr)
        .args([
            "series",
            "union",
            "twice",
            "twice",
            "--from-ms",
            &at,
            "--to-ms",
            &at,
        ])
        .args(shape));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("given twice"), "{err}");
}

/// HELD UP (passes): the CLI and the Rust API read each other's writes of
/// all five structures on one memcached, with the same shapes (the CLI's
/// --period/--slot, --scale, --capacity and --fpr/--growth defaults map to
/// the Rust constructors' arguments).
#[test]
fn rust_and_the_cli_read_each_others_writes() {
    use std::sync::Arc;
    use std::time::Duration;

    use mcds_counter::CounterMap;
    use mcds_sketch::{Leaderboard, ScalableBloomFilter};
    use mcds_timeseries::{PackedSeries, Resolution, SlotWidth, Stats, TimeSeries};

    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let store: Arc<dyn mcds_core::Store> =
        Arc::new(mcds_memcached::MemcachedStore::connect(&addr).unwrap());
    let t0 = minute_half_an_hour_ago();
    let (minute, hour, day) = (
        Duration::from_secs(60),
        Duration::from_secs(3600),
        Duration::from_secs(86_400),
    );

    let series = TimeSeries::new(
        Arc::clone(&store),
        "rs",
        &[
            Resolution::new(minute, day).unwrap(),
            Resolution::new(hour, 30 * day).unwrap(),
        ],
    )
    .unwrap()
    .with_loss_check(false);
    series.record(t0 + 1_000, -7).unwrap();
    series.record(t0 + 2_000, 12).unwrap();
    // No loss check: half an hour ago is before this memcached started.
    let shape = [
        "--resolution",
        "1h:30d",
        "--resolution",
        "1m:1d",
        "--no-loss-check",
    ];
    let at = t0.to_string();
    let window = ["--from-ms", at.as_str(), "--to-ms", at.as_str()];
    assert_eq!(
        ok(mcds(&addr)
            .args(["series", "aggregate", "rs"])
            .args(window)
            .args(shape)),
        "2 5 -7 12 2.5\n"
    );
    ok(mcds(&addr)
        .args([
            "series",
            "record",
            "rs",
            "3",
            "--at-ms",
            &(t0 + 3_000).to_string(),
        ])
        .args(shape));
    let expected = Stats {
        count: 3,
        sum: 8,
        min: -7,
        max: 12,
    };
    assert_eq!(series.aggregate(t0, t0, minute).unwrap(), Some(expected));

    let packed = PackedSeries::new(Arc::clone(&store), "pk", minute, 60, SlotWidth::U16, hour)
        .unwrap()
        .with_loss_check(false);
    let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
    packed.incr(now, 5).unwrap();
    let packed_shape = [
        "--slot",
        "1m",
        "--period",
        "1h",
        "--width",
        "u16",
        "--no-loss-check",
    ];
    let now_arg = now.to_string();
    assert_eq!(
        ok(mcds(&addr)
            .args(["packed", "incr", "pk", "2", "--at-ms", &now_arg])
            .args(packed_shape)),
        "7\n"
    );
    assert_eq!(packed.get(now).unwrap(), 7);

    let map = CounterMap::new(Arc::clone(&store), "cm")
        .unwrap()
        .with_scale(2)
        .unwrap();
    map.incr_decimal("a", "1.25").unwrap();
    assert_eq!(
        ok(mcds(&addr).args(["map", "incr", "cm", "a", "0.75", "--scale", "2"])),
        "2.00\n"
    );
    assert_eq!(map.get("a").unwrap(), 200);

    let board = Leaderboard::new(Arc::clone(&store), "lb", 5).unwrap();
    board.incr("ann", 10).unwrap();
    assert_eq!(
        ok(mcds(&addr).args(["leaderboard", "incr", "lb", "ann", "5", "--capacity", "5"])),
        "15\n"
    );
    assert_eq!(board.score("ann").unwrap().map(|e| e.count), Some(15));

    let filter = ScalableBloomFilter::new(Arc::clone(&store), "sb", 100, 0.01).unwrap();
    filter.add("x").unwrap();
    ok(mcds(&addr).args(["sbloom", "check", "sb", "x", "--capacity", "100"]));
    ok(mcds(&addr).args(["sbloom", "add", "sb", "y", "--capacity", "100"]));
    assert!(filter.contains("y").unwrap());
}
