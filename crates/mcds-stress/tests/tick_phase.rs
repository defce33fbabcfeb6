//! memcached's seconds counter against the lock's lease, found by an
//! adversarial review: a short server pause (well under the lock's TTL, not
//! overlapping any lock operation) moves memcached's tick phase; when the
//! delayed tick lands past a whole second, the counter jumps by 2, and a
//! lock item written with TTL + 1 s from a sample taken just before a tick
//! expired before the holder's lease ended: a second client was granted it
//! (2 or 3 rounds of 3 on 1.6.18). The lock now writes TTL + 2 s.
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcds_core::{Key, Store};
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// The fraction of the current second of the monotonic clock, which is
/// where memcached's ticks fall: it counts whole seconds of
/// `CLOCK_MONOTONIC` from its start.
fn mono_frac_now() -> f64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_nsec as f64 / 1e9
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// Poll `stats` and record (instant the request was sent, its monotonic
/// fraction of a second) at each change of the server's `time`.
fn monitor(addr: String, ticks: Arc<Mutex<Vec<(Instant, f64)>>>, until: Instant) {
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut last = 0u64;
    while Instant::now() < until {
        let (sent, frac) = (Instant::now(), mono_frac_now());
        w.write_all(b"stats\r\n").unwrap();
        let mut time = 0;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).is_err() {
                return;
            }
            if line.starts_with("END") {
                break;
            }
            if let Some(v) = line.strip_prefix("STAT time ") {
                time = v.trim().parse().unwrap();
            }
        }
        if time != last {
            if last != 0 {
                let jump = time - last;
                println!(
                    "tick at mono frac {:.4}: +{jump}{}",
                    frac,
                    if jump > 1 {
                        "   <== WRAP: memcached's clock jumped 2 s"
                    } else {
                        ""
                    }
                );
                ticks.lock().unwrap().push((sent, frac));
            }
            last = time;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
}

#[test]
fn a_short_pause_that_moves_the_tick_phase_never_grants_a_lock_twice() {
    let ttl = Duration::from_secs(3);
    let mut results = Vec::new();
    for round in 0..3 {
        // A tick phase in the middle of the second (so a short pause can
        // move the next tick past a whole second).
        let (server, ticks) = loop {
            let server = MemcachedServer::start_default();
            let ticks = Arc::new(Mutex::new(Vec::new()));
            let (addr, t) = (server.addr(), ticks.clone());
            std::thread::spawn(move || monitor(addr, t, Instant::now() + Duration::from_secs(20)));
            while ticks.lock().unwrap().is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let p = ticks.lock().unwrap()[0].1;
            if (0.3..0.9).contains(&p) {
                break (server, ticks);
            }
            println!("phase {p:.3}: restarting memcached for another phase");
        };
        let b_store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
        b_store.get(&Key::new("warm").unwrap()).unwrap();
        let n = ticks.lock().unwrap().len();
        let (tick, p) = loop {
            if let Some(&tick) = ticks.lock().unwrap().get(n) {
                break tick;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let name = format!("job-{round}");
        // A: a fresh client; its one handshake ~10 ms before the next tick.
        sleep_until(tick + Duration::from_millis(990));
        let a_store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
        let hs = Instant::now();
        a_store.get(&Key::new("hs").unwrap()).unwrap();
        sleep_until(hs + Duration::from_millis(995));
        let lock_a = Lock::new(a_store, &name, ttl).unwrap();
        let t0 = Instant::now();
        let guard = lock_a.try_acquire().unwrap().expect("free");
        // A pause of the server that starts 0.5 s after the grant and ends
        // 20 ms past the next whole second after a due tick (under 1.5 s,
        // inside A's 3 s lease; no lock command is in flight during it).
        sleep_until(tick + Duration::from_millis(2500));
        let resume_at = tick + Duration::from_secs(3) + Duration::from_secs_f64(1.0 - p + 0.02);
        server.pause();
        sleep_until(resume_at);
        server.resume();
        let paused = resume_at - (tick + Duration::from_millis(2500));
        let lock_b = Lock::new(b_store, &name, ttl).unwrap();
        let got_b = loop {
            if let Ok(Some(g)) = lock_b.try_acquire() {
                break (Instant::now(), g);
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let gap = got_b.0 - t0;
        println!(
            "round {round}: tick phase {p:.3}, server paused {:.3} s starting {:.3} s after A's grant; \
             B granted {:.3} s after A's try_acquire began (A's lease {ttl:?}); A still holds: {}",
            paused.as_secs_f64(),
            (tick + Duration::from_millis(2500) - t0).as_secs_f64(),
            gap.as_secs_f64(),
            !guard.is_lost()
        );
        results.push(gap);
        std::mem::forget(guard);
        std::mem::forget(got_b.1);
    }
    let inside = results.iter().filter(|g| **g < ttl).count();
    assert_eq!(
        inside, 0,
        "{inside} of 3 rounds granted B the lock inside A's lease: {results:?}"
    );
}
