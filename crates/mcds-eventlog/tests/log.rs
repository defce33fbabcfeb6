//! mcds-eventlog on the embedded store (manual clock) and on real memcached.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Clock, CountingStore, Error, Key, ManualClock, MemoryStore, Scope, Store, traffic,
};
use mcds_eventlog::{Cursor, EventLog};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

const EPOCH_MS: u64 = 1_800_000_000_000;

fn memory(chunk: u64, chunks: usize) -> (Arc<dyn Store>, ManualClock, EventLog) {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let log = EventLog::new(scope, "log", Duration::from_secs(chunk), chunks).unwrap();
    (store, clock, log)
}

#[test]
fn round_trips_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let log = EventLog::new(Arc::clone(&store), "rt", Duration::from_secs(60), 10).unwrap();
    log.fetch(0, u64::MAX).unwrap(); // warm the connection
    let (_, first) = traffic::measure(|| log.put(b"first").unwrap());
    let (_, next) = traffic::measure(|| log.put(b"second").unwrap());
    let (events, fetch) = traffic::measure(|| log.fetch(0, u64::MAX).unwrap());
    assert_eq!(events.len(), 2);
    assert!(
        first.round_trips <= 2,
        "first touch of a chunk: {}",
        first.round_trips
    );
    assert_eq!(next.round_trips, 1, "EventLog::put");
    assert_eq!(fetch.round_trips, 1, "EventLog::fetch over every chunk");
    assert_eq!(fetch.commands, 10, "one mg per chunk, pipelined");
    println!(
        "event log round trips on memcached: put {} (first touch {}), fetch {} ({} keys)",
        next.round_trips, first.round_trips, fetch.round_trips, fetch.commands
    );
}

#[test]
fn eight_writers_every_event_exactly_once_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let log = EventLog::new(Arc::clone(&store), "busy", Duration::from_secs(5), 13).unwrap();
    std::thread::scope(|s| {
        for t in 0..8 {
            let log = &log;
            s.spawn(move || {
                for i in 0..500 {
                    log.put(format!("w{t}:{i}").as_bytes()).unwrap();
                }
            });
        }
    });
    let events = log.fetch(0, u64::MAX).unwrap();
    let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    for e in &events {
        *seen.entry(e.payload.clone()).or_default() += 1;
    }
    assert_eq!(seen.len(), 4000, "every event came back");
    assert!(seen.values().all(|&n| n == 1), "each exactly once");
    assert!(
        events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms),
        "time order"
    );
    println!(
        "event log, 8 writers x 500 on memcached: {} events, each once",
        events.len()
    );
}

#[test]
fn fetch_returns_exactly_the_range_within_capacity() {
    // 10 s chunks, 7 chunks: 60 s of capacity.
    let (_, clock, log) = memory(10, 7);
    for s in 0..100u64 {
        clock.set_ms(EPOCH_MS + s * 1000 + 500);
        log.put(format!("{s}").as_bytes()).unwrap();
    }
    let now = clock.now_ms(); // 99.5 s
    let all = log.fetch(0, u64::MAX).unwrap();
    let secs: Vec<u64> = all.iter().map(|e| (e.at_ms - EPOCH_MS) / 1000).collect();
    // now is 99.5 s: the event at 39.5 s is exactly 60 s old, still inside.
    assert_eq!(secs, (39..100).collect::<Vec<_>>(), "exactly the last 60 s");
    assert!(all.iter().all(|e| e.at_ms >= now - 60_000));
    // Inclusive bounds, to the millisecond.
    let range = log.fetch(EPOCH_MS + 50_500, EPOCH_MS + 52_500).unwrap();
    assert_eq!(
        range.iter().map(|e| e.payload.clone()).collect::<Vec<_>>(),
        [b"50", b"51", b"52"]
    );
    assert!(
        log.fetch(EPOCH_MS + 50_501, EPOCH_MS + 50_999)
            .unwrap()
            .is_empty()
    );
    // Outside the window: refused rather than silently lost.
    assert!(matches!(
        log.put_at(EPOCH_MS, b"too old"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        log.put_at(now + 60_000, b"future"),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn polling_with_since_sees_each_event_once() {
    let (_, clock, log) = memory(10, 7);
    let mut cursor = Cursor::start();
    let mut seen = Vec::new();
    for step in 0..50u64 {
        // Several events per millisecond, and polls in between.
        clock.set_ms(EPOCH_MS + step * 300);
        for k in 0..(step % 3) {
            log.put(format!("{step}.{k}").as_bytes()).unwrap();
        }
        if step % 4 == 0 {
            let (new, next) = log.since(&cursor).unwrap();
            seen.extend(new.into_iter().map(|e| e.payload));
            cursor = next;
        }
    }
    let (new, _) = log.since(&cursor).unwrap();
    seen.extend(new.into_iter().map(|e| e.payload));
    let want: Vec<Vec<u8>> = (0..50u64)
        .flat_map(|s| (0..s % 3).map(move |k| format!("{s}.{k}").into_bytes()))
        .collect();
    assert_eq!(seen, want);
}

#[test]
fn garbage_in_a_chunk_is_skipped_and_counted() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let log = EventLog::new(Arc::clone(&store), "g", Duration::from_secs(3600), 3).unwrap();
    let event = log.put(b"good").unwrap();
    let w = event.at_ms / 3_600_000;
    let key = format!("log:g:{w}");
    store
        .append(&Key::new(&key).unwrap(), b"\xe7garbage that is not a frame")
        .unwrap();
    log.put(b"good again").unwrap();
    let (events, damaged) = log.fetch_checked(0, u64::MAX).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(damaged, 28);
    // A value of pure garbage: nothing returned, nothing panics.
    server.raw_set(&key, &[0xe7; 1000]);
    let (events, damaged) = log.fetch_checked(0, u64::MAX).unwrap();
    assert!(events.is_empty());
    assert_eq!(damaged, 1000);
}

#[test]
fn oversized_events_are_refused() {
    let (_, _, log) = memory(10, 3);
    let err = log.put(&vec![b'x'; 2 * 1024 * 1024]).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert!(matches!(
        EventLog::new(
            Arc::new(MemoryStore::new()),
            "x",
            Duration::from_millis(500),
            3
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        EventLog::new(Arc::new(MemoryStore::new()), "x", Duration::from_secs(1), 1),
        Err(Error::InvalidArgument(_))
    ));
}
