//! The C boundary every exported function goes through: the thread's
//! last-error message, the panic boundary, [`Fail`], and the small helpers
//! that touch raw pointers. Each `unsafe` block here states why it is
//! sound; the handle modules only forward their callers' contracts.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use std::sync::Arc;

use ::mcds_core::{Error, Key, Scope, Store, Ttl};

use crate::result::{
    MCDS_CANCELLED, MCDS_INVALID_ARGUMENT, MCDS_INVALID_UTF8, MCDS_NULL_ARGUMENT, MCDS_OK,
    MCDS_PANIC, code_of, mcds_result,
};
use crate::store::mcds_store;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The message of the last failed call on this thread (empty if none): what
/// happened and what to do. Valid until the next mcds call on this thread;
/// must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_last_error_message() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// A failed call: its code and message.
pub(crate) struct Fail(pub(crate) mcds_result, pub(crate) String);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(code_of(&e), e.to_string())
    }
}

pub(crate) fn null(what: &str) -> Fail {
    Fail(MCDS_NULL_ARGUMENT, format!("{what} is NULL"))
}

/// Run `body` inside the panic boundary and turn its outcome into a code,
/// recording the message of a failure for `mcds_last_error_message`.
pub(crate) fn boundary(body: impl FnOnce() -> Result<(), Fail>) -> mcds_result {
    // Only an op inside a boundary marks a stop (a free runs without the
    // token); cleared first all the same, so no stale mark is misread.
    crate::cancel::take_stopped();
    let outcome = catch_unwind(AssertUnwindSafe(body));
    // An op that stopped for the thread's cancellation token marks it, and
    // the call answers MCDS_CANCELLED with the message the structure made
    // of it on the way out (what may have been applied, what to do).
    let stopped = crate::cancel::take_stopped();
    match outcome {
        Ok(Ok(())) => MCDS_OK,
        Ok(Err(Fail(_, message))) if stopped => {
            set_last_error(&format!(
                "the call was cancelled (mcds_cancel_trigger) while it waited; a write it made may have been applied: {message}"
            ));
            MCDS_CANCELLED
        }
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
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: by the caller's contract `p` is NULL or a live handle.
    unsafe { p.as_ref() }.ok_or_else(|| null(what))
}

/// Read a NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that stays valid for
/// the call.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Fail> {
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

/// The most handles one call takes in an array (`mcds_hll_merge`,
/// `mcds_hll_count_union`).
pub(crate) const MAX_HANDLES: usize = 100_000;

/// The most members (or integers) one batch call takes
/// (`mcds_set_add_many`, `mcds_int_array_add`, ...). More is a caller's bug
/// (a negative count cast to `size_t`, say): no item could hold them anyway.
pub(crate) const MAX_MEMBERS: usize = 1_000_000;

/// Read `len` bytes at `p` (NULL is allowed when `len` is 0).
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes for the call.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Fail> {
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

/// Read `len` bytes at `p` as UTF-8 text (NULL is allowed when `len` is
/// 0): `MCDS_INVALID_UTF8` if they are not, for strings that may hold any
/// character, a NUL included (a counter map's field names).
///
/// # Safety
/// `p` must be NULL or point to `len` readable bytes for the call.
pub(crate) unsafe fn utf8<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a str, Fail> {
    // SAFETY: forwarded caller contract.
    let raw = unsafe { bytes(p, len, what) }?;
    std::str::from_utf8(raw)
        .map_err(|_| Fail(MCDS_INVALID_UTF8, format!("{what} is not valid UTF-8")))
}

/// Read an array of `count` values at `p` (NULL is allowed when `count` is
/// 0); more than `max` is refused as a caller's bug before `p` is read.
///
/// # Safety
/// `p` must be NULL or point to `count` readable, aligned values for the call.
pub(crate) unsafe fn array<'a, T>(
    p: *const T,
    count: usize,
    max: usize,
    what: &str,
) -> Result<&'a [T], Fail> {
    if count == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(what));
    }
    if count > max {
        return Err(Fail(
            MCDS_INVALID_ARGUMENT,
            format!(
                "{what}: a count of {count} is absurd (at most {max} per call); pass the real count"
            ),
        ));
    }
    // SAFETY: non-NULL with `count` readable values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, count) })
}

/// Read `count` byte strings given as parallel arrays of pointers and
/// lengths: member `i` is `lens[i]` bytes at `members[i]` (which may be NULL
/// when `lens[i]` is 0). Both arrays may be NULL when `count` is 0. `what`
/// names the array of pointers in messages (`"members"`, `"elements"`).
///
/// # Safety
/// `members` and `lens` must each be NULL or point to `count` readable
/// values, and each `members[i]` NULL or point to `lens[i]` readable bytes.
pub(crate) unsafe fn byte_strings<'a>(
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    what: &str,
) -> Result<Vec<&'a [u8]>, Fail> {
    // SAFETY: forwarded caller contract.
    let (ptrs, lens) = unsafe {
        (
            array(members, count, MAX_MEMBERS, what)?,
            array(lens, count, MAX_MEMBERS, "lens")?,
        )
    };
    ptrs.iter()
        .zip(lens)
        .enumerate()
        .map(|(i, (&p, &len))| {
            // SAFETY: each member NULL or `lens[i]` readable bytes. The
            // index goes into the message only on failure.
            unsafe { bytes(p, len, what) }
                .map_err(|Fail(code, m)| Fail(code, m.replacen(what, &format!("{what}[{i}]"), 1)))
        })
        .collect()
}

/// A string for C, owned by the caller, who frees it with
/// `mcds_string_free`. An interior NUL (never written by mcds, but another
/// program may have stored one) becomes the two characters `\0`.
pub(crate) fn c_string(s: &str) -> *mut c_char {
    // No NUL is left after the replace, so the default never happens.
    CString::new(s.replace('\0', "\\0"))
        .unwrap_or_default()
        .into_raw()
}

/// Check an output pointer before doing any work.
pub(crate) fn out_ptr<T>(p: *mut T, what: &str) -> Result<*mut T, Fail> {
    if p.is_null() { Err(null(what)) } else { Ok(p) }
}

/// Check an output array of `count` slots before doing any work (NULL is
/// allowed when `count` is 0: nothing will be written).
pub(crate) fn out_array<T>(p: *mut T, count: usize, what: &str) -> Result<*mut T, Fail> {
    if count == 0 { Ok(p) } else { out_ptr(p, what) }
}

/// Write `values` to the first `count` slots of an output array (only ever
/// called on success), one by one: the slots may be uninitialised, so no
/// Rust slice is made of them.
///
/// # Safety
/// `p` checked by [`out_array`] with the same `count`, and `count` writable
/// slots.
pub(crate) unsafe fn write_array<T>(p: *mut T, count: usize, values: impl IntoIterator<Item = T>) {
    for (i, value) in values.into_iter().take(count).enumerate() {
        // SAFETY: `i < count`, so `p` is non-NULL (checked) and slot `i`
        // writable by the caller's contract.
        unsafe { p.add(i).write(value) }
    }
}

/// Write an output (only ever called on success).
///
/// # Safety
/// `p` must be non-NULL (checked by [`out_ptr`]) and writable.
pub(crate) unsafe fn write<T>(p: *mut T, value: T) {
    // SAFETY: checked non-NULL; writable by the caller's contract.
    unsafe { p.write(value) }
}

/// The [`Ttl`] of a C `ttl_secs`: 0 is never, as memcached's exptime 0.
pub(crate) fn ttl(secs: u32) -> Ttl {
    if secs == 0 {
        Ttl::Never
    } else {
        Ttl::secs(secs)
    }
}

/// Free a handle made with `Box::into_raw`.
///
/// # Safety
/// `p` must be NULL or a pointer from `Box::into_raw` not yet freed.
pub(crate) unsafe fn free<T>(p: *mut T) {
    // Inside its own panic boundary: a `*_free` function returns nothing.
    // Never cancelled: a lock's free releases its lease.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        crate::cancel::uncancelled(|| {
            if !p.is_null() {
                // SAFETY: a live pointer from Box::into_raw, freed once.
                drop(unsafe { Box::from_raw(p) });
            }
        })
    }));
}

/// A constructor: borrow the store, read the name, build the handle with
/// `f` from the store's scope (its store and key prefix) and write it to
/// `out`, all inside the panic boundary.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
pub(crate) unsafe fn create<T>(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut T,
    f: impl FnOnce(Scope, &str) -> Result<T, Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, name) = unsafe { (handle(store, "store")?, text(name, "name")?) };
        let out = out_ptr(out, "out")?;
        let value = f(store.scope.clone(), name)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(value))) };
        Ok(())
    })
}

/// A constructor on an exact key: borrow the store, read the key
/// (`key_len` bytes at `key`), check `out`, validate the key as a memcached
/// key (`MCDS_INVALID_KEY` with the library's message), build the handle
/// with `f` from the store itself (the handle's key prefix is not applied)
/// and write it to `out`, all inside the panic boundary. The NULL checks
/// come before the key is validated.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes; `out` NULL
/// or writable.
pub(crate) unsafe fn create_with_key<T>(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    out: *mut *mut T,
    f: impl FnOnce(&Arc<dyn Store>, Key) -> Result<T, Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, key) = unsafe { (handle(store, "store")?, bytes(key, key_len, "key")?) };
        let out = out_ptr(out, "out")?;
        let value = f(store.scope.store(), Key::new(key)?)?;
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
pub(crate) unsafe fn query<H, T>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_do_not_cross_the_boundary() {
        let code = boundary(|| panic!("boom"));
        assert_eq!(code, MCDS_PANIC);
    }

    #[test]
    fn an_error_becomes_its_code_and_message() {
        let code = boundary(|| Err(Error::Internal("a reply of the wrong kind".into()).into()));
        assert_eq!(code, crate::result::MCDS_INTERNAL);
        // SAFETY: a NUL-terminated string valid until the next call here.
        let message = unsafe { CStr::from_ptr(mcds_last_error_message()) };
        assert!(
            message
                .to_string_lossy()
                .contains("a reply of the wrong kind"),
            "{message:?}"
        );
    }

    #[test]
    fn arrays_refuse_null_and_absurd_counts_before_reading() {
        let values = [1i64, 2, 3];
        // SAFETY: NULL with a count of 0, and pointers to `values`.
        unsafe {
            assert!(
                array::<i64>(std::ptr::null(), 0, 10, "v")
                    .ok()
                    .unwrap()
                    .is_empty()
            );
            assert_eq!(array(values.as_ptr(), 3, 10, "v").ok().unwrap(), &values);
            let Err(Fail(code, message)) = array::<i64>(std::ptr::null(), 2, 10, "v") else {
                panic!("NULL with a count was accepted");
            };
            assert_eq!((code, message.as_str()), (MCDS_NULL_ARGUMENT, "v is NULL"));
            // Refused on the count alone: the pointer is never read.
            let Err(Fail(code, _)) = array(values.as_ptr(), usize::MAX, 10, "v") else {
                panic!("an absurd count was accepted");
            };
            assert_eq!(code, MCDS_INVALID_ARGUMENT);
        }
    }

    #[test]
    fn byte_strings_name_the_bad_member() {
        let (a, b) = (b"ann".as_slice(), b"".as_slice());
        let members = [a.as_ptr(), std::ptr::null(), b.as_ptr()];
        let lens = [3, 0, 0];
        // SAFETY: arrays of 3 and members of their lengths.
        let got = unsafe { byte_strings(members.as_ptr(), lens.as_ptr(), 3, "members") }
            .ok()
            .unwrap();
        assert_eq!(got, [a, b, b]);
        let lens = [3, 5, 0];
        // SAFETY: as above; member 1 is NULL with a length, refused unread.
        let Err(Fail(code, message)) =
            (unsafe { byte_strings(members.as_ptr(), lens.as_ptr(), 3, "members") })
        else {
            panic!("a NULL member was accepted");
        };
        assert_eq!(
            (code, message.as_str()),
            (MCDS_NULL_ARGUMENT, "members[1] is NULL")
        );
        let lens = [usize::MAX, 0, 0];
        // SAFETY: as above; the absurd length is refused unread.
        let Err(Fail(code, message)) =
            (unsafe { byte_strings(members.as_ptr(), lens.as_ptr(), 3, "members") })
        else {
            panic!("an absurd length was accepted");
        };
        assert_eq!(code, MCDS_INVALID_ARGUMENT);
        assert!(message.starts_with("members[0]: "), "{message}");
        // SAFETY: NULL arrays with a count of 0.
        assert!(
            unsafe { byte_strings(std::ptr::null(), std::ptr::null(), 0, "members") }
                .ok()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn strings_for_c_escape_an_interior_nul() {
        let p = c_string("a\0b");
        // SAFETY: a string from c_string, read then freed once.
        unsafe {
            assert_eq!(CStr::from_ptr(p).to_bytes(), b"a\\0b");
            crate::mcds_string_free(p);
        }
    }
}
