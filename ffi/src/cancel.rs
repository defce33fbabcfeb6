//! `mcds_cancel`: a way to stop a call that is waiting for memcached, from
//! another thread. An event loop (Python's asyncio) runs each blocking call
//! on a worker thread under a token ([`mcds_cancel_set_current`]); when the
//! task awaiting that call is cancelled, the loop triggers the token
//! ([`mcds_cancel_trigger`]) and the call returns `MCDS_CANCELLED` at once
//! instead of waiting out its I/O timeout.
//!
//! How: every store handle wraps its store in [`Cancellable`]. While the
//! calling thread has no token (every call but the event loop's), an op
//! goes to the store's blocking path as before, at the cost of one
//! thread-local read. Under a token, an op takes the store's async path
//! (memcached: queued on a shared connection, its reply delivered through
//! a waker) and the thread waits for whichever comes first, the reply or
//! the trigger. A cancelled request is dropped; memcached's connection
//! layer discards the reply that comes later (its tests,
//! `cancelled_async_requests_leave_no_reply_behind`, check that no other
//! caller ever reads it).
//!
//! The op that is stopped answers [`Error::Ambiguous`], which it is: its
//! request may have reached the server. A structure then does what it
//! does for any unanswered write: a half-done write is undone or left
//! with the error saying what may count (a counter map's new field, for
//! one). So that those undoing ops run, a token stops one op per call:
//! the rest of the call runs without it (they are bounded by the store's
//! I/O timeout), and the call answers `MCDS_CANCELLED` with the
//! structure's message. Freeing a handle is never cancelled (a lock's
//! free releases its lease).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use ::mcds_core::{
    BoxFuture, Error, Key, Op, Reply, Result, Retention, Store, Ttl, UpdateFn, Updated, block_on,
};

use crate::boundary::{boundary, free, handle, out_ptr, write};
use crate::result::mcds_result;

/// A cancellation token: made with `mcds_cancel_new`, triggered with
/// `mcds_cancel_trigger` (from any thread), and put in charge of the calling
/// thread's calls with `mcds_cancel_set_current`.
pub struct mcds_cancel {
    state: Arc<Token>,
}

/// What a token shares between the thread that triggers it and the calls
/// waiting under it.
#[derive(Default)]
struct Token {
    triggered: AtomicBool,
    /// The wakers of the calls waiting under this token, by thread: one
    /// per thread waiting now (removed when its wait ends).
    waiters: Mutex<Vec<(usize, Waker)>>,
}

impl Token {
    fn triggered(&self) -> bool {
        self.triggered.load(Ordering::Acquire)
    }

    fn trigger(&self) {
        self.triggered.store(true, Ordering::Release);
        let waiters = std::mem::take(&mut *lock(&self.waiters));
        for (_, waker) in waiters {
            waker.wake();
        }
    }

    fn register(&self, waker: &Waker) {
        let me = this_thread();
        let mut waiters = lock(&self.waiters);
        match waiters.iter_mut().find(|(thread, _)| *thread == me) {
            Some((_, known)) if known.will_wake(waker) => {}
            Some((_, known)) => *known = waker.clone(),
            None => waiters.push((me, waker.clone())),
        }
    }

    /// The calling thread's wait is over: forget its waker.
    fn unregister(&self) {
        let me = this_thread();
        lock(&self.waiters).retain(|(thread, _)| *thread != me);
    }
}

/// A number for the calling thread, unique among live threads: the address
/// of a thread-local. (Not `std::thread::current()`, which makes a handle
/// the main thread never frees, and valgrind reports.)
fn this_thread() -> usize {
    thread_local! {
        static ME: u8 = const { 0 };
    }
    ME.with(|me| std::ptr::from_ref(me) as usize)
}

/// The guard of a mutex nobody panics while holding (a poisoned one is
/// still consistent: it only holds wakers).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

thread_local! {
    /// The token in charge of this thread's calls, if any: a strong
    /// reference of its `Arc`, as a raw pointer (NULL: none). Not an
    /// `Option<Arc>`: a thread-local with a destructor is registered with
    /// the C runtime on every thread that touches it (every thread that
    /// calls into mcds, the lock renewer's too), and valgrind then reports
    /// the stacks of those that outlive the program as possibly lost. A
    /// thread that ends with a token set leaks that one token.
    static CURRENT: Cell<*const Token> = const { Cell::new(std::ptr::null()) };
    /// Set when an op of the current call stopped for its token; read (and
    /// cleared) by the boundary, which then answers `MCDS_CANCELLED`.
    static STOPPED: Cell<bool> = const { Cell::new(false) };
}

/// The token in charge of this thread's calls: none once it stopped an op
/// of the current call (the call's other ops, its cleanups, run to the
/// end).
fn current() -> Option<Arc<Token>> {
    let token = CURRENT.with(Cell::get);
    if token.is_null() || STOPPED.with(Cell::get) {
        return None;
    }
    // SAFETY: a non-NULL CURRENT is a strong reference this thread holds
    // (made by `Arc::into_raw` in `set_current`, released only there), so
    // the count is at least 1 while we add one for the `Arc` returned.
    unsafe {
        Arc::increment_strong_count(token);
        Some(Arc::from_raw(token))
    }
}

/// Put `token` in charge of this thread's calls (`None`: no token),
/// releasing the thread's reference to the one before.
fn set_current(token: Option<Arc<Token>>) {
    let new = token.map_or(std::ptr::null(), Arc::into_raw);
    let old = CURRENT.with(|c| c.replace(new));
    if !old.is_null() {
        // SAFETY: `old` is the strong reference `Arc::into_raw` made here
        // when it was set; it is released once, now that it is replaced.
        drop(unsafe { Arc::from_raw(old) });
    }
}

/// Whether a call on this thread stopped for its token since the last
/// boundary; clears the mark. The boundary calls it before and after
/// every call.
pub(crate) fn take_stopped() -> bool {
    // A wait the call's async ops left registered ends with the call.
    let token = CURRENT.with(Cell::get);
    if !token.is_null() {
        // SAFETY: a non-NULL CURRENT is a strong reference this thread
        // holds (see `current`), alive while it is read here.
        unsafe { &*token }.unregister();
    }
    STOPPED.with(|s| s.replace(false))
}

/// Run `f` with no token in charge of this thread (a free, which must
/// finish: a lock's releases its lease).
pub(crate) fn uncancelled<T>(f: impl FnOnce() -> T) -> T {
    let token = CURRENT.with(|c| c.replace(std::ptr::null()));
    let out = f();
    CURRENT.with(|c| c.set(token));
    out
}

/// What an op answers once its token was triggered: unanswered, so
/// ambiguous for a write. The boundary turns the call's failure into
/// `MCDS_CANCELLED` (see [`take_stopped`]).
fn stopped(key: &Key, backend: &str) -> Error {
    STOPPED.with(|s| s.set(true));
    Error::Ambiguous {
        key: key.display(),
        server: backend.to_string(),
        reason: "the call was cancelled (mcds_cancel_trigger) while it waited".into(),
    }
}

/// `future`, or `None` as soon as `token` is triggered.
struct UntilTriggered<'a, F: ?Sized> {
    future: Pin<&'a mut F>,
    token: &'a Token,
}

impl<F: Future + ?Sized> Future for UntilTriggered<'_, F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        if self.token.triggered() {
            return Poll::Ready(None);
        }
        self.token.register(cx.waker());
        // A trigger between the check and the registration woke nobody:
        // look again now that the waker is registered.
        if self.token.triggered() {
            return Poll::Ready(None);
        }
        self.future.as_mut().poll(cx).map(Some)
    }
}

/// `future` awaited until it is ready (`Some`) or `token` is triggered
/// (`None`). The thread's waker stays registered: other futures of the
/// same call may still be waiting on this thread under the token (a
/// quorum's servers), and forgetting it when the first one was done left
/// the others unwoken by a trigger, to wait out their I/O timeout. The
/// boundary forgets it when the call ends ([`take_stopped`]).
async fn until_triggered<F: Future + ?Sized>(
    token: &Token,
    future: Pin<&mut F>,
) -> Option<F::Output> {
    UntilTriggered { future, token }.await
}

/// Run `future` on this thread until it is ready (`Some`) or `token` is
/// triggered (`None`).
fn run<F: Future>(token: &Token, future: F) -> Option<F::Output> {
    if token.triggered() {
        return None;
    }
    let future = std::pin::pin!(future);
    let out = block_on(UntilTriggered { future, token });
    token.unregister();
    out
}

/// A store whose ops can be cancelled through the calling thread's token
/// (see the module docs). Without a token every method is the inner
/// store's own.
#[derive(Debug)]
pub(crate) struct Cancellable {
    inner: Arc<dyn Store>,
}

impl Cancellable {
    /// `store`, made cancellable. A quorum's members are each made
    /// cancellable (a lock calls them, not the quorum).
    pub(crate) fn wrap(store: Arc<dyn Store>) -> Arc<dyn Store> {
        if let Some(quorum) = store.quorum() {
            return Arc::new(quorum.map_members(Cancellable::wrap));
        }
        Arc::new(Cancellable { inner: store })
    }
}

impl Store for Cancellable {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }

    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        match current() {
            None => self.inner.execute(op),
            Some(token) => run(&token, self.inner.execute_async(op))
                .unwrap_or_else(|| Err(stopped(op.key(), self.backend_name()))),
        }
    }

    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        match current() {
            None => self.inner.pipeline(ops),
            Some(token) => run(&token, self.inner.pipeline_async(ops)).unwrap_or_else(|| {
                ops.iter()
                    .map(|op| Err(stopped(op.key(), self.backend_name())))
                    .collect()
            }),
        }
    }

    // The async path is taken inside a blocking call by a structure that
    // waits on several stores at once (a quorum lock: one future per
    // server, polled together on the calling thread): under a token those
    // futures stop too when it is triggered.
    fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
        let Some(token) = current() else {
            return self.inner.execute_async(op);
        };
        Box::pin(async move {
            let mut inner = self.inner.execute_async(op);
            until_triggered(&token, inner.as_mut())
                .await
                .unwrap_or_else(|| Err(stopped(op.key(), self.backend_name())))
        })
    }

    fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
        let Some(token) = current() else {
            return self.inner.pipeline_async(ops);
        };
        Box::pin(async move {
            let mut inner = self.inner.pipeline_async(ops);
            until_triggered(&token, inner.as_mut())
                .await
                .unwrap_or_else(|| {
                    ops.iter()
                        .map(|op| Err(stopped(op.key(), self.backend_name())))
                        .collect()
                })
        })
    }

    fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
        self.inner.supports_cas_async(key)
    }

    fn supports_cas(&self, key: &Key) -> Result<bool> {
        match current() {
            None => self.inner.supports_cas(key),
            Some(token) => run(&token, self.inner.supports_cas_async(key))
                .unwrap_or_else(|| Err(stopped(key, self.backend_name()))),
        }
    }

    fn retention(&self, key: &Key) -> Result<Retention> {
        match current() {
            None => self.inner.retention(key),
            Some(token) => run(&token, self.inner.retention_async(key))
                .unwrap_or_else(|| Err(stopped(key, self.backend_name()))),
        }
    }

    fn retention_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<Retention>> {
        self.inner.retention_async(key)
    }

    fn colocated(&self, a: &Key, b: &Key) -> bool {
        self.inner.colocated(a, b)
    }

    fn item_size_limit(&self) -> usize {
        self.inner.item_size_limit()
    }

    fn incr_or_init(&self, key: &Key, delta: u64, initial: u64, ttl: Ttl) -> Result<u64> {
        match current() {
            // The embedded store answers it without an op: keep that.
            None => self.inner.incr_or_init(key, delta, initial, ttl),
            Some(_) => self
                .execute(&Op::IncrOrInit {
                    key,
                    delta,
                    initial,
                    ttl,
                })?
                .value(),
        }
    }

    /// Under a token: the CAS loop over this store's cancellable ops, once
    /// the server is known to have CAS (a store that has none, such as
    /// twemproxy's, keeps its own answer, a refusal before anything is
    /// read).
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        match current() {
            Some(_) if self.supports_cas(key)? => {
                ::mcds_core::backend::update(self, key, ttl, max_attempts, f)
            }
            _ => self.inner.update(key, ttl, max_attempts, f),
        }
    }
}

/// Create a cancellation token, not triggered. `*out` is a new handle the
/// caller owns: free it with `mcds_cancel_free` (after no thread has it as
/// its current token any more).
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_cancel_new(out: *mut *mut mcds_cancel) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let token = Box::new(mcds_cancel {
            state: Arc::new(Token::default()),
        });
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(token)) };
        Ok(())
    })
}

/// Trigger `cancel`, from any thread: every call waiting for memcached under
/// it (on threads that made it their current token) stops waiting now and
/// returns `MCDS_CANCELLED`, and so does every later call under it. A
/// triggered token stays triggered; make a new one for the next call.
///
/// A cancelled call stopped waiting, not necessarily before its request
/// reached the server: a write may have been applied, as with
/// `MCDS_AMBIGUOUS`, and the message says what the structure made of it
/// (a half-done write undone, or what may count). So that such undoing
/// can run, a token stops one request per call: the rest of that call
/// runs to its end, each request bounded by the store's I/O timeout. A
/// call that waits for something else than a reply (a lock's backoff
/// between attempts, a `text://` store's request, which blocks its
/// thread) stops at its next request instead. Freeing a handle is never
/// cancelled. Idempotent.
///
/// # Safety
/// `cancel` must be NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_cancel_trigger(cancel: *const mcds_cancel) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let cancel = unsafe { handle(cancel, "cancel") }?;
        cancel.state.trigger();
        Ok(())
    })
}

/// Make `cancel` the calling thread's current token: the thread's later
/// calls can be stopped by `mcds_cancel_trigger(cancel)`, until it sets
/// another token or NULL (none, the default). The thread keeps its own
/// reference, so `cancel` may be freed while it is current; set NULL before
/// the thread ends, or that reference (a few bytes) is never freed. Calls made
/// without a token take a store's blocking path, which is the fastest
/// for one thread; under a token they take its async path.
///
/// # Safety
/// `cancel` must be NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_cancel_set_current(cancel: *const mcds_cancel) -> mcds_result {
    // SAFETY: forwarded caller contract (NULL is allowed: no token).
    let token = unsafe { cancel.as_ref() }.map(|c| Arc::clone(&c.state));
    set_current(token);
    crate::result::MCDS_OK
}

/// Free a token (NULL is ignored). Threads that still have it as their
/// current token keep it until they set another.
///
/// # Safety
/// `cancel` must be NULL or a token from `mcds_cancel_new`, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_cancel_free(cancel: *mut mcds_cancel) {
    // SAFETY: forwarded caller contract.
    unsafe { free(cancel) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::mcds_core::MemoryStore;

    #[test]
    fn without_a_token_ops_pass_through_and_with_a_triggered_one_they_stop() {
        let store = Cancellable::wrap(Arc::new(MemoryStore::new()));
        let k = Key::new("k").unwrap();
        assert_eq!(store.incr_or_init(&k, 1, 5, Ttl::Never).unwrap(), 5);
        let token = Arc::new(Token::default());
        set_current(Some(Arc::clone(&token)));
        assert_eq!(store.incr(&k, 1).unwrap(), Some(6));
        assert!(!take_stopped());
        token.trigger();
        assert!(matches!(store.incr(&k, 1), Err(Error::Ambiguous { .. })));
        // One op per call is stopped: the call's next ones (its cleanup)
        // run.
        assert_eq!(store.get(&k).unwrap().unwrap().value, b"6");
        assert!(take_stopped());
        assert!(!take_stopped(), "the mark is taken once");
        let ops = [Op::Get(&k), Op::Get(&k)];
        assert!(store.pipeline(&ops).iter().all(|r| r.is_err()));
        assert!(take_stopped());
        set_current(None);
        assert_eq!(store.incr(&k, 1).unwrap(), Some(7));
        assert!(!take_stopped());
        assert!(token.waiters.lock().unwrap().is_empty(), "no waker is kept");
    }

    #[test]
    fn a_quorums_members_stop_under_a_triggered_token() {
        let members: Vec<(String, Arc<dyn Store>)> = (0..3)
            .map(|i| {
                (
                    format!("m{i}"),
                    Arc::new(MemoryStore::new()) as Arc<dyn Store>,
                )
            })
            .collect();
        let quorum = Cancellable::wrap(Arc::new(::mcds_core::QuorumStore::new(members).unwrap()));
        let members = quorum.quorum().expect("still a quorum").members();
        let k = Key::new("k").unwrap();
        let token = Arc::new(Token::default());
        set_current(Some(Arc::clone(&token)));
        let op = Op::Get(&k);
        assert!(block_on(members[0].store.execute_async(&op)).is_ok());
        token.trigger();
        assert!(matches!(
            block_on(members[1].store.execute_async(&op)),
            Err(Error::Ambiguous { .. })
        ));
        assert!(take_stopped());
        set_current(None);
        assert!(token.waiters.lock().unwrap().is_empty(), "no waker is kept");
    }
}
