//! `mcds_counter`: an exact shared counter.

use std::ffi::c_char;
use std::sync::Arc;

use ::mcds_core::Store;
use ::mcds_counter::Counter;

use crate::boundary::{
    Fail, MAX_HANDLES, array, boundary, create, free, handle, null, out_array, query, ttl,
    write_array,
};
use crate::result::{MCDS_INVALID_ARGUMENT, MCDS_OK, code_of, mcds_result};
use crate::store::mcds_store;

/// An exact shared counter.
pub struct mcds_counter {
    counter: Counter,
    /// The store it lives in: counters incremented together must share one.
    store: Arc<dyn Store>,
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
            Ok(mcds_counter {
                store: Arc::clone(scope.store()),
                counter: Counter::new(scope, name)?,
            })
        })
    }
}

/// A new handle on the same counter whose increments give the item a TTL
/// of `ttl_secs` seconds when they create it (an increment of an existing
/// counter leaves its expiry alone; after `mcds_counter_reset` or expiry
/// the next increment creates it again). 0 means never expires, as
/// memcached's exptime 0 (and as `mcds_counter_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// `c` is unchanged and borrowed for the call. `*out` is a new handle the
/// caller owns: free it with `mcds_counter_free`.
///
/// # Safety
/// `c` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_with_ttl(
    c: *const mcds_counter,
    ttl_secs: u32,
    out: *mut *mut mcds_counter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(c, "counter", out, "out", |c| {
            Ok(Box::into_raw(Box::new(mcds_counter {
                counter: c.counter.clone().with_ttl(ttl(ttl_secs)),
                store: Arc::clone(&c.store),
            })))
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

/// Add `deltas[i]` to `counters[i]` for every `i < count` in one pipelined
/// batch: one round trip per server however many counters (a counter may
/// appear more than once; its increments apply in order). The increments
/// are independent: one failing does not undo the others.
///
/// `counters` and `deltas` (`count` values each) are borrowed for the call;
/// `out_values` and `out_results` are the caller's arrays of `count` slots.
/// All four may be NULL when `count` is 0, which does nothing and returns
/// `MCDS_OK`.
///
/// The call is refused, writing nothing and sending nothing, when an array
/// or a `counters[i]` is NULL (`MCDS_NULL_ARGUMENT`), when `count` is over
/// 100 000 or the counters are not all from one store handle (or handles
/// made from it with `mcds_store_with_prefix`) (`MCDS_INVALID_ARGUMENT`).
/// Otherwise the batch is sent and every slot is written: `out_results[i]`
/// is `MCDS_OK` and `out_values[i]` the counter's new value, or
/// `out_results[i]` is that increment's error code and `out_values[i]` 0.
/// The return value is then `MCDS_OK` if every increment succeeded, else
/// `out_results[j]` for the smallest failing `j` (and
/// `mcds_last_error_message` is that increment's message).
///
/// # Safety
/// `counters` NULL or `count` readable pointers, each NULL or live;
/// `deltas` NULL or `count` readable values; `out_values` and `out_results`
/// NULL or `count` writable slots.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_incr_many(
    counters: *const *const mcds_counter,
    deltas: *const u64,
    count: usize,
    out_values: *mut u64,
    out_results: *mut mcds_result,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (list, deltas) = unsafe {
            (
                same_store(counters, count, "counters")?,
                array(deltas, count, MAX_HANDLES, "deltas")?,
            )
        };
        let out_values = out_array(out_values, count, "out_values")?;
        let out_results = out_array(out_results, count, "out_results")?;
        let batch: Vec<(&Counter, u64)> = list.into_iter().zip(deltas.iter().copied()).collect();
        let results = Counter::incr_many(&batch);
        let values = results.iter().map(|r| *r.as_ref().unwrap_or(&0));
        let codes = results
            .iter()
            .map(|r| r.as_ref().map_or_else(code_of, |_| MCDS_OK));
        // SAFETY: both checked with `count`, `count` writable slots each.
        unsafe {
            write_array(out_values, count, values);
            write_array(out_results, count, codes);
        }
        match results.into_iter().find_map(Result::err) {
            Some(first) => Err(first.into()),
            None => Ok(()),
        }
    })
}

/// Borrow the `count` counters at `counters`, all from one store.
///
/// # Safety
/// `counters` NULL or `count` readable pointers, each NULL or live.
unsafe fn same_store<'a>(
    counters: *const *const mcds_counter,
    count: usize,
    what: &str,
) -> Result<Vec<&'a Counter>, Fail> {
    // SAFETY: forwarded caller contract.
    let list = unsafe { array(counters, count, MAX_HANDLES, what) }?;
    let handles = list
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            // SAFETY: each NULL or live. The index goes into the message
            // only on failure.
            unsafe { handle(p, what) }.map_err(|_| null(&format!("{what}[{i}]")))
        })
        .collect::<Result<Vec<&mcds_counter>, Fail>>()?;
    if let Some(first) = handles.first() {
        if let Some(i) = handles
            .iter()
            .position(|c| !Arc::ptr_eq(&c.store, &first.store))
        {
            return Err(Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "{what}[{i}] is on another store than {what}[0]: counters incremented together must come from one mcds_store (or handles made from it with mcds_store_with_prefix); group them by store"
                ),
            ));
        }
    }
    Ok(handles.into_iter().map(|c| &c.counter).collect())
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

/// Delete the counter: it reads 0 again, and the next increment creates
/// it anew. One round trip; resetting a missing counter is not an error.
///
/// # Safety
/// `c` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_reset(c: *const mcds_counter) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { handle(c, "counter") }?;
        Ok(c.counter.reset()?)
    })
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
