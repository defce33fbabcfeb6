//! Load: 8 worker processes run mixed ops (counter, lock, sharded set,
//! event log, rate limiter) against a pool of 3 memcached servers, then the
//! results are checked against what the workers acknowledged.
//!
//! `MCDS_LOAD_SECS` sets the duration (default 10 s, which is what
//! `scripts/test.sh` runs; the full test is `MCDS_LOAD_SECS=60`).

mod common;

use std::collections::{BTreeMap, BTreeSet};

use mcds_eventlog::Cursor;
use mcds_stress::{MIXED_RATE_LIMIT, Mixed, MixedReport};
use mcds_testkit::{ServerOptions, ServerPool};

use common::run_workers;

#[test]
fn eight_processes_mixed_load_on_a_pool_of_3() {
    let secs: u64 = std::env::var("MCDS_LOAD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    assert!((1..=600).contains(&secs), "MCDS_LOAD_SECS must be 1 to 600");
    let pool = ServerPool::start(3, ServerOptions::default().memory_mb(256));
    let servers = pool.servers_arg();
    let started = std::time::Instant::now();
    let reports: Vec<MixedReport> =
        run_workers(8, &[&servers, "mixed", "load", "{id}", &secs.to_string()])
            .into_iter()
            .map(|line| {
                MixedReport::parse(&line).unwrap_or_else(|| panic!("bad worker line {line:?}"))
            })
            .collect();
    let elapsed = started.elapsed();

    let m = Mixed::new(mcds_stress::connect(&servers).unwrap(), "load").unwrap();
    let sum = |f: fn(&MixedReport) -> u64| reports.iter().map(f).sum::<u64>();

    // Counter: not one increment lost or doubled.
    let increments = sum(|r| r.increments);
    assert_eq!(m.counter.get().unwrap(), increments, "lost increments");

    // Lock: never two holders.
    assert_eq!(sum(|r| r.overlaps), 0, "overlapping lock holders");
    assert_eq!(sum(|r| r.lost), 0, "leases lost under load");

    // Set: equal to the model.
    let mut model = BTreeSet::new();
    for r in &reports {
        for i in (0..r.iterations).filter(|i| i % 3 != 0) {
            model.insert(format!("{}:{i}", r.id).into_bytes());
        }
    }
    let members: Vec<Vec<u8>> = m.set.members().unwrap();
    let got: BTreeSet<Vec<u8>> = members.iter().cloned().collect();
    assert_eq!(got.len(), members.len(), "a member listed twice");
    assert!(
        got == model,
        "set differs from the model: {} members, model {}",
        got.len(),
        model.len()
    );

    // Event log: every event (all are within capacity) exactly once.
    let (events, _) = m.log.since(&Cursor::start()).unwrap();
    let mut seen: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for e in &events {
        *seen.entry(e.payload.clone()).or_insert(0) += 1;
    }
    let expected_events = sum(|r| r.events);
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "events seen more than once: {}",
        twice.len()
    );
    for r in &reports {
        for n in 0..r.events {
            assert!(
                seen.contains_key(format!("{}:{n}", r.id).as_bytes()),
                "event {}:{n} missing",
                r.id
            );
        }
    }
    assert_eq!(events.len() as u64, expected_events);

    // Rate limiter: no window allowed more than the limit.
    let mut per_window: BTreeMap<u64, u64> = BTreeMap::new();
    for r in &reports {
        for &(w, n) in &r.allowed {
            *per_window.entry(w).or_insert(0) += n;
        }
    }
    let busiest = per_window.values().copied().max().unwrap_or(0);
    assert!(busiest <= MIXED_RATE_LIMIT, "a window allowed {busiest}");

    println!(
        "load: 8 processes x {secs} s ({:.1} s wall) on a pool of 3: {} iterations; \
         counter {increments} increments (0 lost), lock {} rounds (0 overlaps), \
         set {} adds + {} removes ({} members = model), {} events (all present once), \
         rate limiter {} checks (busiest window {busiest} of {MIXED_RATE_LIMIT} allowed)",
        elapsed.as_secs_f64(),
        sum(|r| r.iterations),
        sum(|r| r.lock_rounds),
        sum(|r| r.iterations),
        sum(|r| r.iterations.div_ceil(3)),
        got.len(),
        expected_events,
        sum(|r| r.rate_checks),
    );
}
