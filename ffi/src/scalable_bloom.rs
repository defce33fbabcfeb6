//! `mcds_scalable_bloom`: a Bloom filter that grows by layers (RedisBloom's
//! scalable filter), so no capacity needs to be known up front.

use std::ffi::c_char;

use ::mcds_core::Scope;
use ::mcds_sketch::ScalableBloomFilter;

use crate::boundary::{
    boundary, byte_strings, bytes, create, free, handle, out_array, out_ptr, query, write,
    write_array,
};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A scalable Bloom filter: a first layer for `initial_capacity` elements,
/// then larger layers as it fills, for a compound false-positive rate
/// below the one it was created with.
pub struct mcds_scalable_bloom {
    filter: ScalableBloomFilter,
    /// What it was opened with, for `mcds_scalable_bloom_with_growth` to
    /// open a new filter value: a clone would share this one's cache of
    /// opened layers, built for the old growth.
    scope: Scope,
    name: String,
    initial_capacity: u64,
    error_rate: f64,
}

/// Create the scalable Bloom filter `name`: a first layer for
/// `initial_capacity` elements, then layers twice as large (see
/// `mcds_scalable_bloom_with_growth`), for a compound false-positive rate
/// below `error_rate` (between 0 and 1, e.g. 0.01) however many elements
/// it takes. Every client must use the same numbers. `MCDS_INVALID_ARGUMENT`
/// for a capacity of 0 or a rate out of range. `*out` is a new handle the
/// caller owns: free it with `mcds_scalable_bloom_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_new(
    store: *const mcds_store,
    name: *const c_char,
    initial_capacity: u64,
    error_rate: f64,
    out: *mut *mut mcds_scalable_bloom,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            Ok(mcds_scalable_bloom {
                filter: ScalableBloomFilter::new(
                    scope.clone(),
                    name,
                    initial_capacity,
                    error_rate,
                )?,
                scope,
                name: name.to_string(),
                initial_capacity,
                error_rate,
            })
        })
    }
}

/// A new handle on the same filter whose layers each hold `growth` (1 to
/// 16) times the previous one's capacity instead of 2 (RedisBloom's
/// `EXPANSION`): fewer layers to read per query, more memory ahead of need.
/// Every client must use the same growth. `MCDS_INVALID_ARGUMENT` out of
/// range. `sb` is unchanged and borrowed for the call. `*out` is a new
/// handle the caller owns: free it with `mcds_scalable_bloom_free`.
///
/// # Safety
/// `sb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_with_growth(
    sb: *const mcds_scalable_bloom,
    growth: u32,
    out: *mut *mut mcds_scalable_bloom,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(sb, "scalable_bloom", out, "out", |sb| {
            let filter = ScalableBloomFilter::new(
                sb.scope.clone(),
                &sb.name,
                sb.initial_capacity,
                sb.error_rate,
            )?
            .with_growth(growth)?;
            Ok(Box::into_raw(Box::new(mcds_scalable_bloom {
                filter,
                scope: sb.scope.clone(),
                name: sb.name.clone(),
                initial_capacity: sb.initial_capacity,
                error_rate: sb.error_rate,
            })))
        })
    }
}

/// The memcached key of the filter's header item (its layer count; the
/// store's prefix included): a pointer to its bytes in `*out_data` (owned
/// by the handle, valid until it is freed; not NUL-terminated) and their
/// length in `*out_len`.
///
/// # Safety
/// `sb` NULL or live; `out_data` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_header_key(
    sb: *const mcds_scalable_bloom,
    out_data: *mut *const u8,
    out_len: *mut usize,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let sb = unsafe { handle(sb, "scalable_bloom") }?;
        let (out_data, out_len) = (out_ptr(out_data, "out_data")?, out_ptr(out_len, "out_len")?);
        let key = sb.filter.header_key().as_bytes();
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_data, key.as_ptr());
            write(out_len, key.len());
        }
        Ok(())
    })
}

/// Add the element of `len` bytes at `element` (NULL is allowed when `len`
/// is 0); in `*out_new` whether it was new (in no layer yet). 2 round
/// trips, 1 when it was already in, 2 more when the add fills the newest
/// layer and grows the filter.
///
/// # Safety
/// `sb` NULL or live; `element` NULL or `len` readable bytes; `out_new`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_add(
    sb: *const mcds_scalable_bloom,
    element: *const u8,
    len: usize,
    out_new: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract (bytes read after the NULL checks).
    unsafe {
        query(sb, "scalable_bloom", out_new, "out_new", |sb| {
            let element = bytes(element, len, "element")?;
            Ok(sb.filter.add(element)?)
        })
    }
}

/// Whether the element may have been added (no false negatives; false
/// positives below the filter's rate), in `*out`. 1 round trip (2 when
/// another client grew the filter since this handle last looked).
///
/// # Safety
/// `sb` NULL or live; `element` NULL or `len` readable bytes; `out` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_contains(
    sb: *const mcds_scalable_bloom,
    element: *const u8,
    len: usize,
    out: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract (bytes read after the NULL checks).
    unsafe {
        query(sb, "scalable_bloom", out, "out", |sb| {
            let element = bytes(element, len, "element")?;
            Ok(sb.filter.contains(element)?)
        })
    }
}

/// Whether each of `count` elements may have been added, as
/// `mcds_scalable_bloom_contains` says: `out_contained[i]` for element `i`.
/// One read of the header and the blocks they fall in, in every layer.
/// Element `i` is the `lens[i]` bytes at `elements[i]` (any bytes; NULL is
/// allowed when `lens[i]` is 0); both arrays are borrowed for the call.
/// `out_contained` is the caller's array of `count` slots, written only on
/// success. All three arrays may be NULL when `count` is 0. At most
/// 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL array or
/// element with a non-zero length is `MCDS_NULL_ARGUMENT`.
///
/// # Safety
/// `sb` NULL or live; `elements` and `lens` NULL or `count` readable values;
/// each `elements[i]` NULL or `lens[i]` readable bytes; `out_contained`
/// NULL or `count` writable slots.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_contains_many(
    sb: *const mcds_scalable_bloom,
    elements: *const *const u8,
    lens: *const usize,
    count: usize,
    out_contained: *mut bool,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (sb, elements) = unsafe {
            (
                handle(sb, "scalable_bloom")?,
                byte_strings(elements, lens, count, "elements")?,
            )
        };
        let out = out_array(out_contained, count, "out_contained")?;
        let found = sb.filter.contains_many(&elements)?;
        // SAFETY: checked with `count`; `count` writable slots.
        unsafe { write_array(out, count, found) };
        Ok(())
    })
}

/// How many layers the filter has, in `*out` (1 until it first grows).
/// One round trip.
///
/// # Safety
/// `sb` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_layers(
    sb: *const mcds_scalable_bloom,
    out: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(sb, "scalable_bloom", out, "out", |sb| {
            Ok(sb.filter.layers()?)
        })
    }
}

/// Delete the header and every block of every layer: the filter is empty,
/// with one layer, again. On an error some items may be deleted already.
///
/// # Safety
/// `sb` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_clear(sb: *const mcds_scalable_bloom) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let sb = unsafe { handle(sb, "scalable_bloom") }?;
        Ok(sb.filter.clear()?)
    })
}

/// Free a scalable Bloom filter handle (NULL is a no-op).
///
/// # Safety
/// `sb` must be NULL or a live handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_scalable_bloom_free(sb: *mut mcds_scalable_bloom) {
    // SAFETY: forwarded caller contract.
    unsafe { free(sb) }
}
