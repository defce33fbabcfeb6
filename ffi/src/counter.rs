//! `mcds_counter`: an exact shared counter.

use std::ffi::c_char;
use std::sync::Arc;

use ::mcds_core::Store;
use ::mcds_counter::Counter;

use crate::boundary::{
    Fail, MAX_HANDLES, array, boundary, create, create_with_key, free, handle, null, out_array,
    query, ttl, write_array,
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

/// Create the counter kept under exactly the memcached key `key` (`key_len`
/// bytes, borrowed for the call), for a counter another application already
/// uses: PHP code calling php-memcached's `increment("hits")`, say. No
/// `counter:` naming is added, and neither is a key prefix: the prefix of a
/// store handle made with `mcds_store_with_prefix` is NOT applied, so the
/// counter is on the same key whichever handle of the store it is made from
/// (a prefix the other application uses belongs in `key` itself).
/// memcached keeps counters as decimal text whoever writes them, so
/// increments from both sides add up, and `mcds_counter_get` reads the
/// other side's value. An item holding something other than a decimal
/// number is `MCDS_CORRUPT` to `mcds_counter_get` and `MCDS_NON_NUMERIC` to
/// an increment or decrement (the server's refusal). On a pool, both sides must place the key on the
/// same server (a single server, or the same distribution, such as ketama).
///
/// `key` must be a memcached key: 1 to 250 bytes, none of them a space, a
/// control byte or DEL (bytes from 0x80, UTF-8 say, are fine); else
/// `MCDS_INVALID_KEY`, the reason in `mcds_last_error_message`. It may be
/// NULL only when `key_len` is 0, which is the empty key (invalid). The
/// handle works as one from `mcds_counter_new` (`mcds_counter_with_ttl`,
/// `mcds_counter_reset`, `mcds_counter_incr_many` with the store's other
/// counters). `store` is unchanged and stays the caller's. `*out` is a new
/// handle the caller owns: free it with `mcds_counter_free`.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes; `out` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_new_with_key(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    out: *mut *mut mcds_counter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create_with_key(store, key, key_len, out, |store, key| {
            Ok(mcds_counter {
                counter: Counter::with_key(Arc::clone(store), key),
                store: Arc::clone(store),
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

#[cfg(test)]
mod tests {
    use std::ptr;

    use ::mcds_core::{Key, Ttl};

    use super::*;
    use crate::result::{MCDS_CORRUPT, MCDS_INVALID_KEY, MCDS_NON_NUMERIC};

    /// The exact key, not `counter:…:value`, and not the store's prefix: a
    /// value written raw under `hits` (as php-memcached writes it) is the
    /// counter's, and its increments land there.
    #[test]
    fn a_counter_with_a_key_counts_in_that_raw_key_without_the_prefix() {
        let (mut store, mut app, mut c) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let mut value = 0u64;
        let hits = Key::new("hits").unwrap();
        // SAFETY: writable outputs, NUL-terminated strings, key bytes of
        // their length, live handles freed once.
        unsafe {
            assert_eq!(crate::mcds_store_new_memory(&mut store), MCDS_OK);
            assert_eq!(
                crate::mcds_store_with_prefix(store, c"app/".as_ptr(), &mut app),
                MCDS_OK
            );
            let raw = (*store).scope.store();
            raw.set(&hits, b"41", Ttl::Never).unwrap();
            assert_eq!(
                mcds_counter_new_with_key(app, b"hits".as_ptr(), 4, &mut c),
                MCDS_OK
            );
            assert_eq!(mcds_counter_get(c, &mut value), MCDS_OK);
            assert_eq!(value, 41);
            assert_eq!(mcds_counter_incr(c, 1, &mut value), MCDS_OK);
            assert_eq!(raw.get(&hits).unwrap().unwrap().value, b"42");
            assert!(raw.get(&Key::new("app/hits").unwrap()).unwrap().is_none());
            raw.set(&hits, b"many", Ttl::Never).unwrap();
            assert_eq!(mcds_counter_get(c, &mut value), MCDS_CORRUPT);
            assert_eq!(mcds_counter_incr(c, 1, &mut value), MCDS_NON_NUMERIC);
            mcds_counter_free(c);
            c = ptr::null_mut();
            assert_eq!(
                mcds_counter_new_with_key(store, b"two words".as_ptr(), 9, &mut c),
                MCDS_INVALID_KEY
            );
            assert!(c.is_null());
            crate::mcds_store_free(app);
            crate::mcds_store_free(store);
        }
    }
}
