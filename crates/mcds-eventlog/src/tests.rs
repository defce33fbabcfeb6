//! Unit tests that read the stored frames: they need the private frame
//! codec. The rest of the event log's tests are in `tests/log.rs`.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{Clock, Key, ManualClock, MemoryStore, Scope, Store};

use crate::{EventLog, frame};

const EPOCH_MS: u64 = 1_800_000_000_000;

#[test]
fn chunk_keys_are_never_reused() {
    // 3 chunks of 10 s. Chunk 0 and chunk 3 used to share a key (a ring),
    // which made events depend on when the server expired it.
    let clock = ManualClock::new(EPOCH_MS);
    let time: Arc<dyn Clock> = Arc::new(clock.clone());
    let store: Arc<dyn Store> = Arc::new(MemoryStore::builder().clock(Arc::clone(&time)).build());
    let scope = Scope::new(Arc::clone(&store)).with_clock(time);
    let log = EventLog::new(scope, "log", Duration::from_secs(10), 3).unwrap();
    clock.set_ms(EPOCH_MS + 9_999);
    log.put(b"old").unwrap();
    clock.set_ms(EPOCH_MS + 29_999);
    assert_eq!(
        log.fetch(0, u64::MAX).unwrap().len(),
        1,
        "still within reach at 29.999 s"
    );
    clock.set_ms(EPOCH_MS + 30_000);
    log.put(b"new").unwrap();
    let events = log.fetch(0, u64::MAX).unwrap();
    assert_eq!(
        events.iter().map(|e| e.payload.clone()).collect::<Vec<_>>(),
        [b"new".to_vec()]
    );
    // Each chunk has its own keys, named by its number since the epoch
    // (then the slice, then the piece); the old one is still there (TTL 4
    // chunks), untouched by the new chunk. Slices are 250 ms: 9.999 s is
    // in slice 39 of its chunk, 30 s in slice 0 of its.
    let first = EPOCH_MS / 10_000;
    let chunk = |w: u64| {
        let s = if w == first { 39 } else { 0 };
        Key::new(format!("log:log:{w}.{s}.0")).unwrap()
    };
    let old = store.get(&chunk(first)).unwrap().unwrap().value;
    let new = store.get(&chunk(first + 3)).unwrap().unwrap().value;
    assert_eq!(frame::decode(&old).events[0].payload, b"old");
    assert_eq!(frame::decode(&new).events.len(), 1);
    // A frame planted in a chunk's key with another chunk's time is not
    // returned: each key is read for its own chunk.
    let mut planted = Vec::new();
    frame::encode(EPOCH_MS + 5_000, b"planted", &mut planted);
    store.prepend(&chunk(first + 3), &planted).unwrap();
    let events = log.fetch(0, u64::MAX).unwrap();
    assert_eq!(
        events.iter().map(|e| e.payload.clone()).collect::<Vec<_>>(),
        [b"new".to_vec()]
    );
}

/// [`Probe`](crate::Probe) against a naive model: runs of random lengths
/// (a run's pieces are `0..len`), probed batch by batch; it finds exactly
/// every piece, asks for nothing past a run's end by more than one batch,
/// and takes about `log2(len)` batches for the longest run.
#[test]
fn probe_finds_every_piece_of_runs_of_any_length() {
    use rand::RngExt;
    let mut rng = mcds_testkit::seed::rng("probe_finds_every_piece_of_runs_of_any_length");
    for _ in 0..500 {
        let runs: Vec<u32> = (0..rng.random_range(0..20))
            .map(|_| match rng.random_range(0..4) {
                0 => 0,
                1 => rng.random_range(1..4),
                2 => rng.random_range(1..300),
                _ => rng.random_range(1..3000),
            })
            .collect();
        let mut probe = crate::Probe::new(runs.len());
        let mut found = vec![0u32; runs.len()];
        let mut batches = 0;
        loop {
            let batch = probe.batch();
            if batch.is_empty() {
                break;
            }
            batches += 1;
            let there: Vec<bool> = batch.iter().map(|&(r, p)| p < runs[r]).collect();
            for (&(r, p), &t) in batch.iter().zip(&there) {
                if t {
                    assert_eq!(p, found[r], "pieces in order");
                    found[r] += 1;
                }
            }
            probe.advance(&there);
        }
        assert_eq!(found, runs, "every piece, once");
        let longest = runs.iter().copied().max().unwrap_or(0);
        // 2, 4, 8, 16, 32, then 64 a batch, while a batch's last piece is
        // there.
        let (mut want, mut asked, mut width) = (0, 0, 2);
        while !runs.is_empty() {
            want += 1;
            asked += width;
            if asked > longest {
                break;
            }
            width = (width * 2).min(64);
        }
        assert_eq!(batches, want, "runs {runs:?}");
    }
}

/// A sealed piece has no room for the smallest frame, whatever the item
/// limit and the frame that was refused (memory store, random sizes; the
/// seed replays it).
#[test]
fn a_sealed_piece_takes_no_frame() {
    use rand::RngExt;
    let mut rng = mcds_testkit::seed::rng("a_sealed_piece_takes_no_frame");
    for round in 0..300 {
        let limit = rng.random_range(300..20_000);
        let store: Arc<dyn Store> = Arc::new(MemoryStore::builder().item_size_limit(limit).build());
        let log = EventLog::new(Arc::clone(&store), "s", Duration::from_secs(60), 3).unwrap();
        let key = Key::new("log:s:piece").unwrap();
        // Fill the piece with frames of random sizes until one is refused.
        let mut refused = None;
        while refused.is_none() {
            let len = rng.random_range(0..limit / 3);
            let mut f = Vec::new();
            frame::encode(1, &vec![b'x'; len], &mut f);
            match mcds_core::backend::append_or_add(&*store, &key, &f, mcds_core::Ttl::Never) {
                Ok(()) => {}
                Err(mcds_core::Error::ValueTooLarge { .. }) => refused = Some(f.len()),
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        let sealed = mcds_core::block_on(log.seal(mcds_core::Io::Blocking, &key, refused.unwrap()));
        assert!(sealed.unwrap(), "round {round}: the piece is there");
        let mut smallest = Vec::new();
        frame::encode(1, b"", &mut smallest);
        assert!(
            matches!(
                store.append(&key, &smallest),
                Err(mcds_core::Error::ValueTooLarge { .. })
            ),
            "round {round}: limit {limit}, refused {refused:?}: a frame still fits"
        );
        // The sealing frames are intact frames (not damage).
        let value = store.get(&key).unwrap().unwrap().value;
        let decoded = frame::decode(&value);
        assert_eq!(decoded.damaged_bytes, 0);
    }
}

/// Chunks written by mcds before slices (`<w>`, `<w>.1`, …) still read,
/// beside the events written since, and trim deletes them.
#[test]
fn chunks_of_the_layout_before_slices_still_read() {
    let clock = ManualClock::new(EPOCH_MS);
    let time: Arc<dyn Clock> = Arc::new(clock.clone());
    let store: Arc<dyn Store> = Arc::new(MemoryStore::builder().clock(Arc::clone(&time)).build());
    let scope = Scope::new(Arc::clone(&store)).with_clock(time);
    let log = EventLog::new(scope, "old", Duration::from_secs(10), 3).unwrap();
    let w = EPOCH_MS / 10_000;
    let frames = |events: &[(u64, &str)]| {
        let mut out = Vec::new();
        for (at, payload) in events {
            frame::encode(EPOCH_MS + at, payload.as_bytes(), &mut out);
        }
        out
    };
    store
        .set(
            &Key::new(format!("log:old:{w}")).unwrap(),
            &frames(&[(1_000, "old 1"), (3_000, "old 3")]),
            mcds_core::Ttl::Never,
        )
        .unwrap();
    store
        .set(
            &Key::new(format!("log:old:{w}.1")).unwrap(),
            &frames(&[(5_000, "old 5")]),
            mcds_core::Ttl::Never,
        )
        .unwrap();
    clock.set_ms(EPOCH_MS + 4_000);
    log.put(b"new 4").unwrap();
    clock.set_ms(EPOCH_MS + 6_000);
    let payloads = |events: Vec<crate::Event>| -> Vec<String> {
        events
            .into_iter()
            .map(|e| String::from_utf8(e.payload).unwrap())
            .collect()
    };
    assert_eq!(
        payloads(log.fetch(0, u64::MAX).unwrap()),
        ["old 1", "old 3", "new 4", "old 5"]
    );
    assert_eq!(log.count(EPOCH_MS + 2_000, u64::MAX).unwrap(), 3);
    let (first, cursor) = log.since(&crate::Cursor::after(EPOCH_MS + 3_500)).unwrap();
    assert_eq!(payloads(first), ["new 4", "old 5"]);
    assert!(log.since(&cursor).unwrap().0.is_empty());
    clock.set_ms(EPOCH_MS + 10_000);
    assert_eq!(
        log.trim(EPOCH_MS + 10_000).unwrap(),
        3,
        "two old pieces, one slice"
    );
    assert_eq!(log.count(0, u64::MAX).unwrap(), 0);
}
