//! `mcds_store`: the store every structure is made from, either the
//! embedded in-process store or real memcached.

use std::ffi::c_char;
use std::sync::Arc;

use ::mcds_core::{MemoryStore, Store};
use ::mcds_memcached::MemcachedStore;

use crate::boundary::{boundary, free, out_ptr, text, write};
use crate::result::mcds_result;

/// A store: the embedded in-process store or real memcached.
pub struct mcds_store {
    pub(crate) store: Arc<dyn Store>,
}

/// Create an embedded in-process store (memcached semantics, no server).
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_memory(out: *mut *mut mcds_store) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(mcds_store { store }))) };
        Ok(())
    })
}

/// Create a store on memcached: `servers` is `"host:port[,host:port...]"`.
/// Connections are made on first use, so a server that is down shows up as
/// an error of the first call that needs it.
///
/// # Safety
/// `servers` must be NULL or a NUL-terminated string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_memcached(
    servers: *const c_char,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let servers = unsafe { text(servers, "servers") }?;
        let out = out_ptr(out, "out")?;
        let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(servers)?);
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(mcds_store { store }))) };
        Ok(())
    })
}

/// Free a store (NULL is a no-op). Structures made from it keep working:
/// they hold their own reference.
///
/// # Safety
/// `store` must be NULL or a live store, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_free(store: *mut mcds_store) {
    // SAFETY: forwarded caller contract.
    unsafe { free(store) }
}
