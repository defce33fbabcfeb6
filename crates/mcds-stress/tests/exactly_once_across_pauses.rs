//! From an adversarial review: event log puts and set adds (text appends and the
//! append/add loop) from threads, blocking and async (`put_async`, `add_async` on
//! mcds's own executor) while the server is
//! frozen and thawed (SIGSTOP/SIGCONT, I/O timeout 100 ms). An
//! acknowledged event is fetched exactly once, an `Ambiguous` one at most
//! once, one that failed otherwise never; likewise for set members.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcds_core::{Error, Store};
use mcds_eventlog::EventLog;
use mcds_memcached::MemcachedStore;
use mcds_set::Set;
use mcds_testkit::MemcachedServer;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Acked,
    Maybe,
    Failed,
}

fn seen<T>(r: &mcds_core::Result<T>) -> Seen {
    match r {
        Ok(_) => Seen::Acked,
        Err(Error::Ambiguous { .. }) => Seen::Maybe,
        Err(_) => Seen::Failed,
    }
}

#[test]
fn log_and_set_writes_across_pauses_are_exactly_once() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .io_timeout(Duration::from_millis(100))
            .down_backoff(Duration::from_millis(5), Duration::from_millis(20))
            .connections_per_server(2)
            .connect([server.addr()])
            .unwrap(),
    );
    let log = EventLog::new(Arc::clone(&store), "rv4", Duration::from_secs(60), 10).unwrap();
    let sets: Vec<Set> = (0..2)
        .map(|i| Set::new(Arc::clone(&store), &format!("rv4-{i}")).unwrap())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let results = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for t in 0..4 {
            let (log, sets, stop) = (&log, &sets, &stop);
            handles.push(scope.spawn(move || {
                let mut out: Vec<(bool, usize, String, Seen)> = Vec::new();
                let mut i = 0usize;
                while !stop.load(Ordering::SeqCst) {
                    let payload = format!("{t}.{i}");
                    let r = if t % 2 == 0 {
                        log.put(payload.as_bytes()).map(drop)
                    } else {
                        mcds_core::block_on(log.put_async(payload.as_bytes())).map(drop)
                    };
                    out.push((true, 0, payload.clone(), seen(&r)));
                    let set = &sets[i % 2];
                    let r = if t % 2 == 0 {
                        set.add(&[payload.as_str()])
                    } else {
                        mcds_core::block_on(set.add_async(&[payload.as_str()]))
                    };
                    out.push((false, i % 2, payload, seen(&r)));
                    i += 1;
                }
                out
            }));
        }
        for _ in 0..8 {
            std::thread::sleep(Duration::from_millis(100));
            server.pause();
            std::thread::sleep(Duration::from_millis(250));
            server.resume();
        }
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::SeqCst);
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_millis(200));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut events: HashMap<String, usize> = HashMap::new();
    for e in log
        .fetch(started_ms.saturating_sub(1000), now_ms + 1000)
        .unwrap()
    {
        *events
            .entry(String::from_utf8(e.payload).unwrap())
            .or_default() += 1;
    }
    let members: Vec<std::collections::HashSet<String>> = sets
        .iter()
        .map(|s| s.members_utf8().unwrap().into_iter().collect())
        .collect();
    let mut wrong = Vec::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (is_log, set, payload, outcome) in &results {
        *counts
            .entry(format!(
                "{} {outcome:?}",
                if *is_log { "put" } else { "add" }
            ))
            .or_default() += 1;
        let n = if *is_log {
            events.get(payload).copied().unwrap_or(0)
        } else {
            usize::from(members[*set].contains(payload))
        };
        let ok = match outcome {
            Seen::Acked => n == 1,
            Seen::Maybe => n <= 1,
            Seen::Failed => n == 0,
        };
        if !ok {
            wrong.push(format!(
                "{} {payload}: {outcome:?}, present {n} times",
                if *is_log { "put" } else { "add" }
            ));
        }
    }
    let puts: std::collections::HashSet<&str> = results
        .iter()
        .filter(|r| r.0)
        .map(|r| r.2.as_str())
        .collect();
    for (payload, n) in &events {
        if !puts.contains(payload.as_str()) {
            wrong.push(format!("event {payload:?} ({n} times) nobody put"));
        }
    }
    println!(
        "{} writes: {counts:?}; {} events fetched",
        results.len(),
        events.values().sum::<usize>()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}
