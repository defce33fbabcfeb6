//! Concurrency across separate OS processes, on real memcached.

use mcds_core::{Key, Store};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

mod common;

use common::run_workers;

#[test]
fn counter_from_4_processes_is_exact() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let lines = run_workers(4, &[&addr, "counter", "procs", "2", "10000"]);
    assert!(lines.iter().all(|l| l == "incremented 20000"), "{lines:?}");
    let store = MemcachedStore::connect(&addr).unwrap();
    let total = store
        .get(&Key::new("counter:procs:value").unwrap())
        .unwrap()
        .and_then(|i| i.counter());
    println!("counter, 4 processes x 2 threads x 10000: {total:?}");
    assert_eq!(total, Some(80_000));
}

#[test]
fn lock_from_4_processes_never_overlaps() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let lines = run_workers(4, &[&addr, "lock", "plock", "2000"]);
    for line in &lines {
        assert_eq!(line, "rounds 2000 overlaps 0 lost 0");
    }
    let store = MemcachedStore::connect(&addr).unwrap();
    let shared = store
        .get(&Key::new("plock:shared").unwrap())
        .unwrap()
        .and_then(|i| i.counter());
    println!("lock, 4 processes x 2000: {lines:?}, shared value {shared:?}");
    assert_eq!(
        shared,
        Some(8000),
        "the non-atomic read-modify-write lost nothing"
    );
}

#[test]
fn set_from_4_processes_equals_the_model() {
    let server = MemcachedServer::start_default();
    let addr = server.addr();
    let lines = run_workers(4, &[&addr, "set", "pset", "{id}", "100"]);
    assert_eq!(lines.len(), 4);
    let set = mcds_set::Set::new(mcds_stress::connect(&addr).unwrap(), "pset").unwrap();
    let got: std::collections::BTreeSet<String> = set.members_utf8().unwrap().into_iter().collect();
    let model: std::collections::BTreeSet<String> = (0..4)
        .flat_map(|p| (0..1000).step_by(2).map(move |i| format!("{p}:{i}")))
        .collect();
    println!(
        "set, 4 processes x 100 rounds: {} members, model {}",
        got.len(),
        model.len()
    );
    assert_eq!(got, model);
}
