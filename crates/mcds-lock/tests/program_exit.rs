//! From an adversarial review: a program that ends right after its
//! runtime. `fn main` returning calls `exit`, which ends every thread: a
//! release handed only to a detached thread (what a current-thread runtime
//! got for a while) may never run, and the lock stays held for its TTL.
//! A task on the runtime stands in for the thread: dropped with the
//! runtime, it releases, blocking, before the process exits.
//!
//! The child process is this test binary, run with `MCDS_EXIT_CHILD_*` set:
//! it acquires, drops as `#[tokio::main]` would (guard dropped at the end
//! of the main future, runtime dropped, process exits), and the parent then
//! looks at the lock from its own connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

const TTL: Duration = Duration::from_secs(60);

fn runtime(flavor: &str) -> tokio::runtime::Runtime {
    match flavor {
        "current_thread" => mcds_testkit::current_thread_runtime(),
        _ => mcds_testkit::runtime(),
    }
}

/// The child: only does something when run by `run_child`.
#[test]
fn child() {
    let (Ok(addr), Ok(case), Ok(name), Ok(flavor)) = (
        std::env::var("MCDS_EXIT_CHILD_ADDR"),
        std::env::var("MCDS_EXIT_CHILD_CASE"),
        std::env::var("MCDS_EXIT_CHILD_NAME"),
        std::env::var("MCDS_EXIT_CHILD_FLAVOR"),
    ) else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&addr).unwrap());
    let lock = Lock::new(store, &name, TTL).unwrap();
    // The connection dialed, so that an async acquire's first poll sends.
    assert!(lock.holder().unwrap().is_none());
    let rt = runtime(&flavor);
    match case.as_str() {
        // `#[tokio::main] async fn main() { let g = lock.acquire_async(..).await?; work; }`
        "guard" => rt.block_on(async {
            let g = lock.acquire_async(Duration::from_secs(5)).await.unwrap();
            println!("child: acquired {}", g.owner_token());
            drop(g);
        }),
        // A guard held by a spawned task still running when main returns.
        "task" => rt.block_on(async {
            let (tx, rx) = std::sync::mpsc::channel();
            let lock = lock.clone();
            tokio::spawn(async move {
                let g = lock.acquire_async(Duration::from_secs(5)).await.unwrap();
                tx.send(()).unwrap();
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(g);
            });
            while rx.try_recv().is_err() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            println!("child: task acquired");
        }),
        // An acquire cancelled after its `add` went out (a `select!`
        // timeout as main ends): its cleanup (`Abandoned`) must release.
        "cancel" => rt.block_on(async {
            use std::future::Future;
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            let mut acquire = Box::pin(lock.acquire_async(Duration::from_secs(5)));
            match acquire.as_mut().poll(&mut cx) {
                std::task::Poll::Pending => {
                    // The add applied before the cancellation: waited for,
                    // not slept on. Under load the lane's helper thread may
                    // not have written it within a fixed pause, and an add
                    // applied after the program's last look strands the
                    // lock for its TTL, as `Abandoned` says (a 20 ms pause
                    // failed once while other builds shared the CPUs).
                    let until = Instant::now() + Duration::from_secs(5);
                    while lock.holder().unwrap().is_none() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    drop(acquire);
                    println!("child: cancelled");
                }
                std::task::Poll::Ready(r) => {
                    drop(r);
                    println!("child: not pending (no case)");
                }
            }
        }),
        other => panic!("{other}"),
    }
    if flavor == "multi_thread_background" {
        rt.shutdown_background();
    } else {
        drop(rt);
    }
    // What returning from `fn main` does.
    std::process::exit(0);
}

fn run_child(addr: &str, case: &str, flavor: &str, name: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env("MCDS_EXIT_CHILD_ADDR", addr)
        .env("MCDS_EXIT_CHILD_CASE", case)
        .env("MCDS_EXIT_CHILD_NAME", name)
        .env("MCDS_EXIT_CHILD_FLAVOR", flavor)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = stdout
        .lines()
        .find(|l| l.contains("child:"))
        .expect("the child ran its case");
    assert!(!said.contains("no case"), "{said}");
}

fn check(case: &str, flavor: &str) {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let runs = 10;
    let mut stranded = 0;
    for i in 0..runs {
        let name = format!("exit-{case}-{flavor}-{i}");
        run_child(&server.addr(), case, flavor, &name);
        // The child is gone: nothing of it can release any more. Look
        // for a second anyway.
        let lock = Lock::new(Arc::clone(&store), &name, TTL).unwrap();
        let deadline = Instant::now() + Duration::from_secs(1);
        let mut held = lock.holder().unwrap();
        while held.is_some() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            held = lock.holder().unwrap();
        }
        if held.is_some() {
            stranded += 1;
        }
    }
    println!(
        "{case} on {flavor}: {stranded} of {runs} locks held after the program ended (TTL {TTL:?})"
    );
    assert_eq!(
        stranded, 0,
        "{case} on {flavor}: {stranded} of {runs} programs ended with the lock held (TTL {TTL:?})"
    );
}

#[test]
fn guard_dropped_as_main_ends_current_thread() {
    check("guard", "current_thread");
}

#[test]
fn guard_dropped_as_main_ends_multi_thread() {
    check("guard", "multi_thread");
}

#[test]
fn guard_in_task_at_exit_current_thread() {
    check("task", "current_thread");
}

#[test]
fn guard_in_task_at_exit_multi_thread() {
    check("task", "multi_thread");
}

/// Held 10 of 10 before the task stood in for the cleanup thread.
#[test]
fn cancelled_acquire_as_main_ends_current_thread() {
    check("cancel", "current_thread");
}

#[test]
fn cancelled_acquire_as_main_ends_multi_thread() {
    check("cancel", "multi_thread");
}

/// `Runtime::shutdown_background` then exit: the caller asked not to wait
/// for tasks, and a release may be cut short (the review counted 4 and 5
/// of 10 held, before and after the change). Informational.
#[test]
#[ignore = "informational: shutdown_background does not wait for the release"]
fn guard_dropped_then_shutdown_background() {
    check("guard", "multi_thread_background");
}
