//! Work a guard leaves to run after its caller moved on (a dropped async
//! guard's release): on the caller's tokio runtime, or a thread of its
//! own, and never lost when the runtime shuts down first.

use std::sync::{Arc, Mutex, PoisonError};

use mcds_core::{Io, block_on};

/// Run `work` without waiting for it.
///
/// - On a multi-thread tokio runtime: as a task of it (given [`Io::Async`]).
///   Its workers run the task whether or not anyone drives the runtime.
/// - On a current-thread runtime: on a thread of its own named `name`
///   (given [`Io::Blocking`]). Such a runtime runs tasks only while its
///   thread is inside `block_on`, and a sync program that keeps one for
///   occasional async calls may never enter it again (an adversarial
///   review's finding: a dropped guard's release waited there, and the
///   lock stayed held until its TTL). A task on the runtime waits for the
///   thread: a program that ends first (returning from `main` ends every
///   thread) drops the runtime, and the task's drop does what the thread
///   had not finished (the next review's finding: the thread alone was cut
///   short at exit).
/// - Outside a runtime: on a thread of its own, as above (a program that
///   exits at once may cut it short; there is nothing to wait in).
/// - If no thread can be started (current-thread runtime or none): at
///   once, blocking.
///
/// A drop must not block an async caller; a thread of our own may block.
/// A runtime that shuts down drops its tasks, run or not (a guard dropped
/// as a `#[tokio::main]` function ends); `unfinished` then runs, blocking,
/// on the thread that drops the task, so a finished program leaves nothing
/// behind that `work` was to clean up. It may run alongside a thread still
/// doing `work`: both are a release checked against the owner token, so
/// the second finds the item gone or no longer ours.
pub(crate) fn in_background<W, F, U>(name: &str, work: W, unfinished: U)
where
    W: FnOnce(Io) -> F + Send + 'static,
    F: std::future::Future<Output = ()> + Send + 'static,
    U: FnOnce() + Send + 'static,
{
    use tokio::runtime::RuntimeFlavor;
    let runtime = tokio::runtime::Handle::try_current().ok();
    let flavor = runtime.as_ref().map(tokio::runtime::Handle::runtime_flavor);
    match (runtime, flavor) {
        (Some(runtime), Some(flavor)) if flavor != RuntimeFlavor::CurrentThread => {
            let work = work(Io::Async);
            let unfinished = Unfinished(Some(unfinished));
            runtime.spawn(async move {
                work.await;
                unfinished.done();
            });
        }
        (runtime, _) => {
            // Kept here, not moved into the thread, so that it is not lost
            // if no thread can be started.
            let kept = Arc::new(Mutex::new(Some(work)));
            let finished = Arc::new(Finished::default());
            let (take, set) = (Arc::clone(&kept), Arc::clone(&finished));
            let spawned = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    run_kept(&take);
                    set.set();
                });
            if spawned.is_err() {
                // No thread (out of memory or of threads; an adversarial
                // review found the release lost then): here and now,
                // blocking, even in an async caller's drop. Better one
                // blocked round trip than a lock held until its TTL; and
                // the async path would not do: a memcached connection's
                // async requests need its helper thread, which cannot start
                // either.
                run_kept(&kept);
                return;
            }
            if let Some(runtime) = runtime {
                let done = Arc::clone(&finished);
                let unfinished = Unfinished(Some(move || {
                    if !done.is_set() {
                        unfinished();
                    }
                }));
                runtime.spawn(async move {
                    finished.wait().await;
                    unfinished.done();
                });
            }
        }
    }
}

/// Take the work `in_background` kept and run it here, blocking (once:
/// whoever takes it first).
fn run_kept<W, F>(kept: &Mutex<Option<W>>)
where
    W: FnOnce(Io) -> F,
    F: std::future::Future<Output = ()>,
{
    let work = kept.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(work) = work {
        block_on(work(Io::Blocking));
    }
}

/// Set by a background thread when its work is done, awaited by the
/// runtime task that stands in for it at shutdown (see [`in_background`]).
#[derive(Default)]
struct Finished {
    state: Mutex<(bool, Option<std::task::Waker>)>,
}

impl Finished {
    fn set(&self) {
        let waker = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn is_set(&self) -> bool {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0
    }

    async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.0 {
                std::task::Poll::Ready(())
            } else {
                state.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        })
        .await;
    }
}

/// What a background task left undone: run by its drop unless
/// [`done`](Unfinished::done) was called (see [`in_background`]).
struct Unfinished<U: FnOnce()>(Option<U>);

impl<U: FnOnce()> Unfinished<U> {
    fn done(mut self) {
        self.0 = None;
    }
}

impl<U: FnOnce()> Drop for Unfinished<U> {
    fn drop(&mut self) {
        if let Some(unfinished) = self.0.take() {
            unfinished();
        }
    }
}
