//! A lock on a memcached that is out of memory and may not evict (`-M`).
//!
//! There memcached answers a write it cannot allocate with `SERVER_ERROR
//! out of memory`. Its meta `ms` also unlinks the key's existing item, in
//! every mode: a contender's failed `add` deleted the holder's lock item,
//! and the next contender's `add` took the lock a second time. mcds sends
//! `add`, `replace` and `cas` as text commands, which leave the item in
//! place; these tests hold that against a real server, on the single-op
//! path and on the pipelined one (the fenced lock's add).

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Store};
use mcds_lock::{Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions, fill_until_out_of_memory};

fn check(fencing: bool) {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = |label: &str| {
        Lock::new(
            Arc::clone(&store) as Arc<dyn Store>,
            "nightly",
            Duration::from_secs(60),
        )
        .unwrap()
        .with_fencing(fencing)
        .with_owner_label(label)
        .unwrap()
    };
    let a = lock("a").try_acquire().unwrap().expect("a free lock");
    let filled = fill_until_out_of_memory(&*store);
    println!("fencing {fencing}: {} items fill the server", filled.len());
    // A contender's add cannot be stored: refused, and the holder keeps it.
    let b = lock("b").try_acquire();
    println!("fencing {fencing}: b's try_acquire on a full server: {b:?}");
    assert!(
        matches!(b, Err(Error::OutOfMemory { .. }) | Ok(None)),
        "{b:?}"
    );
    for _ in 0..20 {
        let c = lock("c").try_acquire();
        if let Ok(Some(c)) = c {
            panic!(
                "fencing {fencing}: the lock was granted a second time while a held it: c {} (fencing token {:?}), a {} ({:?})",
                c.owner_token(),
                c.fencing_token(),
                a.owner_token(),
                a.fencing_token()
            );
        }
    }
    let holder = lock("c").holder().unwrap();
    assert_eq!(
        holder.as_deref(),
        Some(a.owner_token()),
        "the failed add removed the holder's item"
    );
    // The holder's extend is a CAS write: refused too, and the item stays.
    let extended = a.extend(Duration::from_secs(60));
    println!("fencing {fencing}: a's extend on a full server: {extended:?}");
    assert_eq!(
        lock("c").holder().unwrap().as_deref(),
        Some(a.owner_token())
    );
    // Room again: the holder releases its own lock.
    for key in filled.iter().take(2000) {
        store.delete(key).unwrap();
    }
    assert_eq!(a.release().unwrap(), Release::Released);
    assert!(lock("c").try_acquire().unwrap().is_some());
}

#[test]
fn a_full_no_evict_server_never_grants_a_held_lock() {
    check(false);
}

#[test]
fn a_full_no_evict_server_never_grants_a_held_fenced_lock() {
    check(true);
}
