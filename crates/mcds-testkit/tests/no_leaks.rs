//! Every memcached the kit starts dies with the test process that started it:
//! when that process is killed with SIGKILL (no destructor runs), and when it
//! exits normally with a server still held in a `static` (Rust never drops
//! statics). Each test runs this same binary again as a child process in a
//! "holder" mode, then checks from outside that the child's servers are gone.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcds_testkit::MemcachedServer;

/// Set in the child: which way it should end.
const MODE: &str = "MC_TESTKIT_HOLDER_MODE";

static HELD: OnceLock<MemcachedServer> = OnceLock::new();

/// The child's side. Not a real test: without the variable it does nothing.
/// It starts one server from a thread that ends at once (the spawning thread
/// must not be what the kernel watches) and one kept in a `static`, prints
/// their pids and ports, then waits to be killed or returns.
#[test]
fn holder() {
    let Ok(mode) = std::env::var(MODE) else {
        return;
    };
    let local = std::thread::spawn(MemcachedServer::start_default)
        .join()
        .unwrap();
    let held = HELD.get_or_init(MemcachedServer::start_default);
    println!(
        "servers {} {} {} {}",
        local.pid().unwrap(),
        local.port(),
        held.pid().unwrap(),
        held.port()
    );
    if mode == "wait" {
        // Bounded: the parent kills this process long before.
        std::thread::sleep(Duration::from_secs(60));
    }
    // Leak the local one as a killed process would: no destructor runs.
    std::mem::forget(local);
}

struct Servers {
    child: Child,
    servers: Vec<(u32, u16)>,
}

fn start_holder(mode: &str) -> Servers {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "holder", "--nocapture", "--test-threads", "1"])
        .env(MODE, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    adopt_orphans();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let line = lines
        .find_map(|l| l.split_once("servers ").map(|(_, rest)| rest.to_string()))
        .expect("the holder printed its servers");
    // libtest prints "test holder ... " on the same line first.
    let n: Vec<u32> = line
        .split(' ')
        .take(4)
        .map(|n| n.parse().unwrap())
        .collect();
    let servers = vec![(n[0], n[1] as u16), (n[2], n[3] as u16)];
    // Keep reading, or the holder's next line would hit a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Servers { child, servers }
}

/// Make this process the subreaper of its descendants, so that a killed
/// holder's servers are re-parented here (not to an init that may never reap
/// them) and [`reap`] can collect them.
fn adopt_orphans() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
            .expect("prctl(PR_SET_CHILD_SUBREAPER)");
    });
}

/// Collect `pid` if it is a dead child of this process.
fn reap(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
    }
}

fn answers(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

fn assert_gone(servers: &[(u32, u16)], how: &str) -> Duration {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(10);
    while servers.iter().any(|&(pid, port)| {
        reap(pid);
        mcds_testkit::process_alive(pid) || answers(port)
    }) {
        assert!(
            Instant::now() < deadline,
            "{how}: memcached still running 10 s later: {:?}",
            servers
                .iter()
                .map(|&(pid, port)| (pid, mcds_testkit::process_alive(pid), port, answers(port)))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

#[test]
fn servers_die_when_the_test_process_is_killed() {
    let mut holder = start_holder("wait");
    // The thread that started the first server has ended: it must still run.
    std::thread::sleep(Duration::from_millis(300));
    for &(pid, port) in &holder.servers {
        assert!(
            mcds_testkit::process_alive(pid),
            "server {pid} died before its test process"
        );
        assert!(answers(port), "server on port {port} stopped answering");
    }
    holder.child.kill().unwrap(); // SIGKILL
    holder.child.wait().unwrap();
    let took = assert_gone(&holder.servers, "after SIGKILL of the test process");
    println!(
        "test process killed with -9: its 2 memcached processes {:?} were gone {took:?} later",
        holder.servers
    );
}

#[test]
fn a_static_server_dies_when_the_test_process_exits() {
    let mut holder = start_holder("exit");
    let status = holder.child.wait().unwrap();
    assert!(status.success(), "holder exited with {status}");
    let took = assert_gone(&holder.servers, "after the test process exited");
    println!(
        "test process exited holding a static server: its 2 memcached processes {:?} were gone {took:?} later",
        holder.servers
    );
}
