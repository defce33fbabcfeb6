//! `mcds lock run` keeps flock(1)'s habits, against real memcached: it
//! blocks by default, `-n` and `-w` give up silently with exit 1, `-E` sets
//! that code, `-c` runs a shell command, durations read as an operator
//! types them, `-v` narrates, `--json` covers errors, `lock status`
//! names the holder, and `--key` locks the exact key another application
//! takes with memcached's add.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use assert_cmd::Command;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn mcds(server: &MemcachedServer) -> Command {
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    cmd.env("MCDS_SERVERS", server.addr());
    cmd
}

/// Another owner's lock on NAME, held until the guard is released.
fn hold(server: &MemcachedServer, name: &str) -> mcds_lock::Guard {
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    Lock::new(store, name, Duration::from_secs(30))
        .unwrap()
        .try_acquire()
        .unwrap()
        .expect("free")
}

#[test]
fn blocks_until_the_lock_is_free_then_runs() {
    let server = MemcachedServer::start_default();
    let guard = hold(&server, "job");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env("MCDS_SERVERS", server.addr())
        .args(["lock", "run", "-v", "job", "--", "sh", "-c", "echo ran"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // -v says it is waiting: only then is the holder let go, so the run
    // certainly blocked rather than found the lock free.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("waiting") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no 'waiting': {said}"
        );
        said.push_str(&line);
    }
    assert!(said.contains("held by "), "{said}");
    assert!(said.contains("for as long as it takes"), "{said}");
    guard.release().unwrap();
    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(out.status.code(), Some(0), "{said}{rest}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    assert!(rest.contains("acquired lock \"job\""), "{rest}");
    assert!(rest.contains("released lock \"job\""), "{rest}");
}

#[test]
fn nonblock_and_wait_give_up_silently_with_the_conflict_code() {
    let server = MemcachedServer::start_default();
    let guard = hold(&server, "job");
    let marker = std::env::temp_dir().join(format!("mcds-flock-ran-{}", std::process::id()));
    let touch = format!("touch {}", marker.display());
    for args in [
        vec!["lock", "run", "-n", "job", "-c", &touch],
        vec!["lock", "run", "--nonblock", "job", "--", "sh", "-c", &touch],
        vec!["lock", "run", "-w", "200ms", "job", "-c", &touch],
        vec!["lock", "run", "-w", "0", "job", "-c", &touch],
        vec!["lock", "run", "--timeout", "0.2", "job", "-c", &touch],
    ] {
        mcds(&server)
            .args(&args)
            .assert()
            .code(1)
            .stdout("")
            .stderr("");
    }
    for args in [
        vec!["lock", "run", "-n", "-E", "75", "job", "-c", &touch],
        vec![
            "lock",
            "run",
            "-w",
            "0.1",
            "--conflict-exit-code",
            "75",
            "job",
            "true",
        ],
    ] {
        mcds(&server).args(&args).assert().code(75).stderr("");
    }
    assert!(!marker.exists(), "the command ran without the lock");
    // -v explains the conflict; --json makes it an object.
    let out = mcds(&server)
        .args(["--json", "-v", "lock", "run", "-n", "job", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let conflict = err
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["event"] == "conflict")
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(conflict["exit_code"], 1);
    assert_eq!(conflict["lock"], "job");
    guard.release().unwrap();
    // Free: -n runs it.
    mcds(&server)
        .args(["lock", "run", "-n", "job", "-c", &touch])
        .assert()
        .code(0);
    assert!(marker.exists());
    let _ = std::fs::remove_file(&marker);
}

/// Under cron: no terminal, no HOME, a bare PATH, stdin from /dev/null. An
/// overlap prints nothing at all (cron would mail it) and exits 1.
#[test]
fn a_cron_overlap_is_silent() {
    let server = MemcachedServer::start_default();
    let guard = hold(&server, "nightly");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("MCDS_SERVERS", server.addr())
        .args(["lock", "run", "-n", "nightly", "-c", "echo should-not-run"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    guard.release().unwrap();
}

#[test]
fn dash_c_runs_a_shell_command_and_passes_its_code() {
    let server = MemcachedServer::start_default();
    mcds(&server)
        .args(["lock", "run", "job", "-c", "echo one && echo two; exit 5"])
        .assert()
        .code(5)
        .stdout("one\ntwo\n");
    // -c and a command together is a usage error.
    mcds(&server)
        .args(["lock", "run", "job", "-c", "true", "--", "true"])
        .assert()
        .code(2);
    // Neither: usage error too.
    mcds(&server).args(["lock", "run", "job"]).assert().code(2);
}

#[test]
fn durations_read_as_operators_type_them() {
    let server = MemcachedServer::start_default();
    for ttl in ["1.5", "5m", "1m30s", "2h", "90s"] {
        mcds(&server)
            .args(["lock", "run", "--ttl", ttl, "job", "true"])
            .assert()
            .code(0);
    }
    let out = mcds(&server)
        .args(["lock", "run", "--ttl", "5x", "job", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("500ms") && err.contains("5m"), "{err}");
    // A lease under memcached's 1 s resolution is refused, saying so.
    let short = mcds(&server)
        .args(["lock", "run", "--ttl", "500ms", "job", "true"])
        .output()
        .unwrap();
    assert_eq!(short.status.code(), Some(3));
    let err = String::from_utf8_lossy(&short.stderr);
    assert!(err.contains("1-second resolution"), "{err}");
    // -w takes sub-second durations.
    mcds(&server)
        .args(["lock", "run", "-w", "500ms", "job", "true"])
        .assert()
        .code(0);
    // The TTL has a default: no --ttl needed.
    mcds(&server)
        .args(["lock", "run", "job", "true"])
        .assert()
        .code(0);
}

#[test]
fn status_names_the_holder_and_the_time_left() {
    let server = MemcachedServer::start_default();
    mcds(&server)
        .args(["lock", "status", "job"])
        .assert()
        .code(1)
        .stdout("free\n");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env("MCDS_SERVERS", server.addr())
        .args([
            "lock",
            "run",
            "--ttl",
            "20s",
            "job",
            "--",
            "sh",
            "-c",
            "echo up; read _; true",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut up = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut up)
        .unwrap();
    assert_eq!(up, "up\n");
    let out = mcds(&server)
        .args(["--json", "lock", "status", "job"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["held"], true);
    let owner = v["owner"].as_str().unwrap();
    assert!(
        owner.starts_with("host=") && owner.contains(&format!("pid={}", child.id())),
        "{owner}"
    );
    // The lease TTL plus the lock's slack of a few seconds, at most.
    let left = v["expires_in_ms"].as_u64().unwrap();
    assert!((1_000..=24_000).contains(&left), "{left}");
    let text = mcds(&server)
        .args(["lock", "status", "job"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("held by host=") && text.contains("; expires in "),
        "{text}"
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    mcds(&server)
        .args(["lock", "status", "job"])
        .assert()
        .code(1);
}

#[test]
fn json_covers_errors() {
    let server = MemcachedServer::start_default();
    let out = mcds(&server)
        .args(["--json", "counter", "incr", "bad key"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["level"], "error");
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["kind"], "invalid_input");
    assert!(v["message"].as_str().unwrap().contains("space"), "{v}");
    // A server that is down: exit 4, kind unavailable.
    let down = Command::cargo_bin("mcds")
        .unwrap()
        .args(["--json", "--servers", "127.0.0.1:1", "counter", "get", "x"])
        .output()
        .unwrap();
    assert_eq!(down.status.code(), Some(4));
    let v: serde_json::Value = serde_json::from_slice(&down.stderr).unwrap();
    assert_eq!(v["kind"], "unavailable");
    // A usage error clap catches: still JSON.
    let usage = mcds(&server)
        .args(["--json", "counter", "incr"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&usage.stderr).unwrap();
    assert_eq!(v["kind"], "usage");
}

#[test]
fn help_lists_the_exit_codes_and_flock_options() {
    for args in [vec!["--help"], vec!["lock", "run", "--help"]] {
        let out = Command::cargo_bin("mcds")
            .unwrap()
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("Exit codes:"), "{help}");
        for code in ["  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  76 ", "  78 "] {
            assert!(help.contains(code), "{args:?} lacks {code:?}: {help}");
        }
    }
    let out = Command::cargo_bin("mcds")
        .unwrap()
        .args(["lock", "run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--nonblock",
        "--wait",
        "--conflict-exit-code",
        "--command",
        "--ttl",
        "-n,",
        "-w,",
        "-E,",
        "-c,",
        "--verbose",
        "--key <KEY>",
    ] {
        assert!(help.contains(flag), "lock run --help lacks {flag}: {help}");
    }
    let version = Command::cargo_bin("mcds")
        .unwrap()
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("mcds {}", env!("CARGO_PKG_VERSION"))
    );
}

/// `lock run --key KEY` and `lock status --key KEY`: the lock is the exact
/// key an add-based lock uses (Symfony Lock's MemcachedStore, PHP's
/// `Memcached::add`): each side waits while the other holds it. The
/// command follows --key KEY, where NAME would be.
#[test]
fn lock_key_is_the_exact_key_an_add_based_lock_takes() {
    use mcds_core::{Key, Store, Stored, Ttl};

    let server = MemcachedServer::start_default();
    let store = MemcachedStore::connect(&server.addr()).unwrap();
    let key = Key::new("report-lock").unwrap();
    let run = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.args(["lock", "run"]).args(args);
        cmd
    };
    // Another application holds it: mcds does not run the command.
    let added = store.add(&key, b"php-token", Ttl::secs(30)).unwrap();
    assert!(matches!(added, Stored::Stored(_)));
    run(&["-n", "--key", "report-lock", "echo", "ran"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("");
    run(&["-w", "300ms", "--key", "report-lock", "--", "echo", "ran"])
        .assert()
        .code(1)
        .stdout("");
    let status = mcds(&server)
        .args(["lock", "status", "--key", "report-lock"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0));
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.starts_with("held by php-token; expires in "), "{text}");
    let json = mcds(&server)
        .args(["--json", "lock", "status", "--key", "report-lock"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        (v["key"].as_str(), v["held"].as_bool()),
        (Some("report-lock"), Some(true))
    );
    assert_eq!(v["owner"], "php-token");
    assert!(v.get("lock").is_none(), "{v}");
    assert!(store.delete(&key).unwrap(), "the other application unlocks");

    // mcds holds it while the command runs: the other application's add is
    // refused, and sees mcds's owner token.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env("MCDS_SERVERS", server.addr())
        .args([
            "lock",
            "run",
            "--key",
            "report-lock",
            "--",
            "sh",
            "-c",
            "echo up; read _; exit 3",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut up = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut up)
        .unwrap();
    assert_eq!(up, "up\n");
    assert_eq!(
        store.add(&key, b"php-token", Ttl::secs(30)).unwrap(),
        Stored::NotStored
    );
    let owner = store.get(&key).unwrap().unwrap().value;
    let owner = String::from_utf8_lossy(&owner).into_owned();
    assert!(
        owner.starts_with("host=") && owner.contains(&format!("pid={}", child.id())),
        "{owner}"
    );
    let status = mcds(&server)
        .args(["lock", "status", "--key", "report-lock"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&status.stdout)
            .starts_with(&format!("held by {owner}; expires in "))
    );
    // The same key from a named lock's point of view is another lock.
    mcds(&server)
        .args(["lock", "status", "report-lock"])
        .assert()
        .code(1)
        .stdout("free\n");
    drop(child.stdin.take());
    assert_eq!(
        child.wait().unwrap().code(),
        Some(3),
        "the command's own code"
    );
    assert!(
        store.get(&key).unwrap().is_none(),
        "released: the key is gone"
    );

    // A named lock is reached by its exact key, <prefix>lock:NAME:owner.
    let guard = hold(&server, "nightly");
    run(&["-n", "--key", "lock:nightly:owner", "true"])
        .assert()
        .code(1);
    guard.release().unwrap();
    run(&["-n", "--key", "lock:nightly:owner", "true"])
        .assert()
        .code(0);

    // The command and its arguments follow --key KEY, -c too.
    run(&["--key", "report-lock", "echo", "one", "two"])
        .assert()
        .code(0)
        .stdout("one two\n");
    run(&["--key", "report-lock", "-c", "echo shell; exit 4"])
        .assert()
        .code(4)
        .stdout("shell\n");
    run(&[
        "--fencing",
        "--key",
        "report-lock",
        "--",
        "sh",
        "-c",
        "echo $MCDS_FENCING_TOKEN",
    ])
    .assert()
    .code(0);
    assert!(
        store
            .get(&Key::new("report-lock:fence").unwrap())
            .unwrap()
            .is_some()
    );
    // An option of mcds after the command's first word would be taken from
    // the command (`ls -n`): refused, saying to put `--` before it.
    for (args, named) in [
        (vec!["--key", "report-lock", "ls", "-n"], "--nonblock"),
        (
            vec!["--key", "report-lock", "sh", "-c", "true"],
            "--command",
        ),
        (vec!["job", "--key", "report-lock", "true"], "--key"),
    ] {
        let out = run(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(named) && err.contains("`--`"),
            "{args:?}: {err}"
        );
    }
    // With `--` they are the command's.
    run(&["--key", "report-lock", "--", "echo", "-n", "x"])
        .assert()
        .code(0)
        .stdout("x");
    // Usage errors: no command, a command and -c, --prefix with --key.
    for args in [
        vec!["lock", "run", "--key", "report-lock"],
        vec![
            "lock",
            "run",
            "--key",
            "report-lock",
            "-c",
            "true",
            "--",
            "true",
        ],
        vec![
            "--prefix",
            "app/",
            "lock",
            "run",
            "--key",
            "report-lock",
            "true",
        ],
        vec!["--prefix", "app/", "lock", "status", "--key", "report-lock"],
        vec!["lock", "status", "job", "--key", "report-lock"],
    ] {
        mcds(&server).args(&args).assert().code(2).stdout("");
    }
    // A bad key is invalid input; a lock key leaves room for ":fence".
    run(&["--key", "report lock", "true"]).assert().code(3);
    run(&["--key", &"k".repeat(245), "true"]).assert().code(3);
    run(&["--key", &"k".repeat(244), "true"]).assert().code(0);
}
