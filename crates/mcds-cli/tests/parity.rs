//! The commands that give the CLI parity with the library (tables, shadow
//! and view counters, sharded sets, `limit peek`, `log since`, `set
//! compact`, raw `kv` operations and `stats`), against real memcached.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use mcds_testkit::{MemcachedServer, ServerOptions, ServerPool};
use serde_json::{Value, json};

mod common;
use common::*;

/// The stderr of a command that must exit `code`.
fn err(code: i32, cmd: &mut Command) -> String {
    let out = run(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    stderr
}

#[test]
fn table_commands() {
    let server = MemcachedServer::start_default();
    let t = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("table").args(args);
        cmd
    };
    assert_eq!(ok(&mut t(&["set", "users", "ann", "admin"])), "");
    ok(&mut t(&["set", "users", "bob", "two words"]));
    ok(&mut t(&["set", "users", "c y", "x"]));
    assert_eq!(ok(&mut t(&["get", "users", "ann"])), "admin\n");
    assert_eq!(ok(&mut t(&["get", "users", "bob"])), "two words\n");
    // A miss: exit 1, nothing printed (JSON: a null value).
    assert_eq!(out(1, &mut t(&["get", "users", "zed"])), "");
    assert_eq!(
        json_out(1, &mut t(&["get", "users", "zed"])),
        json!({ "table": "users", "member": "zed", "value": null })
    );
    assert_eq!(
        json_out(0, &mut t(&["get", "users", "ann"])),
        json!({ "table": "users", "member": "ann", "value": "admin" })
    );
    assert_eq!(ok(&mut t(&["has", "users", "c y"])), "true\n");
    assert_eq!(out(1, &mut t(&["has", "users", "zed"])), "false\n");
    // Overwriting keeps one entry.
    ok(&mut t(&["set", "users", "ann", "owner"]));
    assert_eq!(
        ok(&mut t(&["entries", "users"])),
        "ann\towner\nbob\ttwo words\nc y\tx\n"
    );
    assert_eq!(ok(&mut t(&["keys", "users"])), "ann\nbob\nc y\n");
    assert_eq!(
        json_out(0, &mut t(&["entries", "users"])),
        json!({ "table": "users", "entries": [
            { "member": "ann", "value": "owner" },
            { "member": "bob", "value": "two words" },
            { "member": "c y", "value": "x" },
        ] })
    );
    assert_eq!(
        json_out(0, &mut t(&["keys", "users"])),
        json!({ "table": "users", "members": ["ann", "bob", "c y"] })
    );
    assert_eq!(ok(&mut t(&["delete", "users", "bob"])), "");
    assert_eq!(out(1, &mut t(&["delete", "users", "bob"])), "");
    assert_eq!(
        json_out(1, &mut t(&["delete", "users", "bob"])),
        json!({ "table": "users", "member": "bob", "deleted": false })
    );
    assert_eq!(ok(&mut t(&["keys", "users"])), "ann\nc y\n");
    assert_eq!(ok(&mut t(&["entries", "empty"])), "");
    assert_eq!(
        json_out(0, &mut t(&["entries", "empty"])),
        json!({ "table": "empty", "entries": [] })
    );
    // Another prefix, another table.
    assert_eq!(
        out(
            1,
            mcds(&server).args(["--prefix", "other/", "table", "get", "users", "ann"])
        ),
        ""
    );
}

/// Unix seconds now, and the shadow counter period numbers around it for
/// a period of one day.
fn day_number() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    now / 86_400
}

#[test]
fn shadow_commands() {
    let server = MemcachedServer::start_default();
    let shadow = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("shadow").args(args).args(["--period", "1d"]);
        cmd
    };
    // Retried if the test straddles midnight UTC (a new period).
    loop {
        let day = day_number();
        let name = format!("visitors{day}");
        assert_eq!(ok(&mut shadow(&["incr", &name])), "1\n");
        assert_eq!(ok(&mut shadow(&["incr", &name, "4"])), "5\n");
        // Counting goes into this period's key; the value is the last one's.
        assert_eq!(ok(&mut shadow(&["get", &name])), "0\n");
        let current = format!("shadow:{name}:{day}");
        let previous = format!("shadow:{name}:{}", day - 1);
        let stored = ok(mcds(&server).args(["kv", "get", &current]));
        ok(mcds(&server).args(["kv", "set", &previous, "42"]));
        let value = json_out(0, &mut shadow(&["get", &name]));
        if day_number() != day {
            continue;
        }
        assert_eq!(stored, "5\n");
        assert_eq!(value, json!({ "shadow": name, "value": 42 }));
        break;
    }
    // 86400 seconds is the same period as 1d.
    let name = format!("visitors{}", day_number());
    let text = ok(mcds(&server).args(["shadow", "get", &name, "--period", "86400"]));
    assert!(text == "42\n" || text == "0\n", "{text}");
    // Sub-second periods are refused (memcached expires in whole seconds).
    let e = err(
        3,
        mcds(&server).args(["shadow", "incr", "v", "--period", "1.5"]),
    );
    assert!(e.contains("whole number of seconds"), "{e}");
}

#[test]
fn view_commands() {
    let server = MemcachedServer::start_default();
    let view = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("view").args(args);
        cmd
    };
    // Not cached and no --initial: exit 1, nothing counted or seeded.
    assert_eq!(out(1, &mut view(&["incr", "photo:9"])), "");
    assert_eq!(out(1, &mut view(&["get", "photo:9"])), "");
    assert_eq!(
        json_out(1, &mut view(&["get", "photo:9"])),
        json!({ "view": "photo:9", "value": null })
    );
    // Seeded from the database's total plus this view.
    assert_eq!(
        ok(&mut view(&["incr", "photo:9", "--initial", "1000"])),
        "1001\n"
    );
    assert_eq!(ok(&mut view(&["incr", "photo:9"])), "1002\n");
    // --initial is only for an empty cache.
    assert_eq!(
        ok(&mut view(&["incr", "photo:9", "3", "--initial", "5"])),
        "1005\n"
    );
    assert_eq!(
        ok(&mut view(&["get", "photo:9", "--initial", "7"])),
        "1005\n"
    );
    assert_eq!(
        json_out(0, &mut view(&["get", "photo:9"])),
        json!({ "view": "photo:9", "value": 1005 })
    );
    assert_eq!(ok(&mut view(&["invalidate", "photo:9"])), "");
    assert_eq!(out(1, &mut view(&["get", "photo:9"])), "");
    // get seeds the cache with --initial.
    assert_eq!(
        ok(&mut view(&["get", "photo:9", "--initial", "50"])),
        "50\n"
    );
    assert_eq!(ok(&mut view(&["incr", "photo:9"])), "51\n");
    // A TTL on the cached value.
    ok(&mut view(&["get", "t", "--initial", "1", "--ttl", "5m"]));
    let ttl = server.raw(b"mg views:t:value t\r\n", |_| true);
    let secs: u64 = ttl[0]
        .strip_prefix("HD t")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{ttl:?}"));
    assert!((295..=301).contains(&secs), "{secs}");
}

#[test]
fn sharded_set_commands() {
    let server = MemcachedServer::start_default();
    let sset = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("sharded-set").args(args).args(["--shards", "8"]);
        cmd
    };
    let members: Vec<String> = (0..40).map(|i| format!("user {i}")).collect();
    assert_eq!(
        ok(sset(&["add", "online"]).args(&members)),
        "",
        "add prints nothing"
    );
    ok(&mut sset(&["remove", "online", "user 3", "user 30"]));
    let listed = ok(&mut sset(&["members", "online"]));
    let mut listed: Vec<&str> = listed.lines().collect();
    listed.sort();
    let mut expected: Vec<&str> = members
        .iter()
        .map(String::as_str)
        .filter(|m| *m != "user 3" && *m != "user 30")
        .collect();
    expected.sort();
    assert_eq!(listed, expected);
    assert_eq!(ok(&mut sset(&["contains", "online", "user 7"])), "true\n");
    assert_eq!(
        out(1, &mut sset(&["contains", "online", "user 3"])),
        "false\n"
    );
    assert_eq!(
        json_out(1, &mut sset(&["contains", "online", "user 3"])),
        json!({ "sharded_set": "online", "member": "user 3", "contains": false })
    );
    assert_eq!(ok(&mut sset(&["compact", "online"])), "");
    assert_eq!(
        json_out(0, &mut sset(&["compact", "online"])),
        json!({ "sharded_set": "online", "compacted": true })
    );
    let json = json_out(0, &mut sset(&["members", "online"]));
    assert_eq!(json["members"].as_array().unwrap().len(), 38);
    // --shards is required, and must be 1 to 4096.
    err(2, mcds(&server).args(["sharded-set", "members", "online"]));
    let e = err(
        3,
        mcds(&server).args(["sharded-set", "members", "online", "--shards", "0"]),
    );
    assert!(e.contains("1 to 4096"), "{e}");
}

#[test]
fn limit_peek_does_not_count() {
    let server = MemcachedServer::start_default();
    let limit = |sub: &str| {
        let mut cmd = mcds(&server);
        cmd.args(["limit", sub, "api", "--limit", "2", "--window", "1m"]);
        cmd
    };
    for _ in 0..3 {
        assert!(ok(&mut limit("peek")).starts_with("allowed remaining=2 "));
    }
    assert!(ok(&mut limit("check")).starts_with("allowed remaining=1 "));
    assert!(ok(&mut limit("peek")).starts_with("allowed remaining=1 "));
    assert!(ok(&mut limit("check")).starts_with("allowed remaining=0 "));
    let denied = out(1, &mut limit("peek"));
    assert!(
        denied.starts_with("denied remaining=0 retry_after_ms="),
        "{denied}"
    );
    let json = json_out(1, &mut limit("peek"));
    assert_eq!(json["allowed"], json!(false));
    // Peeking never counted: still denied after two checks, not four.
    assert_eq!(json["remaining"], json!(0));
    // The sliding mode, with the window in seconds as before.
    let sliding = [
        "limit",
        "peek",
        "api2",
        "--limit",
        "1",
        "--window",
        "60",
        "--sliding",
    ];
    ok(mcds(&server).args(sliding));
}

#[test]
fn set_compact() {
    let server = MemcachedServer::start_default();
    ok(mcds(&server).args(["set", "add", "tags", "a", "b", "c"]));
    // Nothing removed yet: nothing to rewrite.
    assert_eq!(
        ok(mcds(&server).args(["set", "compact", "tags"])),
        "false\n"
    );
    ok(mcds(&server).args(["set", "remove", "tags", "b"]));
    assert_eq!(ok(mcds(&server).args(["set", "compact", "tags"])), "true\n");
    assert_eq!(
        json_out(0, mcds(&server).args(["set", "compact", "tags"])),
        json!({ "set": "tags", "compacted": false })
    );
    assert_eq!(ok(mcds(&server).args(["set", "members", "tags"])), "a\nc\n");
    assert_eq!(
        ok(mcds(&server).args(["set", "compact", "never"])),
        "false\n"
    );
}

fn now_ms() -> u64 {
    mcds_core::Clock::now_ms(&mcds_core::SystemClock)
}

#[test]
fn log_since_resumes_from_the_printed_cursor() {
    let server = MemcachedServer::start_default();
    let now = now_ms();
    let put = |text: &str, at: u64| {
        ok(mcds(&server).args(["log", "put", "audit", text, "--at-ms", &at.to_string()]));
    };
    put("first", now - 3000);
    put("second", now - 2000);
    put("twin", now - 2000);
    let since = |extra: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.args(["log", "since", "audit"]).args(extra);
        cmd
    };
    assert_eq!(
        ok(&mut since(&[])),
        format!(
            "{} first\n{} second\n{} twin\n",
            now - 3000,
            now - 2000,
            now - 2000
        )
    );
    // The cursor after the two events at now - 2000.
    let text = ok(&mut since(&["--print-cursor"]));
    let cursor = format!("{}:2", now - 2000);
    assert!(
        text.ends_with(&format!("twin\ncursor {cursor}\n")),
        "{text}"
    );
    // Resumed: nothing new, the same cursor.
    assert_eq!(
        ok(&mut since(&["--cursor", &cursor, "--print-cursor"])),
        format!("cursor {cursor}\n")
    );
    // A third event at the same millisecond, and a later one.
    put("triplet", now - 2000);
    put("third", now - 1000);
    assert_eq!(
        ok(&mut since(&["--cursor", &cursor])),
        format!("{} triplet\n{} third\n", now - 2000, now - 1000)
    );
    // A bare time: after every event up to and including it.
    assert_eq!(
        ok(&mut since(&["--cursor", &(now - 2000).to_string()])),
        format!("{} third\n", now - 1000)
    );
    assert_eq!(ok(&mut since(&["--cursor", "now"])), "");
    // JSON: every event carries the cursor to resume after it.
    let text = ok(&mut since(&[
        "--json",
        "--print-cursor",
        "--cursor",
        &cursor,
    ]));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({ "log": "audit", "at_ms": now - 2000, "payload": "triplet", "cursor": format!("{}:3", now - 2000) }),
            json!({ "log": "audit", "at_ms": now - 1000, "payload": "third", "cursor": format!("{}:1", now - 1000) }),
            json!({ "log": "audit", "cursor": format!("{}:1", now - 1000) }),
        ]
    );
    // A bad cursor is a usage error naming the forms.
    let e = err(2, &mut since(&["--cursor", "yesterday"]));
    assert!(e.contains("MS:N"), "{e}");
    // --interval belongs to --follow.
    err(2, &mut since(&["--interval", "2s"]));
}

/// `mcds log since --follow` as a child with its stdout read line by line
/// on a thread: the lines arrive on the returned channel. The thread ends
/// (closing the pipe) after `keep` lines.
fn follow(
    server: &MemcachedServer,
    extra: &[&str],
    keep: usize,
) -> (Child, mpsc::Receiver<String>) {
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let mut child = mcds_testkit::spawn_tied(&bin, |c| {
        c.env("MCDS_SERVERS", server.addr())
            .args(["log", "since", "feed", "--follow", "--interval", "50ms"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    })
    .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let lines = BufReader::new(stdout).lines();
        for line in lines.take(keep) {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

fn next_line(lines: &mpsc::Receiver<String>) -> String {
    lines
        .recv_timeout(Duration::from_secs(10))
        .expect("no line from mcds log since --follow within 10 s")
}

#[test]
fn log_since_follow_prints_new_events_as_they_come() {
    let server = MemcachedServer::start_default();
    ok(mcds(&server).args(["log", "put", "feed", "before"]));
    let (mut child, lines) = follow(&server, &["--print-cursor"], usize::MAX);
    // The first poll prints what is already there, then its cursor.
    assert!(next_line(&lines).ends_with(" before"));
    assert!(next_line(&lines).starts_with("cursor "));
    // Put by another invocation after that poll: a later poll prints it.
    ok(mcds(&server).args(["log", "put", "feed", "after"]));
    let line = next_line(&lines);
    assert!(line.ends_with(" after"), "{line}");
    let at: u64 = line.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(next_line(&lines), format!("cursor {at}:1"));
    ok(mcds(&server).args(["log", "put", "feed", "again"]));
    assert!(next_line(&lines).ends_with(" again"));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// When the reader of its pipe goes away (`| head -1`), a follower ends
/// quietly with exit 0, without waiting for another event to write.
#[test]
fn log_since_follow_ends_quietly_when_its_reader_goes() {
    let server = MemcachedServer::start_default();
    ok(mcds(&server).args(["log", "put", "feed", "only"]));
    let (mut child, lines) = follow(&server, &["--json"], 1);
    let first: Value = serde_json::from_str(&next_line(&lines)).unwrap();
    assert_eq!(first["payload"], json!("only"));
    // The reading thread has closed the pipe after its one line.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the follower kept running");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn kv_commands() {
    let server = MemcachedServer::start_default();
    let kv = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("kv").args(args);
        cmd
    };
    assert_eq!(ok(&mut kv(&["set", "greeting", "hello world"])), "");
    assert_eq!(ok(&mut kv(&["get", "greeting"])), "hello world\n");
    let json = json_out(0, &mut kv(&["get", "greeting"]));
    assert_eq!(json["value"], json!("hello world"));
    assert_eq!(json["flags"], json!(0));
    // A CAS id is opaque, and a string (most are past 2^53).
    let cas: u64 = json["cas"].as_str().unwrap().parse().unwrap();
    assert!(cas > 0, "{json}");
    // Misses exit 1 with nothing printed.
    assert_eq!(out(1, &mut kv(&["get", "nope"])), "");
    assert_eq!(
        json_out(1, &mut kv(&["get", "nope"])),
        json!({ "key": "nope", "value": null })
    );
    // Written without mcds, read raw.
    server.raw_set("planted", b"raw bytes");
    assert_eq!(ok(&mut kv(&["get", "planted"])), "raw bytes\n");
    // add: only when absent.
    assert_eq!(out(1, &mut kv(&["add", "greeting", "x"])), "");
    assert_eq!(
        json_out(1, &mut kv(&["add", "greeting", "x"]))["stored"],
        json!(false)
    );
    ok(&mut kv(&["add", "fresh", "x"]));
    // delete: exit 1 when absent.
    ok(&mut kv(&["delete", "fresh"]));
    assert_eq!(out(1, &mut kv(&["delete", "fresh"])), "");
    assert_eq!(
        json_out(1, &mut kv(&["delete", "fresh"])),
        json!({ "key": "fresh", "deleted": false })
    );
    // incr: memcached's, nothing created on a miss.
    assert_eq!(out(1, &mut kv(&["incr", "n"])), "");
    assert_eq!(out(1, &mut kv(&["get", "n"])), "");
    ok(&mut kv(&["set", "n", "41"]));
    assert_eq!(ok(&mut kv(&["incr", "n"])), "42\n");
    assert_eq!(
        json_out(0, &mut kv(&["incr", "n", "8"])),
        json!({ "key": "n", "value": 50 })
    );
    ok(&mut kv(&["set", "n", "18446744073709551615"]));
    assert_eq!(ok(&mut kv(&["incr", "n", "2"])), "1\n", "wraps at 2^64");
    let e = err(3, &mut kv(&["incr", "greeting"]));
    assert!(e.contains("not a decimal number"), "{e}");
    // TTLs: --ttl on set, touch; the server's remaining time says so.
    let remaining = |key: &str| -> i64 {
        let reply = server.raw(format!("mg {key} t\r\n").as_bytes(), |_| true);
        reply[0]
            .strip_prefix("HD t")
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{reply:?}"))
    };
    assert_eq!(remaining("greeting"), -1, "no --ttl: never expires");
    ok(&mut kv(&["set", "session", "s", "--ttl", "5m"]));
    assert!((299..=301).contains(&remaining("session")));
    assert_eq!(ok(&mut kv(&["touch", "session", "--ttl", "1h"])), "");
    assert!((3599..=3601).contains(&remaining("session")));
    assert_eq!(out(1, &mut kv(&["touch", "nope", "--ttl", "1h"])), "");
    assert_eq!(
        json_out(0, &mut kv(&["touch", "session", "--ttl", "90"])),
        json!({ "key": "session", "touched": true })
    );
    // A TTL of 0 is refused rather than guessed; touch needs one.
    let e = err(2, &mut kv(&["set", "k", "v", "--ttl", "0"]));
    assert!(e.contains("leave --ttl out"), "{e}");
    err(2, &mut kv(&["touch", "session"]));
    // --prefix is prepended to the raw key.
    ok(mcds(&server).args(["--prefix", "app/", "kv", "set", "k", "prefixed"]));
    assert_eq!(ok(&mut kv(&["get", "app/k"])), "prefixed\n");
    // Bad keys are invalid input.
    let e = err(3, &mut kv(&["get", "two words"]));
    assert!(
        e.starts_with("mcds: error: invalid key") && e.lines().count() == 1,
        "{e}"
    );
}

#[test]
fn stats_command() {
    let mut pool = ServerPool::start(2, ServerOptions::default());
    let servers = pool.servers_arg();
    let stats = || {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", &servers).arg("stats");
        cmd
    };
    let text = ok(&mut stats());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "server",
            "version",
            "uptime",
            "curr_items",
            "bytes",
            "get_hits",
            "get_misses",
            "evictions",
            "curr_connections"
        ]
    );
    let version = pool.servers[0].stats()["version"].clone();
    for (line, server) in lines[1..].iter().zip(&pool.servers) {
        let row: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(row.len(), header.len(), "{line}");
        assert_eq!(row[0], server.addr());
        assert_eq!(row[1], version);
        for n in &row[2..] {
            n.parse::<u64>().unwrap();
        }
    }
    // JSON: every statistic, integers as numbers.
    let json = json_out(0, &mut stats());
    let listed = json["servers"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    for (entry, server) in listed.iter().zip(&pool.servers) {
        assert_eq!(entry["server"], json!(server.addr()));
        let s = &entry["stats"];
        assert_eq!(s["pid"], json!(server.pid().unwrap()));
        assert_eq!(s["version"], json!(version));
        assert!(s["curr_connections"].as_u64().unwrap() >= 1);
        assert!(s.as_object().unwrap().len() > 40);
    }
    // A dead server: the others are printed, the error names it, exit 4.
    let dead = pool.servers[1].addr();
    pool.servers[1].kill();
    let output = run(&mut stats());
    assert_eq!(output.status.code(), Some(4));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains(&pool.servers[0].addr()), "{text}");
    let dead_row = text.lines().find(|l| l.starts_with(&dead)).unwrap();
    assert!(
        dead_row.split_whitespace().skip(1).all(|cell| cell == "-"),
        "{text}"
    );
    let e = String::from_utf8_lossy(&output.stderr);
    assert!(
        e.starts_with("mcds: error: 1 of 2 servers did not answer: ")
            && e.contains(&dead)
            && e.lines().count() == 1,
        "{e}"
    );
    let json = json_out_any(&mut stats());
    assert!(
        json["servers"][1]["error"]
            .as_str()
            .unwrap()
            .contains(&dead)
    );
    assert_eq!(
        json["servers"][0]["stats"]["pid"],
        json!(pool.servers[0].pid().unwrap())
    );
}

/// The JSON line on stdout, whatever the exit code.
fn json_out_any(cmd: &mut Command) -> Value {
    let out = run(cmd.arg("--json"));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Without memcached servers to ask there are no statistics: one line
/// saying so and what to set, exit 78 (configuration, not "unavailable,
/// retry"), and no embedded-store warning before it. A text:// URL (a
/// proxy) and memory:// say why they are not enough.
#[test]
fn stats_needs_servers() {
    for (servers, says) in [
        (None, "no --servers (or MCDS_SERVERS) was given"),
        (Some("memory://"), "memory:// is the embedded store"),
        (Some("text://127.0.0.1:1?proxy"), "talks to a proxy"),
        (
            Some("text://127.0.0.1:1"),
            "give the same servers as memcached://",
        ),
    ] {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        match servers {
            Some(url) => cmd.env("MCDS_SERVERS", url),
            None => cmd.env_remove("MCDS_SERVERS"),
        };
        let out = cmd.arg("stats").output().unwrap();
        assert_eq!(out.status.code(), Some(78), "{servers:?}");
        assert!(out.stdout.is_empty());
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains("needs memcached servers") && e.contains(says) && e.contains("--servers"),
            "{e}"
        );
        assert!(!e.contains("embedded store has none"), "{e}");
    }
    // Under --json the error says its kind: config, with the code.
    let out = Command::cargo_bin("mcds")
        .unwrap()
        .env_remove("MCDS_SERVERS")
        .args(["--json", "stats"])
        .output()
        .unwrap();
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        (&e["kind"], &e["exit_code"]),
        (&json!("config"), &json!(78)),
        "{e}"
    );
}

/// Closing stdout early (`| head -1`) ends a command quietly with exit 0,
/// not with a panic about a broken pipe.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let server = MemcachedServer::start_default();
    let members: Vec<String> = (0..20_000).map(|i| format!("member-{i}")).collect();
    for chunk in members.chunks(2000) {
        ok(mcds(&server).args(["set", "add", "big"]).args(chunk));
    }
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let mut child = std::process::Command::new(bin)
        .env("MCDS_SERVERS", server.addr())
        .args(["set", "members", "big"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("member-"), "{first}");
    // The reader is dropped: the pipe is closed with most lines unwritten.
    let output = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{e}");
    assert!(e.is_empty(), "{e}");
}

/// `mcds kv update`: the CAS read-modify-write with a shell command, from
/// 4 processes at once on one key: every run lands once.
#[test]
fn kv_update_runs_a_command_as_the_update_function() {
    let server = mcds_testkit::MemcachedServer::start_default();
    let run = |args: &[&str]| {
        let mut cmd = assert_cmd::Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", server.addr()).args(args);
        cmd.output().unwrap()
    };
    // printf, not echo: the value is exactly what the command prints.
    let add_one = "printf %s $(( $(cat) + 0 + 1 ))";
    let children: Vec<_> = (0..4)
        .map(|_| {
            let addr = server.addr();
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let mut cmd = assert_cmd::Command::cargo_bin("mcds").unwrap();
                    let out = cmd
                        .env("MCDS_SERVERS", &addr)
                        .args([
                            "kv",
                            "update",
                            "jobs",
                            "--max-attempts",
                            "100",
                            "-c",
                            add_one,
                        ])
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
    for c in children {
        c.join().unwrap();
    }
    let out = run(&["kv", "get", "jobs"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "40\n");
    // A failing command writes nothing, and says so.
    let out = run(&["kv", "update", "jobs", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exit status: 7") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&run(&["kv", "get", "jobs"]).stdout),
        "40\n"
    );
    // A missing key: empty input, MCDS_KV_EXISTS=0.
    let out = run(&[
        "kv",
        "update",
        "fresh",
        "-c",
        "printf exists=$MCDS_KV_EXISTS",
    ]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&run(&["kv", "get", "fresh"]).stdout),
        "exists=0\n"
    );
}
