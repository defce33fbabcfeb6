//! From an adversarial review: a lock taken on a full `-M` server without an incarnation
//! marker (every session on lane 0, a mask of that connection's own),
//! then the server restarts and is refilled the same way by another
//! application, and another client takes the same lock. memcached numbers
//! CAS ids from 1 again, and the refill is identical, so the new holder's
//! item has the very raw CAS id the old guard holds. The old guard's
//! extend and release must touch nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mcds_core::Store;
use mcds_lock::{Extend, Lock, Release};
use mcds_testkit::{MemcachedServer, fill_without_marker};

fn raw_cas(server: &MemcachedServer, key: &str) -> String {
    server
        .raw(format!("mg {key} c v\r\n").as_bytes(), |l| {
            l.starts_with("HD") || l.starts_with("EN") || l.starts_with("VA")
        })
        .join(" ")
}

fn client(server: &MemcachedServer) -> Arc<dyn Store> {
    mcds_testkit::store_with_connections(server, 4)
}

#[test]
fn an_old_guard_never_touches_the_next_holder_after_a_markerless_restart() {
    let mut server = mcds_testkit::markerless_server();
    let a = Lock::new(client(&server), "job", Duration::from_secs(30))
        .unwrap()
        .with_owner_label(&"x".repeat(200))
        .unwrap();
    let old = a.try_acquire().unwrap().expect("free");
    let key = String::from_utf8(a.key().as_bytes().to_vec()).unwrap();
    let before = raw_cas(&server, &key);

    server.restart();
    fill_without_marker(&server);
    let b = Lock::new(client(&server), "job", Duration::from_secs(30))
        .unwrap()
        .with_owner_label(&"x".repeat(200))
        .unwrap();
    let new = b.try_acquire().unwrap().expect("free after the restart");
    let after = raw_cas(&server, &key);
    println!("old holder's item before the restart: {before}; the new holder's: {after}");

    let extended = old.extend(Duration::from_secs(60));
    println!("old guard's extend after the restart: {extended:?}");
    assert!(
        matches!(extended, Ok(Extend::Lost) | Err(_)),
        "the old guard extended the new holder's lock: {extended:?}"
    );
    assert_eq!(
        b.holder().unwrap().as_deref(),
        Some(new.owner_token()),
        "new holder intact after the extend"
    );
    let released = old.release();
    println!("old guard's release after the restart: {released:?}");
    assert!(
        matches!(released, Ok(Release::Lost) | Err(_)),
        "the old guard released the new holder's lock: {released:?}"
    );
    assert_eq!(
        b.holder().unwrap().as_deref(),
        Some(new.owner_token()),
        "the old guard deleted the new holder's lock"
    );
    assert!(a.try_acquire().unwrap().is_none(), "granted twice");
    assert_eq!(new.release().unwrap(), Release::Released);
}

/// Coverage (held on 60d0f14: 200/200, 1 dial). Many tokio tasks and threads take one lock on a markerless full
/// server (no restart, no flush during the test: one incarnation). Every
/// acquire must succeed within its wait, never two holders at once, every
/// release of a lease nobody else touched is `Released`, and at the end
/// the lock is free (not stranded until its TTL).
#[test]
fn async_tasks_and_threads_share_a_lock_on_a_markerless_server() {
    share(2, 6);
}

/// The same with blocking threads only (4 threads, no tokio).
#[test]
fn threads_share_a_lock_on_a_markerless_server() {
    share(4, 0);
}

fn share(n_threads: usize, n_tasks: usize) {
    let total = 25 * (n_threads + n_tasks);
    let server = mcds_testkit::markerless_server();
    let store = mcds_testkit::store_with_connections(&server, 4);
    let lock = Lock::new(
        Arc::clone(&store) as Arc<dyn Store>,
        "shared",
        Duration::from_secs(8),
    )
    .unwrap()
    .with_owner_label(&"x".repeat(200))
    .unwrap()
    .with_backoff(Duration::from_millis(1), Duration::from_millis(5));
    let inside = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let rt = mcds_testkit::runtime();
    let record = |errors: &std::sync::Mutex<Vec<String>>, what: &str, e: String| {
        errors.lock().unwrap().push(format!("{what}: {e}"));
    };
    let threads: Vec<_> = (0..n_threads)
        .map(|_| {
            let (lock, inside, overlaps, done, errors) = (
                lock.clone(),
                Arc::clone(&inside),
                Arc::clone(&overlaps),
                Arc::clone(&done),
                Arc::clone(&errors),
            );
            std::thread::spawn(move || {
                for _ in 0..25 {
                    let g = match lock.acquire(Duration::from_secs(2)) {
                        Ok(g) => g,
                        Err(e) => {
                            record(&errors, "acquire", format!("{e:?}"));
                            continue;
                        }
                    };
                    if inside.swap(true, Ordering::SeqCst) {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_micros(300));
                    inside.store(false, Ordering::SeqCst);
                    match g.release() {
                        Ok(Release::Released) => {}
                        other => record(&errors, "release", format!("{other:?}")),
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    rt.block_on(async {
        let tasks: Vec<_> = (0..n_tasks)
            .map(|_| {
                let (lock, inside, overlaps, done, errors) = (
                    lock.clone(),
                    Arc::clone(&inside),
                    Arc::clone(&overlaps),
                    Arc::clone(&done),
                    Arc::clone(&errors),
                );
                tokio::spawn(async move {
                    for _ in 0..25 {
                        let g = match lock.acquire_async(Duration::from_secs(2)).await {
                            Ok(g) => g,
                            Err(e) => {
                                record(&errors, "acquire_async", format!("{e:?}"));
                                continue;
                            }
                        };
                        if inside.swap(true, Ordering::SeqCst) {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        tokio::time::sleep(Duration::from_micros(300)).await;
                        inside.store(false, Ordering::SeqCst);
                        match g.release_async().await {
                            Ok(Release::Released) => {}
                            other => record(&errors, "release_async", format!("{other:?}")),
                        }
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    for t in threads {
        t.join().unwrap();
    }
    let holder = lock.holder();
    let errors = errors.lock().unwrap().clone();
    println!(
        "{} critical sections of {total}, {} overlaps, {} errors, {} dials for 4 connections; holder at the end {:?}",
        done.load(Ordering::SeqCst),
        overlaps.load(Ordering::SeqCst),
        errors.len(),
        store.connection_stats().dials,
        holder.as_ref().map(|h| h
            .as_ref()
            .map(|t| t.split(' ').nth(1).unwrap_or("").to_string())),
    );
    let mut kinds = std::collections::BTreeMap::new();
    for e in &errors {
        *kinds
            .entry(e.chars().take(60).collect::<String>())
            .or_insert(0) += 1;
    }
    for (kind, n) in &kinds {
        println!("  {n} x {kind}");
    }
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "the lock was held twice at once"
    );
    assert!(
        errors.is_empty() && matches!(holder, Ok(None)),
        "on a markerless -M server (one incarnation, no restart) {} of {total} lock operations \
         failed and the lock is held at the end by {holder:?} (stranded for its 8 s TTL if \
         Some); first: {:?}",
        errors.len(),
        errors.first()
    );
}
