//! What calls hand back for the caller to own: the result lists
//! `mcds_bytes_list` (set members, table keys and values), `mcds_int_list`
//! (integer array members), `mcds_event_list` (events fetched from a
//! log), `mcds_bucket_list` and `mcds_slot_list` (time series reads), and
//! strings (`mcds_string_free`). A list owns its items; the
//! pointers `*_get` and `*_data` hand out stay valid until it is freed.
//! Reading a list (`_len`, `_get`, `_data`) from several threads at once is
//! safe.

use std::ffi::{CString, c_char};

use ::mcds_eventlog::Event;
use ::mcds_timeseries::{Bucket, Slot};

use crate::boundary::{Fail, boundary, free, handle, out_ptr, query, write};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::timeseries::{mcds_bucket, mcds_slot};

/// A list of byte strings returned by mcds; read it with
/// `mcds_bytes_list_len`/`mcds_bytes_list_get`, free it with
/// `mcds_bytes_list_free`.
pub struct mcds_bytes_list {
    pub(crate) items: Vec<Vec<u8>>,
}

/// The number of items in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bytes_list_len(
    list: *const mcds_bytes_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.items.len())
        })
    }
}

/// Item `index` of `list`: a pointer to its bytes (owned by the list, valid
/// until it is freed; not NUL-terminated) and their length.
/// `MCDS_INVALID_ARGUMENT` if `index` is out of range.
///
/// # Safety
/// `list` NULL or live; `out_ptr` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bytes_list_get(
    list: *const mcds_bytes_list,
    index: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let list = unsafe { handle(list, "list") }?;
        let (out_data, out_len) = (out_ptr(out_data, "out_data")?, out_ptr(out_len, "out_len")?);
        let item = list.items.get(index).ok_or_else(|| {
            Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "index {index} is out of range for a list of {} items",
                    list.items.len()
                ),
            )
        })?;
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_data, item.as_ptr());
            write(out_len, item.len());
        }
        Ok(())
    })
}

/// Free a list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bytes_list_free(list: *mut mcds_bytes_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}

/// A list of 64-bit integers returned by mcds (`mcds_int_array_members`);
/// read it with `mcds_int_list_len`/`mcds_int_list_get` or all at once with
/// `mcds_int_list_data`, free it with `mcds_int_list_free`.
pub struct mcds_int_list {
    pub(crate) values: Vec<i64>,
}

/// The number of values in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_list_len(
    list: *const mcds_int_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.values.len())
        })
    }
}

/// Value `index` of `list`, in `*out_value`. `MCDS_INVALID_ARGUMENT` if
/// `index` is out of range.
///
/// # Safety
/// `list` NULL or live; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_list_get(
    list: *const mcds_int_list,
    index: usize,
    out_value: *mut i64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_value, "out_value", |list| {
            list.values.get(index).copied().ok_or_else(|| {
                Fail(
                    MCDS_INVALID_ARGUMENT,
                    format!(
                        "index {index} is out of range for a list of {} values",
                        list.values.len()
                    ),
                )
            })
        })
    }
}

/// Every value at once: a pointer to `*out_len` consecutive `int64_t`s in
/// `*out_data`, owned by the list and valid until it is freed. With a
/// length of 0 the pointer is not NULL but must not be read.
///
/// # Safety
/// `list` NULL or live; `out_data` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_list_data(
    list: *const mcds_int_list,
    out_data: *mut *const i64,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let list = unsafe { handle(list, "list") }?;
        let (out_data, out_len) = (out_ptr(out_data, "out_data")?, out_ptr(out_len, "out_len")?);
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_data, list.values.as_ptr());
            write(out_len, list.values.len());
        }
        Ok(())
    })
}

/// Free an integer list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_int_list_free(list: *mut mcds_int_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}

/// Free a string that mcds handed to the caller (`mcds_lock_holder`,
/// `mcds_lock_owner_token`); NULL is a no-op. Never pass it other strings,
/// and never free these with `free()`.
///
/// # Safety
/// `s` must be NULL or a string from mcds not yet freed, not used after
/// this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_string_free(s: *mut c_char) {
    let _ = std::panic::catch_unwind(|| {
        if !s.is_null() {
            // SAFETY: a string from CString::into_raw, freed once.
            drop(unsafe { CString::from_raw(s) });
        }
    });
}

/// Events returned by `mcds_log_fetch` and `mcds_log_since`; read with `mcds_event_list_len` and
/// `mcds_event_list_get`, free with `mcds_event_list_free`.
pub struct mcds_event_list {
    pub(crate) events: Vec<Event>,
}

/// The number of events in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_event_list_len(
    list: *const mcds_event_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.events.len())
        })
    }
}

/// Event `index` of `list`: its timestamp and a pointer to its payload
/// (owned by the list, valid until it is freed) and length.
/// `MCDS_INVALID_ARGUMENT` if `index` is out of range.
///
/// # Safety
/// `list` NULL or live; the outputs NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_event_list_get(
    list: *const mcds_event_list,
    index: usize,
    out_at_ms: *mut u64,
    out_data: *mut *const u8,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let list = unsafe { handle(list, "list") }?;
        let (out_at, out_data, out_len) = (
            out_ptr(out_at_ms, "out_at_ms")?,
            out_ptr(out_data, "out_data")?,
            out_ptr(out_len, "out_len")?,
        );
        let event = list.events.get(index).ok_or_else(|| {
            Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "index {index} is out of range for a list of {} events",
                    list.events.len()
                ),
            )
        })?;
        // SAFETY: all checked non-NULL.
        unsafe {
            write(out_at, event.at_ms);
            write(out_data, event.payload.as_ptr());
            write(out_len, event.payload.len());
        }
        Ok(())
    })
}

/// Free an event list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_event_list_free(list: *mut mcds_event_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}

/// Item `index` of a list of `len` items named `what` in messages, or
/// `MCDS_INVALID_ARGUMENT` when out of range.
fn item<T: Copy>(items: &[T], index: usize, what: &str) -> Result<T, Fail> {
    items.get(index).copied().ok_or_else(|| {
        Fail(
            MCDS_INVALID_ARGUMENT,
            format!(
                "index {index} is out of range for a list of {} {what}",
                items.len()
            ),
        )
    })
}

/// Buckets returned by `mcds_timeseries_range`, `mcds_timeseries_union`
/// and `mcds_timeseries_intersection`, oldest first; read with
/// `mcds_bucket_list_len` and `mcds_bucket_list_get`, free with
/// `mcds_bucket_list_free`.
pub struct mcds_bucket_list {
    buckets: Vec<mcds_bucket>,
}

impl mcds_bucket_list {
    /// A new list for C, owned by the caller.
    pub(crate) fn boxed(buckets: Vec<Bucket>) -> *mut mcds_bucket_list {
        let buckets = buckets.into_iter().map(Into::into).collect();
        Box::into_raw(Box::new(mcds_bucket_list { buckets }))
    }
}

/// The number of buckets in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bucket_list_len(
    list: *const mcds_bucket_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.buckets.len())
        })
    }
}

/// Bucket `index` of `list` (its start and aggregates, copied) in `*out`.
/// `MCDS_INVALID_ARGUMENT` if `index` is out of range.
///
/// # Safety
/// `list` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bucket_list_get(
    list: *const mcds_bucket_list,
    index: usize,
    out: *mut mcds_bucket,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out, "out", |list| {
            item(&list.buckets, index, "buckets")
        })
    }
}

/// Free a bucket list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bucket_list_free(list: *mut mcds_bucket_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}

/// Slots returned by `mcds_packed_series_range`, oldest first; read with
/// `mcds_slot_list_len` and `mcds_slot_list_get`, free with
/// `mcds_slot_list_free`.
pub struct mcds_slot_list {
    slots: Vec<mcds_slot>,
}

impl mcds_slot_list {
    /// A new list for C, owned by the caller.
    pub(crate) fn boxed(slots: Vec<Slot>) -> *mut mcds_slot_list {
        let slots = slots.into_iter().map(Into::into).collect();
        Box::into_raw(Box::new(mcds_slot_list { slots }))
    }
}

/// The number of slots in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_slot_list_len(
    list: *const mcds_slot_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.slots.len())
        })
    }
}

/// Slot `index` of `list` (its start and count, copied) in `*out`.
/// `MCDS_INVALID_ARGUMENT` if `index` is out of range.
///
/// # Safety
/// `list` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_slot_list_get(
    list: *const mcds_slot_list,
    index: usize,
    out: *mut mcds_slot,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out, "out", |list| {
            item(&list.slots, index, "slots")
        })
    }
}

/// Free a slot list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_slot_list_free(list: *mut mcds_slot_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}
