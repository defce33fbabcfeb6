//! # libmcds — the C ABI of mcds
//!
//! `include/mcds.h` is generated from this file by cbindgen and committed; a
//! test fails when it is stale. Conventions, in the style of rustls-ffi:
//!
//! * Every name starts with `mcds_`. Handles (`mcds_store`, `mcds_counter`,
//!   `mcds_lock`, `mcds_set`, `mcds_window`, `mcds_limiter`, `mcds_log`,
//!   `mcds_table` and the result lists) are opaque; `mcds_<type>_new…`
//!   creates one and `mcds_<type>_free` frees it (`NULL` is a no-op). C never
//!   frees Rust memory with `free()`.
//! * Every fallible function returns an `mcds_result` (`uint32_t`): `MCDS_OK`
//!   (0) or an error code. Codes are never reused. Outputs are written only on
//!   success. `mcds_result_name()` names a code and `mcds_last_error_message()`
//!   gives the calling thread's last error detail.
//! * Every body runs inside a panic boundary: a Rust panic becomes
//!   `MCDS_PANIC`, never an unwind into C. No Rust enum is ever read from C.
//! * Names are NUL-terminated UTF-8; member bytes are a pointer and a length.
//!   Every handle can be shared between threads.

#![allow(non_camel_case_types)]
// Everything that touches raw pointers lives in the small helpers below;
// each `unsafe` block states why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mc_core::{Error, MemoryStore, Store};
use mc_counter::{Counter, RateLimiter, Window, WindowCounter};
use mc_eventlog::{Event, EventLog};
use mc_lock::{Guard, Lock, Release};
use mc_memcached::MemcachedStore;
use mc_set::{Set, Table};
use mc_sketch::{ActivityBitmap, BloomFilter, HyperLogLog};

/// A result code: `MCDS_OK` or one of the `MCDS_…` error codes.
pub type mcds_result = u32;

/// Success.
pub const MCDS_OK: mcds_result = 0;
/// A required pointer argument was NULL.
pub const MCDS_NULL_ARGUMENT: mcds_result = 1;
/// A name was not valid UTF-8.
pub const MCDS_INVALID_UTF8: mcds_result = 2;
/// mcds panicked (a bug); the call had no effect on its outputs.
pub const MCDS_PANIC: mcds_result = 3;
/// The key (built from a name) is empty, too long or has spaces or control bytes.
pub const MCDS_INVALID_KEY: mcds_result = 100;
/// The value would exceed the item size limit.
pub const MCDS_VALUE_TOO_LARGE: mcds_result = 101;
/// An argument is out of range (a TTL of 0, say) or the call does not fit the handle's state.
pub const MCDS_INVALID_ARGUMENT: mcds_result = 102;
/// incr/decr found a value that is not a number.
pub const MCDS_NON_NUMERIC: mcds_result = 103;
/// Stored bytes could not be decoded.
pub const MCDS_CORRUPT: mcds_result = 104;
/// The server could not be reached; the request was not applied.
pub const MCDS_IO: mcds_result = 200;
/// The server is marked down after a failed connection; not applied.
pub const MCDS_SERVER_DOWN: mcds_result = 201;
/// The server did not answer in time; the request was not applied.
pub const MCDS_IO_TIMEOUT: mcds_result = 202;
/// The request was sent but no reply came: it may have been applied.
pub const MCDS_AMBIGUOUS: mcds_result = 203;
/// The server is out of memory and does not evict.
pub const MCDS_OUT_OF_MEMORY: mcds_result = 204;
/// The server reported an error.
pub const MCDS_SERVER_ERROR: mcds_result = 205;
/// The server's reply could not be understood.
pub const MCDS_PROTOCOL: mcds_result = 206;
/// A CAS loop kept losing to concurrent writers.
pub const MCDS_CONFLICT: mcds_result = 300;
/// The backend does not support the operation.
pub const MCDS_UNSUPPORTED: mcds_result = 301;
/// A blocking call (lock acquire) gave up waiting.
pub const MCDS_TIMEOUT: mcds_result = 302;
/// An error this version of the header does not know (a newer libmcds).
pub const MCDS_OTHER: mcds_result = 999;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

fn code_of(e: &Error) -> mcds_result {
    match e {
        Error::InvalidKey { .. } => MCDS_INVALID_KEY,
        Error::ValueTooLarge { .. } => MCDS_VALUE_TOO_LARGE,
        Error::InvalidArgument(_) => MCDS_INVALID_ARGUMENT,
        Error::NonNumeric { .. } => MCDS_NON_NUMERIC,
        Error::Corrupt { .. } => MCDS_CORRUPT,
        Error::Io { .. } => MCDS_IO,
        Error::ServerDown { .. } => MCDS_SERVER_DOWN,
        Error::Timeout { .. } => MCDS_IO_TIMEOUT,
        Error::Ambiguous { .. } => MCDS_AMBIGUOUS,
        Error::OutOfMemory { .. } => MCDS_OUT_OF_MEMORY,
        Error::Server { .. } => MCDS_SERVER_ERROR,
        Error::Protocol { .. } => MCDS_PROTOCOL,
        Error::Conflict { .. } => MCDS_CONFLICT,
        Error::Unsupported { .. } => MCDS_UNSUPPORTED,
        Error::WaitTimeout { .. } => MCDS_TIMEOUT,
        _ => MCDS_OTHER,
    }
}

/// A failed call: its code and message.
struct Fail(mcds_result, String);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(code_of(&e), e.to_string())
    }
}

fn null(what: &str) -> Fail {
    Fail(MCDS_NULL_ARGUMENT, format!("{what} is NULL"))
}

/// Run `body` inside the panic boundary and turn its outcome into a code,
/// recording the message of a failure for `mcds_last_error_message`.
fn boundary(body: impl FnOnce() -> Result<(), Fail>) -> mcds_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => MCDS_OK,
        Ok(Err(Fail(code, message))) => {
            set_last_error(&message);
            code
        }
        Err(_) => {
            set_last_error("mcds panicked; this is a bug, please report it");
            MCDS_PANIC
        }
    }
}

/// Borrow a handle.
///
/// # Safety
/// `p` must be NULL or a pointer returned by the matching `mcds_*_new`
/// function and not yet freed.
unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: by the caller's contract `p` is NULL or a live handle.
    unsafe { p.as_ref() }.ok_or_else(|| null(what))
}

/// Read a NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that stays valid for
/// the call.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes
        .to_str()
        .map_err(|_| Fail(MCDS_INVALID_UTF8, format!("{what} is not valid UTF-8")))
}

/// The longest byte string any call accepts: memcached's largest item
/// (`-I 1024m`). Longer is a caller's bug (a negative length cast to
/// `size_t`, say), refused before the bytes are touched.
const MAX_BYTES: usize = 1 << 30;

/// The most handles one call takes in an array (`mcds_hll_merge`).
const MAX_HANDLES: usize = 100_000;

/// Read `len` bytes at `p` (NULL is allowed when `len` is 0).
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes for the call.
unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(what));
    }
    if len > MAX_BYTES {
        return Err(Fail(
            MCDS_INVALID_ARGUMENT,
            format!(
                "{what}: a length of {len} bytes is absurd (no memcached item holds more than 1 GiB); pass the real length"
            ),
        ));
    }
    // SAFETY: non-NULL and `len` readable bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Check an output pointer before doing any work.
fn out_ptr<T>(p: *mut T, what: &str) -> Result<*mut T, Fail> {
    if p.is_null() { Err(null(what)) } else { Ok(p) }
}

/// Write an output (only ever called on success).
///
/// # Safety
/// `p` must be non-NULL (checked by [`out_ptr`]) and writable.
unsafe fn write<T>(p: *mut T, value: T) {
    // SAFETY: checked non-NULL; writable by the caller's contract.
    unsafe { p.write(value) }
}

/// Free a handle made with `Box::into_raw`.
///
/// # Safety
/// `p` must be NULL or a pointer from `Box::into_raw` not yet freed.
unsafe fn free<T>(p: *mut T) {
    // Inside its own panic boundary: a `*_free` function returns nothing.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if !p.is_null() {
            // SAFETY: a live pointer from Box::into_raw, freed once.
            drop(unsafe { Box::from_raw(p) });
        }
    }));
}

/// A constructor: borrow the store, read the name, build the handle with
/// `f` and write it to `out`, all inside the panic boundary.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
unsafe fn create<T>(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut T,
    f: impl FnOnce(Arc<dyn Store>, &str) -> Result<T, Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, name) = unsafe { (handle(store, "store")?, text(name, "name")?) };
        let out = out_ptr(out, "out")?;
        let value = f(Arc::clone(&store.store), name)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(value))) };
        Ok(())
    })
}

/// A query: borrow handle `h`, compute with `f` and write the result to
/// `out`, all inside the panic boundary. `f` runs only when both pointers
/// are non-NULL, so outputs are written only on success.
///
/// # Safety
/// `h` NULL or a live handle; `out` NULL or writable.
unsafe fn query<H, T>(
    h: *const H,
    what: &str,
    out: *mut T,
    out_name: &str,
    f: impl FnOnce(&H) -> Result<T, Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let h = unsafe { handle(h, what) }?;
        let out = out_ptr(out, out_name)?;
        let value = f(h)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, value) };
        Ok(())
    })
}

// ---------------------------------------------------------------- names

/// The name of a result code, e.g. `"MCDS_INVALID_KEY"`: a static string
/// that must not be freed. Unknown codes give `"MCDS_UNKNOWN"`.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_result_name(result: mcds_result) -> *const c_char {
    let name: &'static CStr = match result {
        MCDS_OK => c"MCDS_OK",
        MCDS_NULL_ARGUMENT => c"MCDS_NULL_ARGUMENT",
        MCDS_INVALID_UTF8 => c"MCDS_INVALID_UTF8",
        MCDS_PANIC => c"MCDS_PANIC",
        MCDS_INVALID_KEY => c"MCDS_INVALID_KEY",
        MCDS_VALUE_TOO_LARGE => c"MCDS_VALUE_TOO_LARGE",
        MCDS_INVALID_ARGUMENT => c"MCDS_INVALID_ARGUMENT",
        MCDS_NON_NUMERIC => c"MCDS_NON_NUMERIC",
        MCDS_CORRUPT => c"MCDS_CORRUPT",
        MCDS_IO => c"MCDS_IO",
        MCDS_SERVER_DOWN => c"MCDS_SERVER_DOWN",
        MCDS_IO_TIMEOUT => c"MCDS_IO_TIMEOUT",
        MCDS_AMBIGUOUS => c"MCDS_AMBIGUOUS",
        MCDS_OUT_OF_MEMORY => c"MCDS_OUT_OF_MEMORY",
        MCDS_SERVER_ERROR => c"MCDS_SERVER_ERROR",
        MCDS_PROTOCOL => c"MCDS_PROTOCOL",
        MCDS_CONFLICT => c"MCDS_CONFLICT",
        MCDS_UNSUPPORTED => c"MCDS_UNSUPPORTED",
        MCDS_TIMEOUT => c"MCDS_TIMEOUT",
        MCDS_OTHER => c"MCDS_OTHER",
        _ => c"MCDS_UNKNOWN",
    };
    name.as_ptr()
}

/// The message of the last failed call on this thread (empty if none): what
/// happened and what to do. Valid until the next mcds call on this thread;
/// must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_last_error_message() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

// ---------------------------------------------------------------- store

/// A store: the embedded in-process store or real memcached.
pub struct mcds_store {
    store: Arc<dyn Store>,
}

/// Create an embedded in-process store (memcached semantics, no server).
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_memory(out: *mut *mut mcds_store) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(mcds_store { store }))) };
        Ok(())
    })
}

/// Create a store on memcached: `servers` is `"host:port[,host:port...]"`.
/// Connections are made on first use, so a server that is down shows up as
/// an error of the first call that needs it.
///
/// # Safety
/// `servers` must be NULL or a NUL-terminated string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_memcached(
    servers: *const c_char,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let servers = unsafe { text(servers, "servers") }?;
        let out = out_ptr(out, "out")?;
        let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(servers)?);
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(mcds_store { store }))) };
        Ok(())
    })
}

/// Free a store (NULL is a no-op). Structures made from it keep working:
/// they hold their own reference.
///
/// # Safety
/// `store` must be NULL or a live store, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_free(store: *mut mcds_store) {
    // SAFETY: forwarded caller contract.
    unsafe { free(store) }
}

// ---------------------------------------------------------------- counter

/// An exact shared counter.
pub struct mcds_counter {
    counter: Counter,
}

/// Create the counter `name` on `store`.
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
        create(store, name, out, |store, name| {
            let counter = Counter::new(store, name)?;
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
    op: impl FnOnce(&Counter) -> mc_core::Result<u64>,
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

// ---------------------------------------------------------------- lock

/// A distributed lock; the handle holds at most one lease at a time.
pub struct mcds_lock {
    lock: Lock,
    guard: Mutex<Option<Guard>>,
}

/// Create the lock `name` with a lease of `ttl_secs` seconds (at least 1).
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_new(
    store: *const mcds_store,
    name: *const c_char,
    ttl_secs: u32,
    out: *mut *mut mcds_lock,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let lock = Lock::new(store, name, Duration::from_secs(u64::from(ttl_secs)))?;
            let handle = mcds_lock {
                lock,
                guard: Mutex::new(None),
            };
            Ok(handle)
        })
    }
}

fn already_held() -> Fail {
    Fail(
        MCDS_INVALID_ARGUMENT,
        "this lock handle already holds the lock; release it first".into(),
    )
}

/// Take the lock if it is free: `*out_acquired` is true if this handle now
/// holds it, false if another owner does. One round trip.
///
/// # Safety
/// `lock` NULL or live; `out_acquired` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_try_acquire(
    lock: *mut mcds_lock,
    out_acquired: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(
            lock.cast_const(),
            "lock",
            out_acquired,
            "out_acquired",
            |lock| {
                let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.is_some() {
                    return Err(already_held());
                }
                *slot = lock.lock.try_acquire()?;
                Ok(slot.is_some())
            },
        )
    }
}

/// Wait up to `timeout_ms` for the lock. `MCDS_TIMEOUT` if it stayed taken.
///
/// # Safety
/// `lock` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_acquire(lock: *mut mcds_lock, timeout_ms: u32) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lock = unsafe { handle(lock.cast_const(), "lock") }?;
        let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_some() {
            return Err(already_held());
        }
        *slot = Some(
            lock.lock
                .acquire(Duration::from_millis(u64::from(timeout_ms)))?,
        );
        Ok(())
    })
}

/// Release the lock this handle holds. `*out_released` is true if it was
/// still ours, false if the lease had been lost (another owner may hold it
/// now; it was not touched). `MCDS_INVALID_ARGUMENT` if the handle holds
/// nothing. On any other error (a timeout, a server down, no reply) the
/// handle still holds the guard: call `mcds_lock_release` again to retry.
///
/// # Safety
/// `lock` NULL or live; `out_released` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_release(
    lock: *mut mcds_lock,
    out_released: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(
            lock.cast_const(),
            "lock",
            out_released,
            "out_released",
            |lock| {
                let mut slot = lock.guard.lock().unwrap_or_else(PoisonError::into_inner);
                let guard = slot.as_mut().ok_or_else(|| {
                    Fail(
                        MCDS_INVALID_ARGUMENT,
                        "this lock handle does not hold the lock".into(),
                    )
                })?;
                // On an error (timeout, server down, no reply) the handle
                // keeps the guard, so calling release again retries it.
                let released = guard.try_release()? == Release::Released;
                *slot = None;
                Ok(released)
            },
        )
    }
}

/// Free a lock handle (NULL is a no-op), releasing a lease it still holds.
///
/// # Safety
/// `lock` must be NULL or a live lock, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_lock_free(lock: *mut mcds_lock) {
    // SAFETY: forwarded caller contract.
    unsafe { free(lock) }
}

// ---------------------------------------------------------------- set

/// A set of byte strings.
pub struct mcds_set {
    set: Set,
}

/// A list of byte strings returned by mcds; read it with
/// `mcds_bytes_list_len`/`mcds_bytes_list_get`, free it with
/// `mcds_bytes_list_free`.
pub struct mcds_bytes_list {
    items: Vec<Vec<u8>>,
}

/// Create the set `name` on `store`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_set,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let set = Set::new(store, name)?;
            Ok(mcds_set { set })
        })
    }
}

/// Add the member of `len` bytes at `member` (any bytes). One round trip.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_add(
    s: *const mcds_set,
    member: *const u8,
    len: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (s, member) = unsafe { (handle(s, "set")?, bytes(member, len, "member")?) };
        Ok(s.set.add(&[member])?)
    })
}

/// Remove a member. One round trip; a missing set stays missing.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_remove(
    s: *const mcds_set,
    member: *const u8,
    len: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (s, member) = unsafe { (handle(s, "set")?, bytes(member, len, "member")?) };
        Ok(s.set.remove(&[member])?)
    })
}

/// Whether the set contains the member, in `*out`.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_contains(
    s: *const mcds_set,
    member: *const u8,
    len: usize,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract, for the handle, the output and the
    // bytes (read inside the boundary, after the NULL checks).
    unsafe {
        query(s, "set", out, "out", |s| {
            let member = bytes(member, len, "member")?;
            Ok(s.set.contains(member)?)
        })
    }
}

/// The members in insertion order, as a new list in `*out` (free it with
/// `mcds_bytes_list_free`).
///
/// # Safety
/// `s` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_members(
    s: *const mcds_set,
    out: *mut *mut mcds_bytes_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(s, "set", out, "out", |s| {
            let items = s.set.members()?;
            Ok(Box::into_raw(Box::new(mcds_bytes_list { items })))
        })
    }
}

/// Free a set (NULL is a no-op).
///
/// # Safety
/// `s` must be NULL or a live set, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_free(s: *mut mcds_set) {
    // SAFETY: forwarded caller contract.
    unsafe { free(s) }
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

// ---------------------------------------------------------------- window

/// A sliding-window counter: events in the last `slots - 1` slots.
pub struct mcds_window {
    window: WindowCounter,
}

/// Create the window counter `name` with `slots` slots (2 to 1000) of
/// `slot_secs` seconds.
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
        create(store, name, out, |store, name| {
            let window = WindowCounter::new(
                store,
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

// ---------------------------------------------------------------- rate limiter

/// A rate limiter: at most `limit` requests per window.
pub struct mcds_limiter {
    limiter: RateLimiter,
}

/// The answer of `mcds_limiter_check` and `mcds_limiter_peek`.
#[repr(C)]
pub struct mcds_decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// How many more requests would be allowed now.
    pub remaining: u64,
    /// When denied, milliseconds until a request would be allowed (else 0).
    pub retry_after_ms: u64,
}

/// Create the rate limiter `name`: at most `limit` requests per
/// `window_secs` seconds, in a fixed window or (with `sliding`) the
/// sliding-window estimate.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_new(
    store: *const mcds_store,
    name: *const c_char,
    limit: u64,
    window_secs: u32,
    sliding: bool,
    out: *mut *mut mcds_limiter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let mode = if sliding {
                Window::Sliding
            } else {
                Window::Fixed
            };
            let limiter = RateLimiter::new(
                store,
                name,
                limit,
                Duration::from_secs(u64::from(window_secs)),
                mode,
            )?;
            Ok(mcds_limiter { limiter })
        })
    }
}

/// Decide with or without counting the request.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
unsafe fn limiter_op(l: *const mcds_limiter, out: *mut mcds_decision, count: bool) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(l, "limiter", out, "out", |l| {
            let d = if count {
                l.limiter.check()?
            } else {
                l.limiter.peek()?
            };
            let decision = mcds_decision {
                allowed: d.allowed,
                remaining: d.remaining,
                retry_after_ms: u64::try_from(d.retry_after.as_millis()).unwrap_or(u64::MAX),
            };
            Ok(decision)
        })
    }
}

/// Count this request and decide.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_check(
    l: *const mcds_limiter,
    out: *mut mcds_decision,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { limiter_op(l, out, true) }
}

/// Decide without counting a request.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_peek(
    l: *const mcds_limiter,
    out: *mut mcds_decision,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { limiter_op(l, out, false) }
}

/// Free a rate limiter (NULL is a no-op).
///
/// # Safety
/// `l` must be NULL or a live limiter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_free(l: *mut mcds_limiter) {
    // SAFETY: forwarded caller contract.
    unsafe { free(l) }
}

// ---------------------------------------------------------------- event log

/// An event log (a ring of time-chunk keys).
pub struct mcds_log {
    log: EventLog,
}

/// Events returned by `mcds_log_fetch`; read with `mcds_event_list_len` and
/// `mcds_event_list_get`, free with `mcds_event_list_free`.
pub struct mcds_event_list {
    events: Vec<Event>,
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

// ---------------------------------------------------------------- table

/// A table: O(1) membership through a key per member, with values.
pub struct mcds_table {
    table: Table,
}

/// Create the table `name`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_table,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let table = Table::new(store, name)?;
            Ok(mcds_table { table })
        })
    }
}

/// Set `member`'s value (adding the member if new). Two round trips.
///
/// # Safety
/// `t` NULL or live; `member`/`value` NULL or readable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_set(
    t: *const mcds_table,
    member: *const u8,
    member_len: usize,
    value: *const u8,
    value_len: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (t, member, value) = unsafe {
            (
                handle(t, "table")?,
                bytes(member, member_len, "member")?,
                bytes(value, value_len, "value")?,
            )
        };
        Ok(t.table.set(member, value)?)
    })
}

/// Whether `member` is present, in `*out`. One round trip.
///
/// # Safety
/// `t` NULL or live; `member` NULL or readable; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_has(
    t: *const mcds_table,
    member: *const u8,
    member_len: usize,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract, for the handle, the output and the
    // bytes (read inside the boundary, after the NULL checks).
    unsafe {
        query(t, "table", out, "out", |t| {
            let member = bytes(member, member_len, "member")?;
            Ok(t.table.has(member)?)
        })
    }
}

/// `member`'s value: a list of one item in `*out_value` if present (free it
/// with `mcds_bytes_list_free`), or NULL if absent.
///
/// # Safety
/// `t` NULL or live; `member` NULL or readable; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_get(
    t: *const mcds_table,
    member: *const u8,
    member_len: usize,
    out_value: *mut *mut mcds_bytes_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract, for the handle, the output and the
    // bytes (read inside the boundary, after the NULL checks).
    unsafe {
        query(t, "table", out_value, "out_value", |t| {
            let member = bytes(member, member_len, "member")?;
            let value = t.table.get(member)?.map_or(std::ptr::null_mut(), |v| {
                Box::into_raw(Box::new(mcds_bytes_list { items: vec![v] }))
            });
            Ok(value)
        })
    }
}

/// Remove `member`; whether it was present, in `*out_existed`.
///
/// # Safety
/// `t` NULL or live; `member` NULL or readable; `out_existed` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_delete(
    t: *const mcds_table,
    member: *const u8,
    member_len: usize,
    out_existed: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract, for the handle, the output and the
    // bytes (read inside the boundary, after the NULL checks).
    unsafe {
        query(t, "table", out_existed, "out_existed", |t| {
            let member = bytes(member, member_len, "member")?;
            Ok(t.table.delete(member)?)
        })
    }
}

/// The members in insertion order, as a new list in `*out`.
///
/// # Safety
/// `t` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_keys(
    t: *const mcds_table,
    out: *mut *mut mcds_bytes_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(t, "table", out, "out", |t| {
            let items = t.table.keys()?;
            Ok(Box::into_raw(Box::new(mcds_bytes_list { items })))
        })
    }
}

/// Free a table (NULL is a no-op).
///
/// # Safety
/// `t` must be NULL or a live table, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_free(t: *mut mcds_table) {
    // SAFETY: forwarded caller contract.
    unsafe { free(t) }
}

/// The library version, e.g. `"0.1.0"`: a static string.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

// ---------------------------------------------------------------- sketches

/// A HyperLogLog: distinct counting in 12 KiB (PFADD, PFCOUNT, PFMERGE).
pub struct mcds_hll {
    hll: HyperLogLog,
}

/// Create the HyperLogLog `name` on `store`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_hll,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            Ok(mcds_hll {
                hll: HyperLogLog::new(store, name)?,
            })
        })
    }
}

/// PFADD the element of `len` bytes at `element`; in `*out_changed`
/// whether the estimate may have changed. Two round trips (one when
/// nothing changes).
///
/// # Safety
/// `h` NULL or live; `element` NULL or `len` readable bytes; `out_changed`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_add(
    h: *const mcds_hll,
    element: *const u8,
    len: usize,
    out_changed: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract (bytes read after the NULL checks).
    unsafe {
        query(h, "hll", out_changed, "out_changed", |h| {
            let element = bytes(element, len, "element")?;
            Ok(h.hll.add(element)?)
        })
    }
}

/// PFCOUNT: the estimated number of distinct elements, in `*out`. One round
/// trip.
///
/// # Safety
/// `h` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_count(h: *const mcds_hll, out: *mut u64) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(h, "hll", out, "out", |h| Ok(h.hll.count()?)) }
}

/// PFMERGE: write the union of `target` and the `count` sketches at
/// `sources` into `target`.
///
/// # Safety
/// `target` NULL or live; `sources` NULL or `count` readable pointers, each
/// NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_merge(
    target: *const mcds_hll,
    sources: *const *const mcds_hll,
    count: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let target = unsafe { handle(target, "target") }?;
        let list: &[*const mcds_hll] = if count == 0 {
            &[]
        } else if sources.is_null() {
            return Err(null("sources"));
        } else if count > MAX_HANDLES {
            return Err(Fail(
                MCDS_INVALID_ARGUMENT,
                format!("count {count} is absurd: merge at most {MAX_HANDLES} sketches per call"),
            ));
        } else {
            // SAFETY: non-NULL with `count` readable pointers.
            unsafe { std::slice::from_raw_parts(sources, count) }
        };
        let others = list
            .iter()
            // SAFETY: each NULL or live.
            .map(|&p| unsafe { handle(p, "sources[i]") }.map(|h| &h.hll))
            .collect::<Result<Vec<&HyperLogLog>, Fail>>()?;
        Ok(target.hll.merge(&others)?)
    })
}

/// Free a HyperLogLog handle (NULL is a no-op).
///
/// # Safety
/// `h` must be NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_free(h: *mut mcds_hll) {
    // SAFETY: forwarded caller contract.
    unsafe { free(h) }
}

/// A Bloom filter.
pub struct mcds_bloom {
    bloom: BloomFilter,
}

/// Create the Bloom filter `name` for `expected_items` at
/// `false_positive_rate` (between 0 and 1, e.g. 0.01). Every client must
/// use the same two numbers.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_new(
    store: *const mcds_store,
    name: *const c_char,
    expected_items: u64,
    false_positive_rate: f64,
    out: *mut *mut mcds_bloom,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            Ok(mcds_bloom {
                bloom: BloomFilter::new(store, name, expected_items, false_positive_rate)?,
            })
        })
    }
}

/// Add an element; in `*out_new` whether it was new (some bit was clear).
///
/// # Safety
/// `b` NULL or live; `element` NULL or `len` readable bytes; `out_new` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_add(
    b: *const mcds_bloom,
    element: *const u8,
    len: usize,
    out_new: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bloom", out_new, "out_new", |b| {
            let element = bytes(element, len, "element")?;
            Ok(b.bloom.add(element)?)
        })
    }
}

/// Whether the element may have been added (no false negatives), in
/// `*out`. One round trip.
///
/// # Safety
/// `b` NULL or live; `element` NULL or `len` readable bytes; `out` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_contains(
    b: *const mcds_bloom,
    element: *const u8,
    len: usize,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bloom", out, "out", |b| {
            let element = bytes(element, len, "element")?;
            Ok(b.bloom.contains(element)?)
        })
    }
}

/// Free a Bloom filter handle (NULL is a no-op).
///
/// # Safety
/// `b` must be NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_free(b: *mut mcds_bloom) {
    // SAFETY: forwarded caller contract.
    unsafe { free(b) }
}

/// An activity bitmap: one bit per time unit (SETBIT, BITCOUNT).
pub struct mcds_bitmap {
    bitmap: ActivityBitmap,
}

/// Create the bitmap `name` whose bit 0 is the unit starting at
/// `start_unix_secs`, one bit per `unit_ms` milliseconds (at least 1).
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_new(
    store: *const mcds_store,
    name: *const c_char,
    start_unix_secs: u64,
    unit_ms: u64,
    out: *mut *mut mcds_bitmap,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |store, name| {
            let unit = Duration::from_millis(unit_ms);
            Ok(mcds_bitmap {
                bitmap: ActivityBitmap::new(store, name, start_unix_secs, unit)?,
            })
        })
    }
}

/// SETBIT `index` to 1; the previous bit in `*out_previous`.
///
/// # Safety
/// `b` NULL or live; `out_previous` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_set(
    b: *const mcds_bitmap,
    index: u64,
    out_previous: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bitmap", out_previous, "out_previous", |b| {
            Ok(b.bitmap.set(index)?)
        })
    }
}

/// Mark the unit containing `at_unix_ms`; the previous bit in
/// `*out_previous`. `MCDS_INVALID_ARGUMENT` before the bitmap's start.
///
/// # Safety
/// `b` NULL or live; `out_previous` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_mark(
    b: *const mcds_bitmap,
    at_unix_ms: u64,
    out_previous: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bitmap", out_previous, "out_previous", |b| {
            Ok(b.bitmap.mark(at_unix_ms)?)
        })
    }
}

/// GETBIT `index`, in `*out`.
///
/// # Safety
/// `b` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_get(
    b: *const mcds_bitmap,
    index: u64,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(b, "bitmap", out, "out", |b| Ok(b.bitmap.get(index)?)) }
}

/// BITCOUNT of bits `first..=last`, in `*out`. One round trip.
///
/// # Safety
/// `b` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_count(
    b: *const mcds_bitmap,
    first: u64,
    last: u64,
    out: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bitmap", out, "out", |b| {
            Ok(b.bitmap.count_bits(first, last)?)
        })
    }
}

/// Free a bitmap handle (NULL is a no-op).
///
/// # Safety
/// `b` must be NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_free(b: *mut mcds_bitmap) {
    // SAFETY: forwarded caller contract.
    unsafe { free(b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_names_are_distinct() {
        let codes = [
            MCDS_OK,
            MCDS_NULL_ARGUMENT,
            MCDS_INVALID_UTF8,
            MCDS_PANIC,
            MCDS_INVALID_KEY,
            MCDS_VALUE_TOO_LARGE,
            MCDS_INVALID_ARGUMENT,
            MCDS_NON_NUMERIC,
            MCDS_CORRUPT,
            MCDS_IO,
            MCDS_SERVER_DOWN,
            MCDS_IO_TIMEOUT,
            MCDS_AMBIGUOUS,
            MCDS_OUT_OF_MEMORY,
            MCDS_SERVER_ERROR,
            MCDS_PROTOCOL,
            MCDS_CONFLICT,
            MCDS_UNSUPPORTED,
            MCDS_TIMEOUT,
            MCDS_OTHER,
        ];
        let mut names: Vec<String> = codes
            .iter()
            .map(|&c| {
                // SAFETY: mcds_result_name returns a static C string.
                unsafe { CStr::from_ptr(mcds_result_name(c)) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), codes.len());
        assert!(!names.contains(&"MCDS_UNKNOWN".to_string()));
    }

    #[test]
    fn panics_do_not_cross_the_boundary() {
        let code = boundary(|| panic!("boom"));
        assert_eq!(code, MCDS_PANIC);
    }
}
