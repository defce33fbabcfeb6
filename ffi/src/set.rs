//! `mcds_set`: a set of byte strings in one item. Batches of members cross
//! as two parallel arrays, of pointers and of lengths (`mcds_set_add_many`).

use std::ffi::c_char;

use ::mcds_set::Set;

use crate::boundary::{boundary, byte_strings, bytes, create, free, handle, query, ttl};
use crate::list::mcds_bytes_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A set of byte strings.
pub struct mcds_set {
    set: Set,
}

/// Create the set `name` on `store`. `*out` is a new handle the caller
/// owns: free it with `mcds_set_free`.
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
        create(store, name, out, |scope, name| {
            let set = Set::new(scope, name)?;
            Ok(mcds_set { set })
        })
    }
}

/// A new handle on the same set (same name and settings) that gives the
/// set's item a TTL of `ttl_secs` seconds when it creates it, and again
/// when it compacts it (an add to an existing set leaves its expiry
/// alone). 0 means never expires, as memcached's exptime 0 (and as
/// `mcds_set_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// `s` is unchanged and borrowed for the call. `*out` is a new handle the
/// caller owns: free it with `mcds_set_free`.
///
/// # Safety
/// `s` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_with_ttl(
    s: *const mcds_set,
    ttl_secs: u32,
    out: *mut *mut mcds_set,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(s, "set", out, "out", |s| {
            let set = s.set.clone().with_ttl(ttl(ttl_secs));
            Ok(Box::into_raw(Box::new(mcds_set { set })))
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

/// Add `count` members in one append (one round trip, whatever the count):
/// member `i` is the `lens[i]` bytes at `members[i]` (any bytes; NULL is
/// allowed when `lens[i]` is 0). Both arrays are borrowed for the call and
/// may be NULL when `count` is 0, which does nothing. At most 1 000 000
/// members per call (`MCDS_INVALID_ARGUMENT`); a NULL array or member with
/// a non-zero length is `MCDS_NULL_ARGUMENT`, and nothing is written.
///
/// # Safety
/// `s` NULL or live; `members` and `lens` NULL or `count` readable values;
/// each `members[i]` NULL or `lens[i]` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_add_many(
    s: *const mcds_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update_many(s, members, lens, count, |set, m| set.add(m)) }
}

/// Remove `count` members in one append; the arrays as for
/// `mcds_set_add_many`. A missing set stays missing.
///
/// # Safety
/// `s` NULL or live; `members` and `lens` NULL or `count` readable values;
/// each `members[i]` NULL or `lens[i]` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_remove_many(
    s: *const mcds_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update_many(s, members, lens, count, |set, m| set.remove(m)) }
}

/// Add or remove a batch: the body of `mcds_set_add_many` and
/// `mcds_set_remove_many`.
///
/// # Safety
/// As `mcds_set_add_many`.
unsafe fn update_many(
    s: *const mcds_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    op: fn(&Set, &[&[u8]]) -> mcds_core::Result<()>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (s, members) = unsafe {
            (
                handle(s, "set")?,
                byte_strings(members, lens, count, "members")?,
            )
        };
        Ok(op(&s.set, &members)?)
    })
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

/// Rewrite the set's log without the tokens of removed members, if it has
/// any, by CAS: `*out_rewritten` is true if it was rewritten, false if there
/// was nothing to do or a concurrent write won (nothing is lost either
/// way). `mcds_set_members` also compacts when much of the log is dead.
/// One round trip (two when rewriting).
///
/// # Safety
/// `s` NULL or live; `out_rewritten` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_compact(
    s: *const mcds_set,
    out_rewritten: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(s, "set", out_rewritten, "out_rewritten", |s| {
            Ok(s.set.compact()?)
        })
    }
}

/// Delete the set (every member). One round trip.
///
/// # Safety
/// `s` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_set_clear(s: *const mcds_set) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { handle(s, "set") }?;
        Ok(s.set.clear()?)
    })
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
