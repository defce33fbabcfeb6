//! Event log pieces under faults, against real memcached (from an
//! adversarial review): a handle whose pieces vanished (a trim, a
//! restart), a poll that reads a slice while a writer fills its pieces,
//! and a slice of more full pieces than a put used to walk. Servers with
//! 64 KiB items (`-I 64k`) make pieces fill with a few events.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcds_core::{ManualClock, Op, Scope, Store};
use mcds_eventlog::{Cursor, EventLog};
use mcds_memcached::MemcachedStore;
use mcds_testkit::{HookStore, MemcachedServer, ServerOptions};

const EPOCH_MS: u64 = 1_800_000_000_000;

fn server_64k() -> MemcachedServer {
    MemcachedServer::start(ServerOptions {
        item_size: Some("64k".into()),
        extra_args: vec!["-o".into(), "slab_chunk_max=32768".into()],
        ..Default::default()
    })
}

fn store_64k(server: &MemcachedServer) -> Arc<dyn Store> {
    Arc::new(
        MemcachedStore::builder()
            .item_size_limit(64 * 1024)
            .connect([server.addr()])
            .unwrap(),
    )
}

fn scope(store: &Arc<dyn Store>, clock: &ManualClock) -> Scope {
    Scope::new(Arc::clone(store)).with_clock(Arc::new(clock.clone()))
}

fn payloads(events: &[mcds_eventlog::Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| String::from_utf8_lossy(&e.payload[..e.payload.len().min(12)]).into_owned())
        .collect()
}

/// A payload of `len` bytes starting with `tag`.
fn big(tag: &str, len: usize) -> Vec<u8> {
    let mut v = tag.as_bytes().to_vec();
    v.resize(len, b'.');
    v
}

/// A handle that wrote piece 2 of a slice, whose pieces a trim then
/// deleted: its next put starts the slice again at piece 0 (writing piece 2
/// alone left a gap where reads stop, and the put was never read).
#[test]
fn a_handle_whose_pieces_were_trimmed_starts_the_slice_again() {
    let server = server_64k();
    let store = store_64k(&server);
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let log = EventLog::new(scope(&store, &clock), "t", Duration::from_secs(10), 4).unwrap();
    // One 40 kB event per 64 kB piece: pieces 0, 1, 2.
    for i in 0..3 {
        log.put(&big(&format!("before{i}"), 40_000)).unwrap();
    }
    assert_eq!(log.count(0, u64::MAX).unwrap(), 3);
    // Trim the current chunk (documented: "events put after that start it afresh").
    let deleted = log.trim(EPOCH_MS + 10_000).unwrap();
    println!("trim deleted {deleted} items");
    assert_eq!(log.count(0, u64::MAX).unwrap(), 0);
    // Same handle, same slice, after trim returned.
    log.put(b"after-trim").unwrap();
    let got = log.fetch(0, u64::MAX).unwrap();
    println!(
        "after trim + acknowledged put: fetch = {:?}",
        payloads(&got)
    );
    // A fresh handle's put goes to piece 0 and is seen; the first one still is not.
    let other = EventLog::new(scope(&store, &clock), "t", Duration::from_secs(10), 4).unwrap();
    other.put(b"other-handle").unwrap();
    let got2 = log.fetch(0, u64::MAX).unwrap();
    println!("after a second handle's put: fetch = {:?}", payloads(&got2));
    assert!(
        got2.iter().any(|e| e.payload == b"after-trim"),
        "LOST: put returned Ok after trim, but no read returns it: {:?}",
        payloads(&got2)
    );
}

/// The same after memcached restarts empty.
#[test]
fn a_handle_whose_pieces_a_restart_lost_starts_the_slice_again() {
    let mut server = server_64k();
    let store = store_64k(&server);
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let log = EventLog::new(scope(&store, &clock), "r", Duration::from_secs(10), 4).unwrap();
    for i in 0..3 {
        log.put(&big(&format!("before{i}"), 40_000)).unwrap();
    }
    server.restart();
    // The first op after the restart may fail (the connection was reset); retry until Ok.
    let mut ok = false;
    for _ in 0..20 {
        match log.put(b"after-restart") {
            Ok(_) => {
                ok = true;
                break;
            }
            Err(e) => {
                println!("put after restart: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    assert!(ok);
    let got = log.fetch(0, u64::MAX).unwrap();
    println!(
        "after restart + acknowledged put: fetch = {:?}",
        payloads(&got)
    );
    assert!(
        got.iter().any(|e| e.payload == b"after-restart"),
        "LOST: put returned Ok after the restart, but no read returns it"
    );
}

/// A read is not a snapshot: `since` reads pieces 0 and 1 of a slice in
/// one batch and 2 to 5 in the next. Between them (the hook), a writer
/// fills piece 1, is refused there, seals it and goes on in piece 2. Every
/// event is at one millisecond, so the cursor counts them. The reader
/// reads the run's earlier pieces again once it has seen a later one: its
/// view is a prefix of the appends, and no poll skips or repeats an event
/// (before: e4 never returned, e6 twice).
#[test]
fn a_poll_between_two_batches_of_pieces_skips_nothing_and_repeats_nothing() {
    let server = server_64k();
    let store = store_64k(&server);
    let clock = ManualClock::new(EPOCH_MS + 1_000); // every event at this one millisecond
    let writer = EventLog::new(scope(&store, &clock), "s", Duration::from_secs(10), 4).unwrap();
    // 20 kB events: 3 to a 64 kB piece.
    let ev = |i: usize| big(&format!("e{i}"), 20_000);
    for i in 0..4 {
        writer.put(&ev(i)).unwrap(); // piece 0: e0 e1 e2; piece 1: e3
    }
    let w2 = writer.clone();
    let hooked = HookStore::new(Arc::clone(&store));
    // Between the reader's batch [0,1] and its batch [2..5]: e4, e5 fill
    // piece 1, e6 is refused there, seals it, goes to piece 2.
    hooked.once_before(
        |ops| {
            ops.iter()
                .any(|op| matches!(op, Op::Get(_)) && op.key().as_bytes().ends_with(b".2"))
        },
        move || {
            for i in 4..7 {
                w2.put(&ev(i)).unwrap();
            }
        },
    );
    let hooked: Arc<dyn Store> = hooked;
    let reader = EventLog::new(scope(&hooked, &clock), "s", Duration::from_secs(10), 4).unwrap();
    let (first, cursor) = reader.since(&Cursor::start()).unwrap();
    println!("poll 1: {:?} cursor {cursor:?}", payloads(&first));
    let (second, cursor2) = reader.since(&cursor).unwrap();
    println!("poll 2: {:?} cursor {cursor2:?}", payloads(&second));
    let (third, _) = reader.since(&cursor2).unwrap();
    println!("poll 3: {:?}", payloads(&third));
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in payloads(&first)
        .into_iter()
        .chain(payloads(&second))
        .chain(payloads(&third))
    {
        *seen.entry(p.trim_end_matches('.').to_string()).or_default() += 1;
    }
    println!("times each event was returned by since: {seen:?}");
    let all: Vec<String> = (0..7).map(|i| format!("e{i}")).collect();
    let ok = all.iter().all(|e| seen.get(e) == Some(&1)) && seen.len() == 7;
    assert!(
        ok,
        "since must return each of e0..e6 exactly once: {seen:?}"
    );
}

/// A slice of 65 full pieces: a handle new to it, and a handle that wrote
/// elsewhere meanwhile, walk the full pieces to the last (a put gave up
/// after 64 pieces with `Conflict`, and a handle that fell behind stayed
/// stuck).
#[test]
fn a_new_handle_walks_a_slice_of_65_full_pieces() {
    let server = server_64k();
    let store = store_64k(&server);
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let busy = EventLog::new(scope(&store, &clock), "c", Duration::from_secs(10), 4).unwrap();
    for i in 0..64 {
        busy.put(&big(&format!("b{i}"), 40_000)).unwrap(); // one per piece
    }
    busy.put(&big("b64", 40_000)).unwrap(); // the busy handle goes on fine
    let fresh = EventLog::new(scope(&store, &clock), "c", Duration::from_secs(10), 4).unwrap();
    let res = fresh.put(&big("fresh", 40_000));
    println!(
        "fresh handle's put into the slice: {res:?}",
        res = res.as_ref().map(|_| ())
    );
    // The busy handle itself, after one put_at into the previous slice:
    busy.put_at(EPOCH_MS + 500, b"earlier slice").unwrap();
    let res2 = busy.put(&big("back", 40_000));
    println!(
        "busy handle after a put_at elsewhere: {:?}",
        res2.as_ref().map(|_| ())
    );
    // A small event too (fits nowhere but the last piece):
    let res3 = fresh.put(b"tiny");
    println!("fresh handle, tiny event: {:?}", res3.as_ref().map(|_| ()));
    assert!(
        res.is_ok() && res2.is_ok() && res3.is_ok(),
        "a put into a slice with 65 pieces failed"
    );
    assert_eq!(
        fresh.count(0, u64::MAX).unwrap(),
        69,
        "every event read back"
    );
}

/// A poller polls `since` 4 times from the start while a second writer B
/// puts `b0` and `b1` between the polls, all in the log `name`: how many
/// times each event came back.
fn polls_while_another_writer_puts(
    store: &Arc<dyn Store>,
    clock: &ManualClock,
    name: &str,
) -> BTreeMap<String, usize> {
    let poller = EventLog::new(scope(store, clock), name, Duration::from_secs(10), 4).unwrap();
    let b = EventLog::new(scope(store, clock), name, Duration::from_secs(10), 4).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut cursor = Cursor::start();
    for (poll, put) in [Some(&b"b0"[..]), Some(b"b1"), None, None]
        .into_iter()
        .enumerate()
    {
        let (events, next) = poller.since(&cursor).unwrap();
        println!("poll {}: {:?} cursor {next:?}", poll + 1, payloads(&events));
        for p in payloads(&events) {
            *seen.entry(p).or_default() += 1;
        }
        cursor = next;
        if let Some(put) = put {
            b.put(put).unwrap();
        }
    }
    println!("times since returned each event: {seen:?}");
    seen
}

/// The hook's moment: just before the single op (an `add`) that creates
/// the piece whose key ends in `suffix`, after the piece before it was
/// sealed (from a second adversarial review).
fn creates(suffix: &'static str) -> impl Fn(&[Op<'_>]) -> bool + Send + 'static {
    move |ops| matches!(ops, [op @ Op::Add { .. }] if op.key().as_bytes().ends_with(suffix.as_bytes()))
}

/// Writer A fills piece 0 of a slice, is refused there, seals it, and is
/// about to create piece 1. Right then (the hook) another process trims
/// the current chunk (documented: "events put after that start it
/// afresh"): piece 0 is deleted, piece 1 does not exist yet. A then
/// creates piece 1 alone. Every later put of A appends to piece 1 (it is
/// there), but reads stop at the missing piece 0: acknowledged puts made
/// after trim returned are never read. When another handle re-creates
/// piece 0, piece 0 is open while piece 1 holds older events, and since()
/// returns an event twice and skips another.
#[test]
fn a_trim_between_sealing_a_piece_and_creating_the_next_cuts_the_run_and_it_starts_again() {
    let server = server_64k();
    let store = store_64k(&server);
    let clock = ManualClock::new(EPOCH_MS + 1_000); // every event at one millisecond
    let trimmer = EventLog::new(scope(&store, &clock), "o", Duration::from_secs(10), 4).unwrap();
    let trimmed = Arc::new(Mutex::new(None));
    let t2 = Arc::clone(&trimmed);
    let hooked = HookStore::new(Arc::clone(&store));
    hooked.once_before(creates(".1"), move || {
        // Trim the current chunk (before = its end).
        let n = trimmer.trim(EPOCH_MS + 10_000).unwrap();
        *t2.lock() = Some(n);
    });
    let hooked: Arc<dyn Store> = hooked;
    let a = EventLog::new(scope(&hooked, &clock), "o", Duration::from_secs(10), 4).unwrap();
    for i in 0..3 {
        a.put(&big(&format!("e{i}"), 20_000)).unwrap(); // piece 0
    }
    a.put(&big("e3", 20_000)).unwrap(); // refused at piece 0: seal, [trim], piece 1
    println!(
        "trim (run inside e3's put) deleted {:?} items",
        trimmed.lock()
    );
    // Strictly after trim returned:
    a.put(b"e4").unwrap();
    a.put(b"e5").unwrap();
    let got = a.fetch(0, u64::MAX).unwrap();
    println!(
        "after trim, A put e3(during), e4, e5 (Ok): fetch = {:?}",
        payloads(&got)
    );

    let seen = polls_while_another_writer_puts(&store, &clock, "o");
    println!("fetch now: {:?}", payloads(&a.fetch(0, u64::MAX).unwrap()));
    for e in ["e4", "e5", "b0", "b1"] {
        assert_eq!(
            seen.get(e),
            Some(&1),
            "since must return {e} exactly once: {seen:?}"
        );
    }
}

/// The same race with a restart instead of a trim: memcached restarts
/// (empty) after writer A sealed piece 0 and before it creates piece 1.
#[test]
fn a_restart_between_sealing_a_piece_and_creating_the_next_never_makes_since_repeat_or_skip() {
    let server = Arc::new(Mutex::new(server_64k()));
    let store = store_64k(&server.lock());
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let s2 = Arc::clone(&server);
    let hooked = HookStore::new(Arc::clone(&store));
    hooked.once_before(creates(".1"), move || {
        s2.lock().restart();
        std::thread::sleep(Duration::from_millis(50));
    });
    let hooked: Arc<dyn Store> = hooked;
    let a = EventLog::new(scope(&hooked, &clock), "r", Duration::from_secs(10), 4).unwrap();
    for i in 0..3 {
        a.put(&big(&format!("e{i}"), 20_000)).unwrap();
    }
    let r3 = a.put(&big("e3", 20_000)).map(|_| ());
    println!("e3 (restart during its put): {r3:?}");
    let r4 = a.put(b"e4").map(|_| ());
    let r5 = a.put(b"e5").map(|_| ());
    println!("e4: {r4:?}, e5: {r5:?} (both after the restart)");
    println!("fetch: {:?}", payloads(&a.fetch(0, u64::MAX).unwrap()));
    let seen = polls_while_another_writer_puts(&store, &clock, "r");
    for e in ["b0", "b1"] {
        assert_eq!(
            seen.get(e),
            Some(&1),
            "since must return {e} exactly once: {seen:?}"
        );
    }
    for e in ["e4", "e5"] {
        assert!(
            seen.get(e).copied().unwrap_or(0) <= 1,
            "since returned {e} twice: {seen:?}"
        );
    }
}

/// Writer A fills pieces 0 and 1 of a slice; its next event is refused at
/// piece 1, it seals piece 1, and right before it creates piece 2 (the
/// hook) memcached restarts empty. A creates piece 2 alone and goes on
/// appending there (it is there). A read asks pieces 0 and 1 first, finds
/// neither, and stops: every put A makes after the restart returns Ok and
/// is never read (A's cached piece 2 is there, so A never starts over).
#[test]
fn a_restart_before_piece_2_is_created_loses_no_later_put() {
    let server = Arc::new(Mutex::new(server_64k()));
    let store = store_64k(&server.lock());
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let s2 = Arc::clone(&server);
    let hooked = HookStore::new(Arc::clone(&store));
    hooked.once_before(creates(".2"), move || {
        s2.lock().restart();
        std::thread::sleep(Duration::from_millis(50));
    });
    let hooked: Arc<dyn Store> = hooked;
    let a = EventLog::new(scope(&hooked, &clock), "l", Duration::from_secs(10), 4).unwrap();
    for i in 0..6 {
        a.put(&big(&format!("e{i}"), 20_000)).unwrap(); // pieces 0 and 1
    }
    println!("before: count = {}", a.count(0, u64::MAX).unwrap());
    let r6 = a.put(&big("e6", 20_000)).map(|_| ());
    println!("e6 (memcached restarts during its put): {r6:?}");
    let mut after = Vec::new();
    for i in 7..12 {
        let r = a.put(format!("e{i}").as_bytes()).map(|_| ());
        after.push((i, r.is_ok()));
    }
    println!("puts after the restart (event, Ok?): {after:?}");
    let got = a.fetch(0, u64::MAX).unwrap();
    println!(
        "fetch: {:?}, count: {}",
        payloads(&got),
        a.count(0, u64::MAX).unwrap()
    );
    let poller = EventLog::new(scope(&store, &clock), "l", Duration::from_secs(10), 4).unwrap();
    println!(
        "a fresh handle's since(start): {:?}",
        payloads(&poller.since(&Cursor::start()).unwrap().0)
    );
    // Ten seconds later (the slice long over) still nothing.
    clock.advance(Duration::from_secs(5));
    println!(
        "5 s later: fetch: {:?}",
        payloads(&poller.fetch(0, u64::MAX).unwrap())
    );
    assert!(
        (7..12).all(|i| got.iter().any(|e| e.payload == format!("e{i}").as_bytes())),
        "LOST: e7..e11 were put (Ok) after the restart, fetch returns {:?}",
        payloads(&got)
    );
}

/// A client configured for 1 MiB items on a server with `-I 64k`: an
/// event of 100 kB fits no piece. It is refused (`OutOfMemory` once the
/// piece it goes to holds events: memcached refuses an append past its
/// `-I` as it refuses one it has no memory for, and the configured limit
/// does not explain it; `ValueTooLarge` from a piece just created), nothing
/// of it is read, and it does not fill the slice with sealed pieces on its
/// way. The events around it are all read.
#[test]
fn an_event_over_the_servers_item_limit_is_value_too_large_and_fills_nothing() {
    let server = server_64k();
    let store: Arc<dyn Store> = Arc::new(
        MemcachedStore::builder()
            .item_size_limit(1024 * 1024)
            .connect([server.addr()])
            .unwrap(),
    );
    let clock = ManualClock::new(EPOCH_MS + 1_000);
    let log = EventLog::new(scope(&store, &clock), "big", Duration::from_secs(10), 4).unwrap();
    log.put(b"before").unwrap();
    let items_before = server.stat("curr_items");
    let refused = |err: &mcds_core::Error| {
        matches!(
            err,
            mcds_core::Error::ValueTooLarge { .. } | mcds_core::Error::OutOfMemory { .. }
        )
    };
    let err = log.put(&vec![b'x'; 100_000]).unwrap_err();
    assert!(refused(&err), "{err}");
    let fresh = EventLog::new(scope(&store, &clock), "big", Duration::from_secs(10), 4).unwrap();
    let err = fresh.put(&vec![b'y'; 100_000]).unwrap_err();
    assert!(refused(&err), "{err}");
    let added = server.stat("curr_items") - items_before;
    assert!(added <= 2, "{added} items made for events that fit none");
    log.put(b"after").unwrap();
    fresh.put(b"after, fresh").unwrap();
    let got: Vec<_> = log
        .fetch(0, u64::MAX)
        .unwrap()
        .into_iter()
        .map(|e| e.payload)
        .collect();
    assert_eq!(
        got,
        [
            b"before".to_vec(),
            b"after".to_vec(),
            b"after, fresh".to_vec()
        ]
    );
}
