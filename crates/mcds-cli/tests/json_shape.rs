//! `--json` has one shape across commands (the guide's "JSON output"):
//! every line on stdout is a JSON object that names what it is about, and
//! every command with a result prints one. Checked for every leaf command
//! of the CLI against real memcached; a command added without an entry
//! here fails `every_command_is_covered`.

use std::collections::BTreeSet;

use mcds_testkit::MemcachedServer;
use serde_json::Value;

mod common;
use common::*;

/// Each command run, in order, with the field that must name its subject
/// in every line it prints (`None`: it prints no JSON on stdout).
fn commands(t0: &str) -> Vec<(Vec<String>, Option<&'static str>)> {
    // The server started just now, after the periods these read began:
    // their loss check would (rightly) refuse them.
    let series = ["--resolution", "1m:1d", "--no-loss-check"];
    let packed = ["--slot", "1m", "--period", "1d", "--no-loss-check"];
    let log = ["--chunk", "60"];
    let board = ["--capacity", "10"];
    let sbloom = ["--capacity", "100", "--fpr", "0.01"];
    let bitmap = ["--start", "1767225600", "--unit", "86400"];
    let cases: Vec<(Vec<&str>, Option<&'static str>)> = vec![
        (vec!["counter", "incr", "c"], Some("counter")),
        (vec!["counter", "decr", "c"], Some("counter")),
        (vec!["counter", "get", "c"], Some("counter")),
        (vec!["counter", "get", "--key", "raw"], Some("key")),
        (
            vec!["window", "incr", "w", "--slot", "60", "--slots", "5"],
            Some("window"),
        ),
        (
            vec!["window", "get", "w", "--slot", "60", "--slots", "5"],
            Some("window"),
        ),
        (
            vec!["limit", "check", "l", "--limit", "5", "--window", "60"],
            Some("limit"),
        ),
        (
            vec!["limit", "peek", "l", "--limit", "5", "--window", "60"],
            Some("limit"),
        ),
        (
            vec!["shadow", "incr", "s", "--period", "1h"],
            Some("shadow"),
        ),
        (vec!["shadow", "get", "s", "--period", "1h"], Some("shadow")),
        (vec!["view", "incr", "v", "--initial", "10"], Some("view")),
        (vec!["view", "get", "v"], Some("view")),
        (vec!["view", "invalidate", "v"], Some("view")),
        (vec!["map", "incr", "m", "f", "2"], Some("map")),
        (vec!["map", "get", "m", "f"], Some("map")),
        (vec!["map", "get-all", "m"], Some("map")),
        (vec!["map", "fields", "m"], Some("map")),
        (vec!["map", "len", "m"], Some("map")),
        (vec!["map", "remove", "m", "f"], Some("map")),
        (vec!["map", "clear-registry", "m"], Some("map")),
        (vec!["set", "add", "s", "a", "b"], Some("set")),
        (vec!["set", "remove", "s", "b"], Some("set")),
        (vec!["set", "contains", "s", "a"], Some("set")),
        (vec!["set", "members", "s"], Some("set")),
        (vec!["set", "compact", "s"], Some("set")),
        (
            vec!["sharded-set", "add", "ss", "a", "b", "--shards", "4"],
            Some("sharded_set"),
        ),
        (
            vec!["sharded-set", "remove", "ss", "b", "--shards", "4"],
            Some("sharded_set"),
        ),
        (
            vec!["sharded-set", "contains", "ss", "a", "--shards", "4"],
            Some("sharded_set"),
        ),
        (
            vec!["sharded-set", "members", "ss", "--shards", "4"],
            Some("sharded_set"),
        ),
        (
            vec!["sharded-set", "compact", "ss", "--shards", "4"],
            Some("sharded_set"),
        ),
        (vec!["table", "set", "t", "ann", "admin"], Some("table")),
        (vec!["table", "get", "t", "ann"], Some("table")),
        (vec!["table", "has", "t", "ann"], Some("table")),
        (vec!["table", "entries", "t"], Some("table")),
        (vec!["table", "keys", "t"], Some("table")),
        (vec!["table", "delete", "t", "ann"], Some("table")),
        (
            [&["log", "put", "lg", "hello"][..], &log].concat(),
            Some("log"),
        ),
        ([&["log", "fetch", "lg"][..], &log].concat(), Some("log")),
        (
            [&["log", "since", "lg", "--print-cursor"][..], &log].concat(),
            Some("log"),
        ),
        (
            [&["series", "record", "ts", "5", "--at-ms", t0][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "range", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "aggregate", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "count", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "sum", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "avg", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "min", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [&["series", "max", "ts", "--last", "1h"][..], &series].concat(),
            Some("series"),
        ),
        (
            [
                &["series", "union", "ts", "ts2", "--last", "1h"][..],
                &series,
            ]
            .concat(),
            Some("series"),
        ),
        // Streams print one object per item, nothing for none: give the
        // second series a sample so the intersection has a bucket.
        (
            [
                &["series", "record", "ts2", "7", "--at-ms", t0][..],
                &series,
            ]
            .concat(),
            Some("series"),
        ),
        (
            [
                &["series", "intersection", "ts", "ts2", "--last", "1h"][..],
                &series,
            ]
            .concat(),
            Some("series"),
        ),
        (
            [&["packed", "incr", "p"][..], &packed].concat(),
            Some("packed"),
        ),
        (
            [&["packed", "get", "p"][..], &packed].concat(),
            Some("packed"),
        ),
        (
            [&["packed", "range", "p", "--last", "5m"][..], &packed].concat(),
            Some("packed"),
        ),
        (
            [&["packed", "sum", "p", "--last", "5m"][..], &packed].concat(),
            Some("packed"),
        ),
        (vec!["hll", "add", "h", "a", "b"], Some("hll")),
        (vec!["hll", "count", "h"], Some("hll")),
        (vec!["hll", "merge", "h2", "h"], Some("hll")),
        (
            vec!["bloom", "add", "b", "a", "--capacity", "100"],
            Some("bloom"),
        ),
        (
            vec!["bloom", "check", "b", "a", "--capacity", "100"],
            Some("bloom"),
        ),
        (
            [&["bitmap", "mark", "bm"][..], &bitmap].concat(),
            Some("bitmap"),
        ),
        (
            [&["bitmap", "count", "bm", "0", "30"][..], &bitmap].concat(),
            Some("bitmap"),
        ),
        (
            [&["leaderboard", "incr", "lb", "ann", "3"][..], &board].concat(),
            Some("leaderboard"),
        ),
        (
            [&["leaderboard", "top", "lb"][..], &board].concat(),
            Some("leaderboard"),
        ),
        (
            [&["leaderboard", "score", "lb", "ann"][..], &board].concat(),
            Some("leaderboard"),
        ),
        (
            [&["leaderboard", "summary", "lb"][..], &board].concat(),
            Some("leaderboard"),
        ),
        (vec!["leaderboard", "clear", "lb"], Some("leaderboard")),
        (
            [&["sbloom", "add", "sb", "a"][..], &sbloom].concat(),
            Some("sbloom"),
        ),
        (
            [&["sbloom", "check", "sb", "a"][..], &sbloom].concat(),
            Some("sbloom"),
        ),
        (
            [&["sbloom", "layers", "sb"][..], &sbloom].concat(),
            Some("sbloom"),
        ),
        (
            [&["sbloom", "clear", "sb"][..], &sbloom].concat(),
            Some("sbloom"),
        ),
        (vec!["kv", "set", "k", "v"], Some("key")),
        (vec!["kv", "get", "k"], Some("key")),
        (vec!["kv", "add", "k2", "v"], Some("key")),
        (vec!["kv", "incr", "n", "1"], Some("key")),
        (vec!["kv", "touch", "k", "--ttl", "1h"], Some("key")),
        (
            vec!["kv", "update", "k", "--command", "tr v w"],
            Some("key"),
        ),
        (vec!["kv", "delete", "k"], Some("key")),
        (vec!["lock", "status", "job"], Some("lock")),
        (vec!["lock", "run", "-n", "job", "--", "true"], None),
        (vec!["stats"], Some("servers")),
        (vec!["pool", "show"], Some("pool")),
        (vec!["pool", "adopt", "--grace", "0s"], Some("pool")),
        // Not results: the tour, and documents in their own formats.
        (vec!["demo"], None),
        (vec!["completions", "bash"], None),
        (vec!["man"], None),
    ];
    cases
        .into_iter()
        .map(|(args, kind)| (args.into_iter().map(String::from).collect(), kind))
        .collect()
}

/// The leaf commands of the CLI, as `mcds man DIR` names their pages
/// (`mcds-lock-run.1` → `lock run`).
fn leaf_commands() -> BTreeSet<String> {
    let dir = std::env::temp_dir().join(format!("mcds-json-shape-{}", std::process::id()));
    let status = assert_cmd::Command::cargo_bin("mcds")
        .unwrap()
        .arg("man")
        .arg(&dir)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let names: BTreeSet<String> = pages
        .iter()
        .filter_map(|p| p.strip_suffix(".1"))
        .filter_map(|p| p.strip_prefix("mcds-"))
        .map(String::from)
        .collect();
    // A page whose name prefixes another's is a group (`lock`, `sharded-set`).
    names
        .iter()
        .filter(|n| !names.iter().any(|m| m.starts_with(&format!("{n}-"))))
        .cloned()
        .collect()
}

#[test]
fn every_command_is_covered() {
    // Every run's command path and its prefixes: `kv get k` gives `kv`,
    // `kv-get` and `kv-get-k`.
    let covered: BTreeSet<String> = commands("0")
        .into_iter()
        .flat_map(|(args, _)| (1..=args.len()).map(move |n| args[..n].join("-")))
        .collect();
    let missing: Vec<String> = leaf_commands()
        .into_iter()
        .filter(|leaf| !covered.contains(leaf))
        .collect();
    assert!(
        missing.is_empty(),
        "commands without a JSON shape case: {missing:?}"
    );
}

#[test]
fn every_json_line_is_an_object_naming_its_subject() {
    let server = MemcachedServer::start_default();
    let t0 = minute_half_an_hour_ago().to_string();
    let mut wrong = Vec::new();
    for (args, kind) in commands(&t0) {
        let out = run(mcds(&server).arg("--json").args(&args));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        let Some(kind) = kind else {
            assert!(code == Some(0), "{args:?}: {code:?} {stderr}");
            continue;
        };
        if !matches!(code, Some(0 | 1)) {
            wrong.push(format!("{args:?}: exit {code:?}: {stderr}"));
            continue;
        }
        if stdout.trim().is_empty() {
            wrong.push(format!("{args:?}: printed nothing"));
        }
        for line in stdout.lines() {
            // The subject: a name, or a list of names for a command over
            // several (`hll count a b`); `stats` lists its servers.
            let names_it = |v: &Value| match v {
                Value::String(_) => true,
                Value::Array(items) => kind == "servers" || items.iter().all(Value::is_string),
                _ => false,
            };
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(fields)) if fields.get(kind).is_some_and(names_it) => {}
                _ => wrong.push(format!(
                    "{args:?}: {line} is not an object naming its {kind:?}"
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} shapes differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
