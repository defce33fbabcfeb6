//! Replies that never came: a lock's add or delete applied by the store
//! while its reply was lost (`Error::Ambiguous`). The store here is the real
//! embedded store, wrapped so that chosen replies are dropped after the
//! operation was applied, as a connection cut after the server acted does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcds_core::{Error, MemoryStore, Op, Reply, Result, Store};
use mcds_lock::{Lock, Release};

/// Applies every op; drops the reply of the next `drops` ops named `op`.
#[derive(Debug)]
struct LostReplies {
    inner: MemoryStore,
    op: &'static str,
    drops: AtomicUsize,
}

impl LostReplies {
    fn new(op: &'static str, drops: usize) -> Arc<LostReplies> {
        Arc::new(LostReplies {
            inner: MemoryStore::new(),
            op,
            drops: AtomicUsize::new(drops),
        })
    }
}

impl Store for LostReplies {
    fn backend_name(&self) -> &'static str {
        "memory with lost replies"
    }

    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        let reply = self.inner.execute(op);
        if op.name() == self.op
            && self
                .drops
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Err(Error::Ambiguous {
                key: op.key().display(),
                server: "test".into(),
                reason: "reply lost after the store applied it".into(),
            });
        }
        reply
    }
}

/// A release whose delete applied unseen is reported `Lost` on retry, not
/// `Released`: a missing item cannot tell our delete from a flush, eviction
/// or restart that let another holder in (and out) meanwhile, and `Lost` is
/// the answer that never hides such an overlap. The lock is free either way.
#[test]
fn an_applied_release_whose_reply_was_lost_is_lost_on_retry_and_the_lock_free() {
    let store = LostReplies::new("delete_cas", 1);
    let lock = Lock::new(
        store.clone() as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap();
    let mut guard = lock.try_acquire().unwrap().unwrap();
    let first = guard.try_release();
    assert!(matches!(first, Err(Error::Ambiguous { .. })), "{first:?}");
    assert_eq!(guard.try_release().unwrap(), Release::Lost);
    assert!(lock.try_acquire().unwrap().is_some(), "free");
}
