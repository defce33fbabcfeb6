//! `Counter::incr` over each way to reach memcached, in one run with
//! interleaved rounds: the meta protocol (mcds-memcached), the text
//! protocol direct (mcds-text), and the text protocol through twemproxy
//! (nutcracker) in front of the same single memcached. Each round times a
//! batch of increments on every transport, in an order that rotates from
//! round to round; the table gives each transport's median time per
//! increment and its ratio to the meta protocol's.
//!
//! TLS and unix sockets are not implemented yet (issue 18): their rows say
//! so instead of a figure.
//!
//! ```text
//! cargo bench -p mcds-benches --bench transports   # a measuring run
//! cargo test  -p mcds-benches --benches            # smoke: one small round
//! ```

use std::sync::Arc;
use std::time::Instant;

use mcds_benches::is_bench_run;
use mcds_core::Store;
use mcds_counter::Counter;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{NutcrackerServer, ServerOptions};
use mcds_text::TextStore;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (rounds, per_round) = if is_bench_run() { (15, 2_000) } else { (1, 20) };
    // One memcached, reached directly and through nutcracker.
    let proxy = NutcrackerServer::start(1, ServerOptions::default());
    let direct = proxy.backends()[0].addr();
    let meta: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&direct).unwrap());
    let text: Arc<dyn Store> = Arc::new(TextStore::connect(&direct).unwrap());
    let proxied: Arc<dyn Store> = Arc::new(
        TextStore::builder()
            .behind_proxy(true)
            .connect([proxy.addr()])
            .unwrap(),
    );
    let cases: Vec<(&str, Counter)> = [
        ("meta protocol, direct", meta),
        ("text protocol, direct", text),
        ("text protocol, through nutcracker", proxied),
    ]
    .into_iter()
    .map(|(name, store)| {
        let c = Counter::new(store, &format!("bench-{}", name.len())).unwrap();
        c.incr(1).unwrap(); // connected, and the counter exists
        (name, c)
    })
    .collect();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for round in 0..rounds {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            let started = Instant::now();
            for _ in 0..per_round {
                cases[i].1.incr(1).unwrap();
            }
            samples[i].push(started.elapsed().as_nanos() as f64 / per_round as f64);
        }
    }
    let medians: Vec<f64> = samples.into_iter().map(median).collect();
    println!(
        "Counter::incr by transport: {rounds} interleaved rounds of {per_round} increments, medians"
    );
    println!(
        "{:<40} {:>14} {:>18}",
        "transport", "per incr", "speed vs meta"
    );
    for ((name, _), m) in cases.iter().zip(&medians) {
        println!(
            "{name:<40} {:>11.1} µs {:>17.2}×",
            m / 1000.0,
            medians[0] / m
        );
    }
    for name in ["TLS (memcached -Z)", "unix socket (memcached -s)"] {
        println!("{name:<40} {:>14} {:>18}", "—", "not implemented yet");
    }
}
