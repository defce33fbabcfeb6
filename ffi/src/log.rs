//! `mcds_log`: an event log. `mcds_log_fetch` and `mcds_log_since`
//! answer with an `mcds_event_list` (see `list`); `mcds_log_since` also
//! with an `mcds_cursor`, a plain struct the caller keeps (and may store
//! anywhere) to poll from.

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_eventlog::{Cursor, EventLog};

use crate::boundary::{Fail, boundary, bytes, create, free, handle, out_ptr, query, write};
use crate::list::mcds_event_list;
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// A polling position in an event log: the timestamp of the last event
/// seen and how many events with exactly that timestamp were seen. A plain
/// value the caller owns: copy it, store it (two integers), pass it back.
/// `{0, 0}` is the start (every event still in the log); `{t + 1, 0}` is
/// after every event up to and including Unix ms `t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_cursor {
    /// Unix milliseconds of the last event seen.
    pub at_ms: u64,
    /// How many events at `at_ms` were seen.
    pub seen_at_ms: u64,
}

/// An event log (a ring of time-chunk keys).
pub struct mcds_log {
    log: EventLog,
}

/// Create the event log `name`: `chunks` chunks (2 to 10000) of `chunk_secs`
/// seconds; it keeps `(chunks - 1) * chunk_secs` seconds of events. `*out`
/// is a new handle the caller owns: free it with `mcds_log_free`.
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
        create(store, name, out, |scope, name| {
            let log = EventLog::new(
                scope,
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

/// Record an event with timestamp `at_ms` (Unix ms) and `len` payload
/// bytes: a late event, or one imported from elsewhere. `at_ms` must lie in
/// the current chunk or the log's capacity before it, else
/// `MCDS_INVALID_ARGUMENT`. One round trip.
///
/// # Safety
/// `l` NULL or live; `payload` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_put_at(
    l: *const mcds_log,
    at_ms: u64,
    payload: *const u8,
    len: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (l, payload) = unsafe { (handle(l, "log")?, bytes(payload, len, "payload")?) };
        Ok(l.log.put_at(at_ms, payload)?)
    })
}

/// The events with `first_ms <= at <= last_ms` within capacity, in time
/// order, as a new list in `*out` that the caller owns: free it with
/// `mcds_event_list_free`.
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

/// The events after `*cursor` (up to now, in time order) as a new list in
/// `*out` that the caller owns (free it with `mcds_event_list_free`), and
/// in `*out_next` the cursor to poll with next (`*cursor` itself when
/// nothing is new). `cursor` and `out_next` may point to the same struct,
/// so a polling loop is `mcds_log_since(log, &cur, &events, &cur)`. Events
/// that arrive later with a timestamp before the cursor are not seen. One
/// round trip per server. `MCDS_INVALID_ARGUMENT` if `seen_at_ms` does not
/// fit a `size_t`.
///
/// # Safety
/// `l` NULL or live; `cursor` NULL or readable; `out` and `out_next` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_log_since(
    l: *const mcds_log,
    cursor: *const mcds_cursor,
    out: *mut *mut mcds_event_list,
    out_next: *mut mcds_cursor,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (l, cursor) = unsafe { (handle(l, "log")?, *handle(cursor, "cursor")?) };
        let (out, out_next) = (out_ptr(out, "out")?, out_ptr(out_next, "out_next")?);
        let seen_at_ms = usize::try_from(cursor.seen_at_ms).map_err(|_| {
            Fail(
                MCDS_INVALID_ARGUMENT,
                format!("cursor.seen_at_ms {} is absurd", cursor.seen_at_ms),
            )
        })?;
        let from = Cursor {
            at_ms: cursor.at_ms,
            seen_at_ms,
        };
        let (events, next) = l.log.since(&from)?;
        let next = mcds_cursor {
            at_ms: next.at_ms,
            seen_at_ms: u64::try_from(next.seen_at_ms).unwrap_or(u64::MAX),
        };
        // SAFETY: both checked non-NULL; the cursor was copied above, so
        // `out_next` may alias it.
        unsafe {
            write(out, Box::into_raw(Box::new(mcds_event_list { events })));
            write(out_next, next);
        }
        Ok(())
    })
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
