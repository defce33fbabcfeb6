//! `mcds_view_counter`: a view counter whose true total lives elsewhere (a
//! database), seeded through a loader callback, `mcds_loader`.

use std::cell::Cell;
use std::ffi::{CStr, c_char, c_void};

use ::mcds_core::Error;
use ::mcds_counter::ViewCounter;

use crate::boundary::{Fail, boundary, create, free, handle, null, query, ttl};
use crate::result::{MCDS_CALLBACK_FAILED, MCDS_OK, mcds_result, mcds_result_name};
use crate::store::mcds_store;

/// A loader: writes the stored total (a `SELECT views FROM …`, say) to
/// `*out_value` and returns `MCDS_OK`, or returns any other code to fail.
///
/// The contract, for every function that takes one:
///
/// * It is called **at most once per call**, only on a cache miss, **on the
///   calling thread**, before the call returns; never afterwards, never
///   from another thread. `ctx` is the pointer passed with it, untouched
///   (it may be NULL); mcds never reads or frees it.
/// * `out_value` points to a `uint64_t` that starts at 0 and is valid only
///   during the callback: if it returns `MCDS_OK` without writing, 0 is the
///   total.
/// * Any code other than `MCDS_OK` makes the call fail with
///   `MCDS_CALLBACK_FAILED` (the message names the loader's code) and
///   nothing is counted or cached.
/// * It may call mcds functions, including on the same handle (mcds holds
///   no lock while it runs); they overwrite the thread's last error
///   message.
/// * It **must return normally**: no `longjmp` out of it, no C++ exception
///   or Rust panic escaping it. Unwinding or jumping over the libmcds frames
///   below it is undefined behaviour (a Rust panic there aborts the
///   process).
pub type mcds_loader =
    Option<unsafe extern "C" fn(ctx: *mut c_void, out_value: *mut u64) -> mcds_result>;

/// A view counter whose true total lives elsewhere (a database), cached for
/// real-time display.
pub struct mcds_view_counter {
    counter: ViewCounter,
}

/// Create the view counter `name`; its cached value expires after
/// `ttl_secs` seconds (then it is reloaded), or never with 0. `*out` is a
/// new handle the caller owns: free it with `mcds_view_counter_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_view_counter_new(
    store: *const mcds_store,
    name: *const c_char,
    ttl_secs: u32,
    out: *mut *mut mcds_view_counter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            Ok(mcds_view_counter {
                counter: ViewCounter::new(scope, name)?.with_ttl(ttl(ttl_secs)),
            })
        })
    }
}

/// Run `op` with `loader` wrapped as a Rust loader, and turn a failure it
/// reported into `MCDS_CALLBACK_FAILED`.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable; `loader` NULL or a
/// function keeping the `mcds_loader` contract with `ctx`.
unsafe fn with_loader(
    c: *const mcds_view_counter,
    loader: mcds_loader,
    ctx: *mut c_void,
    out_value: *mut u64,
    op: impl FnOnce(&ViewCounter, &dyn Fn() -> mcds_core::Result<u64>) -> mcds_core::Result<u64>,
) -> mcds_result {
    let body = |c: &mcds_view_counter| {
        let loader = loader.ok_or_else(|| null("loader"))?;
        let failed = Cell::new(None);
        let load = || {
            let mut value = 0;
            // SAFETY: the caller's contract for `loader` and `ctx`; `value`
            // outlives the call.
            let code = unsafe { loader(ctx, &mut value) };
            if code == MCDS_OK {
                return Ok(value);
            }
            failed.set(Some(code));
            Err(Error::InvalidArgument("the loader failed".into()))
        };
        let result = op(&c.counter, &load);
        if let Some(code) = failed.get() {
            // SAFETY: mcds_result_name returns a static C string.
            let name = unsafe { CStr::from_ptr(mcds_result_name(code)) }.to_string_lossy();
            return Err(Fail(
                MCDS_CALLBACK_FAILED,
                format!("the loader callback returned {name} ({code}); nothing was counted"),
            ));
        }
        Ok(result?)
    };
    // SAFETY: forwarded caller contract.
    unsafe { query(c, "counter", out_value, "out_value", body) }
}

/// Count `delta` views; the new total in `*out_value`. One round trip on a
/// hit. On a miss `loader(ctx, …)` is called for the stored total and the
/// cache is seeded with total + `delta` by an atomic increment-or-create,
/// never a plain set, so two first views at once are both counted (two
/// round trips). See `mcds_loader` for the callback's contract;
/// `MCDS_NULL_ARGUMENT` if `loader` is NULL, even on a hit.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable; `loader` NULL or keeping
/// the `mcds_loader` contract with `ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_view_counter_view(
    c: *const mcds_view_counter,
    delta: u64,
    loader: mcds_loader,
    ctx: *mut c_void,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { with_loader(c, loader, ctx, out_value, |c, load| c.view_by(delta, load)) }
}

/// The current total, in `*out_value`: the cached value (one round trip),
/// or on a miss `loader(ctx, …)`'s, which then seeds the cache if no other
/// client did first. See `mcds_loader` for the callback's contract;
/// `MCDS_NULL_ARGUMENT` if `loader` is NULL, even on a hit.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable; `loader` NULL or keeping
/// the `mcds_loader` contract with `ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_view_counter_get(
    c: *const mcds_view_counter,
    loader: mcds_loader,
    ctx: *mut c_void,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { with_loader(c, loader, ctx, out_value, |c, load| c.get(load)) }
}

/// Drop the cached value: the next view or get calls its loader.
///
/// # Safety
/// `c` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_view_counter_invalidate(c: *const mcds_view_counter) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { handle(c, "counter") }?;
        Ok(c.counter.invalidate()?)
    })
}

/// Free a view counter (NULL is a no-op).
///
/// # Safety
/// `c` must be NULL or a live counter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_view_counter_free(c: *mut mcds_view_counter) {
    // SAFETY: forwarded caller contract.
    unsafe { free(c) }
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::ptr;
    use std::thread::ThreadId;

    use super::*;
    use crate::result::{MCDS_IO, MCDS_NULL_ARGUMENT};

    struct Db {
        total: u64,
        code: mcds_result,
        calls: Vec<ThreadId>,
    }

    unsafe extern "C" fn load(ctx: *mut c_void, out_value: *mut u64) -> mcds_result {
        // SAFETY: the tests pass a live `Db` and mcds a writable output.
        let db = unsafe { &mut *ctx.cast::<Db>() };
        db.calls.push(std::thread::current().id());
        // SAFETY: as above.
        unsafe { *out_value = db.total };
        db.code
    }

    fn counter(name: &str) -> (*mut mcds_store, *mut mcds_view_counter) {
        let name = CString::new(name).unwrap();
        let (mut store, mut counter) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: writable outputs, a NUL-terminated name.
        unsafe {
            assert_eq!(crate::mcds_store_new_memory(&mut store), MCDS_OK);
            assert_eq!(
                mcds_view_counter_new(store, name.as_ptr(), 0, &mut counter),
                MCDS_OK
            );
        }
        (store, counter)
    }

    #[test]
    fn the_loader_runs_at_most_once_on_the_calling_thread() {
        let (store, c) = counter("photo");
        let mut db = Db {
            total: 10,
            code: MCDS_OK,
            calls: Vec::new(),
        };
        let ctx = ptr::from_mut(&mut db).cast::<c_void>();
        let mut v = 0;
        // SAFETY: live handles, a loader keeping the contract with `ctx`.
        unsafe {
            assert_eq!(
                mcds_view_counter_view(c, 5, Some(load), ctx, &mut v),
                MCDS_OK
            );
            assert_eq!(v, 15);
            assert_eq!(
                mcds_view_counter_view(c, 1, Some(load), ctx, &mut v),
                MCDS_OK
            );
            assert_eq!(mcds_view_counter_get(c, Some(load), ctx, &mut v), MCDS_OK);
            assert_eq!(v, 16);
        }
        assert_eq!(db.calls, [std::thread::current().id()]);
        // SAFETY: live handles, freed once.
        unsafe {
            mcds_view_counter_free(c);
            crate::mcds_store_free(store);
        }
    }

    #[test]
    fn a_failing_loader_fails_the_call_and_caches_nothing() {
        let (store, c) = counter("failing");
        let mut db = Db {
            total: 10,
            code: MCDS_IO,
            calls: Vec::new(),
        };
        let ctx = ptr::from_mut(&mut db).cast::<c_void>();
        let mut v = 99;
        // SAFETY: live handles, a loader keeping the contract with `ctx`.
        unsafe {
            assert_eq!(
                mcds_view_counter_view(c, 1, Some(load), ctx, &mut v),
                MCDS_CALLBACK_FAILED
            );
            let message = CStr::from_ptr(crate::mcds_last_error_message()).to_string_lossy();
            assert!(message.contains("MCDS_IO (200)"), "{message}");
            assert_eq!(v, 99, "no output on failure");
            assert_eq!(
                mcds_view_counter_view(c, 1, None, ctx, &mut v),
                MCDS_NULL_ARGUMENT
            );
            db.code = MCDS_OK;
            // The failure cached nothing: this call loads again.
            assert_eq!(
                mcds_view_counter_view(c, 1, Some(load), ctx, &mut v),
                MCDS_OK
            );
            assert_eq!(v, 11);
            mcds_view_counter_free(c);
            crate::mcds_store_free(store);
        }
        assert_eq!(db.calls.len(), 2);
    }
}
