//! The fenced lock under faults, checked from histories (see
//! `mcds_stress::history`): 4 worker processes acquire, extend and release one
//! lock with fencing tokens while its server is, in a loop, killed and
//! restarted twice in quick succession (60 to 240 ms apart), frozen with
//! SIGSTOP for longer than the TTL, and flooded until it evicts. `MCDS_HISTORY_SECS` sets the length (30 s by default).

use std::time::{Duration, Instant};

use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions};

mod common;

const WORKERS: usize = 4;

fn secs() -> u64 {
    std::env::var("MCDS_HISTORY_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

/// Flood until memcached has evicted at least `target` more items.
fn flood(server: &MemcachedServer, store: &MemcachedStore, start: &mut u64, target: u64) {
    let before = server.stat("evictions");
    while server.stat("evictions") < before + target {
        mcds_stress::flood(store, *start, 20_000);
        *start += 20_000;
    }
}

#[test]
fn fenced_lock_history_under_restarts_pauses_and_eviction() {
    let secs = secs();
    let mut server = MemcachedServer::start(ServerOptions::default().memory_mb(2));
    let resource = MemcachedServer::start_default();
    let (addr, resource_addr) = (server.addr(), resource.addr());
    let workers = {
        let (addr, resource_addr) = (addr.clone(), resource_addr.clone());
        std::thread::spawn(move || {
            common::run_workers(
                WORKERS,
                &[
                    &addr,
                    "history",
                    "h",
                    "{id}",
                    &secs.to_string(),
                    &resource_addr,
                ],
            )
        })
    };
    let (mut restarts, mut pauses, mut floods, mut evictions) = (0, 0, 0, 0);
    let mut flooded = 0;
    let end = Instant::now() + Duration::from_secs(secs);
    let pause_for = mcds_stress::history::TTL * 2 + Duration::from_millis(500);
    let calm = Duration::from_millis(1000);
    let mut round = 4; // the first fault is a restart
    while Instant::now() + calm < end {
        std::thread::sleep(calm);
        round += 1;
        // Restarts are what CAS ids get wrong: three rounds in five.
        match [0, 0, 1, 0, 2][round % 5] {
            0 => {
                // Two restarts close together: a lock taken just after the
                // first (with one of the first CAS ids of that incarnation)
                // is still held at the second, after which the next holder
                // gets the same low CAS id from the new incarnation.
                server.restart();
                std::thread::sleep(Duration::from_millis(60 + 60 * (restarts % 4)));
                server.restart();
                restarts += 2;
            }
            1 => {
                server.pause();
                std::thread::sleep(pause_for);
                server.resume();
                pauses += 1;
            }
            _ => {
                // flood
                let flooder = MemcachedStore::connect(&addr).unwrap();
                let before = server.stat("evictions");
                flood(&server, &flooder, &mut flooded, 60_000);
                evictions += server.stat("evictions") - before;
                floods += 1;
            }
        }
    }
    let lines = workers.join().unwrap();
    let history = lines.join("\n");
    let v = mcds_stress::history::check(&history);
    println!(
        "history: {WORKERS} processes x {secs} s; faults: {restarts} restarts, {pauses} pauses of {pause_for:?} (TTL {:?}), {floods} floods ({evictions} evictions); {}",
        mcds_stress::history::TTL,
        v.summary()
    );
    assert!(restarts > 0 && pauses > 0 && floods > 0);
    v.assert_sound();
}
