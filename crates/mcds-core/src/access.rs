//! One algorithm for the blocking and the async API: [`Access`], [`Io`] and
//! [`block_on`].
//!
//! Each structure's algorithm is written once, as an `async fn` that
//! reaches the store through an [`Access`]: a store and an [`Io`] mode.
//!
//! * **The async API** runs it with [`Io::Async`]: each store call is the
//!   store's [`execute_async`](crate::Store::execute_async) (for memcached,
//!   a request queued on a shared connection, its reply delivered by a
//!   waker; no thread blocks), and a backoff is a timer.
//! * **The blocking API** runs the same `async fn` with [`Io::Blocking`]
//!   under [`block_on`]: each store call is the blocking
//!   [`execute`](crate::Store::execute), done inline, so the future never
//!   waits and `block_on` polls it exactly once. This costs no thread hop
//!   and no allocation (the blocking API of a one-caller program sends its
//!   request and reads its reply on its own thread, as before).
//!
//! So a sync facade sits over an async core, without a runtime under the
//! sync API: there is no second copy of any algorithm, and the blocking API
//! pays nothing for the async one.
//!
//! ```
//! use mcds_core::{Access, Io, Key, MemoryStore, Result, Ttl, block_on};
//!
//! // An algorithm, written once.
//! async fn bump_twice(access: Access<'_>, key: &Key) -> Result<u64> {
//!     access.incr_or_init(key, 1, 1, Ttl::Never).await?;
//!     access.incr_or_init(key, 1, 1, Ttl::Never).await
//! }
//!
//! let store = MemoryStore::new();
//! let key = Key::new("hits")?;
//! // Blocking: no runtime needed.
//! assert_eq!(block_on(bump_twice(Access::new(&store, Io::Blocking), &key))?, 2);
//! // Async: the same function, awaited (here on a minimal executor).
//! let async_way = bump_twice(Access::new(&store, Io::Async), &key);
//! assert_eq!(block_on(async_way)?, 4);
//! # Ok::<(), mcds_core::Error>(())
//! ```

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use crate::error::Result;
use crate::item::{Item, Updated};
use crate::key::Key;
use crate::op::{Op, Reply};
use crate::store::Store;
use crate::ttl::Ttl;

/// A boxed, sendable future: what [`Store`]'s async methods return (a trait
/// object cannot return `impl Future`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The function [`Access::update`] calls: an [`UpdateFn`](crate::UpdateFn)
/// that is also `Send`, so that an async structure's future is.
pub type SendUpdateFn<'a> = dyn FnMut(Option<&[u8]>) -> Option<Vec<u8>> + Send + 'a;

/// How an algorithm may wait for the store (see [`Access`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Io {
    /// Block the calling thread on each store call (the blocking API).
    Blocking,
    /// Never block: await the store's async methods and async timers (the
    /// async API).
    Async,
}

/// The async twin of each typed [`Store`] method, from the op table (see
/// [`for_each_op!`](crate::for_each_op)). The blocking mode calls the
/// store's typed method itself, so a backend's own version of one (the
/// embedded store answers `incr_or_init` without an `Op`) is used; the
/// async mode sends the op through [`Store::execute_async`].
macro_rules! access_methods {
    (
        ops { $(
            $(#[doc = $doc:literal])*
            $rw:ident $method:ident $variant:ident $shape:tt -> $ret:ty, $accessor:ident;
        )* }
        replies { $($replies:tt)* }
    ) => { $(
        access_method!($method $variant $shape -> $ret, $accessor);
    )* };
}

/// One method of [`access_methods!`].
macro_rules! access_method {
    ($method:ident $variant:ident ($ty:ty) -> $ret:ty, $accessor:ident) => {
        #[doc = concat!("[`Store::", stringify!($method), "`].")]
        #[inline]
        #[allow(clippy::needless_lifetimes)]
        pub async fn $method<'a>(&self, key: $ty) -> Result<$ret> {
            match self.io {
                Io::Blocking => self.store.$method(key),
                Io::Async => self.store.execute_async(&Op::$variant(key)).await?.$accessor(),
            }
        }
    };
    (
        $method:ident $variant:ident
        { $( $(#[$fdoc:meta])* $field:ident : $fty:ty ),* $(,)? } -> $ret:ty, $accessor:ident
    ) => {
        #[doc = concat!("[`Store::", stringify!($method), "`].")]
        #[inline]
        #[allow(clippy::needless_lifetimes)]
        pub async fn $method<'a>(&self, $($field: $fty),*) -> Result<$ret> {
            match self.io {
                Io::Blocking => self.store.$method($($field),*),
                Io::Async => {
                    let op = Op::$variant { $($field),* };
                    self.store.execute_async(&op).await?.$accessor()
                }
            }
        }
    };
}

/// A store and the way to wait for it: what a structure's algorithm uses
/// for every store call, so that one `async fn` serves both APIs.
///
/// Its methods mirror [`Store`]'s typed methods, as `async fn`s.
#[derive(Clone, Copy, Debug)]
pub struct Access<'s> {
    store: &'s dyn Store,
    io: Io,
}

impl<'s> Access<'s> {
    /// `store`, reached in `io` mode.
    pub fn new(store: &'s dyn Store, io: Io) -> Access<'s> {
        Access { store, io }
    }

    /// The store.
    pub fn store(&self) -> &'s dyn Store {
        self.store
    }

    /// The mode.
    pub fn io(&self) -> Io {
        self.io
    }

    /// Run one operation ([`Store::execute`] or [`Store::execute_async`]).
    #[inline]
    pub async fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        match self.io {
            Io::Blocking => self.store.execute(op),
            Io::Async => self.store.execute_async(op).await,
        }
    }

    /// Run a batch ([`Store::pipeline`] or [`Store::pipeline_async`]).
    pub async fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        match self.io {
            Io::Blocking => self.store.pipeline(ops),
            Io::Async => self.store.pipeline_async(ops).await,
        }
    }

    /// [`run_pipeline`](crate::run_pipeline): exactly `N` ops in one
    /// batch, their `N` results.
    pub async fn run_pipeline<const N: usize>(
        &self,
        ops: [Op<'_>; N],
    ) -> Result<[Result<Reply>; N]> {
        let replies = self.pipeline(&ops).await;
        crate::op::exactly(replies, self.store.backend_name())
    }

    /// [`Store::supports_cas`] (for memcached: may connect first, which the
    /// async mode does without blocking).
    pub async fn supports_cas(&self, key: &Key) -> Result<bool> {
        match self.io {
            Io::Blocking => self.store.supports_cas(key),
            Io::Async => self.store.supports_cas_async(key).await,
        }
    }

    /// [`Store::retention`] (for memcached: asks the server, which the
    /// async mode does without blocking).
    pub async fn retention(&self, key: &Key) -> Result<crate::Retention> {
        match self.io {
            Io::Blocking => self.store.retention(key),
            Io::Async => self.store.retention_async(key).await,
        }
    }

    /// Wait `delay`: a thread sleep when blocking, a timer when async.
    pub async fn sleep(&self, delay: Duration) {
        match self.io {
            Io::Blocking => std::thread::sleep(delay),
            Io::Async => futures_timer::Delay::new(delay).await,
        }
    }

    // One async method per op of the op table (`get`, `set`, ...,
    // `touch`): see `access_methods!`.
    crate::for_each_op!(access_methods);

    /// [`Store::get_multi`]: one batch, one result per key; any failure
    /// fails the whole call.
    pub async fn get_multi(&self, keys: &[Key]) -> Result<Vec<Option<Item>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let ops: Vec<Op<'_>> = keys.iter().map(Op::Get).collect();
        self.pipeline(&ops)
            .await
            .into_iter()
            .map(|r| r.and_then(Reply::item))
            .collect()
    }

    /// [`Store::update`]: the blocking mode calls the store's own `update`
    /// (a backend may refuse it); the async mode runs the same
    /// read-modify-write loop with async calls and timer backoff. `f` is
    /// `Send` so that the async future is (a task may move between
    /// threads).
    pub async fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut SendUpdateFn<'_>,
    ) -> Result<Updated> {
        match self.io {
            Io::Blocking => self.store.update(key, ttl, max_attempts, f),
            Io::Async => crate::backend::update_loop(self, key, ttl, max_attempts, f).await,
        }
    }
}

/// Run `future` to completion on the calling thread, parking it while the
/// future waits. A future of the blocking mode ([`Io::Blocking`]) is ready
/// at its first poll: then this is one poll, with no allocation and no
/// system call (not even the thread's waker is made). Any other future
/// works too (its waker unparks the thread); while it runs,
/// [`in_block_on`] is true on this thread.
#[inline]
pub fn block_on<F: Future>(future: F) -> F::Output {
    // Inlined, so that the future is pinned where the caller builds it
    // rather than copied into this frame (a blocking call's future holds
    // its whole chain of calls, and the copy showed in profiles).
    let mut future = std::pin::pin!(future);
    let _inside = InBlockOn::enter();
    // First with a waker that does nothing: a blocking-mode future is ready
    // now, and the thread's own waker (a handle on the thread, kept for the
    // thread's life) is made only for a future that waits. One that returns
    // `Pending` here is polled again with the real waker before the thread
    // parks (a future arranges its wake-up for the waker of its latest
    // poll, so no wake is lost in between).
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => wait_for(future),
    }
}

/// The rest of [`block_on`], for a future that waits: poll it with the
/// thread's waker, parking the thread in between.
#[inline(never)]
fn wait_for<F: Future>(mut future: Pin<&mut F>) -> F::Output {
    THREAD_WAKER.with(|waker| {
        let mut cx = Context::from_waker(waker);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
            // A wake that came before this park makes it return at once.
            std::thread::park();
        }
    })
}

thread_local! {
    /// How deep the calling thread is in [`block_on`] calls.
    static BLOCK_ON_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether the calling thread is running a future under [`block_on`]
/// (blocked until it is done). A store's async path that would wait on a
/// tokio runtime's reactor must not, here: `block_on` inside a task holds
/// that runtime's worker thread, and with every worker so held nothing
/// would deliver the readiness it waits for (mcds-memcached then queues
/// the request for a connection's helper thread, as on other executors).
pub fn in_block_on() -> bool {
    BLOCK_ON_DEPTH.with(|d| d.get() > 0)
}

/// Marks the calling thread as in [`block_on`] while it lives.
struct InBlockOn;

impl InBlockOn {
    #[inline]
    fn enter() -> InBlockOn {
        BLOCK_ON_DEPTH.with(|d| d.set(d.get() + 1));
        InBlockOn
    }
}

impl Drop for InBlockOn {
    #[inline]
    fn drop(&mut self) {
        BLOCK_ON_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Wakes a thread parked in [`block_on`].
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    /// The calling thread's waker, made once per thread.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStore;

    #[test]
    fn block_on_waits_for_a_future_woken_from_another_thread() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f = Arc::clone(&flag);
        let waited = std::future::poll_fn(move |cx| {
            if f.load(std::sync::atomic::Ordering::SeqCst) {
                return Poll::Ready(7);
            }
            let waker = cx.waker().clone();
            let f = Arc::clone(&f);
            let tx = tx.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                f.store(true, std::sync::atomic::Ordering::SeqCst);
                waker.wake();
                let _ = tx.send(());
            });
            Poll::Pending
        });
        assert_eq!(block_on(waited), 7);
        rx.recv().unwrap();
        assert!(flag.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn update_runs_the_same_loop_in_both_modes() {
        let store = MemoryStore::new();
        let key = Key::new("u").unwrap();
        for io in [Io::Blocking, Io::Async] {
            let access = Access::new(&store, io);
            let mut bump = |old: Option<&[u8]>| {
                let n = old.map_or(0, |v| v.len());
                Some(vec![b'x'; n + 1])
            };
            let updated = block_on(access.update(&key, Ttl::Never, 5, &mut bump)).unwrap();
            assert!(matches!(updated, Updated::Stored { .. }));
        }
        assert_eq!(store.get(&key).unwrap().unwrap().value, b"xx");
    }

    #[test]
    fn both_modes_reach_the_same_store() {
        let store = MemoryStore::new();
        let key = Key::new("k").unwrap();
        for io in [Io::Blocking, Io::Async] {
            let access = Access::new(&store, io);
            block_on(access.set(&key, b"v", Ttl::Never)).unwrap();
            let item = block_on(access.get(&key)).unwrap().unwrap();
            assert_eq!(item.value, b"v");
            assert!(block_on(access.delete(&key)).unwrap());
        }
    }
}
