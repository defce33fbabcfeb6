//! `mcds_int_array`: a set of 64-bit integers. Its members come back as an
//! `mcds_int_list` (see `list`).

use std::ffi::c_char;

use ::mcds_set::IntArray;

use crate::boundary::{MAX_MEMBERS, array, boundary, create, free, handle, query};
use crate::list::mcds_int_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A set of 64-bit integers, stored as decimal members of a set.
pub struct mcds_int_array {
    array: IntArray,
}

/// Create the integer array `name`. `*out` is a new handle the caller owns:
/// free it with `mcds_int_array_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_int_array,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            Ok(mcds_int_array {
                array: IntArray::new(scope, name)?,
            })
        })
    }
}

/// Add or remove a batch of values.
///
/// # Safety
/// `a` NULL or live; `values` NULL or `count` readable values.
unsafe fn update(
    a: *const mcds_int_array,
    values: *const i64,
    count: usize,
    op: fn(&IntArray, &[i64]) -> mcds_core::Result<()>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (a, values) = unsafe {
            (
                handle(a, "array")?,
                array(values, count, MAX_MEMBERS, "values")?,
            )
        };
        Ok(op(&a.array, values)?)
    })
}

/// Add the `count` values at `values` (borrowed for the call; NULL when
/// `count` is 0, which does nothing; at most 1 000 000). One append.
///
/// # Safety
/// `a` NULL or live; `values` NULL or `count` readable values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_add(
    a: *const mcds_int_array,
    values: *const i64,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update(a, values, count, IntArray::add) }
}

/// Remove the `count` values at `values`, as `mcds_int_array_add` adds
/// them. One append; a missing array stays missing.
///
/// # Safety
/// `a` NULL or live; `values` NULL or `count` readable values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_remove(
    a: *const mcds_int_array,
    values: *const i64,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update(a, values, count, IntArray::remove) }
}

/// Whether `value` is present, in `*out`. One round trip.
///
/// # Safety
/// `a` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_contains(
    a: *const mcds_int_array,
    value: i64,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(a, "array", out, "out", |a| Ok(a.array.contains(value)?)) }
}

/// The values in first-insertion order, as a new list in `*out` that the
/// caller owns: free it with `mcds_int_list_free`. `MCDS_CORRUPT` if a
/// member is not a decimal integer (another program wrote the key). One
/// round trip.
///
/// # Safety
/// `a` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_members(
    a: *const mcds_int_array,
    out: *mut *mut mcds_int_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(a, "array", out, "out", |a| {
            let values = a.array.members()?;
            Ok(Box::into_raw(Box::new(mcds_int_list { values })))
        })
    }
}

/// Delete the array (every value). One round trip.
///
/// # Safety
/// `a` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_clear(a: *const mcds_int_array) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let a = unsafe { handle(a, "array") }?;
        Ok(a.array.clear()?)
    })
}

/// Free an integer array (NULL is a no-op).
///
/// # Safety
/// `a` must be NULL or a live array, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_array_free(a: *mut mcds_int_array) {
    // SAFETY: forwarded caller contract.
    unsafe { free(a) }
}
