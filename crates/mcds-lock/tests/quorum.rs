//! The quorum lock's algorithm on embedded stores (each member its own
//! `MemoryStore`, so a test can take one away or write behind the
//! lock's back): majorities, undone partial acquires, fencing tokens
//! across lost counters, the members' record, renewal on a member that
//! lost the item. The same lock against real memcached, with faults, is
//! in `quorum_servers.rs` and in mcds-stress's `quorum_history.rs`.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, Key, MemoryStore, QuorumStore, Store, Stored, Ttl};
use mcds_lock::{Extend, Lock, QUORUM_RECORD_KEY, Release};

const TTL: Duration = Duration::from_secs(30);

/// A quorum of `n` fresh embedded stores, and the stores.
fn quorum(n: usize) -> (Arc<dyn Store>, Vec<Arc<MemoryStore>>) {
    quorum_named(&(0..n).map(|i| format!("m{i}")).collect::<Vec<_>>())
}

fn quorum_named(names: &[String]) -> (Arc<dyn Store>, Vec<Arc<MemoryStore>>) {
    let stores: Vec<Arc<MemoryStore>> =
        names.iter().map(|_| Arc::new(MemoryStore::new())).collect();
    let q = QuorumStore::new(
        names
            .iter()
            .zip(&stores)
            .map(|(n, s)| (n.clone(), Arc::clone(s) as Arc<dyn Store>))
            .collect(),
    )
    .unwrap();
    (Arc::new(q), stores)
}

fn key(s: &str) -> Key {
    Key::new(s).unwrap()
}

#[test]
fn one_holder_at_a_time_and_release_frees_every_member() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "job", TTL).unwrap();
    let guard = lock.try_acquire().unwrap().expect("free");
    for s in &stores {
        assert!(
            s.get(&key("lock:job:owner")).unwrap().is_some(),
            "on every member"
        );
    }
    assert!(lock.try_acquire().unwrap().is_none(), "held");
    assert_eq!(lock.holder().unwrap().as_deref(), Some(guard.owner_token()));
    assert_eq!(guard.release().unwrap(), Release::Released);
    for s in &stores {
        assert!(
            s.get(&key("lock:job:owner")).unwrap().is_none(),
            "released everywhere"
        );
    }
    assert!(lock.try_acquire().unwrap().is_some(), "free again");
}

#[test]
fn a_majority_is_enough_and_a_minority_is_not() {
    let (q, stores) = quorum(5);
    let lock = Lock::new(Arc::clone(&q), "job", TTL).unwrap();
    // Someone else's items on 2 of 5: 3 are left, a majority.
    for s in &stores[..2] {
        s.add(&key("lock:job:owner"), b"other", Ttl::secs(30))
            .unwrap();
    }
    let guard = lock.try_acquire().unwrap().expect("3 of 5");
    guard.release().unwrap();
    // On 3 of 5: no majority left, and the 2 it added are given back.
    stores[2]
        .add(&key("lock:job:owner"), b"other", Ttl::secs(30))
        .unwrap();
    assert!(lock.try_acquire().unwrap().is_none());
    for s in &stores[3..] {
        assert!(
            s.get(&key("lock:job:owner")).unwrap().is_none(),
            "a partial acquire is undone"
        );
    }
}

#[test]
fn fencing_tokens_increase_across_lost_counters() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "fenced", TTL)
        .unwrap()
        .with_fencing(true);
    let fence = key("lock:fenced:fence");
    let mut last = 0;
    for round in 0..30 {
        let guard = lock.try_acquire().unwrap().expect("free");
        let t = guard.fencing_token().unwrap();
        assert!(t > last, "round {round}: token {t} after {last}");
        last = t;
        guard.release().unwrap();
        // Lose counters: one member (a minority) in most rounds, all of
        // them now and then (the clock then orders the new counter).
        match round % 5 {
            4 => stores.iter().for_each(|s| {
                s.delete(&fence).unwrap();
            }),
            r => {
                stores[r % 3].delete(&fence).unwrap();
            }
        }
    }
    // Every member's counter is at the last token or above it: the next
    // majority, whichever it is, counts past it.
    let guard = lock.try_acquire().unwrap().unwrap();
    for s in &stores {
        let c: u64 = String::from_utf8(s.get(&fence).unwrap().unwrap().value)
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            c >= last,
            "a member's counter {c} is below the last token {last}"
        );
    }
    assert!(guard.fencing_token().unwrap() > last);
}

#[test]
fn a_member_whose_counter_lags_is_raised_before_the_token_is_returned() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "lag", TTL)
        .unwrap()
        .with_fencing(true);
    let fence = key("lock:lag:fence");
    // Counters that disagree: the token is the largest plus one, and the
    // others are raised to it.
    for (s, v) in stores.iter().zip([5u64, 900, 7]) {
        s.set(&fence, v.to_string().as_bytes(), Ttl::Never).unwrap();
    }
    let guard = lock.try_acquire().unwrap().unwrap();
    assert_eq!(guard.fencing_token(), Some(901));
    for s in &stores {
        assert_eq!(s.get(&fence).unwrap().unwrap().value, b"901");
    }
}

#[test]
fn clients_with_different_lists_are_refused_where_the_lists_meet() {
    let shared = Arc::new(MemoryStore::new());
    let make = |others: [&str; 2]| -> Arc<dyn Store> {
        let mut members: Vec<(String, Arc<dyn Store>)> =
            vec![("shared:1".into(), Arc::clone(&shared) as Arc<dyn Store>)];
        members.extend(others.iter().map(|n| {
            (
                n.to_string(),
                Arc::new(MemoryStore::new()) as Arc<dyn Store>,
            )
        }));
        Arc::new(QuorumStore::new(members).unwrap())
    };
    let first = Lock::new(make(["a:1", "b:1"]), "job", TTL).unwrap();
    let second = Lock::new(make(["c:1", "d:1"]), "job", TTL).unwrap();
    let guard = first.try_acquire().unwrap().expect("free");
    assert_eq!(
        shared.get(&key(QUORUM_RECORD_KEY)).unwrap().unwrap().value,
        b"a:1,b:1,shared:1"
    );
    // The second list takes c and d, a majority of its own: refused.
    let e = second.try_acquire().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("differ"), "{e}");
    guard.release().unwrap();
}

#[test]
fn extend_adds_the_item_again_where_it_was_lost() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "renew", TTL).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    // Member 0 loses the item (a restart, an eviction).
    stores[0].delete(&key("lock:renew:owner")).unwrap();
    assert_eq!(guard.extend(TTL).unwrap(), Extend::Extended);
    let value = stores[0]
        .get(&key("lock:renew:owner"))
        .unwrap()
        .unwrap()
        .value;
    assert!(
        value.starts_with(format!("{}~", guard.owner_token()).as_bytes()),
        "given back in the same renewal: {:?}",
        String::from_utf8_lossy(&value)
    );
    // Now a second member's loss leaves two of three: still held.
    stores[1].delete(&key("lock:renew:owner")).unwrap();
    assert!(lock.try_acquire().unwrap().is_none());
    assert_eq!(guard.extend(TTL).unwrap(), Extend::Extended);
    // Lost on two at once, each taken by another: the lease is lost, and
    // what is left of it given back.
    for s in &stores[..2] {
        s.delete(&key("lock:renew:owner")).unwrap();
        assert!(matches!(
            s.add(&key("lock:renew:owner"), b"other", Ttl::secs(30))
                .unwrap(),
            Stored::Stored(_)
        ));
    }
    assert_eq!(guard.extend(TTL).unwrap(), Extend::Lost);
    assert!(guard.is_lost());
    assert!(stores[2].get(&key("lock:renew:owner")).unwrap().is_none());
    assert_eq!(guard.release().unwrap(), Release::Lost);
}

#[test]
fn release_reports_lost_when_a_majority_no_longer_held_the_lease() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "rel", TTL).unwrap();
    let guard = lock.try_acquire().unwrap().unwrap();
    for s in &stores[1..] {
        s.delete(&key("lock:rel:owner")).unwrap();
    }
    assert_eq!(guard.release().unwrap(), Release::Lost);
    assert!(stores[0].get(&key("lock:rel:owner")).unwrap().is_none());
}

#[test]
fn only_locks_run_on_a_quorum() {
    let (q, _) = quorum(3);
    let e = mcds_core::Scope::from(q)
        .store()
        .incr(&key("k"), 1)
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
}

#[test]
fn the_async_api_takes_and_releases_a_quorum_lock() {
    let (q, stores) = quorum(3);
    let lock = Lock::new(Arc::clone(&q), "async", TTL)
        .unwrap()
        .with_fencing(true);
    mcds_core::block_on(async {
        let guard = lock.acquire_async(Duration::from_secs(1)).await.unwrap();
        assert!(guard.fencing_token().is_some());
        assert!(lock.try_acquire_async().await.unwrap().is_none());
        assert_eq!(guard.release_async().await.unwrap(), Release::Released);
    });
    for s in &stores {
        assert!(s.get(&key("lock:async:owner")).unwrap().is_none());
    }
}

/// A member that is down: every op fails before anything is sent.
#[derive(Debug)]
struct Down;

impl Store for Down {
    fn backend_name(&self) -> &'static str {
        "down"
    }
    fn execute(&self, _op: &mcds_core::Op<'_>) -> mcds_core::Result<mcds_core::Reply> {
        Err(Error::Io {
            server: "down:1".into(),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        })
    }
}

#[test]
fn a_split_vote_is_tried_again() {
    // One member down; another contender's add on member A, which it
    // undoes as soon as it sees its own split (after this client's first
    // try): this client got B only, no majority, and must try again
    // rather than report the lock taken (with `mcds lock run -n` on three
    // hosts, a slot ran on none of them).
    let a = Arc::new(MemoryStore::new());
    let hooked = mcds_testkit::HookStore::new(Arc::clone(&a) as Arc<dyn Store>);
    let members: Vec<(String, Arc<dyn Store>)> = vec![
        ("a".into(), Arc::clone(&hooked) as Arc<dyn Store>),
        ("b".into(), Arc::new(MemoryStore::new()) as Arc<dyn Store>),
        ("c".into(), Arc::new(Down) as Arc<dyn Store>),
    ];
    let q: Arc<dyn Store> = Arc::new(QuorumStore::new(members).unwrap());
    let owner = key("lock:split:owner");
    a.add(&owner, b"other~1", Ttl::secs(30)).unwrap();
    let undo = Arc::clone(&a);
    let mut first = true;
    hooked.after(move |_| {
        if std::mem::take(&mut first) {
            undo.delete(&key("lock:split:owner")).unwrap();
        }
    });
    let lock = Lock::new(q, "split", TTL).unwrap();
    let guard = lock
        .try_acquire()
        .unwrap()
        .expect("granted on the second try, once the other contender undid its part");
    assert_eq!(guard.release().unwrap(), Release::Released);
}
