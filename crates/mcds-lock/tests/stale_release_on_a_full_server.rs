//! A stale release on a full (`-M`) server must not unlink the current
//! holder's lock (first found reviewing "conditional writes as text
//! commands").
//!
//! The commit moves add/replace/cas/append/prepend off `ms` because a meta
//! `ms` that memcached cannot allocate (a full `-M` server) unlinks the key's
//! existing item whatever its mode or CAS. One conditional write is still an
//! `ms`: `delete_cas` on servers before 1.6.13 (`ms <k> 0 C<cas> T-1`, see
//! codec.rs), which is what a lock's release sends there. On a full server a
//! *stale* release (its CAS no longer matches) unlinks the current holder's
//! lock, and the next contender takes it: two holders.
//!
//! memcached 1.6.12 has the same unlink (proto_text.c, process_mset_command,
//! "NOTE: only if SET mode?"); here the client's `version_cap(1.6.12)` runs
//! that protocol path against the installed 1.6.18.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{DeleteOutcome, Key, Store, Ttl};
use mcds_lock::Lock;
use mcds_memcached::{MemcachedStore, Version};
use mcds_testkit::{MemcachedServer, ServerOptions, fill_until_out_of_memory};

fn capped(server: &MemcachedServer) -> Arc<MemcachedStore> {
    Arc::new(
        MemcachedStore::builder()
            .version_cap(Version(1, 6, 12))
            .connect([server.addr()])
            .unwrap(),
    )
}

/// The primitive: a `delete_cas` whose CAS does not match must leave the
/// item alone (it answers EXISTS, or fails); on a full `-M` server the
/// pre-1.6.13 encoding deletes it.
#[test]
fn stale_delete_cas_on_a_full_server_keeps_the_item_pre_1_6_13() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = capped(&server);
    let key = Key::new("review:dcas").unwrap();
    let stale = store.set(&key, b"first-value", Ttl::Never).unwrap();
    let current = store.set(&key, b"other-value", Ttl::Never).unwrap();
    assert_ne!(stale, current);
    let filled = fill_until_out_of_memory(&*store);
    println!("{} items fill the server", filled.len());
    let outcome = store.delete_cas(&key, stale);
    println!("delete_cas with the stale id on a full server: {outcome:?}");
    assert!(
        !matches!(outcome, Ok(DeleteOutcome::Deleted)),
        "{outcome:?}"
    );
    let after = store.get(&key).unwrap();
    println!(
        "item after the stale delete_cas: {:?}",
        after
            .as_ref()
            .map(|i| String::from_utf8_lossy(&i.value).into_owned())
    );
    assert_eq!(
        after.map(|i| i.value),
        Some(b"other-value".to_vec()),
        "a delete_cas whose CAS did not match removed the item"
    );
}

/// The lock: a's lease expired and b holds the lock; a's late release (a
/// stale CAS) on a full `-M` server must not free b's lock.
#[test]
fn a_stale_release_on_a_full_server_never_frees_anothers_lock_pre_1_6_13() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = capped(&server);
    let lock = |label: &str, ttl: u64| {
        Lock::new(
            Arc::clone(&store) as Arc<dyn Store>,
            "nightly",
            Duration::from_secs(ttl),
        )
        .unwrap()
        .with_owner_label(label)
        .unwrap()
    };
    let a = lock("a", 1).try_acquire().unwrap().expect("a free lock");
    let started = std::time::Instant::now();
    let b = loop {
        if let Some(b) = lock("b", 60).try_acquire().unwrap() {
            break b;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "a's lease never ended"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    println!("b acquired after a's lease ended ({:?})", started.elapsed());
    let filled = fill_until_out_of_memory(&*store);
    println!("{} items fill the server", filled.len());
    let released = a.release();
    println!("a's stale release on a full server: {released:?}");
    let holder = lock("c", 60).holder().unwrap();
    println!(
        "holder after a's release: {holder:?} (b is {})",
        b.owner_token()
    );
    let c = lock("c", 60).try_acquire();
    if let Ok(Some(c)) = &c {
        panic!(
            "the lock was granted a second time while b held it: c {} after a's stale release ({released:?}); b {}",
            c.owner_token(),
            b.owner_token()
        );
    }
    assert_eq!(holder.as_deref(), Some(b.owner_token()));
}

/// A full `-M` server (current protocol, 1.6.18): a pipeline of every pair
/// on keys that exist, plus quiet ops. Nothing may be reported applied that
/// was not, and no failed write may remove an item.
#[test]
fn full_server_pipeline_of_pairs_keeps_every_item() {
    use mcds_core::{CasOutcome, Op, Reply, Stored};
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let keys: Vec<Key> = (0..6)
        .map(|i| Key::new(format!("review:full:{i}")).unwrap())
        .collect();
    let mut ids = Vec::new();
    for key in &keys {
        ids.push(store.set(key, b"original-value", Ttl::Never).unwrap());
    }
    let filled = fill_until_out_of_memory(&*store);
    println!("{} items fill the server", filled.len());
    let big = vec![b'q'; 300];
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for (round, filler) in filled.iter().take(50).enumerate() {
        let ops = [
            Op::Add {
                key: &keys[0],
                value: &big,
                ttl: Ttl::Never,
            },
            Op::Get(filler),
            Op::Replace {
                key: &keys[1],
                value: &big,
                ttl: Ttl::Never,
            },
            Op::Cas {
                key: &keys[2],
                value: &big,
                ttl: Ttl::Never,
                cas: ids[2],
            },
            Op::Delete(&Key::new(format!("review:missing:{round}")).unwrap()),
            Op::Append {
                key: &keys[3],
                value: &big,
            },
            Op::Prepend {
                key: &keys[4],
                value: &big,
            },
            Op::AppendOrAdd {
                key: &keys[5],
                value: &big,
                ttl: Ttl::Never,
            },
        ];
        let r = store.pipeline(&ops);
        for (op, res) in ops.iter().zip(&r) {
            let label = match res {
                Ok(Reply::Stored(Stored::Stored(_)))
                | Ok(Reply::CasOutcome(CasOutcome::Stored(_)))
                | Ok(Reply::Done)
                | Ok(Reply::Applied(true))
                    if !matches!(op, Op::Get(_) | Op::Delete(_)) =>
                {
                    format!("{} APPLIED", op.name())
                }
                Ok(x) => format!("{} {x:?}", op.name()).chars().take(40).collect(),
                Err(e) => format!(
                    "{} err {}",
                    op.name(),
                    format!("{e:?}").split([' ', '{', '(']).next().unwrap()
                ),
            };
            *outcomes.entry(label).or_default() += 1;
        }
        for (i, key) in keys.iter().enumerate() {
            let it = store.get(key).unwrap();
            assert!(
                it.is_some(),
                "round {round}: a failed write removed {key:?} ({:?})",
                r
            );
            let it = it.unwrap();
            if i != 0 {
                // Nothing could be allocated: no pair may have applied.
                assert_eq!(
                    it.value, b"original-value",
                    "round {round}: {key:?} changed: {r:?}"
                );
            }
        }
    }
    println!("{outcomes:#?}");
}
