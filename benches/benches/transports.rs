//! `Counter::incr` over each way to reach memcached, in one run with
//! interleaved rounds: the meta protocol (mcds-memcached) and the text
//! protocol (mcds-text), each over plain TCP, TLS (`memcached -Z`, verified
//! against a CA made for the run) and a unix socket (`memcached -s`), and
//! the text protocol through twemproxy (nutcracker) in front of the plain
//! server. Each round times a batch of increments on every transport, in
//! an order that rotates from round to round; the table gives each
//! transport's median time per increment, its speed relative to the meta
//! protocol over TCP, and the three comparisons the transports are chosen
//! for: TLS vs plain, unix socket vs TCP, nutcracker vs direct.
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
use mcds_memcached::{MemcachedStore, TlsOptions};
use mcds_testkit::{MemcachedServer, NutcrackerServer, ServerOptions};
use mcds_text::TextStore;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (rounds, per_round) = if is_bench_run() { (15, 2_000) } else { (1, 20) };
    // One memcached reached directly and through nutcracker, one with TLS,
    // one on a unix socket.
    let proxy = NutcrackerServer::start(1, ServerOptions::default());
    let direct = proxy.backends()[0].addr();
    let tls_server = MemcachedServer::start(ServerOptions::default().tls());
    let unix_server = MemcachedServer::start(ServerOptions::default().unix_socket());
    let ca = &tls_server.tls_files().expect("a TLS server").ca;
    let tls = || TlsOptions::new().ca_file(ca);
    let stores: Vec<(&str, Arc<dyn Store>)> = vec![
        (
            "meta, TCP",
            Arc::new(MemcachedStore::connect(&direct).unwrap()),
        ),
        (
            "meta, TLS",
            Arc::new(
                MemcachedStore::builder()
                    .tls(tls())
                    .connect([tls_server.addr()])
                    .unwrap(),
            ),
        ),
        (
            "meta, unix socket",
            Arc::new(MemcachedStore::connect(&unix_server.addr()).unwrap()),
        ),
        ("text, TCP", Arc::new(TextStore::connect(&direct).unwrap())),
        (
            "text, TLS",
            Arc::new(
                TextStore::builder()
                    .tls(tls())
                    .connect([tls_server.addr()])
                    .unwrap(),
            ),
        ),
        (
            "text, unix socket",
            Arc::new(TextStore::connect(&unix_server.addr()).unwrap()),
        ),
        (
            "text, through nutcracker",
            Arc::new(
                TextStore::builder()
                    .behind_proxy(true)
                    .connect([proxy.addr()])
                    .unwrap(),
            ),
        ),
    ];
    let cases: Vec<(&str, Counter)> = stores
        .into_iter()
        .map(|(name, store)| {
            let c =
                Counter::new(store, &format!("bench-{}", name.replace([' ', ','], "-"))).unwrap();
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
        "{:<28} {:>14} {:>22}",
        "transport", "per incr", "speed vs meta, TCP"
    );
    for ((name, _), m) in cases.iter().zip(&medians) {
        println!(
            "{name:<28} {:>11.1} µs {:>21.2}×",
            m / 1000.0,
            medians[0] / m
        );
    }
    let at = |name: &str| medians[cases.iter().position(|(n, _)| *n == name).unwrap()];
    println!("time ratios (a ratio over 1 is slower):");
    for (a, b) in [
        ("meta, TLS", "meta, TCP"),
        ("text, TLS", "text, TCP"),
        ("meta, unix socket", "meta, TCP"),
        ("text, unix socket", "text, TCP"),
        ("text, through nutcracker", "text, TCP"),
    ] {
        println!("  {a} / {b}: {:.2}", at(a) / at(b));
    }
}
