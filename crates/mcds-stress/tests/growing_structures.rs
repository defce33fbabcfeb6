//! Structures that split into more items while 4 writer processes run:
//! the members at the end equal a model exactly (nothing lost, nothing
//! listed twice), and no writer read a wrong answer on the way, on one
//! memcached and on a pool of 3.

use std::collections::BTreeSet;

use mcds_core::Store;
use mcds_testkit::{MemcachedServer, ServerPool};

mod common;

use common::run_workers;

const ROUNDS: u64 = 150;

/// The members the workers leave: the even ones of each round.
fn model() -> BTreeSet<String> {
    (0..4)
        .flat_map(|p| (0..ROUNDS * 8).step_by(2).map(move |i| format!("{p}:{i}")))
        .collect()
}

/// How many buckets the directory under `key` records as split.
fn splits(store: &dyn Store, key: &mcds_core::Key) -> usize {
    let dir = store.get(key).unwrap().expect("a directory").value;
    dir.split(|&b| b == b' ')
        .filter(|t| t.first() == Some(&b's'))
        .count()
}

fn check(servers: &str, what: &str) {
    let lines = run_workers(
        4,
        &[servers, "grow", what, "grown", "{id}", &ROUNDS.to_string()],
    );
    for line in &lines {
        assert!(line.ends_with("wrong 0"), "a writer read wrong: {line}");
    }
    let store = mcds_stress::connect(servers).unwrap();
    let (listed, key) = if what == "set" {
        let set = mcds_set::Set::new(store.clone(), "grown").unwrap();
        (set.members_utf8().unwrap(), set.key().clone())
    } else {
        let table = mcds_set::Table::new(store.clone(), "grown").unwrap();
        let keys: Vec<String> = table
            .keys()
            .unwrap()
            .into_iter()
            .map(|k| String::from_utf8(k).unwrap())
            .collect();
        for m in &keys {
            assert_eq!(
                table.get(m).unwrap(),
                Some(m.clone().into_bytes()),
                "{m}'s row"
            );
        }
        (keys, mcds_core::Key::new("table:grown:members").unwrap())
    };
    let got: BTreeSet<String> = listed.iter().cloned().collect();
    let split = splits(&*store, &key);
    println!(
        "{what} on {servers}: 4 processes x {ROUNDS} rounds, {} listed, model {}, {split} bucket splits",
        listed.len(),
        model().len()
    );
    assert_eq!(listed.len(), got.len(), "a member listed twice");
    assert_eq!(got, model());
    assert!(
        split >= 10,
        "the buckets split while the writers ran: {split}"
    );
}

#[test]
fn a_set_splitting_under_4_writer_processes_equals_the_model() {
    let server = MemcachedServer::start_default();
    check(&server.addr(), "set");
}

#[test]
fn a_set_splitting_on_a_pool_of_3_under_4_writer_processes_equals_the_model() {
    let pool = ServerPool::start(3, Default::default());
    check(&pool.servers_arg(), "set");
}

#[test]
fn a_table_splitting_under_4_writer_processes_equals_the_model() {
    let server = MemcachedServer::start_default();
    check(&server.addr(), "table");
}

#[test]
fn a_table_splitting_on_a_pool_of_3_under_4_writer_processes_equals_the_model() {
    let pool = ServerPool::start(3, Default::default());
    check(&pool.servers_arg(), "table");
}
