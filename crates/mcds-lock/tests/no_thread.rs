//! From an adversarial review: a dropped async guard's release, and a
//! cancelled acquire's cleanup, when no thread can be spawned. The release
//! was lost then (the spawn's error ignored): held while the program ran
//! on a driven current-thread runtime, and until the TTL outside a
//! runtime. Now it runs at once, blocking (an async request would need
//! the connection's helper thread, which cannot start either: a first fix
//! that made it a runtime task failed here 1 run in 12 under load).
//!
//! The child (this binary with `MCDS_NOTHREAD_*` set) acquires with
//! `acquire_async`, then lowers its own soft RLIMIT_AS so that a new
//! thread's 2 MiB stack cannot be mapped (it spawns parked threads until a
//! spawn fails, which also uses up glibc's cached stacks), drops the guard,
//! waits 1 s (driving the runtime, or not in one) and reports whether the
//! lock is still held, from its own blocking connection.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

const TTL: Duration = Duration::from_secs(60);

fn vm_size() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmSize:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Lower this process's soft address-space limit (with util-linux
/// `prlimit`, the workspace forbids `unsafe`) until no thread can be
/// spawned. Returns how many parked threads were started first.
fn starve_threads() -> usize {
    let soft = vm_size() + 1024 * 1024;
    let status = std::process::Command::new("prlimit")
        .arg("--pid")
        .arg(std::process::id().to_string())
        .arg(format!("--as={soft}:"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut started = 0;
    loop {
        match std::thread::Builder::new().spawn(|| {
            loop {
                std::thread::park();
            }
        }) {
            Ok(_) => started += 1,
            Err(_) => break,
        }
        assert!(started < 1000, "threads still start");
    }
    started
}

#[test]
fn child() {
    let (Ok(addr), Ok(name), Ok(case)) = (
        std::env::var("MCDS_NOTHREAD_ADDR"),
        std::env::var("MCDS_NOTHREAD_NAME"),
        std::env::var("MCDS_NOTHREAD_CASE"),
    ) else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addr).unwrap());
    let lock = Lock::new(store, &name, TTL).unwrap();
    assert!(lock.holder().unwrap().is_none());
    let rt = mcds_testkit::current_thread_runtime();
    if case == "cancel_current_thread" {
        // The lane's helper thread started (a first async round trip).
        let g = rt
            .block_on(lock.acquire_async(Duration::from_secs(5)))
            .unwrap();
        rt.block_on(g.release_async()).unwrap();
        let started = starve_threads();
        println!("child: {started} parked threads started before a spawn failed");
        rt.block_on(async {
            use std::future::Future;
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            let mut acquire = Box::pin(lock.acquire_async(Duration::from_secs(5)));
            let pending = acquire.as_mut().poll(&mut cx).is_pending();
            println!("child: acquire pending after its first poll: {pending}");
            // The add applied before the cancellation.
            std::thread::sleep(Duration::from_millis(20));
            drop(acquire);
            println!("child: dropped");
            tokio::time::sleep(Duration::from_secs(1)).await;
        });
        let held = lock.holder();
        println!("child: {case}: held 1 s after the drop: {held:?}");
        drop(rt);
        std::process::exit(0);
    }
    let g = if case == "sync_control" {
        lock.acquire(Duration::from_secs(5)).unwrap()
    } else {
        rt.block_on(lock.acquire_async(Duration::from_secs(5)))
            .unwrap()
    };
    println!("child: acquired {}", g.owner_token());
    let started = starve_threads();
    println!("child: {started} parked threads started before a spawn failed");
    match case.as_str() {
        // Dropped on a current-thread runtime that is then driven for 1 s.
        "current_thread" => rt.block_on(async {
            drop(g);
            println!("child: dropped");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }),
        // Dropped outside any runtime; the program keeps running 1 s.
        _ => {
            drop(g);
            println!("child: dropped");
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let held = lock.holder();
    println!("child: {case}: held 1 s after the drop: {held:?}");
    // Runtime kept alive until here (its drop would run the fallback).
    drop(rt);
    std::process::exit(0);
}

fn run(case: &str) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let name = format!("nothread-{case}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env("MCDS_NOTHREAD_ADDR", server.addr())
        .env("MCDS_NOTHREAD_NAME", &name)
        .env("MCDS_NOTHREAD_CASE", case)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    for l in stdout.lines().filter(|l| l.contains("child:")) {
        println!("{l}");
    }
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = stdout
        .lines()
        .find(|l| l.contains("held 1 s after the drop"))
        .expect("the child ran its case");
    let lock = Lock::new(Arc::clone(&store), &name, TTL).unwrap();
    let after_exit = lock.holder().unwrap();
    println!("{case}: after the child exited, held: {after_exit:?}");
    assert!(
        said.ends_with("Ok(None)"),
        "{case}: the lock (a dropped async guard's, or a cancelled acquire's) was still held while the program ran: {said}"
    );
}

#[test]
fn dropped_on_current_thread_runtime_without_threads() {
    run("current_thread");
}

#[test]
fn dropped_outside_runtime_without_threads() {
    run("outside");
}

/// Control: a blocking guard dropped under the same limit releases (the
/// environment lets the lock's own I/O run; only the spawn fails).
#[test]
fn control_sync_guard_without_threads() {
    run("sync_control");
}

/// A cancelled `acquire_async` (its add applied) on a driven current-thread
/// runtime: `Abandoned`'s cleanup goes through the same `in_background`.
#[test]
fn cancelled_acquire_on_current_thread_runtime_without_threads() {
    run("cancel_current_thread");
}
