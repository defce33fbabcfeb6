//! `mcds_set`: a set of byte strings.

use std::ffi::c_char;

use ::mcds_set::Set;

use crate::boundary::{boundary, bytes, create, free, handle, query};
use crate::list::mcds_bytes_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A set of byte strings.
pub struct mcds_set {
    set: Set,
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
    // SAFETY: forwarded caller contract.
    unsafe { update(s, member, len, |set, m| set.add(m)) }
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
    // SAFETY: forwarded caller contract.
    unsafe { update(s, member, len, |set, m| set.remove(m)) }
}

/// Add or remove one member: the body of `mcds_set_add` and
/// `mcds_set_remove`.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
unsafe fn update(
    s: *const mcds_set,
    member: *const u8,
    len: usize,
    op: fn(&Set, &[&[u8]]) -> mcds_core::Result<()>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (s, member) = unsafe { (handle(s, "set")?, bytes(member, len, "member")?) };
        Ok(op(&s.set, &[member])?)
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
