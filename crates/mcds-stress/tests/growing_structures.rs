//! Structures that split into more items while 4 writer processes run
//! (sets, tables, counter maps' registries, event log slices; and a
//! leaderboard kept in shards, made by racing first increments):
//! the members at the end equal a model exactly (nothing lost, nothing
//! listed twice, every count right), and no writer read a wrong answer on
//! the way, on one memcached and on a pool of 3.

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

/// 4 processes race to make a sharded leaderboard, then count their own
/// members and one member they share: every count equals the model.
fn check_board(servers: &str) {
    let lines = run_workers(
        4,
        &[
            servers,
            "grow",
            "board",
            "grown",
            "{id}",
            &ROUNDS.to_string(),
        ],
    );
    for line in &lines {
        assert!(line.ends_with("wrong 0"), "a writer read wrong: {line}");
    }
    let store = mcds_stress::connect(servers).unwrap();
    let board =
        mcds_sketch::Leaderboard::new(store, "grown", mcds_stress::GROW_BOARD_CAPACITY).unwrap();
    let summary = board.summary().unwrap();
    let mut model: Vec<(String, u64)> = (0..4)
        .flat_map(|p| {
            (0..ROUNDS * 8).map(move |n| (format!("{p}:{n}"), mcds_stress::grow_board_count(n)))
        })
        .collect();
    model.push(("hot".into(), 4 * ROUNDS));
    println!(
        "leaderboard on {servers}: 4 processes x {ROUNDS} rounds, {} members on the board, model {}, total {}",
        summary.len(),
        model.len(),
        summary.total()
    );
    assert!(summary.is_exact());
    assert_eq!(summary.len(), model.len());
    for (m, count) in &model {
        assert_eq!(
            summary.get(m.as_bytes()).map(|e| e.count),
            Some(*count),
            "{m}"
        );
    }
    assert_eq!(summary.total(), model.iter().map(|(_, c)| c).sum::<u64>());
}

#[test]
fn a_sharded_leaderboard_under_4_writer_processes_equals_the_model() {
    let server = MemcachedServer::start_default();
    check_board(&server.addr());
}

#[test]
fn a_sharded_leaderboard_on_a_pool_of_3_under_4_writer_processes_equals_the_model() {
    let pool = ServerPool::start(3, Default::default());
    check_board(&pool.servers_arg());
}

/// 4 processes count their own fields of a counter map and remove half:
/// the registry (512-byte buckets) splits while they run, and the map's
/// fields and values at the end equal the model.
fn check_map(servers: &str) {
    let lines = run_workers(
        4,
        &[servers, "grow", "map", "grown", "{id}", &ROUNDS.to_string()],
    );
    for line in &lines {
        assert!(line.ends_with("wrong 0"), "a writer read wrong: {line}");
    }
    let store = mcds_stress::connect(servers).unwrap();
    let map = mcds_counter::CounterMap::new(store.clone(), "grown").unwrap();
    let all = map.get_all().unwrap();
    let fields = map.fields().unwrap();
    let model: std::collections::BTreeMap<String, i64> = (0..4)
        .flat_map(|p| {
            (0..ROUNDS * 8)
                .step_by(2)
                .map(move |n| (format!("{p}:{n}"), mcds_stress::grow_board_count(n) as i64))
        })
        .collect();
    let got: std::collections::BTreeMap<String, i64> = all.iter().cloned().collect();
    let split = splits(&*store, map.registry_key());
    println!(
        "counter map on {servers}: 4 processes x {ROUNDS} rounds, {} fields listed, {} with values, model {}, {split} registry splits",
        fields.len(),
        all.len(),
        model.len()
    );
    assert_eq!(all.len(), got.len(), "a field listed twice");
    assert_eq!(fields.len(), model.len(), "fields: every kept one, once");
    assert_eq!(got, model);
    assert!(
        split >= 10,
        "the registry split while the writers ran: {split}"
    );
}

#[test]
fn a_counter_map_registry_splitting_under_4_writer_processes_equals_the_model() {
    let server = MemcachedServer::start_default();
    check_map(&server.addr());
}

#[test]
fn a_counter_map_registry_splitting_on_a_pool_of_3_under_4_writer_processes_equals_the_model() {
    let pool = ServerPool::start(3, Default::default());
    check_map(&pool.servers_arg());
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

/// 4 writer processes put events as fast as they can for 3 s into an
/// event log with one-hour chunks (slices of 3.5 s) on a server with
/// 128 KiB items (`-I 128k`): each slice spreads over many pieces, each
/// sealed before the next is written, and a fetch returns every
/// acknowledged event exactly once. Prints the rate (this is a debug
/// build; `scripts/bench-eventlog-writers.sh` measures a release one).
#[test]
fn an_event_log_slice_past_the_item_limit_under_4_writer_processes_loses_nothing() {
    let server = MemcachedServer::start(small_items());
    check_events(&server.addr());
}

/// As above, on a pool of 3: a slice's pieces are placed by their keys over
/// the three servers.
#[test]
fn an_event_log_slice_past_the_item_limit_on_a_pool_of_3_under_4_writer_processes_loses_nothing() {
    let pool = ServerPool::start(3, small_items());
    check_events(&pool.servers_arg());
}

/// Servers of 128 KiB items, so that a slice outgrows one within seconds.
fn small_items() -> mcds_testkit::ServerOptions {
    mcds_testkit::ServerOptions {
        item_size: Some("128k".into()),
        extra_args: vec!["-o".into(), "slab_chunk_max=128".into()],
        ..Default::default()
    }
}

fn check_events(addr: &str) {
    let limit = (128 * 1024).to_string();
    let lines = run_workers(4, &[addr, "events", "ev", "{id}", "3000", &limit, "3600"]);
    let mut want = BTreeSet::new();
    let mut rate = 0.0;
    for line in &lines {
        // events <id> put <n> in <ms> ms
        let words: Vec<&str> = line.split_whitespace().collect();
        let (id, n, ms) = (words[1], words[3].parse::<u64>().unwrap(), words[5]);
        rate += n as f64 * 1000.0 / ms.parse::<f64>().unwrap().max(1.0);
        for i in 0..n {
            want.insert(format!("{id}:{i}"));
        }
    }
    let store = mcds_stress::impatient_store(addr, 128 * 1024).unwrap();
    let log =
        mcds_eventlog::EventLog::new(store.clone(), "ev", std::time::Duration::from_secs(3600), 3)
            .unwrap();
    let events = log.fetch(0, u64::MAX).unwrap();
    let got: BTreeSet<String> = events
        .iter()
        .map(|e| String::from_utf8(e.payload.clone()).unwrap())
        .collect();
    // The pieces of each slice the events are in (slices of 3,516 ms).
    let slices: BTreeSet<(u64, u64)> = events
        .iter()
        .map(|e| (e.at_ms / 3_600_000, e.at_ms % 3_600_000 / 3_516))
        .collect();
    let pieces: Vec<usize> = slices
        .iter()
        .map(|(w, s)| {
            (0..)
                .take_while(|p| {
                    store
                        .get(&mcds_core::Key::new(format!("log:ev:{w}.{s}.{p}")).unwrap())
                        .unwrap()
                        .is_some()
                })
                .count()
        })
        .collect();
    println!(
        "event log on {addr}, 4 processes x 3 s: {} events acknowledged ({rate:.0} events/s, debug build), {} fetched, {} slices of {:?} pieces of 128 KiB",
        want.len(),
        events.len(),
        slices.len(),
        pieces
    );
    assert_eq!(events.len(), got.len(), "an event returned twice");
    assert_eq!(got, want, "every acknowledged event, nothing else");
    // (More than one piece: the writers outgrew an item. How many more
    // depends on the machine's speed: a loaded CI run wrote [3, 3].)
    assert!(
        pieces.iter().any(|&p| p > 1),
        "a slice spread over pieces: {pieces:?}"
    );
}
