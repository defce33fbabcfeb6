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
    // Each chunk has its own key, named by its number since the epoch; the
    // old one is still there (TTL 4 chunks), untouched by the new chunk.
    let chunk = |w: u64| Key::new(format!("log:log:{w}")).unwrap();
    let first = EPOCH_MS / 10_000;
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
