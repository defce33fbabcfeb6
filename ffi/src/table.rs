//! `mcds_table`: O(1) membership through a key per member, with values.
//! Keys and values come back as `mcds_bytes_list`s (see `list`); entries as
//! two of them, parallel (`mcds_table_entries`), so that bindings need no
//! list type beyond the one they already wrap.

use std::ffi::c_char;

use ::mcds_set::Table;

use crate::boundary::{boundary, bytes, create, free, handle, out_ptr, query, write};
use crate::list::mcds_bytes_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A table: O(1) membership through a key per member, with values.
pub struct mcds_table {
    table: Table,
}

/// Create the table `name`. `*out` is a new handle the caller owns: free
/// it with `mcds_table_free`.
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
        create(store, name, out, |scope, name| {
            let table = Table::new(scope, name)?;
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

/// The members in insertion order, as a new list in `*out` that the caller
/// owns: free it with `mcds_bytes_list_free`.
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

/// Every member with its value, as two new lists of the same length that
/// the caller owns (free each with `mcds_bytes_list_free`): item `i` of
/// `*out_members` has the value item `i` of `*out_values`. Members in
/// insertion order; a member whose value item is gone (evicted, expired) is
/// left out of both. One round trip for the members, one per server for the
/// values. Both outputs are written on success only, and neither on
/// failure.
///
/// # Safety
/// `t` NULL or live; `out_members` and `out_values` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_table_entries(
    t: *const mcds_table,
    out_members: *mut *mut mcds_bytes_list,
    out_values: *mut *mut mcds_bytes_list,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let t = unsafe { handle(t, "table") }?;
        let (out_members, out_values) = (
            out_ptr(out_members, "out_members")?,
            out_ptr(out_values, "out_values")?,
        );
        let (members, values) = t.table.entries()?.into_iter().unzip();
        let list = |items| Box::into_raw(Box::new(mcds_bytes_list { items }));
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_members, list(members));
            write(out_values, list(values));
        }
        Ok(())
    })
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
