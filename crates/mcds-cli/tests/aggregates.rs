//! The commands of issue 19's structures (`series`, `packed`, `map`,
//! `leaderboard`, `sbloom`) run as the real binary against real memcached:
//! what several invocations write, a later one reads back exactly.

use assert_cmd::Command;
use mcds_testkit::MemcachedServer;
use serde_json::{Value, json};

mod common;
use common::*;

/// The one stderr line of a command that must exit `code` printing nothing
/// on stdout.
fn fails(code: i32, cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{cmd:?}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// The series' resolutions; and no loss check: the tests record half an
/// hour ago, before their memcached started, which a read with the check
/// cannot vouch for (`series_reads_cannot_vouch_for_the_time_before_the_server_started`).
const RESOLUTIONS: [&str; 5] = [
    "--resolution",
    "1m:1d",
    "--resolution",
    "1h:30d",
    "--no-loss-check",
];

#[test]
fn series_samples_from_several_invocations_read_back_exactly() {
    let server = MemcachedServer::start_default();
    let t0 = minute_half_an_hour_ago();
    let series = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("series").args(args).args(RESOLUTIONS);
        cmd
    };
    // Two samples in the minute of t0, two in the next; one of another
    // series in t0's minute only.
    for (name, offset, value) in [
        ("latency", 1_000, "10"),
        ("latency", 2_000, "30"),
        ("latency", 61_000, "-5"),
        ("latency", 62_000, "100"),
        ("latency:b", 3_000, "7"),
    ] {
        let at = (t0 + offset).to_string();
        assert_eq!(
            ok(&mut series(&["record", name, value, "--at-ms", &at])),
            ""
        );
    }
    let (from, to) = (t0.to_string(), (t0 + 119_999).to_string());
    let range = ["--from-ms", from.as_str(), "--to-ms", to.as_str()];
    let read = |cmd: &str, name: &str, step: &str| {
        let mut c = series(&[cmd, name, "--step", step]);
        c.args(range);
        c
    };
    assert_eq!(
        ok(&mut read("range", "latency", "1m")),
        format!("{t0} 2 40 10 30 20\n{} 2 95 -5 100 47.5\n", t0 + 60_000)
    );
    // --step defaults to the finest resolution.
    let mut finest = series(&["range", "latency"]);
    assert_eq!(
        ok(finest.args(range)),
        ok(&mut read("range", "latency", "1m"))
    );
    assert_eq!(
        ok(&mut read("aggregate", "latency", "1m")),
        "4 135 -5 100 33.75\n"
    );
    // The hour buckets hold the same four samples (one or two hours).
    assert_eq!(ok(&mut read("count", "latency", "1h")), "4\n");
    assert_eq!(ok(&mut read("sum", "latency", "1h")), "135\n");
    assert_eq!(ok(&mut read("min", "latency", "1m")), "-5\n");
    assert_eq!(ok(&mut read("max", "latency", "1m")), "100\n");
    assert_eq!(ok(&mut read("avg", "latency", "1m")), "33.75\n");
    assert_eq!(
        json_out(0, &mut read("aggregate", "latency", "1m")),
        json!({ "series": "latency", "count": 4, "sum": 135, "min": -5, "max": 100, "avg": 33.75 })
    );
    let lines = ok(read("range", "latency", "1m").arg("--json"));
    let buckets: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        buckets,
        [
            json!({ "series": "latency", "start_ms": t0, "count": 2, "sum": 40, "min": 10, "max": 30, "avg": 20.0 }),
            json!({ "series": "latency", "start_ms": t0 + 60_000, "count": 2, "sum": 95, "min": -5, "max": 100, "avg": 47.5 }),
        ]
    );
    // Union and intersection of two series, read in one batch.
    let both = |cmd: &str| {
        let mut c = series(&[cmd, "latency", "latency:b", "--step", "1m"]);
        c.args(range);
        c
    };
    assert_eq!(
        ok(&mut both("union")),
        format!(
            "{t0} 3 47 7 30 15.666666666666666\n{} 2 95 -5 100 47.5\n",
            t0 + 60_000
        )
    );
    assert_eq!(
        ok(&mut both("intersection")),
        format!("{t0} 3 47 7 30 15.666666666666666\n")
    );
    // An empty range: count and sum are 0; avg, min, max and aggregate
    // have no value (exit 1, nothing printed; --json: null).
    assert_eq!(ok(&mut read("count", "idle", "1m")), "0\n");
    assert_eq!(ok(&mut read("sum", "idle", "1m")), "0\n");
    assert_eq!(ok(&mut read("range", "idle", "1m")), "");
    for cmd in ["avg", "min", "max", "aggregate"] {
        assert_eq!(out(1, &mut read(cmd, "idle", "1m")), "", "{cmd}");
    }
    assert_eq!(
        json_out(1, &mut read("min", "idle", "1m")),
        json!({ "series": "idle", "min": null })
    );
    // --last: the samples recorded just now, by the system clock.
    ok(&mut series(&["record", "now", "5"]));
    ok(&mut series(&["record", "now", "6"]));
    assert_eq!(
        ok(&mut series(&["sum", "now", "--last", "5m", "--step", "1m"])),
        "11\n"
    );
    assert_eq!(
        json_out(0, &mut series(&["record", "now", "-3", "--at-ms", &from])),
        json!({ "series": "now", "at_ms": t0, "value": -3, "recorded": true })
    );
    // A sample older than every retention: not recorded, and said so.
    let old = series(&["record", "latency", "1", "--at-ms", "1000"])
        .output()
        .unwrap();
    let warning = String::from_utf8_lossy(&old.stderr);
    assert_eq!(old.status.code(), Some(0), "{warning}");
    assert!(
        warning.starts_with(
            "mcds: warning: the sample at 1000 ms is older than every resolution's retention"
        ),
        "{warning}"
    );
    assert_eq!(ok(&mut read("count", "latency", "1m")), "4\n");
}

/// 4 processes recording 25 samples each into one series at once: every
/// sample is counted, and min and max are exact.
#[test]
fn series_records_from_concurrent_processes_are_all_counted() {
    let server = MemcachedServer::start_default();
    let at = minute_half_an_hour_ago() + 30_000;
    let recorders: Vec<_> = (0..4)
        .map(|_| {
            let addr = server.addr();
            std::thread::spawn(move || {
                for value in 1..=25 {
                    let out = Command::cargo_bin("mcds")
                        .unwrap()
                        .env("MCDS_SERVERS", &addr)
                        .args(["series", "record", "jobs", &value.to_string()])
                        .args(["--at-ms", &at.to_string()])
                        .args(RESOLUTIONS)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for r in recorders {
        r.join().unwrap();
    }
    let at = at.to_string();
    for step in ["1m", "1h"] {
        assert_eq!(
            ok(mcds(&server)
                .args(["series", "aggregate", "jobs", "--step", step])
                .args(["--from-ms", &at, "--to-ms", &at])
                .args(RESOLUTIONS)),
            // 4 × (1 + … + 25) = 1300
            "100 1300 1 25 13\n",
            "step {step}"
        );
    }
}

/// A sample of half an hour ago on a memcached started since: the server
/// may have lost it (a restart looks the same), so a read with the loss
/// check (the default) fails (exit 3) and says why; `--no-loss-check`
/// reads what is there. A sample more than the clock skew ahead is
/// refused.
#[test]
fn series_reads_cannot_vouch_for_the_time_before_the_server_started() {
    let server = MemcachedServer::start_default();
    let at = (minute_half_an_hour_ago() + 1_000).to_string();
    let series = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("series").args(args).args(["--resolution", "1m:1d"]);
        cmd
    };
    assert_eq!(ok(&mut series(&["record", "old", "5", "--at-ms", &at])), "");
    let read = ["aggregate", "old", "--from-ms", &at, "--to-ms", &at];
    let err = fails(3, &mut series(&read));
    assert!(err.contains("may have lost data"), "{err}");
    assert_eq!(ok(series(&read).arg("--no-loss-check")), "1 5 5 5 5\n");
    let packed = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("packed")
            .args(args)
            .args(["--slot", "1m", "--period", "1h"]);
        cmd
    };
    assert_eq!(
        ok(packed(&["incr", "old", "--at-ms", &at]).arg("--no-loss-check")),
        "1\n"
    );
    let err = fails(3, &mut packed(&["get", "old", "--at-ms", &at]));
    assert!(err.contains("may have lost data"), "{err}");
    let ahead = (mcds_core::Clock::now_ms(&mcds_core::SystemClock) + 10_000).to_string();
    let err = fails(
        3,
        series(&["record", "old", "1", "--at-ms", &ahead]).args(["--max-clock-skew", "1s"]),
    );
    assert!(err.contains("when its time comes"), "{err}");
}

#[test]
fn series_bad_input_says_what_to_do() {
    let server = MemcachedServer::start_default();
    // Usage errors (exit 2): a resolution that is not STEP:RETENTION, or
    // keeps a bucket less than a step; no --resolution; a bad value.
    for (args, says) in [
        (
            vec!["series", "record", "s", "1", "--resolution", "1m"],
            "use STEP:RETENTION",
        ),
        (
            vec!["series", "record", "s", "1", "--resolution", "1m:1s"],
            "raise it",
        ),
        (
            vec!["series", "record", "s", "1", "--resolution", "soon:1d"],
            "500ms",
        ),
        (vec!["series", "record", "s", "1"], "--resolution"),
        (
            vec!["series", "record", "s", "1.5", "--resolution", "1m:1d"],
            "1.5",
        ),
    ] {
        let err = fails(2, mcds(&server).args(&args));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Invalid input (exit 3), one line: a step the series does not record
    // at, a bad name, too many buckets for one read.
    for (args, says) in [
        (
            vec![
                "series",
                "sum",
                "s",
                "--step",
                "5m",
                "--resolution",
                "1m:1d",
            ],
            "does not record at a step of 300s",
        ),
        (
            vec!["series", "record", "bad name", "1", "--resolution", "1m:1d"],
            "space",
        ),
    ] {
        let err = fails(3, mcds(&server).args(&args));
        assert!(
            err.starts_with("mcds: error: ") && err.lines().count() == 1 && err.contains(says),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn packed_commands() {
    let server = MemcachedServer::start_default();
    let t0 = minute_half_an_hour_ago();
    let shape = [
        "--slot",
        "1m",
        "--period",
        "1h",
        "--width",
        "u8",
        "--no-loss-check",
    ];
    let packed = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("packed").args(args).args(shape);
        cmd
    };
    let (a, b) = ((t0 + 5_000).to_string(), (t0 + 60_000).to_string());
    assert_eq!(ok(&mut packed(&["incr", "logins", "--at-ms", &a])), "1\n");
    assert_eq!(
        ok(&mut packed(&["incr", "logins", "3", "--at-ms", &a])),
        "4\n"
    );
    // A u8 slot saturates at 255.
    assert_eq!(
        ok(&mut packed(&["incr", "logins", "300", "--at-ms", &b])),
        "255\n"
    );
    assert_eq!(ok(&mut packed(&["get", "logins", "--at-ms", &a])), "4\n");
    let (from, to) = (t0.to_string(), (t0 + 120_000).to_string());
    assert_eq!(
        ok(&mut packed(&[
            "range",
            "logins",
            "--from-ms",
            &from,
            "--to-ms",
            &to
        ])),
        format!("{t0} 4\n{} 255\n{} 0\n", t0 + 60_000, t0 + 120_000)
    );
    assert_eq!(
        json_out(
            0,
            &mut packed(&["sum", "logins", "--from-ms", &from, "--to-ms", &to])
        ),
        json!({ "packed": "logins", "from_ms": t0, "to_ms": t0 + 120_000, "sum": 259 })
    );
    // Now, by the system clock.
    assert_eq!(ok(&mut packed(&["incr", "now", "2"])), "2\n");
    assert_eq!(ok(&mut packed(&["sum", "now", "--last", "2m"])), "2\n");
    // Invalid input: a period that is no whole number of slots, a slot
    // past retention, the series reopened with another width.
    let err = fails(
        3,
        mcds(&server).args(["packed", "get", "logins", "--slot", "1m", "--period", "90s"]),
    );
    assert!(err.contains("multiple of the slot"), "{err}");
    let err = fails(3, &mut packed(&["incr", "logins", "--at-ms", "1000"]));
    assert!(err.contains("past the retention"), "{err}");
    let err = fails(
        3,
        mcds(&server)
            .args(["packed", "get", "logins", "--at-ms", &a])
            .args(["--slot", "1m", "--period", "1h", "--width", "u16"])
            .arg("--no-loss-check"),
    );
    assert!(err.contains("another width"), "{err}");
    let err = fails(2, &mut packed(&["incr", "logins", "-1"]));
    assert!(err.contains("-1"), "{err}");
}

#[test]
fn map_commands_count_integers_and_exact_decimals() {
    let server = MemcachedServer::start_default();
    let map = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("map").args(args);
        cmd
    };
    assert_eq!(ok(&mut map(&["incr", "stock", "apples", "10"])), "10\n");
    assert_eq!(ok(&mut map(&["incr", "stock", "pears"])), "1\n");
    assert_eq!(ok(&mut map(&["incr", "stock", "apples", "-12"])), "-2\n");
    assert_eq!(ok(&mut map(&["incr", "stock", "two words", "3"])), "3\n");
    assert_eq!(ok(&mut map(&["get", "stock", "apples"])), "-2\n");
    assert_eq!(ok(&mut map(&["get", "stock", "plums"])), "0\n");
    assert_eq!(
        ok(&mut map(&["get-all", "stock"])),
        "apples\t-2\npears\t1\ntwo words\t3\n"
    );
    assert_eq!(
        json_out(0, &mut map(&["get-all", "stock"])),
        json!({ "map": "stock", "entries": [
            { "field": "apples", "value": -2 },
            { "field": "pears", "value": 1 },
            { "field": "two words", "value": 3 },
        ] })
    );
    assert_eq!(
        ok(&mut map(&["fields", "stock"])),
        "apples\npears\ntwo words\n"
    );
    assert_eq!(ok(&mut map(&["len", "stock"])), "3\n");
    assert_eq!(ok(&mut map(&["remove", "stock", "pears"])), "");
    assert_eq!(out(1, &mut map(&["remove", "stock", "pears"])), "");
    assert_eq!(
        json_out(1, &mut map(&["remove", "stock", "pears"])),
        json!({ "map": "stock", "field": "pears", "removed": false })
    );
    assert_eq!(
        json_out(0, &mut map(&["len", "stock"])),
        json!({ "map": "stock", "len": 2 })
    );
    // Decimals at --scale 2, from ten processes: exact, no float drift.
    let cents = |args: &[&str]| {
        let mut cmd = map(args);
        cmd.args(["--scale", "2"]);
        cmd
    };
    for _ in 0..10 {
        ok(&mut cents(&["incr", "balance", "ann", "0.10"]));
    }
    assert_eq!(ok(&mut cents(&["get", "balance", "ann"])), "1.00\n");
    assert_eq!(
        ok(&mut cents(&["incr", "balance", "ann", "-0.25"])),
        "0.75\n"
    );
    // More places than the scale: refused, unless --round.
    let err = fails(3, &mut cents(&["incr", "balance", "ann", "0.125"]));
    assert!(err.contains("more decimal places"), "{err}");
    assert_eq!(
        ok(&mut cents(&["incr", "balance", "ann", "0.125", "--round"])),
        "0.88\n"
    );
    assert_eq!(
        json_out(0, &mut cents(&["get-all", "balance"])),
        json!({ "map": "balance", "entries": [{ "field": "ann", "value": "0.88" }] })
    );
    // The same counter read at scale 0 is its units.
    assert_eq!(ok(&mut map(&["get", "balance", "ann"])), "88\n");
    // Bad input: one line, exit 3.
    for (args, says) in [
        (
            vec!["incr", "stock", "apples", "1.5"],
            "more decimal places",
        ),
        (vec!["incr", "stock", "apples", "ten"], "[+-]digits"),
        (
            vec!["incr", "stock", "apples", "x", "--round"],
            "[+-]digits",
        ),
        (vec!["get", "stock", "apples", "--scale", "19"], "0 to 18"),
        (vec!["get", "stock", ""], "1 to 1024 bytes"),
    ] {
        let err = fails(3, &mut map(&args));
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert_eq!(ok(&mut map(&["get", "stock", "apples"])), "-2\n");
}

#[test]
fn leaderboard_commands() {
    let server = MemcachedServer::start_default();
    let board = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("leaderboard").args(args).args(["--capacity", "3"]);
        cmd
    };
    assert_eq!(ok(&mut board(&["incr", "game", "ann", "10"])), "10\n");
    assert_eq!(ok(&mut board(&["incr", "game", "bob", "25"])), "25\n");
    assert_eq!(ok(&mut board(&["incr", "game", "ann", "20"])), "30\n");
    assert_eq!(ok(&mut board(&["incr", "game", "cy"])), "1\n");
    assert_eq!(
        ok(&mut board(&["top", "game"])),
        "ann\t30\t0\nbob\t25\t0\ncy\t1\t0\n"
    );
    assert_eq!(
        ok(&mut board(&["top", "game", "-k", "2"])),
        "ann\t30\t0\nbob\t25\t0\n"
    );
    assert_eq!(
        json_out(0, &mut board(&["top", "game", "-k", "1"])),
        json!({ "leaderboard": "game", "top": [{ "member": "ann", "count": 30, "error": 0 }] })
    );
    assert_eq!(ok(&mut board(&["score", "game", "bob"])), "25\n");
    assert_eq!(out(1, &mut board(&["score", "game", "zed"])), "");
    assert_eq!(
        json_out(1, &mut board(&["score", "game", "zed"])),
        json!({ "leaderboard": "game", "member": "zed", "count": null })
    );
    assert_eq!(
        ok(&mut board(&["summary", "game"])),
        "members=3 capacity=3 total=56 exact=true max_error=0\n"
    );
    // A fourth member replaces the smallest (cy, 1): its count is an
    // upper bound with error 1.
    assert_eq!(ok(&mut board(&["incr", "game", "dee", "2"])), "3\n");
    assert_eq!(
        ok(&mut board(&["top", "game"])),
        "ann\t30\t0\nbob\t25\t0\ndee\t3\t1\n"
    );
    assert_eq!(
        json_out(0, &mut board(&["summary", "game"])),
        json!({
            "leaderboard": "game", "members": 3, "capacity": 3, "total": 58,
            "exact": false, "max_error": 3,
        })
    );
    // Another capacity: refused with the fix (exit 3), the board intact.
    let err = fails(
        3,
        mcds(&server).args(["leaderboard", "top", "game", "--capacity", "5"]),
    );
    assert!(err.contains("created with capacity 3"), "{err}");
    let err = fails(3, &mut board(&["incr", "game", "ann", "0"]));
    assert!(err.contains("at least 1"), "{err}");
    fails(2, &mut board(&["incr", "game", "ann", "-1"]));
    fails(2, mcds(&server).args(["leaderboard", "top", "game"]));
    assert_eq!(ok(mcds(&server).args(["leaderboard", "clear", "game"])), "");
    assert_eq!(ok(&mut board(&["top", "game"])), "");
}

#[test]
fn sbloom_commands() {
    let server = MemcachedServer::start_default();
    let shape = ["--capacity", "10", "--fpr", "0.01"];
    let sbloom = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("sbloom").args(args).args(shape);
        cmd
    };
    assert_eq!(ok(&mut sbloom(&["add", "seen", "ann", "bob"])), "2\n");
    assert_eq!(ok(&mut sbloom(&["add", "seen", "ann", "cy"])), "1\n");
    assert_eq!(ok(&mut sbloom(&["check", "seen", "ann"])), "");
    assert_eq!(ok(&mut sbloom(&["check", "seen", "ann", "bob", "cy"])), "");
    assert_eq!(out(1, &mut sbloom(&["check", "seen", "ann", "zed"])), "");
    let lines = out(1, sbloom(&["check", "seen", "ann", "zed"]).arg("--json"));
    assert_eq!(
        lines,
        "{\"element\":\"ann\",\"maybe_present\":true,\"sbloom\":\"seen\"}\n\
         {\"element\":\"zed\",\"maybe_present\":false,\"sbloom\":\"seen\"}\n"
    );
    assert_eq!(ok(&mut sbloom(&["layers", "seen"])), "1\n");
    // Past its first layer's 10 elements the filter grows; nothing added
    // is ever reported absent.
    let many: Vec<String> = (0..60).map(|i| format!("user{i}")).collect();
    let mut add = sbloom(&["add", "seen"]);
    // An add counts an element as new unless every layer has its bits: a
    // false positive (under 1 %) makes one look old.
    let new: usize = ok(add.args(&many)).trim().parse().unwrap();
    assert!((55..=60).contains(&new), "{new} of 60 new");
    let layers: usize = ok(&mut sbloom(&["layers", "seen"])).trim().parse().unwrap();
    assert!(layers >= 3, "10, 20, 40: {layers} layers");
    let mut check = sbloom(&["check", "seen"]);
    assert_eq!(ok(check.args(&many)), "");
    assert_eq!(ok(&mut sbloom(&["clear", "seen"])), "");
    assert_eq!(ok(&mut sbloom(&["layers", "seen"])), "1\n");
    assert_eq!(out(1, &mut sbloom(&["check", "seen", "ann"])), "");
    // Bad numbers: exit 3, saying the range.
    for (args, says) in [
        (vec!["--growth", "17"], "1 to 16"),
        (vec!["--fpr", "2"], "between 0 and 1"),
    ] {
        let err = fails(
            3,
            mcds(&server)
                .args(["sbloom", "add", "other", "x", "--capacity", "10"])
                .args(&args),
        );
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Without servers every new command runs on the embedded store (with the
/// warning), which starts empty each time.
#[test]
fn embedded_store_runs_them_once() {
    for (args, stdout) in [
        (vec!["series", "count", "s", "--resolution", "1m:1d"], "0\n"),
        (
            vec!["series", "record", "s", "1", "--resolution", "1m:1d"],
            "",
        ),
        (
            vec!["packed", "incr", "p", "--slot", "1m", "--period", "1h"],
            "1\n",
        ),
        (vec!["map", "incr", "m", "f", "2"], "2\n"),
        (vec!["map", "get-all", "m"], ""),
        (
            vec!["leaderboard", "incr", "b", "ann", "--capacity", "5"],
            "1\n",
        ),
        (
            vec!["sbloom", "add", "f", "a", "b", "--capacity", "10"],
            "2\n",
        ),
    ] {
        let out = Command::cargo_bin("mcds")
            .unwrap()
            .env_remove("MCDS_SERVERS")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(err.contains("warning: no --servers"), "{args:?}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), stdout, "{args:?}");
    }
}
