//! `mcds_store`: the store every structure is made from, either the
//! embedded in-process store or real memcached, with an optional key
//! prefix. A handle holds a [`Scope`] (the store and the prefix), so
//! `mcds_store_with_prefix` makes a second handle on the same connections.
//! Timeouts, the item size limit and the embedded store's memory budget are
//! set through `mcds_store_builder` (module `store_builder`). Every handle's
//! store can be cancelled through the calling thread's token (module
//! `cancel`).

use std::ffi::c_char;
use std::sync::Arc;

use ::mcds_core::{MemoryStore, Scope, Store};
use ::mcds_memcached::MemcachedStore;

use crate::boundary::{Fail, boundary, free, handle, out_ptr, text, write};
use crate::cancel::Cancellable;
use crate::result::mcds_result;

/// A store: the embedded in-process store or real memcached, and the key
/// prefix of the structures made from this handle.
pub struct mcds_store {
    pub(crate) scope: Scope,
}

impl mcds_store {
    /// A new handle on `store`, with no prefix.
    pub(crate) fn boxed(store: Arc<dyn Store>) -> *mut mcds_store {
        Box::into_raw(Box::new(mcds_store {
            scope: Scope::new(Cancellable::wrap(store)),
        }))
    }

    /// A new handle on `scope`'s store (made cancellable), prefix and clock.
    fn from_scope(scope: Scope) -> Result<*mut mcds_store, Fail> {
        let wrapped = Scope::new(Cancellable::wrap(Arc::clone(scope.store())))
            .with_prefix(scope.prefix())?
            .with_clock(Arc::clone(scope.clock()));
        Ok(Box::into_raw(Box::new(mcds_store { scope: wrapped })))
    }
}

/// Create an embedded in-process store (memcached semantics, no server)
/// with the defaults: a 64 MiB budget with LRU eviction and 1 MiB items
/// (`mcds_store_builder` sets others). `*out` is a new handle the caller
/// owns: free it with `mcds_store_free`.
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_memory(out: *mut *mut mcds_store) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, mcds_store::boxed(Arc::new(MemoryStore::new()))) };
        Ok(())
    })
}

/// Create a store on memcached: `servers` is `"host:port[,host:port...]"`
/// (borrowed for the call). Connections are made on first use, so a server
/// that is down shows up as an error of the first call that needs it.
/// Timeouts are 1 s (`mcds_store_builder` sets others). `*out` is a new
/// handle the caller owns: free it with `mcds_store_free`.
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
        let store = MemcachedStore::connect(servers)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, mcds_store::boxed(Arc::new(store))) };
        Ok(())
    })
}

/// Create a store from a URL that says which store and how, in one string
/// (the same string the CLI takes in `MCDS_SERVERS`):
/// `memcached://host:port[,host:port...][?options]` (or just the server
/// list), `text://host:port[,...][?options]` for the classic text protocol
/// (memcached before 1.6; with `proxy`, a proxy such as twemproxy, where
/// everything that needs CAS, locks included, is `MCDS_UNSUPPORTED`), or
/// `memory://[?options]` for the embedded store. Options:
/// `ketama` (place keys as libmemcached's ketama does, to share a pool's
/// keys with php-memcached or pylibmc), `distribution=rendezvous|ketama`,
/// `timeout_ms`, `connect_timeout_ms`, `io_timeout_ms` (1 to 3 600 000),
/// `item_size_limit` (bytes, or with k/m: 1024 to 1 GiB), `memory_limit`
/// and `evict=true|false` (embedded store), `prefix` (as
/// `mcds_store_with_prefix`); values may be percent-encoded. Example:
/// `"memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:"`.
///
/// With `quorum` (`memcached://a:11211,b:11211,c:11211?quorum`, 3 to 15
/// servers) the servers are independent members of a quorum, not a pool:
/// a lock made from the store (`mcds_lock_new`) lives on every one and is
/// held by whoever holds a majority, so it keeps working while a minority
/// is down; with a majority down it fails with `MCDS_SERVER_DOWN`, whose
/// message says how many servers answered. Every other structure is
/// `MCDS_UNSUPPORTED` on a quorum.
///
/// A malformed URL, an unknown, repeated or misplaced option, or a value
/// out of range is `MCDS_INVALID_ARGUMENT`, its message naming it; a bad
/// prefix `MCDS_INVALID_KEY`. TLS (`memcached+tls://`, with `ca_file`,
/// `client_cert`, `client_key`, `server_name`), unix sockets
/// (`unix:/path`) and memcached's ASCII auth (`user:password@`, or the
/// environment's `MCDS_USERNAME`/`MCDS_PASSWORD`) are taken as the README's
/// store URL table says; credentials are never repeated in a message, and
/// a TLS file that cannot be read is `MCDS_INVALID_ARGUMENT` here.
/// Connections are made on first use.
/// `url` is borrowed for the call. `*out` is a new handle the caller owns:
/// free it with `mcds_store_free`.
///
/// # Safety
/// `url` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_new_url(
    url: *const c_char,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let url = unsafe { text(url, "url") }?;
        let out = out_ptr(out, "out")?;
        let store = mcds_store::from_scope(::mcds_url::open_url(url)?)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, store) };
        Ok(())
    })
}

/// A new handle on the same store (the same connections, or the same
/// embedded memory) whose structures keep their items under keys starting
/// with `prefix`: the lock `"job"` made from it is `<prefix>lock:job:owner`.
/// Several applications can so share one memcached pool without their
/// names meeting (`"billing/"`, `"search/"`). The prefix replaces any prefix
/// `store` has; `""` gives a handle with none.
///
/// `prefix` (NUL-terminated UTF-8, borrowed for the call) must be made of
/// key bytes (no spaces or control bytes) and shorter than 250 bytes:
/// `MCDS_INVALID_KEY` otherwise. `store` is unchanged and stays the
/// caller's. `*out` is a new handle the caller owns: free it with
/// `mcds_store_free`; either handle can be freed first.
///
/// # Safety
/// `store` NULL or live; `prefix` NULL or NUL-terminated; `out` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_with_prefix(
    store: *const mcds_store,
    prefix: *const c_char,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (store, prefix) = unsafe { (handle(store, "store")?, text(prefix, "prefix")?) };
        let out = out_ptr(out, "out")?;
        let scope = store.scope.clone().with_prefix(prefix)?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(mcds_store { scope }))) };
        Ok(())
    })
}

/// Free a store handle (NULL is a no-op). Structures made from it keep
/// working: they hold their own reference to the store, which closes its
/// connections when the last user is gone.
///
/// # Safety
/// `store` must be NULL or a live store, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_free(store: *mut mcds_store) {
    // SAFETY: forwarded caller contract.
    unsafe { free(store) }
}
