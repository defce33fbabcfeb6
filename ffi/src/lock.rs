//! `mcds_lock`: a distributed lock. Like every handle it can be shared
//! between threads, so its calls take a `*const` handle; the lease it holds
//! sits behind a mutex.

use std::ffi::c_char;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ::mcds_lock::{Guard, Lock, Release};

use crate::boundary::{Fail, boundary, create, free, handle, query};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// A distributed lock; the handle holds at most one lease at a time.
pub struct mcds_lock {
    lock: Lock,
    guard: Mutex<Option<Guard>>,
}

/// Create the lock `name` with a lease of `ttl_secs` seconds (at least 1).
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_new(
    store: *const mcds_store,
    name: *const c_char,
    ttl_secs: u32,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let lock = Lock::new(store, name, Duration::from_secs(u64::from(ttl_secs)))?;
            let handle = mcds_lock {
                lock,
                guard: Mutex::new(None),
            };
            Ok(handle)
        })
    }
}

fn already_held() -> Fail {
    Fail(
        MCDS_INVALID_ARGUMENT,
        "this lock handle already holds the lock; release it first".into(),
    )
}

/// Take the lock if it is free: `*out_acquired` is true if this handle now
/// holds it, false if another owner does. One round trip.
///
/// # Safety
/// `lock` NULL or live; `out_acquired` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_try_acquire(
    lock: *const mcds_lock,
    out_acquired: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lock, "lock", out_acquired, "out_acquired", |lock| {
            let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_some() {
                return Err(already_held());
            }
            *slot = lock.lock.try_acquire()?;
            Ok(slot.is_some())
        })
    }
}

/// Wait up to `timeout_ms` for the lock. `MCDS_WAIT_TIMEOUT` if it stayed taken.
///
/// # Safety
/// `lock` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_acquire(lock: *const mcds_lock, timeout_ms: u32) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lock = unsafe { handle(lock, "lock") }?;
        let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_some() {
            return Err(already_held());
        }
        *slot = Some(
            lock.lock
                .acquire(Duration::from_millis(u64::from(timeout_ms)))?,
        );
        Ok(())
    })
}

/// Release the lock this handle holds. `*out_released` is true if it was
/// still ours, false if the lease had been lost (another owner may hold it
/// now; it was not touched). `MCDS_INVALID_ARGUMENT` if the handle holds
/// nothing. On any other error (a timeout, a server down, no reply) the
/// handle still holds the guard: call `mcds_lock_release` again to retry.
///
/// # Safety
/// `lock` NULL or live; `out_released` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_release(
    lock: *const mcds_lock,
    out_released: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lock, "lock", out_released, "out_released", |lock| {
            let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
            let guard = slot.as_mut().ok_or_else(|| {
                Fail(
                    MCDS_INVALID_ARGUMENT,
                    "this lock handle does not hold the lock".into(),
                )
            })?;
            // On an error (timeout, server down, no reply) the handle
            // keeps the guard, so calling release again retries it.
            let released = guard.try_release()? == Release::Released;
            *slot = None;
            Ok(released)
        })
    }
}

/// Free a lock handle (NULL is a no-op), releasing a lease it still holds.
///
/// # Safety
/// `lock` must be NULL or a live lock, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_free(lock: *mut mcds_lock) {
    // SAFETY: forwarded caller contract.
    unsafe { free(lock) }
}
