//! A held lease renewed in the background ([`Guard::auto_extend`], a
//! thread; [`Guard::auto_extend_async`], a tokio task): when to renew, and
//! when to give the lease up as lost.
//!
//! [`Guard::auto_extend`]: crate::Guard::auto_extend
//! [`Guard::auto_extend_async`]: crate::Guard::auto_extend_async

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcds_core::{Error, Io, Result, block_on};

use crate::{Extend, Held};

/// The renewer of [`Guard::auto_extend`](crate::Guard::auto_extend) (a thread) or
/// [`Guard::auto_extend_async`](crate::Guard::auto_extend_async) (a tokio task).
pub(crate) enum Renewer {
    Thread {
        stop: Arc<(Mutex<bool>, Condvar)>,
        thread: Option<JoinHandle<()>>,
    },
    Task(tokio::task::JoinHandle<()>),
}

impl Renewer {
    pub(crate) fn stop(&mut self) {
        match self {
            Renewer::Thread { stop, thread } => {
                let (flag, wake) = &**stop;
                *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
                wake.notify_all();
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
            // Cancelled at its next await: between renewals it sleeps; an
            // extend cut short leaves a CAS id that the release adopts
            // (its token is still ours).
            Renewer::Task(task) => task.abort(),
        }
    }
}

pub(crate) fn renew(
    state: &Held,
    stop: &(Mutex<bool>, Condvar),
    ttl: Duration,
    interval: Duration,
    on_lost: impl FnOnce(Option<Error>),
) {
    let (flag, wake) = stop;
    loop {
        let guard = flag.lock().unwrap_or_else(PoisonError::into_inner);
        let (guard, _) = wake
            .wait_timeout_while(guard, interval, |stopped| !*stopped)
            .unwrap_or_else(PoisonError::into_inner);
        if *guard {
            return;
        }
        drop(guard);
        if let Some(outcome) = renewal(state, block_on(state.extend(Io::Blocking, ttl)), interval) {
            return on_lost(outcome);
        }
    }
}

/// What one renewal's outcome means for the renewer: `None` to go on,
/// `Some(error)` to stop and report the loss (`None` inside: the lease was
/// found lost; an error: renewals kept failing).
pub(crate) fn renewal(
    state: &Held,
    extended: Result<Extend>,
    interval: Duration,
) -> Option<Option<Error>> {
    match extended {
        Ok(Extend::Extended) => None,
        Ok(Extend::Lost) => Some(None),
        // The call failed and found the lease lost while doing so (a
        // quorum whose servers record another list of servers: it gave
        // the lease up): report it now, with the error, not a renewal
        // later, when another client may hold the lock already.
        Err(e) if state.lost().load(Ordering::SeqCst) => Some(Some(e)),
        Err(e) => {
            // The lease is certain until the TTL of the last write that
            // succeeded, counted from when it was sent. If the next try
            // would come after that, give up now, while it still holds,
            // so the holder can stop before another client can start.
            let until = state.lease_until();
            if Instant::now() + interval >= until {
                state.lost().store(true, Ordering::SeqCst);
                Some(Some(e))
            } else {
                None
            }
        }
    }
}
