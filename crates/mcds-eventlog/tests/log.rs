//! mcds-eventlog on the embedded store (manual clock) and on real memcached.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Clock, CountingStore, Error, Key, ManualClock, MemoryStore, Scope, Store, traffic,
};
use mcds_eventlog::{Cursor, Event, EventLog};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

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
    let now = mcds_core::SystemClock.now_ms();
    let (events, minute) = traffic::measure(|| log.fetch(now - 60_000, now).unwrap());
    assert_eq!(events.len(), 2);
    assert_eq!(first.round_trips, 1, "a slice's first event: one add");
    assert_eq!(next.round_trips, 1, "EventLog::put");
    assert_eq!(minute.round_trips, 1, "EventLog::fetch of the last minute");
    // since: the slices from the cursor's on (250 ms each), 2 keys a
    // slice and 1 a chunk for the layout before slices: about what it
    // returns, not the chunk.
    let cursor = Cursor::after(now - 1_000);
    let ((new, _), since) = traffic::measure(|| log.since(&cursor).unwrap());
    assert_eq!(new.len(), 2);
    assert_eq!(since.round_trips, 1, "EventLog::since");
    // The last second and the second ahead: 8 or 9 slices, and 1 or 2
    // chunks' whole-chunk runs.
    assert!(
        since.commands <= 2 * 11,
        "since of the last second asks for a few slices: {} keys",
        since.commands
    );
    let (_, whole) = traffic::measure(|| log.fetch(0, u64::MAX).unwrap());
    println!(
        "event log round trips on memcached: put {} (first in its slice {}), fetch of the last minute {} ({} keys), since of the last second {} ({} keys), fetch of the whole log (10 chunks of 240 slices) {} ({} keys)",
        next.round_trips,
        first.round_trips,
        minute.round_trips,
        minute.commands,
        since.round_trips,
        since.commands,
        whole.round_trips,
        whole.commands
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
    // Hour chunks are cut into 1024 slices of 3,516 ms.
    let (w, slice) = (event.at_ms / 3_600_000, event.at_ms % 3_600_000 / 3_516);
    let key = format!("log:g:{w}.{slice}.0");
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

/// One step of a random run against the naive model.
#[derive(Clone, Debug)]
enum Step {
    /// Move the clock forward by this many ms.
    Advance(u64),
    /// Put an event this many ms before now (refused when outside the
    /// window).
    Put(u64),
    /// `fetch_rev` from this many ms before now, over this many ms.
    FetchRev(u64, u64),
    /// `latest(n)`.
    Latest(usize),
    /// `count` from this many ms before now, over this many ms.
    Count(u64, u64),
    /// `trim` before now plus this many ms.
    Trim(i64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            3 => (0u64..12_000).prop_map(Step::Advance),
            6 => (0u64..45_000).prop_map(Step::Put),
            1 => (0u64..50_000, 0u64..50_000).prop_map(|(a, b)| Step::FetchRev(a, b)),
            1 => (0usize..30).prop_map(Step::Latest),
            1 => (0u64..50_000, 0u64..50_000).prop_map(|(a, b)| Step::Count(a, b)),
            1 => (-40_000i64..15_000).prop_map(Step::Trim),
        ],
        1..60,
    )
}

/// The naive model: every event put, in put order; visibility and trim
/// computed from the definitions.
struct Model {
    chunk_ms: u64,
    chunks: u64,
    events: Vec<(u64, Vec<u8>)>,
}

impl Model {
    /// What a fetch of `[first, last]` returns at `now`: the events within
    /// capacity (chunk and age) in the range, in time order, same-ms events
    /// in put order.
    fn fetch(&self, now: u64, first: u64, last: u64) -> Vec<Event> {
        let w_now = now / self.chunk_ms;
        let oldest = now.saturating_sub((self.chunks - 1) * self.chunk_ms);
        let mut out: Vec<Event> = self
            .events
            .iter()
            .filter(|(at, _)| at / self.chunk_ms + self.chunks > w_now && *at >= oldest)
            .filter(|(at, _)| (first..=last).contains(at))
            .map(|(at, payload)| Event {
                at_ms: *at,
                payload: payload.clone(),
            })
            .collect();
        out.sort_by_key(|e| e.at_ms);
        out
    }
}

/// Run `steps` on a fresh log in `scope` (its clock is `clock`) and on the
/// model; every read must agree.
fn run_against_model(
    scope: &Scope,
    clock: &ManualClock,
    name: &str,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let log = EventLog::new(scope, name, Duration::from_secs(10), 4).unwrap();
    let mut model = Model {
        chunk_ms: 10_000,
        chunks: 4,
        events: Vec::new(),
    };
    let mut serial = 0u32;
    for step in steps {
        let now = clock.now_ms();
        match *step {
            Step::Advance(ms) => clock.advance(Duration::from_millis(ms)),
            Step::Put(back) => {
                let at = now - back;
                serial += 1;
                let payload = format!("e{serial}").into_bytes();
                let (w, w_now) = (at / model.chunk_ms, now / model.chunk_ms);
                // Within the chunks kept, and not before `now − capacity`,
                // where reads start.
                let capacity = (model.chunks - 1) * model.chunk_ms;
                let fits = w + (model.chunks - 1) >= w_now && back <= capacity;
                let put = log.put_at(at, &payload);
                prop_assert_eq!(put.is_ok(), fits, "put at -{}ms: {:?}", back, put);
                if fits {
                    model.events.push((at, payload));
                }
            }
            Step::FetchRev(back, len) => {
                let first = now.saturating_sub(back);
                let mut want = model.fetch(now, first, first + len);
                want.reverse();
                prop_assert_eq!(log.fetch_rev(first, first + len).unwrap(), want);
            }
            Step::Latest(n) => {
                let mut want = model.fetch(now, 0, u64::MAX);
                want.reverse();
                want.truncate(n);
                prop_assert_eq!(log.latest(n).unwrap(), want);
            }
            Step::Count(back, len) => {
                let first = now.saturating_sub(back);
                let want = model.fetch(now, first, first + len).len() as u64;
                prop_assert_eq!(log.count(first, first + len).unwrap(), want);
            }
            Step::Trim(offset) => {
                let before = now.saturating_add_signed(offset);
                let visible_chunks: std::collections::BTreeSet<u64> = model
                    .fetch(now, 0, u64::MAX)
                    .iter()
                    .map(|e| e.at_ms / model.chunk_ms)
                    .filter(|w| (w + 1) * model.chunk_ms <= before)
                    .collect();
                let deleted = log.trim(before).unwrap();
                // It deletes at least every visible chunk that ends by
                // `before` (and may find older, unreadable ones).
                prop_assert!(
                    deleted >= visible_chunks.len(),
                    "{deleted} < {visible_chunks:?}"
                );
                let chunk_ms = model.chunk_ms;
                model
                    .events
                    .retain(|(at, _)| (at / chunk_ms + 1) * chunk_ms > before);
            }
        }
    }
    // And the whole log, oldest first, at the end.
    let now = clock.now_ms();
    prop_assert_eq!(
        log.fetch(0, u64::MAX).unwrap(),
        model.fetch(now, 0, u64::MAX)
    );
    Ok(())
}

#[test]
fn newest_first_count_and_trim_agree_with_a_naive_model_on_memory() {
    let mut runner = TestRunner::new(mcds_testkit::seed::proptest_config(file!(), 256));
    runner
        .run(&steps(), |steps| {
            let (_, clock, scope) = mcds_testkit::embedded_at(EPOCH_MS + 3_000);
            run_against_model(&scope, &clock, "model", &steps)
        })
        .unwrap();
}

#[test]
fn newest_first_count_and_trim_agree_with_a_naive_model_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let case = std::sync::atomic::AtomicU32::new(0);
    let mut runner = TestRunner::new(mcds_testkit::seed::proptest_config(file!(), 32));
    runner
        .run(&steps(), |steps| {
            // A fresh log per case (the server keeps the old ones' items).
            let case = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let clock = ManualClock::new(EPOCH_MS + 3_000);
            let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
            run_against_model(&scope, &clock, &format!("model{case}"), &steps)
        })
        .unwrap();
}

#[test]
fn newest_first_count_and_trim_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(CountingStore::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
    let clock = ManualClock::new(EPOCH_MS);
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    // 10 s chunks, 10 of them: 90 s of capacity. An event a second for 60 s.
    let log = EventLog::new(&scope, "rev", Duration::from_secs(10), 10).unwrap();
    for s in 0..60u64 {
        clock.set_ms(EPOCH_MS + s * 1000);
        log.put(format!("{s}").as_bytes()).unwrap();
    }
    let payloads = |events: Vec<Event>| -> Vec<String> {
        events
            .into_iter()
            .map(|e| String::from_utf8(e.payload).unwrap())
            .collect()
    };
    let (latest, rt) = traffic::measure(|| log.latest(5).unwrap());
    assert_eq!(payloads(latest), ["59", "58", "57", "56", "55"]);
    assert_eq!(
        (rt.round_trips, rt.commands),
        (1, 2 * 2 * 41),
        "the newest 2 chunks (2 pieces of each of 40 slices and the whole-chunk run)"
    );
    let (latest, rt) = traffic::measure(|| log.latest(25).unwrap());
    assert_eq!(payloads(latest).len(), 25);
    assert_eq!(
        rt.round_trips, 2,
        "2 chunks, then the others within capacity"
    );
    assert_eq!(
        rt.commands,
        2 * (2 * 41 + 7 * 41 + 5),
        "2 pieces of each run: the newest 2 chunks, then the 7 before them and \
         the oldest's whole-chunk run and 4 slices within capacity (from 59 s - 90 s = -31 s)"
    );
    let (all, rt) = traffic::measure(|| log.latest(1000).unwrap());
    assert_eq!(all.len(), 60);
    assert_eq!(rt.round_trips, 2);
    let rev = log.fetch_rev(EPOCH_MS + 10_000, EPOCH_MS + 12_000).unwrap();
    assert_eq!(payloads(rev), ["12", "11", "10"]);
    let (count, rt) = traffic::measure(|| log.count(EPOCH_MS + 5_000, EPOCH_MS + 44_999).unwrap());
    assert_eq!(count, 40);
    // [5 s, 45 s): slices 20..40 of chunk 0, chunks 1-3 whole, slices 0..20
    // of chunk 4, and each chunk's whole-chunk run.
    assert_eq!((rt.round_trips, rt.commands), (1, 2 * (21 + 3 * 41 + 21)));
    // Trim before 25 s: chunks [0, 10) and [10, 20) go; [20, 30) straddles
    // and keeps 20..=24.
    let (deleted, rt) = traffic::measure(|| log.trim(EPOCH_MS + 25_000).unwrap());
    assert_eq!(deleted, 20, "20 events, each in its own slice");
    assert_eq!(rt.round_trips, 1);
    assert_eq!(log.count(0, u64::MAX).unwrap(), 40);
    assert_eq!(
        payloads(log.fetch(0, EPOCH_MS + 21_000).unwrap()),
        ["20", "21"]
    );
    assert_eq!(
        log.trim(EPOCH_MS + 25_000).unwrap(),
        0,
        "nothing left to trim"
    );
    assert_eq!(log.trim(0).unwrap(), 0);
    // Past the current chunk: everything, and new puts start afresh.
    assert_eq!(log.trim(u64::MAX).unwrap(), 40);
    assert_eq!(log.count(0, u64::MAX).unwrap(), 0);
    log.put(b"again").unwrap();
    assert_eq!(payloads(log.latest(10).unwrap()), ["again"]);
    println!(
        "event log on memcached: latest(5) 1 round trip (2 chunks), latest(25) 2 (10 chunks), count 1 (5 chunks), trim 1"
    );
}

#[test]
fn count_skips_damage_like_fetch() {
    let (store, _, log) = memory(10, 3);
    log.put(b"one").unwrap();
    log.put(b"two").unwrap();
    let w = EPOCH_MS / 10_000;
    store
        .append(&Key::new(format!("log:log:{w}.0.0")).unwrap(), b"\xe7torn")
        .unwrap();
    assert_eq!(log.count(0, u64::MAX).unwrap(), 2);
    assert_eq!(log.latest(5).unwrap().len(), 2);
    assert!(log.latest(0).unwrap().is_empty());
}

/// `latest(usize::MAX)` (any n is valid: "everything") gives every event,
/// not a capacity-overflow panic (it sized a vector by n).
#[test]
fn latest_takes_any_n() {
    let (_, _clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    let log = EventLog::new(&scope, "audit-any-n", std::time::Duration::from_secs(10), 7).unwrap();
    log.put(b"a").unwrap();
    assert_eq!(log.latest(usize::MAX).unwrap().len(), 1);
}

/// On a `memcached -M` whose memory is full, a put fails with
/// `OutOfMemory` and every event stored before it is still there. (With
/// meta `ms … MA` appends, memcached deleted the chunk an append could
/// not grow: every earlier event of the chunk was lost.)
#[test]
fn a_full_no_evict_server_refuses_a_put_and_keeps_the_log() {
    let server = MemcachedServer::start(
        mcds_testkit::ServerOptions::default()
            .memory_mb(2)
            .no_evict(),
    );
    let store = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let log = EventLog::new(
        Arc::clone(&store) as Arc<dyn Store>,
        "audit",
        Duration::from_secs(3600),
        4,
    )
    .unwrap();
    let mut kept = Vec::new();
    for i in 0..200 {
        kept.push(log.put(format!("event {i}").as_bytes()).unwrap());
    }
    mcds_testkit::fill_until_out_of_memory(&*store);
    let mut refused = 0;
    for i in 0..20 {
        match log.put(format!("late {i}").as_bytes()) {
            Ok(event) => kept.push(event),
            Err(Error::OutOfMemory { .. }) => refused += 1,
            Err(e) => panic!("a put on a full server: {e}"),
        }
    }
    let all = log.fetch(0, u64::MAX).unwrap();
    println!(
        "full -M server: {refused} of 20 late puts refused; {} of {} stored events fetched",
        all.len(),
        kept.len()
    );
    assert!(refused > 0, "the server was not full");
    assert_eq!(all, kept, "events stored before the failed puts were lost");
}

/// Events worth several items in one slice of a chunk: the slice spreads
/// over pieces (`<w>.<s>.0`, `<w>.<s>.1`, …), and every read returns each
/// event once, in order;
/// `trim` deletes every piece. An event larger than an item is refused
/// whole; one that fills a fresh item goes in.
fn pieces(store: Arc<dyn Store>, clock: Option<&ManualClock>, payload: usize) {
    let scope = match clock {
        Some(clock) => Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone())),
        None => Scope::new(Arc::clone(&store)),
    };
    let log = EventLog::new(scope, "pieces", Duration::from_secs(3600), 3).unwrap();
    let limit = store.item_size_limit();
    let n = 5 * limit / (payload + 21);
    let mut put = Vec::new();
    for i in 0..n {
        let body = format!("{i:0>payload$}");
        put.push(log.put(body.as_bytes()).unwrap());
    }
    let got = log.fetch(0, u64::MAX).unwrap();
    assert_eq!(got.len(), n, "every event of {n}, once");
    let mut sorted: Vec<_> = got.iter().map(|e| e.payload.clone()).collect();
    sorted.sort();
    let mut want: Vec<_> = put.iter().map(|e| e.payload.clone()).collect();
    want.sort();
    assert_eq!(sorted, want);
    assert!(
        got.windows(2).all(|w| w[0].at_ms <= w[1].at_ms),
        "time order"
    );
    assert_eq!(log.count(0, u64::MAX).unwrap(), n as u64);
    let streamed: Vec<_> = log
        .fetch_iter(0, u64::MAX, 1)
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(streamed == got, "fetch_iter reads the pieces as fetch does");
    let (since, _) = log.since(&Cursor::start()).unwrap();
    assert_eq!(since.len(), n);
    // An event no item can hold is refused whole; one that fills a fresh
    // item goes in (into a new piece).
    let too_big = vec![b'x'; limit];
    assert!(matches!(
        log.put(&too_big),
        Err(Error::ValueTooLarge { .. })
    ));
    assert_eq!(
        log.count(0, u64::MAX).unwrap(),
        n as u64,
        "nothing of it landed"
    );
    let fits = vec![b'y'; limit - 200];
    log.put(&fits).unwrap();
    assert_eq!(log.count(0, u64::MAX).unwrap(), n as u64 + 1);
    if let Some(clock) = clock {
        clock.advance(Duration::from_secs(3600));
    } else {
        return;
    }
    let deleted = log.trim(u64::MAX).unwrap();
    assert!(deleted >= 5, "every piece deleted: {deleted}");
    assert_eq!(log.count(0, u64::MAX).unwrap(), 0);
}

#[test]
fn a_chunk_past_the_item_limit_spreads_over_pieces_on_memory() {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .item_size_limit(4096)
            .build(),
    );
    pieces(store, Some(&clock), 40);
}

#[test]
fn a_chunk_past_the_item_limit_spreads_over_pieces_on_memcached() {
    let server = MemcachedServer::start_default();
    pieces(
        Arc::new(MemcachedStore::connect(&server.addr()).unwrap()),
        None,
        1000,
    );
}

/// `fetch_iter` over many chunks, a page of 1, 2 or all of them per batch,
/// returns what `fetch` does for any range: same events, same order.
#[test]
fn fetch_iter_streams_what_fetch_returns() {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    let scope = Scope::new(store).with_clock(Arc::new(clock.clone()));
    let log = EventLog::new(scope, "stream", Duration::from_secs(10), 7).unwrap();
    for i in 0..140u64 {
        log.put(format!("{i}").as_bytes()).unwrap();
        if i % 3 != 0 {
            clock.advance(Duration::from_millis(500));
        }
    }
    let now = EPOCH_MS + 47_000;
    for (first, last) in [
        (0, u64::MAX),
        (now - 30_000, now - 5_000),
        (now - 12_345, now - 12_345),
        (now, 0),
    ] {
        let whole = log.fetch(first, last).unwrap();
        for page in [1, 2, 100] {
            let streamed: Vec<_> = log
                .fetch_iter(first, last, page)
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(streamed == whole, "[{first}, {last}] by pages of {page}");
        }
    }
    assert!(log.fetch(0, u64::MAX).unwrap().len() > 50, "several chunks");
}

/// Two writers on one slice, and a manual clock that never moves: every
/// event is at the same millisecond. Writer A fills piece 0 until a frame
/// of its is refused; writer B still believes piece 0 has room for a
/// small one. A seals piece 0 before it writes piece 1, so B's next small
/// event is refused there too and lands after A's: a reader whose cursor
/// counted the events at that millisecond gets B's event exactly once.
/// (Unsealed, B's event landed in piece 0, before A's already seen second
/// event: `since` skipped B's and returned A's twice.)
fn a_stale_writer_cannot_land_before_events_already_seen(store: Arc<dyn Store>) {
    let clock = ManualClock::new(EPOCH_MS);
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let a = EventLog::new(&scope, "seal", Duration::from_secs(3600), 3).unwrap();
    let b = EventLog::new(&scope, "seal", Duration::from_secs(3600), 3).unwrap();
    let reader = EventLog::new(&scope, "seal", Duration::from_secs(3600), 3).unwrap();
    let limit = store.item_size_limit();
    a.put(&vec![b'a'; limit * 6 / 10]).unwrap();
    b.put(b"b1").unwrap(); // B now writes piece 0
    a.put(&vec![b'A'; limit * 5 / 10]).unwrap(); // refused there: piece 1
    let (seen, cursor) = reader.since(&Cursor::start()).unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        cursor,
        Cursor {
            at_ms: EPOCH_MS,
            seen_at_ms: 3
        }
    );
    // Nothing fits in the sealed piece 0 any more, not even the smallest
    // frame.
    let piece0 = Key::new(format!("log:seal:{}.0.0", EPOCH_MS / 3_600_000)).unwrap();
    assert!(matches!(
        store.append(&piece0, &[0xE7; 21]),
        Err(Error::ValueTooLarge { .. })
    ));
    b.put(b"b2").unwrap();
    let (new, next) = reader.since(&cursor).unwrap();
    let payloads: Vec<&[u8]> = new.iter().map(|e| e.payload.as_slice()).collect();
    assert_eq!(payloads, [b"b2"], "B's event once, nothing seen before");
    assert_eq!(next.seen_at_ms, 4);
    assert_eq!(a.count(0, u64::MAX).unwrap(), 4);
}

#[test]
fn a_stale_writer_cannot_land_before_events_already_seen_on_memory() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::builder().item_size_limit(4096).build());
    a_stale_writer_cannot_land_before_events_already_seen(store);
}

#[test]
fn a_stale_writer_cannot_land_before_events_already_seen_on_memcached() {
    let server = MemcachedServer::start_default();
    a_stale_writer_cannot_land_before_events_already_seen(Arc::new(
        MemcachedStore::connect(&server.addr()).unwrap(),
    ));
}

/// `since` reads the slices from its cursor's on, not the chunk: after
/// 50 s of a busy chunk (20,000 events), a poll that returns the last
/// 100 moves about twice their bytes (the cursor's slice, seen already,
/// and the new one), where reading the chunk moved all 20,000.
#[test]
fn since_moves_about_what_it_returns_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let clock = ManualClock::new(EPOCH_MS);
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    let log = EventLog::new(&scope, "poll", Duration::from_secs(60), 3).unwrap();
    // 100 events every 250 ms for 50 s.
    for slice in 0..200u64 {
        clock.set_ms(EPOCH_MS + slice * 250);
        for i in 0..100 {
            log.put(format!("{slice:>5}:{i:>24}").as_bytes()).unwrap();
        }
    }
    let (all, cursor) = log.since(&Cursor::start()).unwrap();
    assert_eq!(all.len(), 20_000);
    clock.set_ms(EPOCH_MS + 50_000);
    for i in 0..100 {
        log.put(format!("new:{i:>26}").as_bytes()).unwrap();
    }
    let frame = 30 + 21;
    let before = server.stat("bytes_read") + server.stat("bytes_written");
    let (new, _) = log.since(&cursor).unwrap();
    let moved = server.stat("bytes_read") + server.stat("bytes_written") - before;
    assert_eq!(new.len(), 100);
    let returned = (100 * frame) as u64;
    println!(
        "since after 20,000 events: returned 100 events ({returned} bytes of frames), moved {moved} bytes (the chunk is {} bytes)",
        20_100 * frame
    );
    assert!(
        moved < 3 * returned + 4096,
        "moved {moved} bytes to return {returned}"
    );
}
