//! Replies that never came (`Error::Ambiguous`: the write may or may not
//! have applied) on the sketches whose updates are not plain ORs: the
//! scalable Bloom filter's header and blocks, and the leaderboard's board.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcds_core::{Error, MemoryStore, Op, Reply, Store};
use mcds_sketch::{Leaderboard, ScalableBloomFilter};

fn item(prefix: &str, i: u64) -> Vec<u8> {
    format!("{prefix}:{i}").into_bytes()
}

/// A store whose writes to some keys lose their reply: every second `add`
/// or `cas` on a key containing `pattern` answers [`Error::Ambiguous`],
/// applied or not by turns.
#[derive(Debug)]
struct LossyStore {
    inner: MemoryStore,
    pattern: &'static str,
    writes: AtomicU64,
    lost: AtomicU64,
}

impl Store for LossyStore {
    fn backend_name(&self) -> &'static str {
        "lossy"
    }

    fn execute(&self, op: &Op<'_>) -> mcds_core::Result<Reply> {
        let write = matches!(op, Op::Add { .. } | Op::Cas { .. });
        let key = op.key();
        if !write || !String::from_utf8_lossy(key.as_bytes()).contains(self.pattern) {
            return self.inner.execute(op);
        }
        let n = self.writes.fetch_add(1, Ordering::Relaxed);
        if n % 2 == 0 {
            return self.inner.execute(op);
        }
        let lost = self.lost.fetch_add(1, Ordering::Relaxed);
        if lost % 2 == 0 {
            self.inner.execute(op)?; // applied, reply lost
        }
        Err(Error::Ambiguous {
            key: key.display(),
            server: "lossy".into(),
            reason: "reply lost (test)".into(),
        })
    }
}

impl LossyStore {
    fn new(pattern: &'static str) -> Arc<LossyStore> {
        Arc::new(LossyStore {
            inner: MemoryStore::new(),
            pattern,
            writes: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        })
    }

    /// Lost replies whose write was applied.
    fn applied_unseen(&self) -> u64 {
        self.lost.load(Ordering::Relaxed).div_ceil(2)
    }
}

/// Lost replies on the header's CAS: growth still happens (the next adder
/// redoes it), never twice, and nothing acknowledged is lost. Lost replies
/// on the blocks: the caller retries the add (idempotent), and nothing
/// acknowledged is lost.
#[test]
fn lost_replies_on_the_header_and_the_blocks() {
    for pattern in [":meta", ":"] {
        let store = LossyStore::new(pattern);
        let filter = ScalableBloomFilter::new(Arc::clone(&store), "lossy", 100, 0.01).unwrap();
        let mut retries = 0;
        for i in 0..2000 {
            let e = item("in", i);
            loop {
                match filter.add(&e) {
                    Ok(_) => break,
                    Err(Error::Ambiguous { .. }) => retries += 1,
                    Err(e) => panic!("{e}"),
                }
            }
            assert!(filter.contains(&e).unwrap());
        }
        let fresh = ScalableBloomFilter::new(Arc::clone(&store), "lossy", 100, 0.01).unwrap();
        let all: Vec<Vec<u8>> = (0..2000).map(|i| item("in", i)).collect();
        assert!(fresh.contains_many(&all).unwrap().iter().all(|&b| b));
        // 100 + 200 + 400 + 800 = 1500 < 2000 ≤ 3100.
        assert_eq!(fresh.layers().unwrap(), 5, "{pattern}");
        assert!(store.lost.load(Ordering::Relaxed) > 0);
        println!(
            "scalable bloom, lost replies on writes to keys with {pattern:?}: {} lost, {retries} adds retried by the caller, 5 layers, all 2000 elements found",
            store.lost.load(Ordering::Relaxed)
        );
    }
}

/// Lost replies on the board's CAS writes: an increment whose reply was
/// lost is not retried, so it is counted at most once — exactly when its
/// write applied — and every acknowledged one exactly once.
#[test]
fn a_lost_increment_is_counted_at_most_once() {
    let store = LossyStore::new("topk:");
    let board = Leaderboard::new(Arc::clone(&store), "lossy", 50).unwrap();
    let (mut acknowledged, mut ambiguous) = (0, 0);
    for i in 0..1000u64 {
        match board.incr(format!("m{}", i % 80), 1) {
            Ok(_) => acknowledged += 1,
            Err(Error::Ambiguous { .. }) => ambiguous += 1,
            Err(e) => panic!("{e}"),
        }
    }
    let total = board.summary().unwrap().total();
    assert!(ambiguous > 0);
    assert_eq!(total, acknowledged + store.applied_unseen());
    println!(
        "leaderboard, lost replies on every second write: {acknowledged} acknowledged, {ambiguous} ambiguous ({} applied unseen); N = {total}: each counted at most once",
        store.applied_unseen()
    );
}
