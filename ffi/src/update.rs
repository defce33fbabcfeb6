//! `mcds_store_update`: a CAS read-modify-write of one key from C, the
//! callback deciding the new value (`mcds_updater`, `mcds_update_set`).
//! memcached has no scripts: one key changed only through this is updated
//! atomically against every other writer (see ATOMICITY.md).

use std::cell::Cell;
use std::ffi::{CStr, c_char, c_void};

use ::mcds_core::{Key, Updated};

use crate::boundary::{Fail, boundary, bytes, handle, null, text, ttl, write};
use crate::result::{MCDS_CALLBACK_FAILED, MCDS_OK, mcds_result, mcds_result_name};
use crate::store::mcds_store;

/// The new value an updater chooses (`mcds_update_set`): opaque, valid only
/// during the updater's call.
pub struct mcds_update {
    value: Option<Vec<u8>>,
}

/// An updater: given the key's current value, chooses the new one.
///
/// The contract:
///
/// * `current` points to `current_len` bytes (NULL when `exists` is false:
///   the key is missing), valid only during the call; `out` likewise.
/// * To write a new value, call `mcds_update_set(out, value, len)` (the
///   bytes are copied; the last call wins) and return `MCDS_OK`. Returning
///   `MCDS_OK` without calling it leaves the item as it is. Any other code
///   aborts: nothing is written, and the call fails with
///   `MCDS_CALLBACK_FAILED` naming that code.
/// * It may be called **several times** in one `mcds_store_update`: once
///   per attempt, when another client changed the item in between (a lost
///   CAS race). It must compute the value from `current` alone and have no
///   other effects. It is called **on the calling thread**, before the
///   call returns, never afterwards.
/// * It may call mcds functions (they overwrite the thread's last error
///   message), and **must return normally**: no `longjmp` or C++ exception
///   out of it.
pub type mcds_updater = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        current: *const u8,
        current_len: usize,
        exists: bool,
        out: *mut mcds_update,
    ) -> mcds_result,
>;

/// Inside an updater: write `value` (`len` bytes, copied; NULL when `len`
/// is 0) as the key's new value. Another call replaces it.
///
/// # Safety
/// `out` NULL or the `out` an updater was given, during that call; `value`
/// NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_update_set(
    out: *mut mcds_update,
    value: *const u8,
    len: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: the caller's contract: `out` is the live update.
        let out = unsafe { out.as_mut() }.ok_or_else(|| null("out"))?;
        // SAFETY: forwarded caller contract.
        let value = unsafe { bytes(value, len, "value") }?;
        out.value = Some(value.to_vec());
        Ok(())
    })
}

/// Update `key` (the store's prefix in front, as it is: a raw key, not a
/// structure name) with a CAS read-modify-write: read it, call
/// `updater(ctx, …)` for the new value, write that only if nobody changed
/// the item since the read, and try again (reading afresh) if someone did,
/// up to `max_attempts` reads (0: 64). The written item expires after
/// `ttl_secs` seconds, or never with 0.
///
/// `*out_written` (NULL allowed) says whether a value was written: false
/// when the updater chose to leave the item. Errors: `MCDS_CONFLICT` after
/// `max_attempts` lost races (nothing written by this call);
/// `MCDS_CALLBACK_FAILED` when the updater returned another code than
/// `MCDS_OK` (nothing written); `MCDS_UNSUPPORTED` on a store without CAS
/// (memcached `-C`, or the text protocol behind a proxy), before the
/// updater runs; `MCDS_NULL_ARGUMENT` if `updater` is NULL. See
/// `mcds_updater` for the callback's contract.
///
/// # Safety
/// `store` NULL or live; `key` NULL or NUL-terminated; `updater` NULL or
/// keeping the `mcds_updater` contract with `ctx`; `out_written` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_update(
    store: *const mcds_store,
    key: *const c_char,
    ttl_secs: u32,
    max_attempts: u32,
    updater: mcds_updater,
    ctx: *mut c_void,
    out_written: *mut bool,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let store = unsafe { handle(store, "store") }?;
        // SAFETY: forwarded caller contract.
        let key = unsafe { text(key, "key") }?;
        let updater = updater.ok_or_else(|| null("updater"))?;
        let key = Key::new(format!("{}{key}", store.scope.prefix()))?;
        let attempts = if max_attempts == 0 { 64 } else { max_attempts };
        let failed = Cell::new(None);
        let mut f = |current: Option<&[u8]>| -> Option<Vec<u8>> {
            if failed.get().is_some() {
                return None;
            }
            let mut out = mcds_update { value: None };
            let (ptr, len) = current.map_or((std::ptr::null(), 0), |c| (c.as_ptr(), c.len()));
            // SAFETY: the caller's contract for `updater` and `ctx`;
            // `current` and `out` outlive the call.
            let code = unsafe { updater(ctx, ptr, len, current.is_some(), &mut out) };
            if code != MCDS_OK {
                failed.set(Some(code));
                return None;
            }
            out.value
        };
        let updated = store
            .scope
            .store()
            .update(&key, ttl(ttl_secs), attempts, &mut f);
        if let Some(code) = failed.get() {
            // SAFETY: mcds_result_name returns a static C string.
            let name = unsafe { CStr::from_ptr(mcds_result_name(code)) }.to_string_lossy();
            return Err(Fail(
                MCDS_CALLBACK_FAILED,
                format!("the updater returned {name} ({code}); nothing was written"),
            ));
        }
        let written = matches!(updated?, Updated::Stored { .. });
        if !out_written.is_null() {
            // SAFETY: non-NULL and writable by the caller's contract.
            unsafe { write(out_written, written) };
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::ptr;

    use super::*;
    use crate::result::{MCDS_NULL_ARGUMENT, MCDS_OK};
    use crate::store::{mcds_store_free, mcds_store_new_memory};

    /// Appends "x" to the value (creating "x"), or aborts with `code`.
    unsafe extern "C" fn append_x(
        ctx: *mut c_void,
        current: *const u8,
        len: usize,
        exists: bool,
        out: *mut mcds_update,
    ) -> mcds_result {
        // SAFETY: the test passes a live code.
        let code = unsafe { *ctx.cast::<mcds_result>() };
        if code != MCDS_OK {
            return code;
        }
        let mut v = if exists {
            // SAFETY: mcds passes `len` readable bytes.
            unsafe { std::slice::from_raw_parts(current, len) }.to_vec()
        } else {
            Vec::new()
        };
        v.push(b'x');
        // SAFETY: `out` is the live update.
        unsafe { mcds_update_set(out, v.as_ptr(), v.len()) }
    }

    #[test]
    fn update_creates_appends_aborts_and_checks_its_arguments() {
        let mut store = ptr::null_mut();
        // SAFETY: a writable out pointer.
        assert_eq!(unsafe { mcds_store_new_memory(&mut store) }, MCDS_OK);
        let key = CString::new("k").unwrap();
        let mut code: mcds_result = MCDS_OK;
        let ctx = (&raw mut code).cast::<c_void>();
        let mut written = false;
        for _ in 0..2 {
            // SAFETY: live store, key, updater and ctx.
            let r = unsafe {
                mcds_store_update(store, key.as_ptr(), 0, 0, Some(append_x), ctx, &mut written)
            };
            assert_eq!(r, MCDS_OK);
            assert!(written);
        }
        // SAFETY: live handle.
        let value = unsafe { &*store }
            .scope
            .store()
            .get(&Key::new("k").unwrap())
            .unwrap()
            .unwrap()
            .value;
        assert_eq!(value, b"xx");
        // SAFETY: `ctx` points to `code`, live.
        unsafe { *ctx.cast::<mcds_result>() = 42 };
        // SAFETY: as above.
        let r = unsafe {
            mcds_store_update(
                store,
                key.as_ptr(),
                0,
                0,
                Some(append_x),
                ctx,
                ptr::null_mut(),
            )
        };
        assert_eq!(r, MCDS_CALLBACK_FAILED);
        // SAFETY: as above; a NULL updater.
        let r = unsafe { mcds_store_update(store, key.as_ptr(), 0, 0, None, ctx, ptr::null_mut()) };
        assert_eq!(r, MCDS_NULL_ARGUMENT);
        // SAFETY: NULL out.
        assert_eq!(
            unsafe { mcds_update_set(ptr::null_mut(), ptr::null(), 0) },
            MCDS_NULL_ARGUMENT
        );
        // SAFETY: live handle, freed once.
        unsafe { mcds_store_free(store) };
    }
}
