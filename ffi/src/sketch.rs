//! The sketches: `mcds_hll` (HyperLogLog), `mcds_bloom` (Bloom filter) and
//! `mcds_bitmap` (activity bitmap).

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use ::mcds_core::Store;
use ::mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog};

use crate::boundary::{
    Fail, MAX_HANDLES, array, boundary, byte_strings, bytes, create, free, handle, null, out_array,
    out_ptr, query, ttl, write, write_array,
};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// A HyperLogLog: distinct counting in 12 KiB (PFADD, PFCOUNT, PFMERGE).
pub struct mcds_hll {
    hll: HyperLogLog,
    /// The store it lives in: sketches read together must share one.
    store: Arc<dyn Store>,
}

/// Create the HyperLogLog `name` on `store`. `*out` is a new handle the
/// caller owns: free it with `mcds_hll_free`.
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
        create(store, name, out, |scope, name| {
            Ok(mcds_hll {
                store: Arc::clone(scope.store()),
                hll: HyperLogLog::new(scope, name)?,
            })
        })
    }
}

/// A new handle on the same HyperLogLog whose writes (add, merge) give
/// its item a TTL of `ttl_secs` seconds, counted again from each write
/// that changes it. 0 means never expires, as memcached's exptime 0 (and
/// as `mcds_hll_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// The new handle is on the same store as `h` (for `mcds_hll_merge` and
/// `mcds_hll_count_union`). `h` is unchanged and borrowed for the call.
/// `*out` is a new handle the caller owns: free it with `mcds_hll_free`.
///
/// # Safety
/// `h` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_with_ttl(
    h: *const mcds_hll,
    ttl_secs: u32,
    out: *mut *mut mcds_hll,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(h, "hll", out, "out", |h| {
            Ok(Box::into_raw(Box::new(mcds_hll {
                hll: h.hll.clone().with_ttl(ttl(ttl_secs)),
                store: Arc::clone(&h.store),
            })))
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

/// PFADD of `count` elements in one read-modify-write; in `*out_changed`
/// whether the estimate may have changed (some register changed). Two
/// round trips, one when nothing changes, whatever the count. Element `i`
/// is the `lens[i]` bytes at `elements[i]` (any bytes; NULL is allowed
/// when `lens[i]` is 0). Both arrays are borrowed for the call and may be
/// NULL when `count` is 0 (nothing is added: `*out_changed` is false). At
/// most 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL
/// array or element with a non-zero length is `MCDS_NULL_ARGUMENT`, and
/// nothing is written.
///
/// # Safety
/// `h` NULL or live; `elements` and `lens` NULL or `count` readable values;
/// each `elements[i]` NULL or `lens[i]` readable bytes; `out_changed` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_add_many(
    h: *const mcds_hll,
    elements: *const *const u8,
    lens: *const usize,
    count: usize,
    out_changed: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the arrays are read after the
    // NULL checks of the handle and the output).
    unsafe {
        query(h, "hll", out_changed, "out_changed", |h| {
            let elements = byte_strings(elements, lens, count, "elements")?;
            Ok(h.hll.add_many(&elements)?)
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

/// Borrow the `count` sketches at `sketches`, all from one store.
///
/// # Safety
/// `sketches` NULL or `count` readable pointers, each NULL or live.
unsafe fn same_store<'a>(
    sketches: *const *const mcds_hll,
    count: usize,
    what: &str,
) -> Result<Vec<&'a HyperLogLog>, Fail> {
    // SAFETY: forwarded caller contract.
    let list = unsafe { array(sketches, count, MAX_HANDLES, what) }?;
    let handles = list
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            // SAFETY: each NULL or live. The index goes into the message
            // only on failure.
            unsafe { handle(p, what) }.map_err(|_| null(&format!("{what}[{i}]")))
        })
        .collect::<Result<Vec<&mcds_hll>, Fail>>()?;
    if let Some(first) = handles.first() {
        if let Some(i) = handles
            .iter()
            .position(|h| !Arc::ptr_eq(&h.store, &first.store))
        {
            return Err(Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "{what}[{i}] is on another store than {what}[0]: sketches read together must come from one mcds_store (or handles made from it with mcds_store_with_prefix)"
                ),
            ));
        }
    }
    Ok(handles.into_iter().map(|h| &h.hll).collect())
}

/// PFMERGE: write the union of `target` and the `count` sketches at
/// `sources` into `target`. The array is borrowed for the call and may be
/// NULL when `count` is 0; at most 100 000 sketches. The sources must all
/// come from one store handle (or handles made from it with
/// `mcds_store_with_prefix`), else `MCDS_INVALID_ARGUMENT`; `target` may be
/// on another store.
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
        let (target, others) = unsafe {
            (
                handle(target, "target")?,
                same_store(sources, count, "sources")?,
            )
        };
        Ok(target.hll.merge(&others)?)
    })
}

/// PFCOUNT of several keys: the estimated number of distinct elements in
/// the union of the `count` sketches at `sketches`, in `*out`, without
/// writing anything. One round trip per server. The array is borrowed for
/// the call and may be NULL when `count` is 0 (the union is then empty: 0);
/// at most 100 000 sketches, all from one store handle (or handles made
/// from it with `mcds_store_with_prefix`), else `MCDS_INVALID_ARGUMENT`.
///
/// # Safety
/// `sketches` NULL or `count` readable pointers, each NULL or live; `out`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_count_union(
    sketches: *const *const mcds_hll,
    count: usize,
    out: *mut u64,
) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: forwarded caller contract.
        let list = unsafe { same_store(sketches, count, "sketches") }?;
        let union = HyperLogLog::count_union(&list)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, union) };
        Ok(())
    })
}

/// Delete the sketch: it counts 0 again. One round trip; clearing a
/// missing sketch is not an error.
///
/// # Safety
/// `h` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_hll_clear(h: *const mcds_hll) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let h = unsafe { handle(h, "hll") }?;
        Ok(h.hll.clear()?)
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
/// use the same two numbers. `*out` is a new handle the caller owns: free
/// it with `mcds_bloom_free`.
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
        create(store, name, out, |scope, name| {
            Ok(mcds_bloom {
                bloom: BloomFilter::new(scope, name, expected_items, false_positive_rate)?,
            })
        })
    }
}

/// A new handle on the same Bloom filter (same name and shape) whose adds
/// give each block they write a TTL of `ttl_secs` seconds, counted again
/// from each write of that block. 0 means never expires, as memcached's
/// exptime 0 (and as `mcds_bloom_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// `b` is unchanged and borrowed for the call. `*out` is a new handle the
/// caller owns: free it with `mcds_bloom_free`.
///
/// # Safety
/// `b` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_with_ttl(
    b: *const mcds_bloom,
    ttl_secs: u32,
    out: *mut *mut mcds_bloom,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bloom", out, "out", |b| {
            let bloom = b.bloom.clone().with_ttl(ttl(ttl_secs));
            Ok(Box::into_raw(Box::new(mcds_bloom { bloom })))
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

/// Add `count` elements: one read of the blocks they fall in and one
/// pipelined batch of CAS writes (a block another client changed meanwhile
/// is redone by itself). In `*out_added` how many elements were new (some
/// bit was clear when their turn came): what `mcds_bloom_add` would have
/// said for each in order, summed, so an element given twice counts at
/// most once. Element `i` is the `lens[i]` bytes at `elements[i]` (any
/// bytes; NULL is allowed when `lens[i]` is 0). Both arrays are borrowed
/// for the call and may be NULL when `count` is 0 (`*out_added` is 0). At
/// most 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL
/// array or element with a non-zero length is `MCDS_NULL_ARGUMENT`, and
/// nothing is written. On an error after the reads, some blocks may have
/// been written (a filter only gains bits) and `*out_added` is not.
///
/// # Safety
/// `b` NULL or live; `elements` and `lens` NULL or `count` readable values;
/// each `elements[i]` NULL or `lens[i]` readable bytes; `out_added` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_add_many(
    b: *const mcds_bloom,
    elements: *const *const u8,
    lens: *const usize,
    count: usize,
    out_added: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the arrays are read after the
    // NULL checks of the handle and the output).
    unsafe {
        query(b, "bloom", out_added, "out_added", |b| {
            let elements = byte_strings(elements, lens, count, "elements")?;
            Ok(b.bloom.add_many(&elements)?)
        })
    }
}

/// Whether each of `count` elements may have been added, as
/// `mcds_bloom_contains` says: `out_contained[i]` for element `i`. One read
/// of the blocks they fall in (one round trip per server). The elements as
/// for `mcds_bloom_add_many`; `out_contained` is the caller's array of
/// `count` slots, written only on success. All three arrays may be NULL
/// when `count` is 0.
///
/// # Safety
/// `b` NULL or live; `elements` and `lens` NULL or `count` readable values;
/// each `elements[i]` NULL or `lens[i]` readable bytes; `out_contained`
/// NULL or `count` writable slots.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_contains_many(
    b: *const mcds_bloom,
    elements: *const *const u8,
    lens: *const usize,
    count: usize,
    out_contained: *mut bool,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (b, elements) = unsafe {
            (
                handle(b, "bloom")?,
                byte_strings(elements, lens, count, "elements")?,
            )
        };
        let out = out_array(out_contained, count, "out_contained")?;
        let found = b.bloom.contains_many(&elements)?;
        // SAFETY: checked with `count`; `count` writable slots.
        unsafe { write_array(out, count, found) };
        Ok(())
    })
}

/// Delete every block: the filter is empty again. One pipelined batch of
/// deletes (one round trip per server); on an error some blocks may be
/// deleted already.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bloom_clear(b: *const mcds_bloom) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let b = unsafe { handle(b, "bloom") }?;
        Ok(b.bloom.clear()?)
    })
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
/// `*out` is a new handle the caller owns: free it with `mcds_bitmap_free`.
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
        create(store, name, out, |scope, name| {
            let unit = Duration::from_millis(unit_ms);
            Ok(mcds_bitmap {
                bitmap: ActivityBitmap::new(scope, name, start_unix_secs, unit)?,
            })
        })
    }
}

/// A new handle on the same bitmap (same name, start and unit) whose
/// writes give each segment they write a TTL of `ttl_secs` seconds, counted
/// again from each write of that segment. 0 means never expires, as
/// memcached's exptime 0 (and as `mcds_bitmap_new`).
///
/// memcached reads an exptime over 30 days (2 592 000 s) as an absolute
/// Unix time; mcds converts, so `ttl_secs` always means seconds from the
/// write (40 days is 40 days), capped at the last time memcached can parse
/// (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
/// whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
/// seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).
///
/// `b` is unchanged and borrowed for the call. `*out` is a new handle the
/// caller owns: free it with `mcds_bitmap_free`.
///
/// # Safety
/// `b` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_bitmap_with_ttl(
    b: *const mcds_bitmap,
    ttl_secs: u32,
    out: *mut *mut mcds_bitmap,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(b, "bitmap", out, "out", |b| {
            let bitmap = b.bitmap.clone().with_ttl(ttl(ttl_secs));
            Ok(Box::into_raw(Box::new(mcds_bitmap { bitmap })))
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
