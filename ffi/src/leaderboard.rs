//! `mcds_leaderboard`: a leaderboard of counts (ZINCRBY, ZREVRANGE …
//! WITHSCORES), exact up to its capacity and a Space-Saving sketch past
//! it; `mcds_entry_list`, the entries `mcds_leaderboard_top` answers with;
//! and `mcds_board_summary`, a plain struct describing the whole board.

use std::ffi::c_char;

use ::mcds_sketch::{Entry, Leaderboard};

use crate::boundary::{
    Fail, MAX_MEMBERS, array, boundary, byte_strings, bytes, create, free, handle, out_ptr, query,
    ttl, write,
};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// A leaderboard: members with counts, exact while at most `capacity`
/// distinct members were counted, each count within its error past that.
pub struct mcds_leaderboard {
    board: Leaderboard,
}

/// What `mcds_leaderboard_summary` reports about a whole board. A plain
/// value the caller owns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct mcds_board_summary {
    /// How many members the board keeps (its capacity).
    pub capacity: u32,
    /// `N`: the sum of every increment ever applied.
    pub total: u64,
    /// Whether every count is exact (no member was ever replaced).
    pub exact: bool,
    /// The most a count on the board overestimates, and the most a member
    /// off the board can have been counted: 0 while exact, else at most
    /// `total / capacity`.
    pub max_error: u64,
    /// How many members are on the board.
    pub members: usize,
}

/// Create the leaderboard `name`, exact up to `capacity` distinct members
/// and a Space-Saving sketch of `capacity` counters past that. Every
/// client must use the same capacity. `MCDS_INVALID_ARGUMENT` if
/// `capacity` is 0 or above 1 048 576 (2^20). A board of more than 200
/// members is kept in shards of 200, so an increment moves one shard
/// (at most 29 KiB each way) whatever the capacity. `*out` is a new handle the caller owns:
/// free it with `mcds_leaderboard_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_new(
    store: *const mcds_store,
    name: *const c_char,
    capacity: u32,
    out: *mut *mut mcds_leaderboard,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            Ok(mcds_leaderboard {
                board: Leaderboard::new(scope, name, capacity)?,
            })
        })
    }
}

/// A new handle on the same leaderboard whose increments give its item a
/// TTL of `ttl_secs` seconds, counted again from each increment: the whole
/// board is gone once it passes. 0 means never expires, as memcached's
/// exptime 0 (and as `mcds_leaderboard_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// `lb` is unchanged and borrowed for the call. `*out` is a new handle the
/// caller owns: free it with `mcds_leaderboard_free`.
///
/// # Safety
/// `lb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_with_ttl(
    lb: *const mcds_leaderboard,
    ttl_secs: u32,
    out: *mut *mut mcds_leaderboard,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lb, "leaderboard", out, "out", |lb| {
            let board = lb.board.clone().with_ttl(ttl(ttl_secs));
            Ok(Box::into_raw(Box::new(mcds_leaderboard { board })))
        })
    }
}

/// The memcached key the board lives under (the store's prefix included):
/// a pointer to its bytes in `*out_data` (owned by the handle, valid until
/// it is freed; not NUL-terminated) and their length in `*out_len`.
///
/// # Safety
/// `lb` NULL or live; `out_data` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_key(
    lb: *const mcds_leaderboard,
    out_data: *mut *const u8,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lb = unsafe { handle(lb, "leaderboard") }?;
        let (out_data, out_len) = (out_ptr(out_data, "out_data")?, out_ptr(out_len, "out_len")?);
        let key = lb.board.key().as_bytes();
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_data, key.as_ptr());
            write(out_len, key.len());
        }
        Ok(())
    })
}

/// The capacity the handle was created with, in `*out`. No round trip.
///
/// # Safety
/// `lb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_capacity(
    lb: *const mcds_leaderboard,
    out: *mut u32,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(lb, "leaderboard", out, "out", |lb| Ok(lb.board.capacity())) }
}

/// ZINCRBY: add `by` (at least 1) to the count of the member of `len`
/// bytes at `member` (at most 128 bytes; NULL is allowed when `len` is 0);
/// its new count in `*out_count` (exact while the board is exact, an upper
/// bound once sketched). One CAS read-modify-write, 2 round trips.
/// `MCDS_INVALID_ARGUMENT` for `by` = 0, a longer member, or a total that
/// would pass 2^64 - 1 (nothing is counted).
///
/// # Safety
/// `lb` NULL or live; `member` NULL or `len` readable bytes; `out_count`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_incr(
    lb: *const mcds_leaderboard,
    member: *const u8,
    len: usize,
    by: u64,
    out_count: *mut u64,
) -> mcds_result {
    // SAFETY: forwarded caller contract (bytes read after the NULL checks).
    unsafe {
        query(lb, "leaderboard", out_count, "out_count", |lb| {
            let member = bytes(member, len, "member")?;
            Ok(lb.board.incr(member, by)?)
        })
    }
}

/// Apply `count` increments, in order, in one CAS update (2 round trips,
/// whatever the count): increment `i` adds `bys[i]` (at least 1) to the
/// member of `lens[i]` bytes at `members[i]` (at most 128 bytes; NULL is
/// allowed when `lens[i]` is 0). The arrays are borrowed for the call and
/// may be NULL when `count` is 0 (nothing changes). At most 1 000 000
/// increments per call. Any bad increment (`bys[i]` = 0, a longer member)
/// is `MCDS_INVALID_ARGUMENT` and nothing is counted; so is a total that
/// would pass 2^64 - 1. A NULL array or member with a non-zero length is
/// `MCDS_NULL_ARGUMENT`.
///
/// # Safety
/// `lb` NULL or live; `members`, `lens` and `bys` NULL or `count` readable
/// values; each `members[i]` NULL or `lens[i]` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_incr_many(
    lb: *const mcds_leaderboard,
    members: *const *const u8,
    lens: *const usize,
    bys: *const u64,
    count: usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (lb, members, bys) = unsafe {
            (
                handle(lb, "leaderboard")?,
                byte_strings(members, lens, count, "members")?,
                array(bys, count, MAX_MEMBERS, "bys")?,
            )
        };
        let increments: Vec<(&[u8], u64)> = members.into_iter().zip(bys.iter().copied()).collect();
        Ok(lb.board.incr_many(&increments)?)
    })
}

/// The whole board in `*out`: its capacity, total, whether it is exact,
/// its largest possible error and how many members it holds (all zero but
/// the capacity, and exact, for a board never counted). One round trip.
///
/// # Safety
/// `lb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_summary(
    lb: *const mcds_leaderboard,
    out: *mut mcds_board_summary,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lb, "leaderboard", out, "out", |lb| {
            let board = lb.board.summary()?;
            Ok(mcds_board_summary {
                capacity: board.capacity(),
                total: board.total(),
                exact: board.is_exact(),
                max_error: board.max_error(),
                members: board.len(),
            })
        })
    }
}

/// ZREVRANGE 0 k-1 WITHSCORES: the `k` members with the largest counts
/// (fewer if fewer are on the board; none for `k` = 0), largest first,
/// ties by member bytes, each with its count and error, in `*out`: a new
/// list the caller owns, to free with `mcds_entry_list_free`. One round
/// trip.
///
/// # Safety
/// `lb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_top(
    lb: *const mcds_leaderboard,
    k: usize,
    out: *mut *mut mcds_entry_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(lb, "leaderboard", out, "out", |lb| {
            let entries = lb.board.top(k)?;
            Ok(Box::into_raw(Box::new(mcds_entry_list { entries })))
        })
    }
}

/// ZSCORE of the member of `len` bytes at `member` (NULL is allowed when
/// `len` is 0): in `*out_found` whether it is on the board, and if so its
/// count in `*out_count` and how much that may overestimate its true count
/// in `*out_error` (both 0 when it is not: its true count is then at most
/// the summary's `max_error`). One round trip. All three outputs are
/// written on success.
///
/// # Safety
/// `lb` NULL or live; `member` NULL or `len` readable bytes; the outputs
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_score(
    lb: *const mcds_leaderboard,
    member: *const u8,
    len: usize,
    out_found: *mut bool,
    out_count: *mut u64,
    out_error: *mut u64,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lb = unsafe { handle(lb, "leaderboard") }?;
        let (out_found, out_count, out_error) = (
            out_ptr(out_found, "out_found")?,
            out_ptr(out_count, "out_count")?,
            out_ptr(out_error, "out_error")?,
        );
        // SAFETY: forwarded caller contract.
        let member = unsafe { bytes(member, len, "member") }?;
        let entry = lb.board.score(member)?;
        // SAFETY: all checked non-NULL.
        unsafe {
            write(out_found, entry.is_some());
            write(out_count, entry.as_ref().map_or(0, |e| e.count));
            write(out_error, entry.as_ref().map_or(0, |e| e.error));
        }
        Ok(())
    })
}

/// Delete the board: it is empty again. One round trip; clearing a missing
/// board is not an error.
///
/// # Safety
/// `lb` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_clear(lb: *const mcds_leaderboard) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let lb = unsafe { handle(lb, "leaderboard") }?;
        Ok(lb.board.clear()?)
    })
}

/// Free a leaderboard handle (NULL is a no-op).
///
/// # Safety
/// `lb` must be NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_leaderboard_free(lb: *mut mcds_leaderboard) {
    // SAFETY: forwarded caller contract.
    unsafe { free(lb) }
}

/// Leaderboard entries returned by `mcds_leaderboard_top`, largest count
/// first; read with `mcds_entry_list_len` and `mcds_entry_list_get`, free
/// with `mcds_entry_list_free`.
pub struct mcds_entry_list {
    entries: Vec<Entry>,
}

/// The number of entries in `list`, in `*out_len`.
///
/// # Safety
/// `list` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_entry_list_len(
    list: *const mcds_entry_list,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(list, "list", out_len, "out_len", |list| {
            Ok(list.entries.len())
        })
    }
}

/// Entry `index` of `list`: a pointer to its member's bytes (owned by the
/// list, valid until it is freed; not NUL-terminated) and their length,
/// its count, and how much the count may overestimate the member's true
/// count (its true count is between `count - error` and `count`; the error
/// is 0 while the board is exact). `MCDS_INVALID_ARGUMENT` if `index` is
/// out of range.
///
/// # Safety
/// `list` NULL or live; the outputs NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_entry_list_get(
    list: *const mcds_entry_list,
    index: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_count: *mut u64,
    out_error: *mut u64,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let list = unsafe { handle(list, "list") }?;
        let (out_data, out_len, out_count, out_error) = (
            out_ptr(out_data, "out_data")?,
            out_ptr(out_len, "out_len")?,
            out_ptr(out_count, "out_count")?,
            out_ptr(out_error, "out_error")?,
        );
        let entry = list.entries.get(index).ok_or_else(|| {
            Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "index {index} is out of range for a list of {} entries",
                    list.entries.len()
                ),
            )
        })?;
        // SAFETY: all checked non-NULL.
        unsafe {
            write(out_data, entry.member.as_ptr());
            write(out_len, entry.member.len());
            write(out_count, entry.count);
            write(out_error, entry.error);
        }
        Ok(())
    })
}

/// Free an entry list (NULL is a no-op).
///
/// # Safety
/// `list` must be NULL or a live list, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_entry_list_free(list: *mut mcds_entry_list) {
    // SAFETY: forwarded caller contract.
    unsafe { free(list) }
}
