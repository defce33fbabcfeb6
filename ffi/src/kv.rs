//! The store's plain key/value operations (`mcds_store_get`, `_set`,
//! `_add`, `_delete`, `_incr`, `_incr_or_init`): memcached's own commands
//! on one key, as pymemcache's and php-memcached's users know them. The
//! key is raw bytes with the store handle's prefix in front (as
//! `mcds_store_update` takes it), and is refused as every key is
//! (`MCDS_INVALID_KEY`: empty, over 250 bytes with the prefix, a space or
//! a control byte) before anything is sent.

use ::mcds_core::{Key, Stored};

use crate::boundary::{Fail, boundary, bytes, handle, out_ptr, ttl, write};
use crate::list::mcds_bytes_list;
use crate::result::mcds_result;
use crate::store::mcds_store;

/// The store's prefix followed by `key`, checked.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes.
unsafe fn target<'a>(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
) -> Result<(&'a mcds_store, Key), Fail> {
    // SAFETY: forwarded caller contract.
    let (store, key) = unsafe { (handle(store, "store")?, bytes(key, key_len, "key")?) };
    // The key alone must be one (not empty, no space): the prefix in front
    // would make "" a key of its own.
    Key::new(key)?;
    let mut full = store.scope.prefix().as_bytes().to_vec();
    full.extend_from_slice(key);
    Ok((store, Key::new(full)?))
}

/// [`target`], and the value to write.
///
/// # Safety
/// As [`target`]; `value` NULL or `value_len` readable bytes.
unsafe fn write_target<'a>(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> Result<(&'a mcds_store, Key, &'a [u8]), Fail> {
    // SAFETY: forwarded caller contract.
    let (store, key) = unsafe { target(store, key, key_len) }?;
    // SAFETY: forwarded caller contract.
    let value = unsafe { bytes(value, value_len, "value") }?;
    Ok((store, key, value))
}

/// `key`'s value: a list of one item in `*out_value` (free it with
/// `mcds_bytes_list_free`), or NULL if the key is absent. One round trip.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_get(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    out_value: *mut *mut mcds_bytes_list,
) -> mcds_result {
    boundary(|| {
        let out_value = out_ptr(out_value, "out_value")?;
        // SAFETY: forwarded caller contract.
        let (store, key) = unsafe { target(store, key, key_len) }?;
        let value = store
            .scope
            .store()
            .get(&key)?
            .map_or(std::ptr::null_mut(), |item| {
                Box::into_raw(Box::new(mcds_bytes_list {
                    items: vec![item.value],
                }))
            });
        // SAFETY: checked non-NULL; writable by the caller's contract.
        unsafe { write(out_value, value) };
        Ok(())
    })
}

/// Store `value` under `key`, expiring after `ttl_secs` seconds (0:
/// never). One round trip; an error means it was not stored, or
/// `MCDS_AMBIGUOUS` that it may have been.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes; `value`
/// NULL or `value_len` readable bytes (NULL with length 0 is the empty
/// value).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_set(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    ttl_secs: u32,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, key, value) = unsafe { write_target(store, key, key_len, value, value_len) }?;
        store.scope.store().set(&key, value, ttl(ttl_secs))?;
        Ok(())
    })
}

/// Store `value` under `key` only if the key is absent; whether it was
/// stored, in `*out_added` (NULL allowed). One round trip.
///
/// # Safety
/// As `mcds_store_set`; `out_added` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_add(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    ttl_secs: u32,
    out_added: *mut bool,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, key, value) = unsafe { write_target(store, key, key_len, value, value_len) }?;
        let added = matches!(
            store.scope.store().add(&key, value, ttl(ttl_secs))?,
            Stored::Stored(_)
        );
        if !out_added.is_null() {
            // SAFETY: non-NULL and writable by the caller's contract.
            unsafe { write(out_added, added) };
        }
        Ok(())
    })
}

/// Delete `key`; whether it existed, in `*out_existed` (NULL allowed).
/// One round trip.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes;
/// `out_existed` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_delete(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    out_existed: *mut bool,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, key) = unsafe { target(store, key, key_len) }?;
        let existed = store.scope.store().delete(&key)?;
        if !out_existed.is_null() {
            // SAFETY: non-NULL and writable by the caller's contract.
            unsafe { write(out_existed, existed) };
        }
        Ok(())
    })
}

/// Add `delta` to the counter under `key`, as memcached's `incr`: the new
/// value in `*out_value` and true in `*out_found`, or false in
/// `*out_found` (and `*out_value` left alone) if the key is absent, which
/// creates nothing. `MCDS_NON_NUMERIC` if the value is not a decimal
/// number. Counters are 64-bit unsigned, as memcached's.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes;
/// `out_value` and `out_found` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_incr(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    delta: u64,
    out_value: *mut u64,
    out_found: *mut bool,
) -> mcds_result {
    boundary(|| {
        let out_value = out_ptr(out_value, "out_value")?;
        let out_found = out_ptr(out_found, "out_found")?;
        // SAFETY: forwarded caller contract.
        let (store, key) = unsafe { target(store, key, key_len) }?;
        let value = store.scope.store().incr(&key, delta)?;
        // SAFETY: both checked non-NULL; writable by the caller's contract.
        unsafe {
            if let Some(v) = value {
                write(out_value, v);
            }
            write(out_found, value.is_some());
        }
        Ok(())
    })
}

/// Add `delta` to the counter under `key`, or create it with the value
/// `initial` (not `initial + delta`, as php-memcached's `increment` with an
/// initial value) expiring after `ttl_secs` seconds (0: never) if it is
/// absent. Atomic: two callers creating it at once are both counted. The
/// new value in `*out_value`.
///
/// # Safety
/// `store` NULL or live; `key` NULL or `key_len` readable bytes;
/// `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_incr_or_init(
    store: *const mcds_store,
    key: *const u8,
    key_len: usize,
    delta: u64,
    initial: u64,
    ttl_secs: u32,
    out_value: *mut u64,
) -> mcds_result {
    boundary(|| {
        let out_value = out_ptr(out_value, "out_value")?;
        // SAFETY: forwarded caller contract.
        let (store, key) = unsafe { target(store, key, key_len) }?;
        let value = store
            .scope
            .store()
            .incr_or_init(&key, delta, initial, ttl(ttl_secs))?;
        // SAFETY: checked non-NULL; writable by the caller's contract.
        unsafe { write(out_value, value) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::ptr;

    use super::*;
    use crate::result::{MCDS_INVALID_KEY, MCDS_NON_NUMERIC, MCDS_NULL_ARGUMENT, MCDS_OK};
    use crate::store::{mcds_store_free, mcds_store_new_memory, mcds_store_with_prefix};

    /// `key`'s value through `mcds_store_get`, `None` if absent.
    fn get(store: *const mcds_store, key: &[u8]) -> Option<Vec<u8>> {
        let mut list = ptr::null_mut();
        // SAFETY: live store, readable key, writable out.
        assert_eq!(
            unsafe { mcds_store_get(store, key.as_ptr(), key.len(), &mut list) },
            MCDS_OK
        );
        // SAFETY: a list from mcds_store_get, or NULL.
        let value = unsafe { list.as_ref() }.map(|l: &mcds_bytes_list| l.items[0].clone());
        // SAFETY: from mcds_store_get, freed once.
        unsafe { crate::list::mcds_bytes_list_free(list) };
        value
    }

    #[test]
    fn get_set_add_delete_incr_through_the_prefix() {
        let mut root = ptr::null_mut();
        // SAFETY: writable out pointers; live handles after.
        unsafe {
            assert_eq!(mcds_store_new_memory(&mut root), MCDS_OK);
        }
        let prefix = CString::new("app/").unwrap();
        let mut store = ptr::null_mut();
        // SAFETY: live store, C string, writable out.
        assert_eq!(
            unsafe { mcds_store_with_prefix(root, prefix.as_ptr(), &mut store) },
            MCDS_OK
        );
        assert_eq!(get(store, b"k"), None);
        // SAFETY (every call below): live handles, readable buffers,
        // writable outputs.
        unsafe {
            assert_eq!(
                mcds_store_set(store, b"k".as_ptr(), 1, b"v1".as_ptr(), 2, 0),
                MCDS_OK
            );
            let mut added = true;
            assert_eq!(
                mcds_store_add(store, b"k".as_ptr(), 1, b"v2".as_ptr(), 2, 0, &mut added),
                MCDS_OK
            );
            assert!(!added, "add of a present key");
        }
        assert_eq!(get(store, b"k"), Some(b"v1".to_vec()));
        // The prefix is in front: the root store sees "app/k".
        assert_eq!(get(root, b"app/k"), Some(b"v1".to_vec()));
        assert_eq!(get(root, b"k"), None);
        let (mut value, mut found) = (7u64, true);
        unsafe {
            assert_eq!(
                mcds_store_incr(store, b"n".as_ptr(), 1, 5, &mut value, &mut found),
                MCDS_OK
            );
            assert!(!found, "incr creates nothing");
            assert_eq!(value, 7, "left alone when absent");
            assert_eq!(
                mcds_store_incr_or_init(store, b"n".as_ptr(), 1, 5, 10, 60, &mut value),
                MCDS_OK
            );
            assert_eq!(value, 10, "created with the initial value");
            assert_eq!(
                mcds_store_incr(store, b"n".as_ptr(), 1, 5, &mut value, &mut found),
                MCDS_OK
            );
            assert_eq!((value, found), (15, true));
            assert_eq!(
                mcds_store_incr(store, b"k".as_ptr(), 1, 1, &mut value, &mut found),
                MCDS_NON_NUMERIC
            );
            let mut existed = false;
            assert_eq!(
                mcds_store_delete(store, b"k".as_ptr(), 1, &mut existed),
                MCDS_OK
            );
            assert!(existed);
            assert_eq!(
                mcds_store_delete(store, b"k".as_ptr(), 1, &mut existed),
                MCDS_OK
            );
            assert!(!existed);
            // Bad keys and NULLs are refused before anything is sent.
            assert_eq!(
                mcds_store_set(store, b"a b".as_ptr(), 3, b"v".as_ptr(), 1, 0),
                MCDS_INVALID_KEY
            );
            assert_eq!(
                mcds_store_set(store, ptr::null(), 1, b"v".as_ptr(), 1, 0),
                MCDS_NULL_ARGUMENT
            );
            assert_eq!(
                mcds_store_set(store, ptr::null(), 0, b"v".as_ptr(), 1, 0),
                MCDS_INVALID_KEY,
                "an empty key, though the prefix is not empty"
            );
            assert_eq!(
                mcds_store_get(store, b"k".as_ptr(), 1, ptr::null_mut()),
                MCDS_NULL_ARGUMENT
            );
            assert_eq!(
                mcds_store_incr(store, b"n".as_ptr(), 1, 1, ptr::null_mut(), &mut found),
                MCDS_NULL_ARGUMENT
            );
            let long = vec![b'x'; 250];
            assert_eq!(
                mcds_store_set(store, long.as_ptr(), long.len(), b"v".as_ptr(), 1, 0),
                MCDS_INVALID_KEY,
                "250 bytes plus the prefix"
            );
            mcds_store_free(store);
            mcds_store_free(root);
        }
    }
}
