//! The event log's limits, each at the limit and one past it: the name,
//! the payload of one event, the pieces of one slice, the chunk length and
//! count, and the timestamps a put accepts. Past a limit the documented
//! error comes back and the log reads back as it was.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Error, ManualClock, MemoryStore, Scope, Store};
use mcds_eventlog::EventLog;
use mcds_memcached::MemcachedStore;
use mcds_testkit::{MemcachedServer, ServerOptions};

/// A chunk boundary (a multiple of an hour: 500,000 hours), so chunk
/// arithmetic is exact.
const EPOCH_MS: u64 = 1_800_000_000_000;

/// memcached's bytes per item on top of key and value.
const OVERHEAD: usize = mcds_core::backend::ITEM_OVERHEAD;

/// A frame's bytes on top of its payload.
const FRAME: usize = 21;

/// The most pieces a slice spreads over.
const MAX_PIECES: usize = 1 << 16;

/// A memory store with `item_size_limit` on a manual clock, and a scope on
/// both.
fn memory(item_size_limit: usize) -> (Arc<dyn Store>, ManualClock, Scope) {
    let clock = ManualClock::new(EPOCH_MS);
    let store: Arc<dyn Store> = Arc::new(
        MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .item_size_limit(item_size_limit)
            .memory_limit(512 * 1024 * 1024)
            .build(),
    );
    let scope = Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    (store, clock, scope)
}

/// The largest payload `log` (named `name`, no prefix) takes now: its
/// frame must fit an item under the longest piece key of the slice it
/// goes to, `log:<name>:<w>.<s>.65535` (slices of 250 ms, or of a 1024th
/// of a chunk when that is longer).
fn largest_payload(store: &dyn Store, scope: &Scope, name: &str, chunk_ms: u64) -> usize {
    let now = scope.clock().now_ms();
    let slice_ms = chunk_ms.div_ceil(1024).max(250);
    let (w, s) = (now / chunk_ms, now % chunk_ms / slice_ms);
    let longest = format!("log:{name}:{w}.{s}.{}", MAX_PIECES - 1).len();
    store.item_size_limit() - OVERHEAD - longest - FRAME
}

/// A payload that fills a frame to the item limit goes in; one byte more
/// is `ValueTooLarge` and nothing of it is stored.
fn payload_at_and_past_the_limit(store: Arc<dyn Store>, scope: Scope) {
    let log = EventLog::new(scope.clone(), "big", Duration::from_secs(3600), 3).unwrap();
    let max = largest_payload(&*store, &scope, "big", 3_600_000);
    log.put(b"small").unwrap();
    let at = vec![b'a'; max];
    log.put(&at).unwrap();
    let past = vec![b'p'; max + 1];
    let err = log.put(&past).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    let events = log.fetch(0, u64::MAX).unwrap();
    let payloads: Vec<_> = events.iter().map(|e| e.payload.clone()).collect();
    assert_eq!(
        payloads,
        [b"small".to_vec(), at],
        "the event at the limit is there whole, nothing of the one past it"
    );
    assert_eq!(log.count(0, u64::MAX).unwrap(), 2);
}

#[test]
fn a_payload_filling_an_item_goes_in_and_one_byte_more_is_value_too_large_on_memory() {
    let (store, _clock, scope) = memory(4096);
    payload_at_and_past_the_limit(store, scope);
}

#[test]
fn a_payload_filling_an_item_goes_in_and_one_byte_more_is_value_too_large_on_memcached() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    payload_at_and_past_the_limit(Arc::clone(&store), Scope::new(store));
}

#[test]
fn a_payload_filling_an_item_goes_in_and_one_byte_more_is_value_too_large_on_a_64k_memcached() {
    let server = MemcachedServer::start(ServerOptions {
        item_size: Some("64k".into()),
        // memcached refuses an -I below its default slab_chunk_max.
        extra_args: vec!["-o".into(), "slab_chunk_max=32768".into()],
        ..Default::default()
    });
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .item_size_limit(64 * 1024)
            .connect([server.addr()])
            .unwrap(),
    );
    payload_at_and_past_the_limit(Arc::clone(&store), Scope::new(store));
}

/// With one event per item, a slice of a chunk takes exactly 65,536
/// events (one per piece); the next put into that slice is
/// `ValueTooLarge` and stores nothing, while the next slice takes events
/// again.
#[test]
fn a_slice_takes_65536_pieces_and_a_put_past_the_last_is_value_too_large() {
    let (store, clock, scope) = memory(256);
    let log = EventLog::new(scope.clone(), "p", Duration::from_secs(3600), 3).unwrap();
    let max = largest_payload(&*store, &scope, "p", 3_600_000);
    assert!(
        2 * (max + FRAME) + "log:p:".len() + OVERHEAD > 256,
        "two frames never share an item"
    );
    let payload = vec![b'e'; max];
    for i in 0..MAX_PIECES {
        if let Err(e) = log.put(&payload) {
            panic!("put {i} of {MAX_PIECES}: {e}");
        }
    }
    let err = log.put(&payload).unwrap_err();
    assert!(matches!(err, Error::ValueTooLarge { .. }), "{err}");
    assert_eq!(
        log.count(0, u64::MAX).unwrap(),
        MAX_PIECES as u64,
        "every piece read, nothing of the refused put"
    );
    clock.advance(Duration::from_secs(4)); // the next slice (of 3.5 s)
    log.put(b"next slice").unwrap();
    assert_eq!(log.count(0, u64::MAX).unwrap(), MAX_PIECES as u64 + 1);
}

/// `log:<name>:<u64::MAX>.1023.65535` must fit 250 bytes: a name of 214
/// bytes does, one of 215 is `InvalidKey` (a scope's prefix counts
/// against it).
#[test]
fn a_name_of_214_bytes_works_and_215_is_invalid_key() {
    let (_store, _clock, scope) = memory(4096);
    let name = "n".repeat(214);
    let log = EventLog::new(scope.clone(), &name, Duration::from_secs(60), 3).unwrap();
    log.put(b"e").unwrap();
    assert_eq!(log.count(0, u64::MAX).unwrap(), 1);
    let err =
        EventLog::new(scope.clone(), &"n".repeat(215), Duration::from_secs(60), 3).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    let prefixed = scope.with_prefix("a:").unwrap();
    let err = EventLog::new(prefixed, &name, Duration::from_secs(60), 3).unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
}

/// 2 and 10,000 chunks are accepted, 1 and 10,001 are `InvalidArgument`;
/// a chunk is whole seconds, at least one.
#[test]
fn chunk_counts_from_2_to_10000_and_whole_second_chunks_are_accepted() {
    let (_store, _clock, scope) = memory(4096);
    for chunks in [2, 10_000] {
        let log = EventLog::new(scope.clone(), "n", Duration::from_secs(1), chunks).unwrap();
        assert_eq!(log.capacity(), Duration::from_secs(chunks as u64 - 1));
        log.put(b"e").unwrap();
    }
    for chunks in [0, 1, 10_001] {
        let err = EventLog::new(scope.clone(), "n", Duration::from_secs(1), chunks).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{chunks}: {err}");
    }
    for chunk in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_millis(1500),
    ] {
        let err = EventLog::new(scope.clone(), "n", chunk, 3).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{chunk:?}: {err}");
    }
}

/// `put_at` takes times from the start of the oldest chunk within
/// capacity to the end of the current one; a millisecond outside either
/// end is `InvalidArgument` and stores nothing. (At a chunk boundary, as
/// here, the oldest chunk starts exactly `capacity` before now.)
#[test]
fn put_at_takes_the_window_s_first_and_last_millisecond_and_refuses_one_outside() {
    let (_store, _clock, scope) = memory(4096);
    let log = EventLog::new(scope, "w", Duration::from_secs(10), 4).unwrap();
    let w_now = EPOCH_MS / 10_000;
    let first = (w_now - 3) * 10_000; // the oldest chunk within capacity
    let last = (w_now + 1) * 10_000 - 1; // the current chunk's last ms
    log.put_at(first, b"first").unwrap();
    log.put_at(last, b"last").unwrap();
    for at in [first - 1, last + 1] {
        let err = log.put_at(at, b"outside").unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{at}: {err}");
    }
    let err = log.put_at(0, b"epoch").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = log.put_at(u64::MAX, b"end of time").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let got: Vec<_> = log
        .fetch(0, u64::MAX)
        .unwrap()
        .into_iter()
        .map(|e| (e.at_ms, e.payload))
        .collect();
    assert_eq!(
        got,
        [(first, b"first".to_vec()), (last, b"last".to_vec())],
        "both ends stored, nothing outside"
    );
}

/// In the middle of a chunk, the oldest chunk within capacity starts
/// before `now − capacity`, where reads start: a `put_at` there would be
/// stored and never read back, so it is refused; `now − capacity` itself
/// goes in and is read.
#[test]
fn put_at_before_where_reads_start_is_invalid_argument_mid_chunk() {
    let (store, clock, scope) = memory(4096);
    clock.advance(Duration::from_millis(4_321));
    let log = EventLog::new(scope, "mid", Duration::from_secs(10), 4).unwrap();
    let now = EPOCH_MS + 4_321;
    let oldest_chunk_start = (EPOCH_MS / 10_000 - 3) * 10_000;
    let reads_start = now - log.capacity().as_millis() as u64;
    assert!(oldest_chunk_start < reads_start);
    for at in [oldest_chunk_start, reads_start - 1] {
        assert!(
            matches!(log.put_at(at, b"lost"), Err(Error::InvalidArgument(_))),
            "{at}"
        );
    }
    assert_eq!(
        store
            .get(&mcds_core::Key::new(format!("log:mid:{}", EPOCH_MS / 10_000 - 3)).unwrap())
            .unwrap(),
        None,
        "nothing written"
    );
    log.put_at(reads_start, b"oldest").unwrap();
    let got = log.fetch(0, u64::MAX).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].at_ms, reads_start);
}

/// A chunk of 100 years is the longest: one second more is refused by
/// `new`, before its milliseconds or its TTL could overflow.
#[test]
fn a_chunk_of_100_years_opens_and_one_second_more_is_invalid_argument() {
    let (_store, _clock, scope) = memory(4096);
    let longest = Duration::from_secs(mcds_core::MAX_PERIOD_SECS);
    let log = EventLog::new(scope.clone(), "long", longest, 10_000).unwrap();
    log.put(b"x").unwrap();
    assert_eq!(log.count(0, u64::MAX).unwrap(), 1);
    for huge in [
        longest + Duration::from_secs(1),
        Duration::from_secs(u64::MAX),
    ] {
        assert!(matches!(
            EventLog::new(scope.clone(), "huge", huge, 3),
            Err(Error::InvalidArgument(_))
        ));
    }
}
