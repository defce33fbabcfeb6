//! `mcds_shadow_counter`: events in the previous period.

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_counter::ShadowCounter;

use crate::boundary::{create, free, query};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// Counts events in the previous period of `period_secs` seconds (two keys
/// swapping roles: one counted into, one shown).
pub struct mcds_shadow_counter {
    counter: ShadowCounter,
}

/// Create the shadow counter `name` over periods of `period_secs` seconds
/// (at least 1), aligned to Unix time: every client must use the same
/// period. `*out` is a new handle the caller owns: free it with
/// `mcds_shadow_counter_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_shadow_counter_new(
    store: *const mcds_store,
    name: *const c_char,
    period_secs: u32,
    out: *mut *mut mcds_shadow_counter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let period = Duration::from_secs(u64::from(period_secs));
            Ok(mcds_shadow_counter {
                counter: ShadowCounter::new(scope, name, period)?,
            })
        })
    }
}

/// Count `delta` events in the current period; the current period's count
/// so far in `*out_value`. One round trip, atomic.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_shadow_counter_incr(
    c: *const mcds_shadow_counter,
    delta: u64,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(c, "counter", out_value, "out_value", |c| {
            Ok(c.counter.incr(delta)?)
        })
    }
}

/// The number of events in the previous (complete) period, in
/// `*out_value`: constant for a whole period. One round trip.
///
/// # Safety
/// `c` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_shadow_counter_value(
    c: *const mcds_shadow_counter,
    out_value: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(c, "counter", out_value, "out_value", |c| {
            Ok(c.counter.value()?)
        })
    }
}

/// Free a shadow counter (NULL is a no-op).
///
/// # Safety
/// `c` must be NULL or a live counter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_shadow_counter_free(c: *mut mcds_shadow_counter) {
    // SAFETY: forwarded caller contract.
    unsafe { free(c) }
}
