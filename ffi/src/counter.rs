//! `mcds_counter`: an exact shared counter.

use std::ffi::c_char;

use ::mcds_counter::Counter;

use crate::boundary::{create, free, query};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// An exact shared counter.
pub struct mcds_counter {
    counter: Counter,
}

/// Create the counter `name` on `store`. `*out` is a new handle the caller
/// owns: free it with `mcds_counter_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_counter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let counter = Counter::new(scope, name)?;
            Ok(mcds_counter { counter })
        })
    }
}

/// Run a counter operation and write its value.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
unsafe fn counter_op(
    c: *const mcds_counter,
    out_value: *mut u64,
    op: impl FnOnce(&Counter) -> mcds_core::Result<u64>,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(c, "counter", out_value, "out_value", |c| {
            Ok(op(&c.counter)?)
        })
    }
}

/// Add `delta`; the new value in `*out_value`. One round trip, atomic.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_incr(
    c: *const mcds_counter,
    delta: u64,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { counter_op(c, out_value, |c| c.incr(delta)) }
}

/// Subtract `delta` (stopping at 0); the new value in `*out_value`.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_decr(
    c: *const mcds_counter,
    delta: u64,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { counter_op(c, out_value, |c| c.decr(delta)) }
}

/// The current value (0 if the counter does not exist).
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_get(
    c: *const mcds_counter,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { counter_op(c, out_value, Counter::get) }
}

/// Free a counter (NULL is a no-op).
///
/// # Safety
/// `c` must be NULL or a live counter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_free(c: *mut mcds_counter) {
    // SAFETY: forwarded caller contract.
    unsafe { free(c) }
}
