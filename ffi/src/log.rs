//! `mcds_log`: an event log. `mcds_log_fetch` answers with an
//! `mcds_event_list` (see `list`).

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_eventlog::EventLog;

use crate::boundary::{bytes, create, free, query};
use crate::list::mcds_event_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// An event log (a ring of time-chunk keys).
pub struct mcds_log {
    log: EventLog,
}

/// Create the event log `name`: `chunks` chunks (2 to 10000) of `chunk_secs`
/// seconds; it keeps `(chunks - 1) * chunk_secs` seconds of events.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_new(
    store: *const mcds_store,
    name: *const c_char,
    chunk_secs: u32,
    chunks: u32,
    out: *mut *mut mcds_log,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let log = EventLog::new(
                store,
                name,
                Duration::from_secs(u64::from(chunk_secs)),
                chunks as usize,
            )?;
            Ok(mcds_log { log })
        })
    }
}

/// Record an event now with `len` payload bytes; its timestamp (Unix ms)
/// in `*out_at_ms`. One round trip.
///
/// # Safety
/// `l` NULL or live; `payload` NULL or `len` readable bytes; `out_at_ms` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_put(
    l: *const mcds_log,
    payload: *const u8,
    len: usize,
    out_at_ms: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract, for the handle, the output and the
    // bytes (read inside the boundary, after the NULL checks).
    unsafe {
        query(l, "log", out_at_ms, "out_at_ms", |l| {
            let payload = bytes(payload, len, "payload")?;
            let event = l.log.put(payload)?;
            Ok(event.at_ms)
        })
    }
}

/// The events with `first_ms <= at <= last_ms` within capacity, in time
/// order, as a new list in `*out`.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_fetch(
    l: *const mcds_log,
    first_ms: u64,
    last_ms: u64,
    out: *mut *mut mcds_event_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(l, "log", out, "out", |l| {
            let events = l.log.fetch(first_ms, last_ms)?;
            Ok(Box::into_raw(Box::new(mcds_event_list { events })))
        })
    }
}

/// Free an event log (NULL is a no-op).
///
/// # Safety
/// `l` must be NULL or a live log, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_free(l: *mut mcds_log) {
    // SAFETY: forwarded caller contract.
    unsafe { free(l) }
}
