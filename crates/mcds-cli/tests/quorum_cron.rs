//! `mcds lock run` over a quorum URL (`memcached://a,b,c?quorum`) as a
//! cron job's guard: three "hosts" start the job at each slot, a few
//! milliseconds apart, each `mcds lock run -n`; the job must run exactly
//! once per slot while one of the three servers is killed and later
//! restarted empty. `lock status` names the majority's holder.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcds_testkit::MemcachedServer;

const SLOTS: usize = 12;
const HOSTS: usize = 3;

/// Three servers and the URL of their quorum, with `options`.
fn quorum(options: &str) -> (Vec<MemcachedServer>, String) {
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let list: Vec<String> = servers.iter().map(MemcachedServer::addr).collect();
    let url = format!("memcached://{}?quorum{options}", list.join(","));
    (servers, url)
}

fn mcds_run(url: &str, log: &std::path::Path, slot: usize, host: usize) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env("MCDS_SERVERS", url)
        .args([
            "lock", "run", "-n", "--ttl", "5s", "nightly", "--", "sh", "-c",
        ])
        // The job: its line in the log, then long enough that every host
        // of the slot tries while it runs (as a real job outlasts cron's
        // spread of start times across hosts).
        .arg(format!(
            "echo slot={slot} host={host} >> {} && sleep 0.4",
            log.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_cron_job_runs_once_per_slot_while_a_server_is_killed_and_restarted() {
    let (mut servers, url) = quorum("&timeout_ms=300");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.log");
    let mut exits = Vec::new();
    for slot in 0..SLOTS {
        match slot {
            3 => servers[1].kill(),
            8 => servers[1].restart(),
            _ => {}
        }
        let started = Instant::now();
        let hosts: Vec<Child> = (0..HOSTS)
            .map(|host| {
                std::thread::sleep(Duration::from_millis(5));
                mcds_run(&url, &log, slot, host)
            })
            .collect();
        for child in hosts {
            let out = child.wait_with_output().unwrap();
            let code = out.status.code();
            assert!(
                matches!(code, Some(0 | 1)),
                "slot {slot}: exit {code:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            exits.push(code);
        }
        // Slots a second apart (the next slot's hosts find the lock free).
        std::thread::sleep(Duration::from_millis(1000).saturating_sub(started.elapsed()));
    }
    let runs = std::fs::read_to_string(&log).unwrap();
    for slot in 0..SLOTS {
        let n = runs
            .lines()
            .filter(|l| l.starts_with(&format!("slot={slot} ")))
            .count();
        assert_eq!(n, 1, "slot {slot} ran {n} times:\n{runs}");
    }
    println!(
        "{SLOTS} slots x {HOSTS} hosts over a quorum of 3, server 2 killed at slot 3 and restarted empty at slot 8: each slot ran once; exits {:?}",
        exits
    );
}

#[test]
fn status_names_the_holder_of_a_majority() {
    let (_servers, url) = quorum("");
    let mut job = Command::new(assert_cmd::cargo::cargo_bin("mcds"))
        .env("MCDS_SERVERS", &url)
        .args(["lock", "run", "held", "--", "sleep", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = || {
        Command::new(assert_cmd::cargo::cargo_bin("mcds"))
            .env("MCDS_SERVERS", &url)
            .args(["lock", "status", "held"])
            .output()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut out = status();
    while !String::from_utf8_lossy(&out.stdout).contains("held by") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        out = status();
    }
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("held by host="), "{said}");
    assert!(said.contains("on a majority of the quorum"), "{said}");
    job.kill().unwrap();
    let _ = job.wait();
}
