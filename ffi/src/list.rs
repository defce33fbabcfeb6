//! The result lists: `mcds_bytes_list` (set members, table keys and
//! values) and `mcds_event_list` (events fetched from a log). A list owns its
//! items; the pointers `*_get` hands out stay valid until it is freed.

use ::mcds_eventlog::Event;

use crate::boundary::{Fail, boundary, free, handle, out_ptr, query, write};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};

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

/// Events returned by `mcds_log_fetch`; read with `mcds_event_list_len` and
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
