//! The `mcds` binary against real memcached.

use std::time::Duration;

use assert_cmd::Command;
use mcds_testkit::MemcachedServer;

fn mcds(server: &MemcachedServer) -> Command {
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    cmd.env("MCDS_SERVERS", server.addr());
    cmd
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn counter_commands() {
    let server = MemcachedServer::start_default();
    assert_eq!(
        stdout(mcds(&server).args(["counter", "incr", "hits"])),
        "1\n"
    );
    assert_eq!(
        stdout(mcds(&server).args(["counter", "incr", "hits", "41"])),
        "42\n"
    );
    assert_eq!(
        stdout(mcds(&server).args(["counter", "decr", "hits", "2"])),
        "40\n"
    );
    assert_eq!(
        stdout(mcds(&server).args(["counter", "get", "hits"])),
        "40\n"
    );
    assert_eq!(
        stdout(mcds(&server).args(["counter", "get", "never"])),
        "0\n"
    );
    let json = stdout(mcds(&server).args(["--json", "counter", "get", "hits"]));
    assert_eq!(json.trim(), r#"{"counter":"hits","value":40}"#);
    // --prefix separates namespaces.
    assert_eq!(
        stdout(mcds(&server).args(["--prefix", "other/", "counter", "get", "hits"])),
        "0\n"
    );
}

#[test]
fn set_commands() {
    let server = MemcachedServer::start_default();
    mcds(&server)
        .args(["set", "add", "tags", "rust", "memcached", "cas"])
        .assert()
        .success();
    mcds(&server)
        .args(["set", "remove", "tags", "cas"])
        .assert()
        .success();
    assert_eq!(
        stdout(mcds(&server).args(["set", "members", "tags"])),
        "rust\nmemcached\n"
    );
    mcds(&server)
        .args(["set", "contains", "tags", "rust"])
        .assert()
        .code(0)
        .stdout("true\n");
    mcds(&server)
        .args(["set", "contains", "tags", "cas"])
        .assert()
        .code(1)
        .stdout("false\n");
    // Members with spaces are escaped in storage and come back intact.
    mcds(&server)
        .args(["set", "add", "tags", "two words"])
        .assert()
        .success();
    assert!(stdout(mcds(&server).args(["set", "members", "tags"])).contains("two words\n"));
    let json = stdout(mcds(&server).args(["--json", "set", "members", "tags"]));
    assert!(
        json.contains(r#""members":["rust","memcached","two words"]"#),
        "{json}"
    );
}

#[test]
fn log_commands() {
    let server = MemcachedServer::start_default();
    let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
    for (i, text) in ["first", "second", "third"].iter().enumerate() {
        let at = (now - 3000 + i as u64 * 1000).to_string();
        mcds(&server)
            .args(["log", "put", "audit", text, "--at-ms", &at])
            .assert()
            .success();
    }
    let all = stdout(mcds(&server).args(["log", "fetch", "audit"]));
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 3, "{all}");
    assert!(lines[0].ends_with(" first") && lines[2].ends_with(" third"));
    assert!(lines[1].starts_with(&(now - 2000).to_string()));
    let from = (now - 2000).to_string();
    let to = (now - 1500).to_string();
    let some =
        stdout(mcds(&server).args(["log", "fetch", "audit", "--from-ms", &from, "--to-ms", &to]));
    assert_eq!(some, format!("{} second\n", now - 2000));
}

#[test]
fn window_and_limit_commands() {
    let server = MemcachedServer::start_default();
    let shape = ["--slot", "60", "--slots", "6"];
    assert_eq!(
        stdout(mcds(&server).args(["window", "incr", "online"]).args(shape)),
        "1\n"
    );
    assert_eq!(
        stdout(mcds(&server).args(["window", "get", "online"]).args(shape)),
        "0\n"
    );
    let check = ["limit", "check", "api", "--limit", "2", "--window", "60"];
    assert!(stdout(mcds(&server).args(check)).starts_with("allowed remaining=1"));
    assert!(stdout(mcds(&server).args(check)).starts_with("allowed remaining=0"));
    let denied = mcds(&server).args(check).output().unwrap();
    assert_eq!(denied.status.code(), Some(1));
    let text = String::from_utf8_lossy(&denied.stdout);
    assert!(
        text.starts_with("denied remaining=0 retry_after_ms="),
        "{text}"
    );
    let sliding = [
        "limit",
        "check",
        "api2",
        "--limit",
        "2",
        "--window",
        "60",
        "--sliding",
    ];
    mcds(&server).args(sliding).assert().code(0);
}

#[test]
fn lock_run_like_flock() {
    let server = MemcachedServer::start_default();
    // Exit code passes through; the fencing token reaches the command.
    mcds(&server)
        .args([
            "lock", "run", "job", "--ttl", "10", "--", "sh", "-c", "exit 7",
        ])
        .assert()
        .code(7);
    let token = stdout(mcds(&server).args([
        "lock",
        "run",
        "job",
        "--ttl",
        "10",
        "--fencing",
        "--",
        "sh",
        "-c",
        "echo $MCDS_FENCING_TOKEN",
    ]));
    assert!(
        token.trim().parse::<u64>().unwrap() > 1_000_000_000_000_000,
        "{token}"
    );
    // Held elsewhere: not acquired within -w, the -E code, command not run.
    let store =
        std::sync::Arc::new(mcds_memcached::MemcachedStore::connect(&server.addr()).unwrap());
    let lock = mcds_lock::Lock::new(store, "job", Duration::from_secs(30)).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    mcds(&server)
        .args([
            "lock", "run", "job", "--ttl", "10", "--wait", "0.3", "-E", "75", "--", "sh", "-c",
            "echo ran",
        ])
        .assert()
        .code(75)
        .stdout("")
        .stderr("");
    guard.release().unwrap();
}

#[test]
fn two_racing_lock_runs_never_overlap() {
    let server = MemcachedServer::start_default();
    let dir = std::env::temp_dir().join(format!("mcds-lock-race-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let journal = dir.join("journal");
    let _ = std::fs::remove_file(&journal);
    let script = format!(
        "for i in 1 2 3; do echo start $$ >> {j}; sleep 0.05; echo end $$ >> {j}; done",
        j = journal.display()
    );
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let children: Vec<_> = (0..2)
        .map(|_| {
            mcds_testkit::spawn_tied(&bin, |c| {
                c.env("MCDS_SERVERS", server.addr()).args([
                    "lock", "run", "race", "--ttl", "5", "--wait", "10", "--", "sh", "-c", &script,
                ]);
            })
            .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 12, "{text}");
    // Each holder's six lines are contiguous: start/end pairs never interleave.
    let first_pid = lines[0].split(' ').nth(1).unwrap();
    assert!(lines[..6].iter().all(|l| l.ends_with(first_pid)), "{text}");
    assert!(lines[6..].iter().all(|l| !l.ends_with(first_pid)), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_are_one_clear_line_with_the_right_code() {
    let server = MemcachedServer::start_default();
    for args in [
        vec!["counter", "incr", "bad key"],
        vec!["set", "add", "bad\tname", "x"],
        vec!["lock", "run", "x", "--ttl", "0", "--", "true"],
    ] {
        let out = mcds(&server).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("mcds: error: ") && !err.contains("panicked"),
            "{err}"
        );
    }
    // Nothing listens there: a connection error, exit 4.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = Command::cargo_bin("mcds")
        .unwrap()
        .args([
            "--servers",
            &dead.to_string(),
            "--timeout-ms",
            "200",
            "counter",
            "get",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot reach memcached") && err.lines().count() == 1,
        "{err}"
    );
    // Usage errors exit 2.
    Command::cargo_bin("mcds")
        .unwrap()
        .args(["counter"])
        .assert()
        .code(2);
    Command::cargo_bin("mcds")
        .unwrap()
        .args(["bogus"])
        .assert()
        .code(2);
}

#[test]
fn embedded_store_warns_and_demo_runs() {
    let out = Command::cargo_bin("mcds")
        .unwrap()
        .env_remove("MCDS_SERVERS")
        .args(["counter", "incr", "x"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: no --servers"));
    let demo = Command::cargo_bin("mcds")
        .unwrap()
        .env_remove("MCDS_SERVERS")
        .arg("demo")
        .output()
        .unwrap();
    assert!(demo.status.success());
    let text = String::from_utf8_lossy(&demo.stdout);
    assert!(text.contains("page-hits = 10000"), "{text}");
    for line in [
        "count 1000, sum 50500, min 1, max 100, avg 50.5",
        "total=10.00",
        "items=100.00",
        "top 3: /home 9, /blog 7, /docs 3",
        "id7 seen true",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    assert!(demo.stderr.is_empty(), "demo prints no warning");
}

#[test]
fn lock_run_extends_the_lease_while_the_command_runs() {
    let server = MemcachedServer::start_default();
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    // A 1 s lease, a 3 s command: the renewer keeps it held throughout.
    let mut holder = mcds_testkit::spawn_tied(&bin, |c| {
        c.env("MCDS_SERVERS", server.addr())
            .args(["lock", "run", "long", "--ttl", "1", "--", "sleep", "3"]);
    })
    .unwrap();
    // Wait until the holder really holds it (process start-up can be slow).
    let store =
        std::sync::Arc::new(mcds_memcached::MemcachedStore::connect(&server.addr()).unwrap());
    let probe = mcds_lock::Lock::new(store, "long", Duration::from_secs(1)).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while probe.holder().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the holder never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..4 {
        mcds(&server)
            .args(["lock", "run", "-n", "long", "--ttl", "1", "--", "true"])
            .assert()
            .code(1);
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(holder.wait().unwrap().success());
    mcds(&server)
        .args(["lock", "run", "long", "--ttl", "1", "--", "true"])
        .assert()
        .code(0);
}

/// A frozen server (SIGSTOP): the command gives up after `--timeout-ms`
/// with one clear line and exit 4, and works again after SIGCONT.
#[test]
fn frozen_server_times_out_with_exit_4() {
    let server = MemcachedServer::start_default();
    let run = || {
        Command::cargo_bin("mcds")
            .unwrap()
            .args([
                "--servers",
                &server.addr(),
                "--timeout-ms",
                "300",
                "counter",
                "incr",
                "frozen",
            ])
            .output()
            .unwrap()
    };
    assert_eq!(run().status.code(), Some(0));
    server.pause();
    let started = std::time::Instant::now();
    let out = run();
    let took = started.elapsed();
    server.resume();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().count() == 1
            && (err.contains("timed out after 300ms") || err.contains("no reply within 300ms")),
        "{err}"
    );
    // 300 ms for the exchange, plus the process's own start and exit.
    assert!(took < Duration::from_millis(1000), "took {took:?}");
    let out = run();
    assert_eq!(out.status.code(), Some(0), "after SIGCONT");
    println!(
        "mcds on a frozen server: exit 4 after {took:?}: {}",
        err.trim()
    );
}

/// One line of output, without its newline.
fn line(cmd: &mut Command) -> String {
    stdout(cmd).trim_end().to_string()
}

#[test]
fn sketch_commands() {
    let server = MemcachedServer::start_default();
    // HyperLogLog: PFADD, PFCOUNT (of a union), PFMERGE.
    assert_eq!(
        line(mcds(&server).args(["hll", "add", "crawled:1", "google.com", "redis.io"])),
        "1"
    );
    assert_eq!(
        line(mcds(&server).args(["hll", "add", "crawled:1", "redis.io"])),
        "0"
    );
    assert_eq!(
        line(mcds(&server).args(["hll", "add", "crawled:2", "redis.io", "redisearch.io"])),
        "1"
    );
    assert_eq!(line(mcds(&server).args(["hll", "count", "crawled:1"])), "2");
    assert_eq!(
        line(mcds(&server).args(["hll", "count", "crawled:1", "crawled:2"])),
        "3"
    );
    assert_eq!(
        line(mcds(&server).args(["hll", "merge", "crawled:all", "crawled:1", "crawled:2"])),
        "3"
    );
    // Bloom filter: add prints how many were new; check exits 0 or 1.
    let shape = ["--capacity", "1000", "--fpr", "0.01"];
    assert_eq!(
        line(
            mcds(&server)
                .args(["bloom", "add", "users", "ann", "bob"])
                .args(shape)
        ),
        "2"
    );
    assert_eq!(
        line(
            mcds(&server)
                .args(["bloom", "add", "users", "ann"])
                .args(shape)
        ),
        "0"
    );
    mcds(&server)
        .args(["bloom", "check", "users", "ann"])
        .args(shape)
        .assert()
        .code(0);
    mcds(&server)
        .args(["bloom", "check", "users", "zed"])
        .args(shape)
        .assert()
        .code(1);
    // Reopened with another capacity: a clear invalid-input error.
    let out = mcds(&server)
        .args(["bloom", "check", "users", "ann", "--capacity", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other parameters"));
    // Bitmap: days since 2026-01-01.
    let days = ["--start", "1767225600", "--unit", "86400"];
    assert_eq!(
        line(
            mcds(&server)
                .args(["bitmap", "mark", "logins", "--index", "3"])
                .args(days)
        ),
        "0"
    );
    assert_eq!(
        line(
            mcds(&server)
                .args(["bitmap", "mark", "logins", "--index", "3"])
                .args(days)
        ),
        "1"
    );
    assert_eq!(
        line(
            mcds(&server)
                .args(["bitmap", "mark", "logins", "--at-ms", "1767312000000"])
                .args(days)
        ),
        "0"
    );
    assert_eq!(
        line(
            mcds(&server)
                .args(["bitmap", "count", "logins", "0", "30"])
                .args(days)
        ),
        "2"
    );
    let json = line(mcds(&server).args(["--json", "hll", "count", "crawled:all"]));
    assert_eq!(json, r#"{"count":3,"hll":["crawled:all"]}"#);
}

/// `lock run` without servers would take a lock on the embedded store,
/// which excludes nobody: it refuses as configuration (78) and runs nothing.
#[test]
fn lock_run_refuses_without_servers() {
    let dir = std::env::temp_dir().join(format!("mcds-noservers-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let out = Command::cargo_bin("mcds")
        .unwrap()
        .env_remove("MCDS_SERVERS")
        .args(["lock", "run", "job", "--ttl", "5", "--", "touch"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(
        err.contains("MCDS_SERVERS") && err.contains("--servers"),
        "{err}"
    );
    assert!(!dir.exists(), "the command ran");
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

fn probe(server: &MemcachedServer, name: &str) -> mcds_lock::Lock {
    let store =
        std::sync::Arc::new(mcds_memcached::MemcachedStore::connect(&server.addr()).unwrap());
    mcds_lock::Lock::new(store, name, Duration::from_secs(1)).unwrap()
}

/// SIGTERM to `mcds lock run` is passed on to the job, and the lease is
/// renewed until the job has actually exited (here 1.5 s after its TERM,
/// longer than the 1 s TTL). mcds exits with the job's code.
#[test]
fn lock_run_forwards_sigterm_and_holds_the_lock_until_the_job_exits() {
    let server = MemcachedServer::start_default();
    let dir = std::env::temp_dir().join(format!("mcds-term-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (started, termed) = (dir.join("started"), dir.join("termed"));
    let script = format!(
        "trap 'touch {t}; sleep 1.5; exit 7' TERM; touch {s}; while :; do sleep 0.05; done",
        t = termed.display(),
        s = started.display()
    );
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let mut wrapper = mcds_testkit::spawn_tied(&bin, |c| {
        c.env("MCDS_SERVERS", server.addr()).args([
            "lock", "run", "termed", "--ttl", "1", "--", "sh", "-c", &script,
        ]);
    })
    .unwrap();
    wait_for("the job to start", || started.exists());
    signal(wrapper.id(), "-TERM");
    wait_for("the job to get SIGTERM", || termed.exists());
    std::thread::sleep(Duration::from_millis(1200));
    let lock = probe(&server, "termed");
    assert!(
        lock.holder().unwrap().is_some(),
        "the lock expired while the job was still running"
    );
    let status = wrapper.wait().unwrap();
    assert_eq!(status.code(), Some(7));
    assert_eq!(lock.holder().unwrap(), None, "released after the job");
    let _ = std::fs::remove_dir_all(&dir);
}

/// If the wrapper dies by SIGKILL (nothing of it runs), the job dies with
/// it, and so does what the job started (here a `sleep` in the background,
/// which the parent-death signal alone would not reach): nothing runs on
/// without the lock.
#[test]
fn lock_run_job_dies_with_a_killed_wrapper() {
    let server = MemcachedServer::start_default();
    let dir = std::env::temp_dir().join(format!("mcds-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let script = format!(
        "sleep 30 & echo $! > {}.tmp; mv {0}.tmp {0}; wait",
        pid_file.display()
    );
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let mut wrapper = mcds_testkit::spawn_tied(&bin, |c| {
        c.env("MCDS_SERVERS", server.addr()).args([
            "lock", "run", "killed", "--ttl", "5", "--", "sh", "-c", &script,
        ]);
    })
    .unwrap();
    let mut job = 0;
    wait_for("the job to start", || {
        job = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(0);
        job != 0
    });
    assert!(mcds_testkit::process_alive(job));
    wrapper.kill().unwrap();
    wrapper.wait().unwrap();
    wait_for("the job's child to die with the wrapper", || {
        !mcds_testkit::process_alive(job)
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lease is lost while the job runs (the lock item vanishes, as on
/// eviction): the job is stopped, SIGKILL following a SIGTERM it ignores,
/// and mcds exits 76.
#[test]
fn lock_run_signals_the_job_when_the_lease_is_lost() {
    let server = MemcachedServer::start_default();
    let bin = assert_cmd::cargo::cargo_bin("mcds");
    let mut wrapper = mcds_testkit::spawn_tied(&bin, |c| {
        c.env("MCDS_SERVERS", server.addr()).args([
            "lock",
            "run",
            "evicted",
            "--ttl",
            "1",
            "--",
            "sh",
            "-c",
            "trap '' TERM; sleep 30",
        ]);
    })
    .unwrap();
    let lock = probe(&server, "evicted");
    wait_for("the job to hold the lock", || {
        lock.holder().unwrap().is_some()
    });
    let started = std::time::Instant::now();
    let store = mcds_memcached::MemcachedStore::connect(&server.addr()).unwrap();
    use mcds_core::Store;
    store
        .delete(&mcds_core::Key::new("lock:evicted:owner").unwrap())
        .unwrap();
    let status = wrapper.wait().unwrap();
    println!(
        "lease lost: mcds exited {:?} {:?} after the lock vanished",
        status.code(),
        started.elapsed()
    );
    assert_eq!(status.code(), Some(76));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the job was not stopped"
    );
}

#[test]
fn servers_take_a_store_url() {
    let server = MemcachedServer::start_default();
    let url = format!(
        "memcached://{}?ketama&timeout_ms=500&prefix=cli-url%2F",
        server.addr()
    );
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    cmd.env("MCDS_SERVERS", &url)
        .args(["counter", "incr", "hits", "3"]);
    assert_eq!(stdout(&mut cmd), "3\n");
    // The same key as the plain server list with --prefix.
    assert_eq!(
        stdout(mcds(&server).args(["--prefix", "cli-url/", "counter", "get", "hits"])),
        "3\n"
    );
    // memory:// is the embedded store: a lock there is refused, as without
    // servers, as configuration (78), naming the command group.
    for args in [
        vec!["lock", "run", "job", "--", "true"],
        vec!["lock", "status", "job"],
    ] {
        let out = Command::cargo_bin("mcds")
            .unwrap()
            .env("MCDS_SERVERS", "memory://?memory_limit=1m")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(78), "{args:?}: {err}");
        assert!(err.contains("mcds lock needs memcached servers"), "{err}");
    }
    // A --servers that does not open is configuration whichever store it
    // names; a bad prefix in it too.
    for url in [
        "text://unix:",
        "memcached://unix:",
        "text+tls://127.0.0.1:1?ca_file=/nonexistent/ca.pem",
        "127.0.0.1:1?prefix=has%20space",
    ] {
        let out = Command::cargo_bin("mcds")
            .unwrap()
            .env("MCDS_SERVERS", url)
            .args(["kv", "get", "k"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(78), "{url}: {err}");
    }
    // Mistakes name themselves; the prefix is given once.
    for (url, extra, code, says) in [
        ("memcached://a:1?colour=blue", None, 78, "colour"),
        (
            "memcached+tls://127.0.0.1:1?ca_file=/nonexistent/ca.pem",
            None,
            78,
            "/nonexistent/ca.pem",
        ),
        (
            "memcached://127.0.0.1:1?prefix=x/",
            Some("y/"),
            2,
            "given twice",
        ),
    ] {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", url);
        if let Some(p) = extra {
            cmd.args(["--prefix", p]);
        }
        let out = cmd.args(["counter", "get", "hits"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{url}: {err}");
        assert!(err.contains(says), "{url}: {err}");
    }
}

/// The stderr of a command that must fail with `code`, printing nothing.
fn fails(code: i32, cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{cmd:?}");
    stderr
}

/// `counter --key KEY`: the exact key another application counts in (raw
/// decimal text, as PHP's Memcached::increment keeps it), no naming and no
/// prefix; NAME is left out, and DELTA follows --key KEY.
#[test]
fn counter_key_is_the_exact_key() {
    use mcds_core::{Key, Store, Ttl};

    let server = MemcachedServer::start_default();
    let store = mcds_memcached::MemcachedStore::connect(&server.addr()).unwrap();
    let hits = Key::new("hits").unwrap();
    store.set(&hits, b"41", Ttl::Never).unwrap();
    let counter = |args: &[&str]| {
        let mut cmd = mcds(&server);
        cmd.arg("counter").args(args);
        cmd
    };
    assert_eq!(stdout(&mut counter(&["get", "--key", "hits"])), "41\n");
    assert_eq!(stdout(&mut counter(&["incr", "--key", "hits"])), "42\n");
    assert_eq!(
        stdout(&mut counter(&["incr", "--key", "hits", "8"])),
        "50\n"
    );
    assert_eq!(stdout(&mut counter(&["incr", "--key=hits", "10"])), "60\n");
    assert_eq!(
        stdout(&mut counter(&["decr", "5", "--key", "hits"])),
        "55\n"
    );
    assert_eq!(store.get(&hits).unwrap().unwrap().value, b"55");
    let json = stdout(counter(&["get", "--key", "hits"]).arg("--json"));
    assert_eq!(json.trim(), r#"{"key":"hits","value":55}"#);
    // The counter named "hits" is another key; a named counter is reached
    // by its exact key, <prefix>counter:NAME:value.
    assert_eq!(stdout(&mut counter(&["get", "hits"])), "0\n");
    stdout(&mut counter(&["incr", "jobs", "3"]));
    assert_eq!(
        stdout(&mut counter(&["get", "--key", "counter:jobs:value"])),
        "3\n"
    );
    stdout(mcds(&server).args(["--prefix", "app/", "counter", "incr", "jobs"]));
    assert_eq!(
        stdout(&mut counter(&["get", "--key", "app/counter:jobs:value"])),
        "1\n"
    );
    // Usage errors (exit 2), each saying what to do.
    for (args, says) in [
        (vec!["counter", "incr", "hits", "--key", "hits"], "not both"),
        (vec!["counter", "incr", "--key", "hits", "five"], "not both"),
        (
            vec!["counter", "incr", "--key", "hits", "5", "6"],
            "not both",
        ),
        (vec!["counter", "get", "x", "--key", "hits"], "not both"),
        (
            vec!["--prefix", "app/", "counter", "get", "--key", "hits"],
            "--prefix \"app/\" does not apply",
        ),
        (vec!["counter", "get"], "<NAME|--key KEY>"),
        (vec!["counter", "decr", "--key"], "--key <KEY>"),
    ] {
        let err = fails(2, mcds(&server).args(&args));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A bad key is invalid input (exit 3), refused before anything is sent.
    let err = fails(3, &mut counter(&["incr", "--key", "two words"]));
    assert!(err.contains("it contains a space"), "{err}");
    let long = "k".repeat(251);
    fails(3, &mut counter(&["get", "--key", &long]));
    assert_eq!(store.get(&hits).unwrap().unwrap().value, b"55");
    // Something that is not a number under the key: exit 3.
    store.set(&hits, b"many", Ttl::Never).unwrap();
    fails(3, &mut counter(&["get", "--key", "hits"]));
    fails(3, &mut counter(&["incr", "--key", "hits"]));
}

/// `text://…?proxy`: the text protocol through a real twemproxy in front of
/// three memcached servers. Counters work; a lock, which needs CAS, is
/// refused with the reason.
#[test]
fn servers_through_twemproxy() {
    let proxy = mcds_testkit::NutcrackerServer::start(3, mcds_testkit::ServerOptions::default());
    let url = format!("text://{}?proxy", proxy.addr());
    let run = |args: &[&str]| {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", &url).args(args);
        cmd
    };
    assert_eq!(stdout(&mut run(&["counter", "incr", "hits", "2"])), "2\n");
    assert_eq!(stdout(&mut run(&["counter", "get", "hits"])), "2\n");
    let out = run(&["lock", "run", "-n", "job", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a lock behind a proxy ran: {err}");
    // Configuration (78), not "unavailable" (4), which a cron wrapper
    // would retry for ever.
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(
        err.contains("is not supported by this store (no CAS ids") && err.contains("proxy"),
        "{err}"
    );
    assert!(!err.contains("the a store"), "{err}");
}

/// The operator's ways to reach memcached, as the README gives them: a unix
/// socket with credentials from the environment, and TLS with a CA file in
/// the URL; refused credentials and certificates exit 78 (configuration: a
/// retry cannot fix them) with a line that says what to change and never
/// the password.
#[test]
fn unix_socket_auth_and_tls_from_the_command_line() {
    use mcds_testkit::ServerOptions;
    let unix = MemcachedServer::start(ServerOptions::default().unix_socket().auth("ops", "pw1"));
    let run = |url: &str, user: &str, password: &str, args: &[&str]| {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", url)
            .env("MCDS_USERNAME", user)
            .env("MCDS_PASSWORD", password)
            .args(args);
        cmd.output().unwrap()
    };
    let out = run(&unix.addr(), "ops", "pw1", &["counter", "incr", "jobs"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let out = run(&unix.addr(), "ops", "hunter2", &["counter", "incr", "jobs"]);
    assert_eq!(out.status.code(), Some(78));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // The lock, over the same socket: flock's habits hold.
    let out = run(
        &unix.addr(),
        "ops",
        "pw1",
        &["lock", "run", "-n", "nightly", "true"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let tls = MemcachedServer::start(ServerOptions::default().tls());
    let ca = tls.tls_files().unwrap().ca.display().to_string();
    let url = format!("memcached+tls://{}?ca_file={ca}", tls.addr());
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    assert_eq!(
        stdout(
            cmd.env("MCDS_SERVERS", &url)
                .args(["counter", "incr", "tls"])
        ),
        "1\n"
    );
    let other = tls.tls_files().unwrap().other_ca.display().to_string();
    let mut cmd = Command::cargo_bin("mcds").unwrap();
    let out = cmd
        .env(
            "MCDS_SERVERS",
            format!("memcached+tls://{}?ca_file={other}", tls.addr()),
        )
        .args(["counter", "incr", "tls"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not verify"), "{err}");
}

/// `mcds pool`: a client of `[A,B]` works; one of `[A,B,C]` is refused
/// with exit 3 and both lists named, until `mcds pool adopt` makes its
/// list the pool's; then the old client is refused.
#[test]
fn pool_show_and_adopt() {
    let pool = mcds_testkit::ServerPool::start(3, Default::default());
    let all = pool.addrs();
    let (old, new) = (all[..2].join(","), all.join(","));
    let cli = |servers: &str| {
        let mut cmd = Command::cargo_bin("mcds").unwrap();
        cmd.env("MCDS_SERVERS", servers);
        cmd
    };
    assert_eq!(
        stdout(cli(&old).args(["pool", "show"])),
        format!("rendezvous {old}\n")
    );
    assert_eq!(stdout(cli(&old).args(["counter", "incr", "hits"])), "1\n");
    let refused = cli(&new)
        .args(["counter", "incr", "hits"])
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{message}");
    assert!(
        message.contains(&old) && message.contains(&new),
        "{message}"
    );
    let adopted = stdout(cli(&new).args(["pool", "adopt", "--grace", "0s"]));
    assert!(adopted.starts_with("adopted on 3 servers"), "{adopted}");
    assert_eq!(stdout(cli(&new).args(["counter", "get", "hits"])).len(), 2);
    let old_now = cli(&old)
        .args(["counter", "incr", "hits"])
        .output()
        .unwrap();
    assert_eq!(old_now.status.code(), Some(3));
}
