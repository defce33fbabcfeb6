//! On `memcached -M`, an append the server has no memory for is answered
//! as one past the item limit (`NOT_STORED`). Such a refusal must not be
//! taken for a full piece: a piece "sealed" by fillers that failed for
//! want of memory took appends again once memory came back, after the
//! next piece had events, and `since` returned an event twice and skipped
//! another (an adversarial review, 6 of 6 runs).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Clock, Error, Store, SystemClock};
use mcds_eventlog::{Cursor, EventLog};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions};

#[test]
fn a_piece_refused_for_memory_stays_open_and_since_returns_each_event_once() {
    let server = MemcachedServer::start(ServerOptions::default().memory_mb(8).no_evict());
    let connect =
        || -> Arc<dyn Store> { Arc::new(MemcachedStore::connect(&server.addr()).unwrap()) };
    let (store_a, store_b, store_p) = (connect(), connect(), connect());
    let log = |store: &Arc<dyn Store>| {
        EventLog::new(Arc::clone(store), "oom", Duration::from_secs(60), 3).unwrap()
    };
    let (log_a, log_b, poller) = (log(&store_a), log(&store_b), log(&store_p));
    // Every event at one millisecond: `since` counts them in append order.
    let t = SystemClock.now_ms();
    let mut acknowledged = vec![format!("a0:{}", "p".repeat(100)), "b0".to_string()];
    log_a.put_at(t, acknowledged[0].as_bytes()).unwrap();
    log_b.put_at(t, b"b0").unwrap(); // B's handle writes to piece 0 from now on
    let mut seen: Vec<String> = Vec::new();
    let mut cursor = Cursor::after(t - 1);
    let poll = |cursor: &mut Cursor, seen: &mut Vec<String>| {
        let (events, next) = poller.since(cursor).unwrap();
        seen.extend(
            events
                .iter()
                .map(|e| String::from_utf8(e.payload.clone()).unwrap()),
        );
        *cursor = next;
    };
    poll(&mut cursor, &mut seen);
    // Memory full, then a little of it freed: small items fit again, but
    // piece 0 cannot grow into a larger slab class.
    let filled = mcds_testkit::fill_until_out_of_memory(&*store_p);
    let small: Vec<_> = filled
        .iter()
        .filter(|k| {
            let text = std::str::from_utf8(k.as_bytes()).unwrap();
            text.rsplit(':').next().unwrap().parse::<usize>().unwrap() < 60
        })
        .take(2000)
        .collect();
    for k in &small {
        store_p.delete(k).unwrap();
    }
    let mut refused = 0;
    for i in 0..20 {
        let payload = format!("A{i}");
        match log_a.put_at(t, payload.as_bytes()) {
            Ok(_) => acknowledged.push(payload),
            Err(Error::OutOfMemory { .. }) => refused += 1,
            Err(e) => panic!("a put on a full -M server: {e}"),
        }
    }
    poll(&mut cursor, &mut seen);
    // Memory comes back; B, whose handle still writes to piece 0, puts
    // one more event.
    for k in &filled {
        let _ = store_p.delete(k);
    }
    log_b.put_at(t, b"B-late").unwrap();
    acknowledged.push("B-late".to_string());
    poll(&mut cursor, &mut seen);
    poll(&mut cursor, &mut seen);
    println!(
        "-m 8 -M: {refused} of 20 puts refused for memory; since returned {} events, {} acknowledged",
        seen.len(),
        acknowledged.len()
    );
    let mut twice = BTreeMap::new();
    for e in &seen {
        *twice.entry(e.clone()).or_insert(0) += 1;
    }
    twice.retain(|_, n| *n > 1);
    assert!(twice.is_empty(), "since returned events twice: {twice:?}");
    let mut expected = acknowledged.clone();
    let mut got = seen.clone();
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "since returns every acknowledged event once");
    let fetched: Vec<String> = poller
        .fetch(t, t)
        .unwrap()
        .iter()
        .map(|e| String::from_utf8(e.payload.clone()).unwrap())
        .collect();
    assert_eq!(fetched, seen, "since and fetch agree on the order");
}
