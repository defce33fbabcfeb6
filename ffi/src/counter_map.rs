//! `mcds_counter_map`: named fields, each an atomic signed counter (Redis'
//! `HINCRBY`/`HINCRBYFLOAT` without float drift).
//!
//! How fields, values and decimals cross the boundary is in the doc of
//! [`mcds_counter_map`], which cbindgen writes to the header.

use std::ffi::{CString, c_char};

use ::mcds_core::Key;
use ::mcds_counter::CounterMap;

use crate::boundary::{
    Fail, boundary, c_string, create, free, handle, out_ptr, query, text, utf8, write,
};
use crate::list::{mcds_bytes_list, mcds_int_list};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A counter map: named fields, each an atomic signed counter, listed and
/// read all at once (Redis' HINCRBY, HINCRBYFLOAT, HGET, HGETALL, HKEYS,
/// HDEL, HLEN). What crosses the boundary, exactly:
///
/// * **Fields** are UTF-8 byte strings given as a pointer and a length (1
///   to 1024 bytes; any UTF-8, a NUL included), as they come back from
///   `mcds_counter_map_fields` and `mcds_counter_map_get_all` (items of an
///   `mcds_bytes_list`). Bytes that are not UTF-8 are `MCDS_INVALID_UTF8`;
///   an empty or longer field is `MCDS_INVALID_ARGUMENT`.
/// * **Whole values** (`_incr`, `_get`, `_get_all`) are `int64_t` counts
///   of the map's units, `10^-scale`: whole units (scale 0) unless the
///   handle came from `mcds_counter_map_with_scale`. A field holds −2^61 to
///   2^61 − 1 units.
/// * **Decimals** (`_incr_decimal`, `_get_decimal`, `_get_all_decimal`)
///   are text: an amount goes in as a NUL-terminated `[+-]digits[.digits]`
///   parsed exactly at the map's scale (more places than the scale, unless
///   zeros, is `MCDS_INVALID_ARGUMENT`: nothing is rounded), and a value
///   comes out as text with exactly `scale` places (`"100.0"`, `"-0.25"`).
///   Text carries every digit at any scale and no double is involved: 0.1
///   added 1000 times at scale 1 is exactly `"100.0"`. Bindings turn it
///   into their exact decimal type. Only `mcds_counter_map_incr_f64` takes
///   a `double`, rounded to the scale from its shortest decimal form.
///
/// Strings handed out (decimals, the name, keys) are the caller's, freed
/// with `mcds_string_free`; lists with `mcds_bytes_list_free` and
/// `mcds_int_list_free` (`get_all` gives two parallel lists, as
/// `mcds_table_entries` does).
pub struct mcds_counter_map {
    map: CounterMap,
}

/// Create the counter map `name` on `store`, counting whole units (scale
/// 0; see `mcds_counter_map_with_scale`). `*out` is a new handle the caller
/// owns: free it with `mcds_counter_map_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_new(
    store: *const mcds_store,
    name: *const c_char,
    out: *mut *mut mcds_counter_map,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            Ok(mcds_counter_map {
                map: CounterMap::new(scope, name)?,
            })
        })
    }
}

/// A new handle on the same map counting units of `10^-places` (0 to 18,
/// else `MCDS_INVALID_ARGUMENT`): the decimal calls then read and write
/// text with `places` decimal places, and the whole-value calls count
/// those units. The scale is not stored: every client of a map must use
/// the same. `m` is unchanged and borrowed for the call. `*out` is a new
/// handle the caller owns: free it with `mcds_counter_map_free`.
///
/// # Safety
/// `m` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_with_scale(
    m: *const mcds_counter_map,
    places: u32,
    out: *mut *mut mcds_counter_map,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(m, "map", out, "out", |m| {
            let map = m.map.clone().with_scale(places)?;
            Ok(Box::into_raw(Box::new(mcds_counter_map { map })))
        })
    }
}

/// The map's name, as a new NUL-terminated string in `*out_name` that the
/// caller owns: free it with `mcds_string_free`.
///
/// # Safety
/// `m` NULL or live; `out_name` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_name(
    m: *const mcds_counter_map,
    out_name: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(m, "map", out_name, "out_name", |m| {
            Ok(c_string(m.map.name()))
        })
    }
}

/// The map's decimal places (0 to 18), in `*out_places`.
///
/// # Safety
/// `m` NULL or live; `out_places` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_scale(
    m: *const mcds_counter_map,
    out_places: *mut u32,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(m, "map", out_places, "out_places", |m| Ok(m.map.scale())) }
}

/// A key as a NUL-terminated string (a memcached key holds no NUL byte).
fn key_string(key: &Key) -> *mut c_char {
    CString::new(key.as_bytes()).unwrap_or_default().into_raw()
}

/// The memcached key of the map's field registry (with the store's
/// prefix), as a new NUL-terminated string in `*out_key` that the caller
/// owns: free it with `mcds_string_free`. For inspecting the map with
/// other tools.
///
/// # Safety
/// `m` NULL or live; `out_key` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_registry_key(
    m: *const mcds_counter_map,
    out_key: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(m, "map", out_key, "out_key", |m| {
            Ok(key_string(m.map.registry_key()))
        })
    }
}

/// The memcached key of `field`'s counter (`field_len` bytes, see the
/// module docs), as a new NUL-terminated string in `*out_key` that the
/// caller owns: free it with `mcds_string_free`. No round trip.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes; `out_key`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_field_key(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    out_key: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the field is read after the NULL
    // checks of the handle and the output).
    unsafe {
        query(m, "map", out_key, "out_key", |m| {
            let field = utf8(field, field_len, "field")?;
            Ok(key_string(&m.map.field_key(field)?))
        })
    }
}

/// Run `f` on the map and the field (`field_len` bytes at `field`, UTF-8)
/// and write its result to `out`.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes; `out`
/// NULL or writable.
unsafe fn field_op<T>(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    out: *mut T,
    out_name: &str,
    f: impl FnOnce(&CounterMap, &str) -> Result<T, Fail>,
) -> mcds_result {
    // SAFETY: forwarded caller contract (the field is read after the NULL
    // checks of the handle and the output).
    unsafe {
        query(m, "map", out, out_name, |m| {
            f(&m.map, utf8(field, field_len, "field")?)
        })
    }
}

/// HINCRBY: add `by` units (negative to subtract) to `field`, creating it
/// at `by` if it does not exist; the new value in `*out_value`. One round
/// trip, two on the field's first touch; atomic across every client.
///
/// A field holds −2^61 to 2^61 − 1 units; decrements stop at −2^61, and an
/// increment past 2^61 − 1 is undone and refused with
/// `MCDS_INVALID_ARGUMENT`. One call adds at most 2^56 − 1 either way,
/// else `MCDS_INVALID_ARGUMENT` before anything is sent. A counter another
/// program overwrote is `MCDS_NON_NUMERIC`.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_incr(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    by: i64,
    out_value: *mut i64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_value, "out_value", |m, f| {
            Ok(m.incr(f, by)?)
        })
    }
}

/// HINCRBYFLOAT without float drift: add the exact decimal `amount` (a
/// NUL-terminated `[+-]digits[.digits]`, e.g. `"0.1"`, `"-3"`) at the
/// map's scale to `field`; the new value as a new NUL-terminated string in
/// `*out_value` (exactly `scale` places) that the caller owns: free it with
/// `mcds_string_free`. More places than the scale (unless zeros), any
/// other text, or an amount past the bounds of `mcds_counter_map_incr` is
/// `MCDS_INVALID_ARGUMENT`; `amount` not UTF-8 is `MCDS_INVALID_UTF8`.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes; `amount`
/// NULL or NUL-terminated; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_incr_decimal(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    amount: *const c_char,
    out_value: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_value, "out_value", |m, f| {
            let amount = text(amount, "amount")?;
            Ok(c_string(&m.incr_decimal(f, amount)?.to_string()))
        })
    }
}

/// Add `amount` to `field`, taking the double's shortest decimal form
/// (`0.1`, not 0.1000000000000000055…) rounded half away from zero to the
/// map's scale; the new value as text in `*out_value`, as
/// `mcds_counter_map_incr_decimal` gives it (free it with
/// `mcds_string_free`). NaN, infinities and amounts past the bounds are
/// `MCDS_INVALID_ARGUMENT`.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_incr_f64(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    amount: f64,
    out_value: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_value, "out_value", |m, f| {
            Ok(c_string(&m.incr_f64(f, amount)?.to_string()))
        })
    }
}

/// HGET: `field`'s value in units in `*out_value`, 0 if it does not exist.
/// One round trip.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_get(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    out_value: *mut i64,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_value, "out_value", |m, f| {
            Ok(m.get(f)?)
        })
    }
}

/// `mcds_counter_map_get` as decimal text with exactly `scale` places
/// (`"0.0"` for a missing field at scale 1), a new NUL-terminated string in
/// `*out_value` that the caller owns: free it with `mcds_string_free`.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_get_decimal(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    out_value: *mut *mut c_char,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_value, "out_value", |m, f| {
            Ok(c_string(&m.get_decimal(f)?.to_string()))
        })
    }
}

/// A list for C.
fn boxed<T>(list: T) -> *mut T {
    Box::into_raw(Box::new(list))
}

/// Check the two outputs of a `get_all`, run `f` for the (fields, values)
/// pair and write both lists.
///
/// # Safety
/// `m` NULL or live; both outputs NULL or writable.
unsafe fn two_lists<V>(
    m: *const mcds_counter_map,
    out_fields: *mut *mut mcds_bytes_list,
    out_values: *mut *mut V,
    f: impl FnOnce(&CounterMap) -> Result<(mcds_bytes_list, V), Fail>,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let m = unsafe { handle(m, "map") }?;
        let (out_fields, out_values) = (
            out_ptr(out_fields, "out_fields")?,
            out_ptr(out_values, "out_values")?,
        );
        let (fields, values) = f(&m.map)?;
        // SAFETY: both checked non-NULL.
        unsafe {
            write(out_fields, boxed(fields));
            write(out_values, boxed(values));
        }
        Ok(())
    })
}

/// HGETALL: every field with its value in units, in first-registration
/// order, as two parallel lists of the same length: the field names in
/// `*out_fields` (read with `mcds_bytes_list_get`) and the values in
/// `*out_values` (`mcds_int_list_get` or `mcds_int_list_data`). Both are
/// the caller's: free them with `mcds_bytes_list_free` and
/// `mcds_int_list_free`. A listed field whose counter is missing (removed
/// meanwhile, evicted) is left out. Two round trips (one for an empty
/// map); not a snapshot: increments between them may show for some fields.
///
/// # Safety
/// `m` NULL or live; `out_fields` and `out_values` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_get_all(
    m: *const mcds_counter_map,
    out_fields: *mut *mut mcds_bytes_list,
    out_values: *mut *mut mcds_int_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        two_lists(m, out_fields, out_values, |m| {
            let (items, values) = m
                .get_all()?
                .into_iter()
                .map(|(field, value)| (field.into_bytes(), value))
                .unzip();
            Ok((mcds_bytes_list { items }, mcds_int_list { values }))
        })
    }
}

/// `mcds_counter_map_get_all` with the values as decimal text (exactly
/// `scale` places, not NUL-terminated: each item has its length), in a
/// second `mcds_bytes_list` parallel to the fields. Both lists are the
/// caller's: free them with `mcds_bytes_list_free`.
///
/// # Safety
/// `m` NULL or live; `out_fields` and `out_values` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_get_all_decimal(
    m: *const mcds_counter_map,
    out_fields: *mut *mut mcds_bytes_list,
    out_values: *mut *mut mcds_bytes_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        two_lists(m, out_fields, out_values, |m| {
            let (items, values) = m
                .get_all_decimal()?
                .into_iter()
                .map(|(field, value)| (field.into_bytes(), value.to_string().into_bytes()))
                .unzip();
            Ok((mcds_bytes_list { items }, mcds_bytes_list { items: values }))
        })
    }
}

/// HKEYS: the registered fields in first-registration order, as a new
/// list in `*out` that the caller owns (free it with
/// `mcds_bytes_list_free`). A field whose counter is missing is listed. One
/// round trip (two when it compacts the registry).
///
/// # Safety
/// `m` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_fields(
    m: *const mcds_counter_map,
    out: *mut *mut mcds_bytes_list,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(m, "map", out, "out", |m| {
            let items = m
                .map
                .fields()?
                .into_iter()
                .map(String::into_bytes)
                .collect();
            Ok(boxed(mcds_bytes_list { items }))
        })
    }
}

/// HLEN: how many fields are registered, in `*out_len`. One round trip.
///
/// # Safety
/// `m` NULL or live; `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_len(
    m: *const mcds_counter_map,
    out_len: *mut usize,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { query(m, "map", out_len, "out_len", |m| Ok(m.map.len()?)) }
}

/// Whether no field is registered, in `*out_empty`. One round trip.
///
/// # Safety
/// `m` NULL or live; `out_empty` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_is_empty(
    m: *const mcds_counter_map,
    out_empty: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(m, "map", out_empty, "out_empty", |m| {
            Ok(m.map.is_empty()?)
        })
    }
}

/// HDEL: unregister `field`, then delete its counter; in `*out_existed`
/// whether its counter existed. Removing a missing field is not an error.
/// Two round trips.
///
/// # Safety
/// `m` NULL or live; `field` NULL or `field_len` readable bytes;
/// `out_existed` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_remove(
    m: *const mcds_counter_map,
    field: *const u8,
    field_len: usize,
    out_existed: *mut bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        field_op(m, field, field_len, out_existed, "out_existed", |m, f| {
            Ok(m.remove(f)?)
        })
    }
}

/// Free a counter map (NULL is a no-op).
///
/// # Safety
/// `m` must be NULL or a live counter map, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_counter_map_free(m: *mut mcds_counter_map) {
    // SAFETY: forwarded caller contract.
    unsafe { free(m) }
}
