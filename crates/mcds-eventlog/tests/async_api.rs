//! The async API of `EventLog`, on the embedded store and on real
//! memcached: every `_async` method runs in a `tokio::spawn`ed task on a
//! multi-thread runtime (so its future is `Send`), and 16 tasks putting at
//! once get every acknowledged event back exactly once, by `fetch_async`,
//! `count_async` and a concurrent `since_async` poller.

use mcds_testkit::runtime;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcds_core::{Clock, ManualClock, MemoryStore, Scope, Store};
use mcds_eventlog::{Cursor, Event, EventLog};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// A multiple of every chunk length used here.
const EPOCH_MS: u64 = 1_800_000_000_000;
const TASKS: usize = 16;
const PER_TASK: usize = 200;

/// The embedded store on a manual clock at `EPOCH_MS`, and a scope on both.
fn memory() -> (ManualClock, Scope) {
    let (_, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS);
    (clock, scope)
}

/// A scope on `store` with a manual clock standing at the real time,
/// rounded down to a minute (a chunk starts there).
fn memcached_scope(store: Arc<dyn Store>) -> (ManualClock, Scope) {
    let clock = ManualClock::starting_now();
    clock.set_ms(clock.now_ms() / 60_000 * 60_000);
    let scope = Scope::new(store).with_clock(Arc::new(clock.clone()));
    (clock, scope)
}

fn payloads(events: &[Event]) -> Vec<&[u8]> {
    events.iter().map(|e| e.payload.as_slice()).collect()
}

/// Every `_async` method once, each result checked, in a spawned task.
fn every_async_method(clock: ManualClock, scope: Scope) {
    let log = EventLog::new(&scope, "async-all", Duration::from_secs(10), 7).unwrap();
    let t0 = clock.now_ms();
    assert_eq!(t0 % 10_000, 0, "the test starts at a chunk's start");
    runtime().block_on(async move {
        tokio::spawn(async move {
            // put_async, put_at_async: two events in the first chunk.
            let a = log.put_async(b"a").await.unwrap();
            assert_eq!((a.at_ms, a.payload.as_slice()), (t0, &b"a"[..]));
            clock.advance(Duration::from_secs(3));
            log.put_at_async(t0 + 2_000, b"b").await.unwrap();
            assert!(
                log.put_at_async(t0 + 60_000, b"future").await.is_err(),
                "after the current chunk: refused"
            );

            // fetch_async, fetch_checked_async, fetch_rev_async,
            // latest_async, count_async.
            let all = log.fetch_async(0, u64::MAX).await.unwrap();
            assert_eq!(payloads(&all), [b"a", b"b"]);
            assert_eq!(all[1].at_ms, t0 + 2_000);
            let (checked, damaged) = log.fetch_checked_async(0, u64::MAX).await.unwrap();
            assert_eq!((checked, damaged), (all.clone(), 0));
            let rev = log.fetch_rev_async(0, u64::MAX).await.unwrap();
            assert_eq!(payloads(&rev), [b"b", b"a"]);
            let latest = log.latest_async(1).await.unwrap();
            assert_eq!(payloads(&latest), [b"b"]);
            assert_eq!(log.count_async(0, u64::MAX).await.unwrap(), 2);
            assert_eq!(log.count_async(t0 + 1, t0 + 2_000).await.unwrap(), 1);

            // since_async: everything, then only what came after.
            let (seen, cursor) = log.since_async(&Cursor::start()).await.unwrap();
            assert_eq!(payloads(&seen), [b"a", b"b"]);
            clock.set_ms(t0 + 12_000); // the second chunk
            log.put_async(b"c").await.unwrap();
            let (new, next) = log.since_async(&cursor).await.unwrap();
            assert_eq!(payloads(&new), [b"c"]);
            let (none, _) = log.since_async(&next).await.unwrap();
            assert!(none.is_empty());

            // trim_async: the first chunk ends at t0 + 10 s; its two
            // events are in two slices, one item each.
            assert_eq!(log.trim_async(t0 + 10_000).await.unwrap(), 2);
            assert_eq!(log.count_async(0, u64::MAX).await.unwrap(), 1);
            // The blocking API reads the same store.
            assert_eq!(payloads(&log.fetch(0, u64::MAX).unwrap()), [b"c"]);
        })
        .await
        .unwrap();
    });
}

#[test]
fn every_async_method_on_memory() {
    let (clock, scope) = memory();
    every_async_method(clock, scope);
}

#[test]
fn every_async_method_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (clock, scope) = memcached_scope(store);
    every_async_method(clock, scope);
}

/// 16 tasks put 200 events each with `put_async` while a task polls with
/// `since_async`: every acknowledged event is fetched back exactly once,
/// `count_async` agrees, and the poller saw each exactly once too.
fn sixteen_tasks_every_event_once(scope: Scope, label: &str) {
    // The clock stands still: every event lands in one chunk at one ms, so
    // the poller's cursor (a count of same-ms events, in append order) is
    // exact under concurrent appends.
    let log = EventLog::new(&scope, "async-busy", Duration::from_secs(10), 7).unwrap();
    let rt = runtime();
    let (acknowledged, polled) = rt.block_on(async {
        let writing = Arc::new(AtomicBool::new(true));
        let poller = {
            let (log, writing) = (log.clone(), Arc::clone(&writing));
            tokio::spawn(async move {
                let mut cursor = Cursor::start();
                let mut seen = Vec::new();
                loop {
                    // Read the flag first: a poll after it turned false
                    // sees every put.
                    let last = !writing.load(Ordering::SeqCst);
                    let (new, next) = log.since_async(&cursor).await.unwrap();
                    seen.extend(new.into_iter().map(|e| e.payload));
                    cursor = next;
                    if last {
                        return seen;
                    }
                    tokio::task::yield_now().await;
                }
            })
        };
        let writers: Vec<_> = (0..TASKS)
            .map(|t| {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut done = Vec::with_capacity(PER_TASK);
                    for i in 0..PER_TASK {
                        let payload = format!("t{t}:{i}").into_bytes();
                        let event = log.put_async(&payload).await.unwrap();
                        assert_eq!(event.payload, payload);
                        done.push(payload);
                    }
                    done
                })
            })
            .collect();
        let mut acknowledged = Vec::new();
        for w in writers {
            acknowledged.extend(w.await.unwrap());
        }
        writing.store(false, Ordering::SeqCst);
        (acknowledged, poller.await.unwrap())
    });
    assert_eq!(acknowledged.len(), TASKS * PER_TASK);
    let (events, count) = rt.block_on(async {
        let log = log.clone();
        tokio::spawn(async move {
            (
                log.fetch_async(0, u64::MAX).await.unwrap(),
                log.count_async(0, u64::MAX).await.unwrap(),
            )
        })
        .await
        .unwrap()
    });
    let tally = |payloads: &mut dyn Iterator<Item = Vec<u8>>| {
        let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for p in payloads {
            *seen.entry(p).or_default() += 1;
        }
        seen
    };
    let want = tally(&mut acknowledged.into_iter());
    assert_eq!(want.len(), TASKS * PER_TASK, "payloads are distinct");
    let fetched = tally(&mut events.into_iter().map(|e| e.payload));
    assert_eq!(fetched, want, "{label}: fetch_async, each event once");
    assert_eq!(count, (TASKS * PER_TASK) as u64, "{label}: count_async");
    let polled_n = polled.len();
    assert_eq!(
        tally(&mut polled.into_iter()),
        want,
        "{label}: the since_async poller, each event once"
    );
    println!(
        "{label}: {TASKS} tasks x {PER_TASK} put_async: {} fetched, {count} counted, {polled_n} polled, each once",
        fetched.len()
    );
}

#[test]
fn sixteen_tasks_every_event_once_on_memory() {
    let (_, scope) = memory();
    sixteen_tasks_every_event_once(scope, "memory");
}

#[test]
fn sixteen_tasks_every_event_once_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let (_, scope) = memcached_scope(store);
    sixteen_tasks_every_event_once(scope, "memcached");
}

#[test]
fn the_embedded_store_needs_no_runtime_for_the_async_api() {
    // The async API's futures run on any executor; with the embedded store
    // (whose calls never wait) the crate's own `block_on` suffices.
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let log = EventLog::new(store, "no-runtime", Duration::from_secs(10), 3).unwrap();
    mcds_core::block_on(async {
        log.put_async(b"x").await.unwrap();
        assert_eq!(log.count_async(0, u64::MAX).await.unwrap(), 1);
    });
}
