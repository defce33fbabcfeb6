//! The quorum lock under faults, checked from histories (the checker of
//! `mcds_stress::history`, as for the single-server lock): 4 worker
//! processes acquire, extend and release one fenced lock on a quorum of 3
//! (then 5) memcached servers, their holders now and then pausing past
//! the lease, while a random minority of the servers is, in a loop,
//! killed and restarted twice in quick succession (fence counters lost
//! and re-created within milliseconds), frozen with SIGSTOP past the
//! lease, or flooded until it evicts. 0 overlaps, 0 token-order
//! violations and 0 false releases, or the test fails.
//! `MCDS_HISTORY_SECS` sets each run's length (20 s by default).

use std::time::{Duration, Instant};

use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions};
use rand::RngExt;
use rand::seq::SliceRandom;

mod common;

const WORKERS: usize = 4;

fn secs() -> u64 {
    std::env::var("MCDS_HISTORY_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn history_under_minority_faults(n: usize) {
    let secs = secs();
    let mut rng = mcds_testkit::seed::rng(&format!("quorum history of {n}"));
    let mut servers: Vec<MemcachedServer> = (0..n)
        .map(|_| MemcachedServer::start(ServerOptions::default().memory_mb(2)))
        .collect();
    let resource = MemcachedServer::start_default();
    let addrs: Vec<String> = servers.iter().map(MemcachedServer::addr).collect();
    let quorum = format!("quorum:{}", addrs.join(","));
    let resource_addr = resource.addr();
    let workers = {
        let (quorum, resource_addr) = (quorum.clone(), resource_addr.clone());
        std::thread::spawn(move || {
            common::run_workers(
                WORKERS,
                &[
                    &quorum,
                    "history",
                    "q",
                    "{id}",
                    &secs.to_string(),
                    &resource_addr,
                ],
            )
        })
    };
    let minority = n - (n / 2 + 1);
    let (mut restarts, mut pauses, mut floods, mut evictions) = (0, 0, 0, 0);
    let mut flooded = 0u64;
    let end = Instant::now() + Duration::from_secs(secs);
    let pause_for = mcds_stress::history::TTL * 2 + Duration::from_millis(500);
    let calm = Duration::from_millis(700);
    let mut round = 0;
    while Instant::now() + calm < end {
        std::thread::sleep(calm);
        round += 1;
        // A random minority: 1 server of 3, 1 or 2 of 5.
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut rng);
        let hit = &order[..rng.random_range(1..=minority)];
        match round % 3 {
            0 => {
                // Each twice, 60 to 240 ms apart: a counter re-created
                // after the first restart is lost again at the second.
                for &i in hit {
                    servers[i].restart();
                }
                std::thread::sleep(Duration::from_millis(rng.random_range(60..=240)));
                for &i in hit {
                    servers[i].restart();
                }
                restarts += 2 * hit.len();
            }
            1 => {
                for &i in hit {
                    servers[i].pause();
                }
                std::thread::sleep(pause_for);
                for &i in hit {
                    servers[i].resume();
                }
                pauses += hit.len();
            }
            _ => {
                for &i in hit {
                    let flooder = MemcachedStore::connect(&addrs[i]).unwrap();
                    let before = servers[i].stat("evictions");
                    while servers[i].stat("evictions") < before + 30_000 {
                        mcds_stress::flood(&flooder, flooded, 20_000);
                        flooded += 20_000;
                    }
                    evictions += servers[i].stat("evictions") - before;
                    floods += 1;
                }
            }
        }
    }
    let lines = workers.join().unwrap();
    let history = lines.join("\n");
    let v = mcds_stress::history::check(&history);
    println!(
        "quorum of {n}: {WORKERS} processes x {secs} s; faults on a random minority: {restarts} restarts, {pauses} pauses of {pause_for:?} (TTL {:?}), {floods} floods ({evictions} evictions); holders paused {:?} in 1 of 8 acquisitions; {}",
        mcds_stress::history::TTL,
        mcds_stress::history::HOLDER_PAUSE,
        v.summary()
    );
    assert!(restarts > 0 && pauses > 0 && floods > 0);
    v.assert_sound();
}

#[test]
fn quorum_of_3_history_under_minority_restarts_pauses_and_eviction() {
    history_under_minority_faults(3);
}

#[test]
fn quorum_of_5_history_under_minority_restarts_pauses_and_eviction() {
    history_under_minority_faults(5);
}
