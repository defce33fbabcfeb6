//! `mcds_window`: a sliding-window counter.

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_counter::WindowCounter;

use crate::boundary::{create, free, query};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A sliding-window counter: events in the last `slots - 1` slots.
pub struct mcds_window {
    window: WindowCounter,
}

/// Create the window counter `name` with `slots` slots (2 to 1000) of
/// `slot_secs` seconds. `*out` is a new handle the caller owns: free it
/// with `mcds_window_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_window_new(
    store: *const mcds_store,
    name: *const c_char,
    slot_secs: u32,
    slots: u32,
    out: *mut *mut mcds_window,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let window = WindowCounter::new(
                scope,
                name,
                Duration::from_secs(u64::from(slot_secs)),
                slots as usize,
            )?;
            Ok(mcds_window { window })
        })
    }
}

/// Count `delta` events now; the current slot's count in `*out_value`.
///
/// # Safety
/// `w` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_window_incr(
    w: *const mcds_window,
    delta: u64,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(w, "window", out_value, "out_value", |w| {
            Ok(w.window.incr(delta)?)
        })
    }
}

/// The events of the last `slots - 1` complete slots, in `*out_value`.
///
/// # Safety
/// `w` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_window_value(
    w: *const mcds_window,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(w, "window", out_value, "out_value", |w| {
            Ok(w.window.value()?)
        })
    }
}

/// Free a window counter (NULL is a no-op).
///
/// # Safety
/// `w` must be NULL or a live window counter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_window_free(w: *mut mcds_window) {
    // SAFETY: forwarded caller contract.
    unsafe { free(w) }
}
