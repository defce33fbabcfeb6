//! The quorum lock on real memcached servers: available while a majority
//! answers (at about the latency of all of them), failing within the
//! timeout plus 100 ms, with how many answered, once a majority is dead
//! or frozen, and never letting a second holder in when a member
//! restarts empty. (The history-checked run under faults is mcds-stress's
//! `quorum_history.rs`.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{Error, Store};
use mcds_lock::{Extend, Lock, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

const TIMEOUT: Duration = Duration::from_millis(500);
const TTL: Duration = Duration::from_secs(5);

/// A quorum of `servers`, each member a store with `TIMEOUT` for its
/// connections and requests.
fn quorum(servers: &[MemcachedServer]) -> Arc<dyn Store> {
    mcds_testkit::quorum_store(servers.iter(), TIMEOUT)
}

fn start(n: usize) -> Vec<MemcachedServer> {
    (0..n).map(|_| MemcachedServer::start_default()).collect()
}

/// The median time of `rounds` acquire-and-release pairs; panics if one
/// is not granted.
fn median_pair(lock: &Lock, rounds: usize) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|i| {
            let t = Instant::now();
            let guard = lock
                .try_acquire()
                .unwrap_or_else(|e| panic!("round {i}: {e}"))
                .unwrap_or_else(|| panic!("round {i}: refused"));
            assert!(guard.fencing_token().is_some());
            assert_eq!(guard.release().unwrap(), Release::Released, "round {i}");
            t.elapsed()
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

fn available_with_a_minority_dead(n: usize) {
    let mut servers = start(n);
    let lock = Lock::new(quorum(&servers), "avail", TTL)
        .unwrap()
        .with_fencing(true);
    let all = median_pair(&lock, 40);
    let dead = n - (n / 2 + 1);
    for s in &mut servers[..dead] {
        s.kill();
    }
    // The first pair meets the refused connections and marks them down.
    let minority_dead = median_pair(&lock, 40);
    println!(
        "{n} servers: acquire + release median {all:?} with all up, {minority_dead:?} with {dead} killed (40 of 40 granted each)"
    );
}

#[test]
fn three_servers_stay_available_with_one_dead() {
    available_with_a_minority_dead(3);
}

#[test]
fn five_servers_stay_available_with_two_dead() {
    available_with_a_minority_dead(5);
}

/// `try_acquire` against a quorum whose majority is `gone`: it fails within
/// the timeout plus 100 ms, saying how many answered.
fn majority_gone(gone: impl Fn(&mut MemcachedServer), what: &str) {
    let mut servers = start(3);
    let lock = Lock::new(quorum(&servers), "gone", TTL).unwrap();
    // Connections open first, as in a running service.
    lock.try_acquire().unwrap().unwrap().release().unwrap();
    for s in &mut servers[..2] {
        gone(s);
    }
    for attempt in 0..3 {
        let t = Instant::now();
        let e = lock.try_acquire().unwrap_err();
        let took = t.elapsed();
        println!("{what}, attempt {attempt}: failed after {took:?}: {e}");
        assert!(
            took <= TIMEOUT + Duration::from_millis(100),
            "{what}: {took:?}"
        );
        assert!(matches!(e, Error::ServerDown { .. }), "{e}");
        assert!(
            e.to_string().contains("1 of 3 servers answered, 2 needed"),
            "{e}"
        );
    }
    for s in &mut servers[..2] {
        s.resume();
    }
}

#[test]
fn a_majority_killed_fails_fast_saying_how_many_answered() {
    majority_gone(|s| s.kill(), "2 of 3 killed");
}

#[test]
fn a_majority_frozen_fails_within_the_timeout_saying_how_many_answered() {
    majority_gone(|s| s.pause(), "2 of 3 frozen");
}

#[test]
fn a_member_restarted_empty_lets_no_second_holder_in() {
    let mut servers = start(3);
    let q = quorum(&servers);
    let holder = Lock::new(Arc::clone(&q), "restart", TTL)
        .unwrap()
        .with_fencing(true);
    let contender = Lock::new(quorum(&servers), "restart", TTL)
        .unwrap()
        .with_fencing(true);
    let guard = holder.try_acquire().unwrap().unwrap();
    let first = guard.fencing_token().unwrap();
    servers[0].restart();
    assert!(
        contender.try_acquire().unwrap().is_none(),
        "one restarted member is no majority"
    );
    // The renewal takes the restarted member again ...
    let on_first = MemcachedStore::connect(&servers[0].addr()).unwrap();
    let owner = mcds_core::Key::new("lock:restart:owner").unwrap();
    let mut renewals = 0;
    loop {
        renewals += 1;
        assert!(renewals <= 10, "the restarted member was never taken again");
        if matches!(guard.extend(TTL), Ok(Extend::Extended))
            && on_first.get(&owner).unwrap().is_some_and(|i| {
                i.value
                    .starts_with(format!("{}~", guard.owner_token()).as_bytes())
            })
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("the restarted member held the lease again after {renewals} renewal(s)");
    // ... so a second member's restart still leaves a majority.
    servers[1].restart();
    for _ in 0..5 {
        match contender.try_acquire() {
            Ok(None) | Err(_) => {}
            Ok(Some(g)) => panic!("a second holder, token {:?}", g.fencing_token()),
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(guard.release().unwrap(), Release::Released);
    // Tokens go on increasing although two of three counters were lost.
    let next = contender.acquire(Duration::from_secs(2)).unwrap();
    assert!(next.fencing_token().unwrap() > first);
}
