//! [`HookStore`]: a store that runs a test's code just before, or just
//! after, the batches it forwards to a real one. The adversarial tests use
//! it to stand for a client thread descheduled between two round trips:
//! the hook waits for a TTL to pass, restarts a server, or lets another
//! client write, at exactly the moment a race needs.

use std::sync::{Arc, Mutex};

use mcds_core::{Key, Op, Reply, Result, Retention, Store};

/// Code run with the ops of a batch (a single op is a batch of one).
pub type Hook = Box<dyn FnMut(&[Op<'_>]) + Send>;

/// Forwards every call to `inner`; runs the hooks set with
/// [`before`](HookStore::before) and [`after`](HookStore::after) around
/// each blocking `execute` and `pipeline` (the async forms are the
/// blocking ones, on the calling thread: hooks see them too).
pub struct HookStore {
    inner: Arc<dyn Store>,
    before: Mutex<Option<Hook>>,
    after: Mutex<Option<Hook>>,
}

impl std::fmt::Debug for HookStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookStore")
            .field("inner", &self.inner)
            .finish()
    }
}

impl HookStore {
    /// A store forwarding to `inner`, with no hooks yet.
    pub fn new(inner: Arc<dyn Store>) -> Arc<HookStore> {
        Arc::new(HookStore {
            inner,
            before: Mutex::new(None),
            after: Mutex::new(None),
        })
    }

    /// Run `hook` before every batch is sent, until replaced.
    pub fn before(&self, hook: impl FnMut(&[Op<'_>]) + Send + 'static) {
        *self.before.lock().unwrap() = Some(Box::new(hook));
    }

    /// Run `hook` after every batch's replies came back, until replaced.
    pub fn after(&self, hook: impl FnMut(&[Op<'_>]) + Send + 'static) {
        *self.after.lock().unwrap() = Some(Box::new(hook));
    }

    /// Run `hook` once, before the first batch for which `when` holds.
    pub fn once_before(
        &self,
        when: impl Fn(&[Op<'_>]) -> bool + Send + 'static,
        hook: impl FnOnce() + Send + 'static,
    ) {
        let mut hook = Some(hook);
        self.before(move |ops| {
            if when(ops)
                && let Some(hook) = hook.take()
            {
                hook();
            }
        });
    }

    /// Run the hook in `slot` with `ops`, without holding the lock (a hook
    /// may use this store, or set another hook); put it back after unless
    /// it was replaced meanwhile.
    fn run(slot: &Mutex<Option<Hook>>, ops: &[Op<'_>]) {
        let taken = slot.lock().unwrap().take();
        if let Some(mut hook) = taken {
            hook(ops);
            let mut slot = slot.lock().unwrap();
            if slot.is_none() {
                *slot = Some(hook);
            }
        }
    }
}

impl Store for HookStore {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        let ops = std::slice::from_ref(op);
        HookStore::run(&self.before, ops);
        let reply = self.inner.execute(op);
        HookStore::run(&self.after, ops);
        reply
    }
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        HookStore::run(&self.before, ops);
        let replies = self.inner.pipeline(ops);
        HookStore::run(&self.after, ops);
        replies
    }
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        self.inner.supports_cas(key)
    }
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        self.inner.colocated(a, b)
    }
    fn item_size_limit(&self) -> usize {
        self.inner.item_size_limit()
    }
    fn quorum(&self) -> Option<&mcds_core::QuorumStore> {
        self.inner.quorum()
    }
    fn retention(&self, key: &Key) -> Result<Retention> {
        self.inner.retention(key)
    }
}
