//! `mcds_sharded_set`: a set of byte strings spread over several items, for
//! sets larger than one item and to spread load over a pool.

use std::ffi::c_char;

use ::mcds_set::ShardedSet;

use crate::boundary::{boundary, byte_strings, bytes, create, free, handle, query};
use crate::list::mcds_bytes_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A set spread over `shards` items by a stable hash of the member.
pub struct mcds_sharded_set {
    set: ShardedSet,
}

/// Create the sharded set `name` over `shards` items (1 to 4096; every
/// client must use the same number). `*out` is a new handle the caller
/// owns: free it with `mcds_sharded_set_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_new(
    store: *const mcds_store,
    name: *const c_char,
    shards: u32,
    out: *mut *mut mcds_sharded_set,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let shards = usize::try_from(shards).unwrap_or(usize::MAX);
            Ok(mcds_sharded_set {
                set: ShardedSet::new(scope, name, shards)?,
            })
        })
    }
}

/// Add or remove a batch.
///
/// # Safety
/// As `mcds_sharded_set_add_many`.
unsafe fn update(
    s: *const mcds_sharded_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    op: fn(&ShardedSet, &[&[u8]]) -> mcds_core::Result<()>,
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

/// Add or remove one member.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
unsafe fn update_one(
    s: *const mcds_sharded_set,
    member: *const u8,
    len: usize,
    op: fn(&ShardedSet, &[&[u8]]) -> mcds_core::Result<()>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (s, member) = unsafe { (handle(s, "set")?, bytes(member, len, "member")?) };
        Ok(op(&s.set, &[member])?)
    })
}

/// Add the member of `len` bytes at `member` (any bytes; NULL is allowed
/// when `len` is 0). One round trip.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_add(
    s: *const mcds_sharded_set,
    member: *const u8,
    len: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update_one(s, member, len, |set, m| set.add(m)) }
}

/// Remove a member. One round trip.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_remove(
    s: *const mcds_sharded_set,
    member: *const u8,
    len: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update_one(s, member, len, |set, m| set.remove(m)) }
}

/// Add `count` members: one append per shard touched, all in one pipelined
/// batch (one round trip per server). The arrays as for
/// `mcds_set_add_many` (borrowed for the call; NULL when `count` is 0; at
/// most 1 000 000 members).
///
/// On a pool, the shards on different servers are written independently:
/// on an error (even `MCDS_IO` or `MCDS_SERVER_DOWN`, which say that
/// server's requests were not applied) the shards on other servers may be
/// written already. Adding is idempotent, so retry the whole call.
///
/// # Safety
/// `s` NULL or live; `members` and `lens` NULL or `count` readable values;
/// each `members[i]` NULL or `lens[i]` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_add_many(
    s: *const mcds_sharded_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update(s, members, lens, count, |set, m| set.add(m)) }
}

/// Remove `count` members, as `mcds_sharded_set_add_many` adds them (and,
/// on an error, as partially: the shards on other servers may be written
/// already; removing is idempotent, so retry the whole call).
///
/// # Safety
/// `s` NULL or live; `members` and `lens` NULL or `count` readable values;
/// each `members[i]` NULL or `lens[i]` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_remove_many(
    s: *const mcds_sharded_set,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { update(s, members, lens, count, |set, m| set.remove(m)) }
}

/// Whether the set contains the member, in `*out`. Reads one shard.
///
/// # Safety
/// `s` NULL or live; `member` NULL or `len` readable bytes; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_contains(
    s: *const mcds_sharded_set,
    member: *const u8,
    len: usize,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract (bytes read after the NULL checks).
    unsafe {
        query(s, "set", out, "out", |s| {
            let member = bytes(member, len, "member")?;
            Ok(s.set.contains(member)?)
        })
    }
}

/// Every member, shard by shard (each in first-insertion order), as a new
/// list in `*out` that the caller owns: free it with `mcds_bytes_list_free`.
/// One round trip per server.
///
/// # Safety
/// `s` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_members(
    s: *const mcds_sharded_set,
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

/// Compact every shard whose log holds tokens of removed members (by CAS:
/// a concurrent write is never lost). A round trip per shard, two for each
/// shard rewritten.
///
/// # Safety
/// `s` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_compact(s: *const mcds_sharded_set) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { handle(s, "set") }?;
        Ok(s.set.compact()?)
    })
}

/// Delete every shard: one pipelined batch (one round trip per server); on
/// an error the shards on other servers may be deleted already.
///
/// # Safety
/// `s` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_clear(s: *const mcds_sharded_set) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { handle(s, "set") }?;
        Ok(s.set.clear()?)
    })
}

/// Free a sharded set (NULL is a no-op).
///
/// # Safety
/// `s` must be NULL or a live set, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_sharded_set_free(s: *mut mcds_sharded_set) {
    // SAFETY: forwarded caller contract.
    unsafe { free(s) }
}
