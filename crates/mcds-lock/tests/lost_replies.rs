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

#[test]
fn an_applied_add_whose_reply_was_lost_is_recognised_as_ours() {
    let store = LostReplies::new("add", 1);
    let lock = Lock::new(
        store.clone() as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap();
    let guard = lock
        .try_acquire()
        .unwrap()
        .expect("the applied add is our lease");
    let other = Lock::new(
        store.clone() as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap();
    assert!(other.try_acquire().unwrap().is_none(), "one holder");
    assert_eq!(guard.release().unwrap(), Release::Released);
    assert!(
        other.try_acquire().unwrap().is_some(),
        "free after the release"
    );
}

#[test]
fn with_fencing_a_lost_add_reply_frees_the_lock_and_reports_it() {
    // The fence increment's outcome is unknown: no lease without its token.
    let store = LostReplies::new("add", 1);
    let lock = Lock::new(
        store.clone() as Arc<dyn Store>,
        "job",
        Duration::from_secs(30),
    )
    .unwrap()
    .with_fencing(true);
    assert!(matches!(lock.try_acquire(), Err(Error::Ambiguous { .. })));
    let guard = lock.try_acquire().unwrap().expect("free again at once");
    assert!(guard.fencing_token().is_some());
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
