//! Helpers the `mcds` integration tests share: the binary pointed at a
//! server, and what a run must print and exit with. Each test file uses
//! some of them, hence `allow(dead_code)`.
#![allow(dead_code)]

use std::process::Output;

use assert_cmd::Command;
use mcds_testkit::MemcachedServer;
use serde_json::Value;

/// The `mcds` binary with `MCDS_SERVERS` set to `server`.
pub fn mcds(server: &MemcachedServer) -> Command {
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    cmd.env("MCDS_SERVERS", server.addr());
    cmd
}

/// Run `cmd` to completion.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

/// Stdout of a command that must exit `code`, with nothing on stderr.
pub fn out(code: i32, cmd: &mut Command) -> String {
    let out = run(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(out.stderr.is_empty(), "{cmd:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Stdout of a successful command.
pub fn ok(cmd: &mut Command) -> String {
    out(0, cmd)
}

/// The one JSON line a command printed, having exited `code`.
pub fn json_out(code: i32, cmd: &mut Command) -> Value {
    let text = out(code, cmd.arg("--json"));
    assert_eq!(text.lines().count(), 1, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// A minute boundary half an hour ago, by the system clock: recent enough
/// for every retention below, and with both of its minutes in the past.
pub fn minute_half_an_hour_ago() -> u64 {
    let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
    (now - 30 * 60_000) / 60_000 * 60_000
}
