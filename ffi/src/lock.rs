//! `mcds_lock`: a distributed lock. Like every handle it can be shared
//! between threads, so its calls take a `*const` handle; the lease it holds
//! (the Rust `Guard`) sits behind a mutex.
//!
//! A C handle is a lock *and* at most one lease on it: `try_acquire` and
//! `acquire` take the lease, `extend`, `auto_extend`, `fencing_token`,
//! `owner_token` and `is_lost` work on it, and `release` (or `_free`) ends
//! it. Options are handles too: `mcds_lock_with_fencing`,
//! `mcds_lock_with_owner_label` and `mcds_lock_with_backoff` return a new
//! handle with the option set, as the Rust `Lock::with_*` methods return a
//! new `Lock`.

use std::ffi::c_char;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ::mcds_lock::{Extend, Guard, Lock, Release};

use crate::boundary::{
    Fail, boundary, c_string, create, create_with_key, free, handle, out_ptr, query, text, write,
};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// A distributed lock; the handle holds at most one lease at a time.
pub struct mcds_lock {
    lock: Lock,
    guard: Mutex<Option<Guard>>,
}

impl mcds_lock {
    fn new(lock: Lock) -> mcds_lock {
        mcds_lock {
            lock,
            guard: Mutex::new(None),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<Guard>> {
        self.guard.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Create the lock `name` with a lease of `ttl_secs` seconds (at least 1),
/// without fencing tokens or an owner label. `*out` is a new handle the
/// caller owns: free it with `mcds_lock_free`.
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
        create(store, name, out, |scope, name| {
            let lock = Lock::new(scope, name, Duration::from_secs(u64::from(ttl_secs)))?;
            Ok(mcds_lock::new(lock))
        })
    }
}

/// Create the lock kept under exactly the memcached key `key` (`key_len`
/// bytes, borrowed for the call) with a lease of `ttl_secs` seconds (at
/// least 1), for a lock other applications already take with memcached's
/// `add`: Symfony Lock's `MemcachedStore`, or any code that adds the key
/// with a random value and a TTL to lock and deletes it to unlock. No
/// `lock:` naming is added, and neither is a key prefix: the prefix of a
/// store handle made with `mcds_store_with_prefix` is NOT applied, so the
/// lock is on the same key whichever handle of the store it is made from
/// (a prefix the other application uses belongs in `key` itself).
///
/// Both sides exclude each other: whoever added the key first holds it
/// until it is deleted or expires, and `mcds_lock_holder` shows the other
/// side's value while it does. This handle releases and extends only its
/// own lease (by CAS); the other side must likewise never delete a key it
/// did not add. With `mcds_lock_with_fencing`, the tokens count in
/// `<key>:fence`. On a pool, both sides must place the key on the same
/// server (a single server, or the same distribution, such as ketama).
///
/// `key` must be a memcached key: 1 to 250 bytes, none of them a space, a
/// control byte or DEL (bytes from 0x80, UTF-8 say, are fine), and leave
/// room for the `:fence` suffix (so at most 244 bytes); else
/// `MCDS_INVALID_KEY`, the reason in `mcds_last_error_message`. It may be
/// NULL only when `key_len` is 0, which is the empty key (invalid).
/// `ttl_secs` 0 is `MCDS_INVALID_ARGUMENT`. The handle works as one from
/// `mcds_lock_new` (the `mcds_lock_with_…` options included); messages name
/// the lock by its key. `store` is unchanged and stays the caller's. `*out`
/// is a new handle the caller owns: free it with `mcds_lock_free`.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes; `out` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_new_with_key(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    ttl_secs: u32,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create_with_key(store, key, key_len, out, |store, key| {
            let ttl = Duration::from_secs(u64::from(ttl_secs));
            Ok(mcds_lock::new(Lock::with_key(Arc::clone(store), key, ttl)?))
        })
    }
}

/// A new handle on the same lock with `with` applied to its settings.
///
/// # Safety
/// `lock` NULL or live; `out` NULL or writable.
unsafe fn derive(
    lock: *const mcds_lock,
    out: *mut *mut mcds_lock,
    with: impl FnOnce(Lock) -> Result<Lock, Fail>,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lock, "lock", out, "out", |lock| {
            let derived = with(lock.lock.clone())?;
            Ok(Box::into_raw(Box::new(mcds_lock::new(derived))))
        })
    }
}

/// A new handle on the same lock (same name, TTL and other settings) that
/// hands out fencing tokens (`fencing` true) or not: every acquire then
/// also increments a counter, strictly increasing per lock name, which
/// `mcds_lock_fencing_token` reads. Pass the token to the resource the lock
/// protects, which refuses writes carrying a token older than one it has
/// seen: that is what keeps a holder that paused past its lease from
/// overwriting the next holder's work. Acquiring stays one round trip.
///
/// The new handle holds no lease; `lock` is unchanged. `*out` is a new
/// handle the caller owns: free it with `mcds_lock_free`.
///
/// # Safety
/// `lock` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_with_fencing(
    lock: *const mcds_lock,
    fencing: bool,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { derive(lock, out, |l| Ok(l.with_fencing(fencing))) }
}

/// A new handle on the same lock whose owner tokens name the holder:
/// `"<label> <random hex>"`, which `mcds_lock_holder` returns to whoever
/// inspects the lock (`mcds lock run` uses `"host=<h> pid=<p>"`). `label`
/// (NUL-terminated, borrowed for the call) is at most 200 bytes of
/// printable ASCII, spaces included, else `MCDS_INVALID_ARGUMENT`; `""`
/// removes the label. The random part keeps tokens unique, so holders with
/// the same label never release each other's lease.
///
/// The new handle holds no lease; `lock` is unchanged. `*out` is a new
/// handle the caller owns: free it with `mcds_lock_free`.
///
/// # Safety
/// `lock` NULL or live; `label` NULL or NUL-terminated; `out` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_with_owner_label(
    lock: *const mcds_lock,
    label: *const c_char,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the label is read inside the
    // boundary, after the NULL checks of the handle and the output).
    unsafe {
        derive(lock, out, |l| {
            let label = text(label, "label")?;
            Ok(l.with_owner_label(label)?)
        })
    }
}

/// The longest backoff accepted by `mcds_lock_with_backoff`: one minute.
const MAX_BACKOFF_MS: u32 = 60_000;

/// A new handle on the same lock whose `mcds_lock_acquire` waits between
/// tries a random time under a ceiling that starts at `min_ms` and doubles
/// up to `max_ms` (defaults 1 and 50). `1 <= min_ms <= max_ms <= 60000`,
/// else `MCDS_INVALID_ARGUMENT`.
///
/// The new handle holds no lease; `lock` is unchanged. `*out` is a new
/// handle the caller owns: free it with `mcds_lock_free`.
///
/// # Safety
/// `lock` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_with_backoff(
    lock: *const mcds_lock,
    min_ms: u32,
    max_ms: u32,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        derive(lock, out, |l| {
            if min_ms == 0 || min_ms > max_ms || max_ms > MAX_BACKOFF_MS {
                return Err(Fail(
                    MCDS_INVALID_ARGUMENT,
                    format!(
                        "lock backoff {min_ms}..{max_ms} ms is out of range: use 1 <= min <= max <= {MAX_BACKOFF_MS}"
                    ),
                ));
            }
            let ms = |n: u32| Duration::from_millis(u64::from(n));
            Ok(l.with_backoff(ms(min_ms), ms(max_ms)))
        })
    }
}

fn already_held() -> Fail {
    Fail(
        MCDS_INVALID_ARGUMENT,
        "this lock handle already holds the lock; release it first".into(),
    )
}

fn not_held() -> Fail {
    Fail(
        MCDS_INVALID_ARGUMENT,
        "this lock handle does not hold the lock".into(),
    )
}

/// Make room for a new lease: a lease known to be lost is dropped (without
/// a round trip); a live one is an error.
fn vacate(slot: &mut Option<Guard>) -> Result<(), Fail> {
    match slot {
        Some(guard) if guard.is_lost() => {
            *slot = None;
            Ok(())
        }
        Some(_) => Err(already_held()),
        None => Ok(()),
    }
}

/// Take the lock if it is free: `*out_acquired` is true if this handle now
/// holds it, false if another owner does. One round trip (with fencing
/// too). `MCDS_INVALID_ARGUMENT` if this handle already holds a lease that
/// is not known to be lost (a lost one is simply replaced).
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
            let mut slot = lock.slot();
            vacate(&mut slot)?;
            *slot = lock.lock.try_acquire()?;
            Ok(slot.is_some())
        })
    }
}

/// Wait up to `timeout_ms` for the lock. `MCDS_WAIT_TIMEOUT` if it stayed
/// taken. `MCDS_INVALID_ARGUMENT` if this handle already holds a lease that
/// is not known to be lost. Other calls on this handle wait meanwhile.
///
/// # Safety
/// `lock` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_acquire(lock: *const mcds_lock, timeout_ms: u32) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lock = unsafe { handle(lock, "lock") }?;
        let mut slot = lock.slot();
        vacate(&mut slot)?;
        *slot = Some(
            lock.lock
                .acquire(Duration::from_millis(u64::from(timeout_ms)))?,
        );
        Ok(())
    })
}

/// Run `f` on the lease this handle holds (`MCDS_INVALID_ARGUMENT` if none)
/// and write its result.
///
/// # Safety
/// `lock` NULL or live; `out` NULL or writable.
unsafe fn with_guard<T>(
    lock: *const mcds_lock,
    out: *mut T,
    out_name: &str,
    f: impl FnOnce(&mut Guard) -> Result<T, Fail>,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lock, "lock", out, out_name, |lock| {
            let mut slot = lock.slot();
            f(slot.as_mut().ok_or_else(not_held)?)
        })
    }
}

/// Release the lock this handle holds. `*out_released` is true if it was
/// still ours, false if the lease had been lost (another owner may hold it
/// now; it was not touched). `MCDS_INVALID_ARGUMENT` if the handle holds
/// nothing. On any other error (a timeout, a server down, no reply) the
/// handle still holds the guard: call `mcds_lock_release` again to retry.
/// Stops an auto-extension.
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
            let mut slot = lock.slot();
            let guard = slot.as_mut().ok_or_else(not_held)?;
            // On an error (timeout, server down, no reply) the handle
            // keeps the guard, so calling release again retries it.
            let released = guard.try_release()? == Release::Released;
            *slot = None;
            Ok(released)
        })
    }
}

/// Renew the lease this handle holds for `ttl_secs` seconds (at least 1)
/// from now, if it is still ours: `*out_extended` is true if it was, false
/// if the lease had been lost (expired, evicted, taken by another owner;
/// nothing was touched, and `mcds_lock_is_lost` now says true). One round
/// trip. `MCDS_INVALID_ARGUMENT` if the handle holds nothing or `ttl_secs`
/// is 0. An error such as `MCDS_AMBIGUOUS` can be retried: a renewal that
/// was applied unseen is recognised by the next one.
///
/// # Safety
/// `lock` NULL or live; `out_extended` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_extend(
    lock: *const mcds_lock,
    ttl_secs: u32,
    out_extended: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        with_guard(lock, out_extended, "out_extended", |guard| {
            let extended = guard.extend(Duration::from_secs(u64::from(ttl_secs)))?;
            Ok(extended == Extend::Extended)
        })
    }
}

/// Renew the lease this handle holds in the background, every
/// `ttl_secs / 3`, for `ttl_secs` (at least 1) each time, until it is
/// released (`mcds_lock_release`, `mcds_lock_free`) or found lost. Poll
/// `mcds_lock_is_lost` from the work loop: it turns true when a renewal
/// finds the lease gone, or when renewals keep failing and the next would
/// come after the lease ends (about `ttl_secs / 3` before another client
/// can take the lock: time to stop the work). Calling it again replaces
/// the renewer. The renewer is a thread of libmcds that never calls into
/// the caller's code. `MCDS_INVALID_ARGUMENT` if the handle holds nothing
/// or `ttl_secs` is 0.
///
/// # Safety
/// `lock` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_auto_extend(
    lock: *const mcds_lock,
    ttl_secs: u32,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lock = unsafe { handle(lock, "lock") }?;
        let mut slot = lock.slot();
        let guard = slot.as_mut().ok_or_else(not_held)?;
        Ok(guard.auto_extend(Duration::from_secs(u64::from(ttl_secs)))?)
    })
}

/// Whether the lease this handle holds is known to be lost, in
/// `*out_lost`: found so by `mcds_lock_extend`, the auto-extension or a
/// release. No round trip: false means no call has found it lost yet.
/// `MCDS_INVALID_ARGUMENT` if the handle holds nothing (after a release,
/// say).
///
/// # Safety
/// `lock` NULL or live; `out_lost` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_is_lost(
    lock: *const mcds_lock,
    out_lost: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { with_guard(lock, out_lost, "out_lost", |guard| Ok(guard.is_lost())) }
}

/// The fencing token of the lease this handle holds, in `*out_token`:
/// strictly greater than every token handed out before for this lock name
/// while its counter lives (see the Rust `mcds_lock` docs for when it is
/// recreated). `MCDS_INVALID_ARGUMENT` if the handle holds nothing or was
/// not made with `mcds_lock_with_fencing(…, true, …)`.
///
/// # Safety
/// `lock` NULL or live; `out_token` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_fencing_token(
    lock: *const mcds_lock,
    out_token: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        with_guard(lock, out_token, "out_token", |guard| {
            guard.fencing_token().ok_or_else(|| {
                Fail(
                    MCDS_INVALID_ARGUMENT,
                    "this lock hands out no fencing tokens: make the handle with mcds_lock_with_fencing".into(),
                )
            })
        })
    }
}

/// The owner token of the lease this handle holds (what the lock item
/// stores: `"<label> <random hex>"` or just the random hex), as a new
/// NUL-terminated string in `*out_token` that the caller owns: free it with
/// `mcds_string_free`. `MCDS_INVALID_ARGUMENT` if the handle holds nothing.
///
/// # Safety
/// `lock` NULL or live; `out_token` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_owner_token(
    lock: *const mcds_lock,
    out_token: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        with_guard(lock, out_token, "out_token", |guard| {
            Ok(c_string(guard.owner_token()))
        })
    }
}

/// Who holds the lock now, whichever handle or process it is: the holder's
/// owner token as a new NUL-terminated string in `*out_holder` that the
/// caller owns (free it with `mcds_string_free`), or NULL if the lock is
/// free. One round trip. Bytes that are not UTF-8 (written by another
/// program) come back as U+FFFD, a NUL byte as the two characters `\0`.
///
/// # Safety
/// `lock` NULL or live; `out_holder` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_holder(
    lock: *const mcds_lock,
    out_holder: *mut *mut c_char,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lock = unsafe { handle(lock, "lock") }?;
        let out = out_ptr(out_holder, "out_holder")?;
        let holder = lock
            .lock
            .holder()?
            .map_or(std::ptr::null_mut(), |h| c_string(&h));
        // SAFETY: checked non-NULL.
        unsafe { write(out, holder) };
        Ok(())
    })
}

/// Free a lock handle (NULL is a no-op), stopping its auto-extension and
/// releasing a lease it still holds (best effort: errors are ignored; call
/// `mcds_lock_release` first to learn the outcome).
///
/// # Safety
/// `lock` must be NULL or a live lock, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_free(lock: *mut mcds_lock) {
    // SAFETY: forwarded caller contract.
    unsafe { free(lock) }
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};
    use std::ptr;

    use ::mcds_core::{Key, Ttl};

    use super::*;
    use crate::result::MCDS_OK;

    /// A lock on an exact key is the raw key, not `lock:…:owner`, and not
    /// the store's prefix: an add-based lock another program took there
    /// excludes it, and its own lease is the raw key's value.
    #[test]
    fn a_lock_with_a_key_is_that_raw_key_without_the_prefix() {
        let (mut store, mut app, mut lock) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let (mut acquired, mut holder) = (false, ptr::null_mut());
        let key = Key::new("report-lock").unwrap();
        // SAFETY: writable outputs, NUL-terminated strings, key bytes of
        // their length, live handles freed once, a string from mcds freed
        // with mcds_string_free.
        unsafe {
            assert_eq!(crate::mcds_store_new_memory(&mut store), MCDS_OK);
            assert_eq!(
                crate::mcds_store_with_prefix(store, c"app/".as_ptr(), &mut app),
                MCDS_OK
            );
            let raw = (*store).scope.store();
            assert_eq!(
                mcds_lock_new_with_key(app, b"report-lock".as_ptr(), 11, 30, &mut lock),
                MCDS_OK
            );
            raw.add(&key, b"php-token", Ttl::secs(30)).unwrap();
            assert_eq!(mcds_lock_try_acquire(lock, &mut acquired), MCDS_OK);
            assert!(!acquired);
            assert_eq!(mcds_lock_holder(lock, &mut holder), MCDS_OK);
            assert_eq!(CStr::from_ptr(holder).to_str().unwrap(), "php-token");
            crate::mcds_string_free(holder);
            raw.delete(&key).unwrap();
            assert_eq!(mcds_lock_try_acquire(lock, &mut acquired), MCDS_OK);
            assert!(acquired);
            assert!(raw.get(&key).unwrap().is_some());
            assert!(
                raw.get(&Key::new("app/report-lock").unwrap())
                    .unwrap()
                    .is_none()
            );
            mcds_lock_free(lock);
            assert!(raw.get(&key).unwrap().is_none(), "released on free");
            crate::mcds_store_free(app);
            crate::mcds_store_free(store);
        }
    }

    #[test]
    fn a_holder_written_by_another_program_comes_back_escaped() {
        let name = CString::new("odd").unwrap();
        let (mut store, mut lock) = (ptr::null_mut(), ptr::null_mut());
        let mut holder = ptr::null_mut();
        // SAFETY: writable outputs, live handles freed once, and a string
        // from mcds freed with mcds_string_free.
        unsafe {
            assert_eq!(crate::mcds_store_new_memory(&mut store), MCDS_OK);
            assert_eq!(mcds_lock_new(store, name.as_ptr(), 10, &mut lock), MCDS_OK);
            let key = Key::new("lock:odd:owner").unwrap();
            (*store)
                .scope
                .store()
                .set(&key, b"a\0b\xff", Ttl::Never)
                .unwrap();
            assert_eq!(mcds_lock_holder(lock, &mut holder), MCDS_OK);
            assert_eq!(CStr::from_ptr(holder).to_str().unwrap(), "a\\0b\u{fffd}");
            crate::mcds_string_free(holder);
            mcds_lock_free(lock);
            crate::mcds_store_free(store);
        }
    }
}
