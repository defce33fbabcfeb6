//! `mcds_store_builder`: the options of a store, then the store.
//!
//! ```c
//! mcds_store_builder *b = NULL;
//! mcds_store *store = NULL;
//! mcds_store_builder_new(&b);
//! mcds_store_builder_set_io_timeout_ms(b, 250);
//! mcds_result r = mcds_store_builder_build_memcached(b, "10.0.0.1:11211,10.0.0.2:11211", &store);
//! mcds_store_builder_free(b);
//! ```
//!
//! A small opaque builder rather than an options struct, because:
//!
//! * **Adding an option adds a function, not a field.** A struct's layout
//!   is compiled into every C caller and copied by hand into every ctypes
//!   and PHP binding; a new field would break them all (a new SONAME).
//!   A new setter breaks nothing, and a caller that never heard of it gets
//!   the default.
//! * **Each value is checked where it is set:** a setter returns
//!   `MCDS_INVALID_ARGUMENT` naming its argument and the accepted range, on
//!   the line that set it, rather than a build failing on one of several
//!   fields.
//! * **It is the Rust API's shape** (`MemcachedStore::builder()`,
//!   `MemoryStore::builder()`), and bindings map it onto keyword arguments
//!   (`mcds.Store.memcached(servers, io_timeout=0.25)`) in a few lines.
//!
//! The builder is a handle like the others: it can be shared between
//! threads (its setters take a `const` pointer, as every call but `_free`
//! does), and building does not consume it, so one builder can make several
//! stores. Options that do not apply to the store being built (a timeout
//! for the embedded store, a memory budget for memcached) make the build
//! fail with `MCDS_INVALID_ARGUMENT` rather than being ignored.
//!
//! The key prefix is not a builder option: `mcds_store_with_prefix` gives
//! any store handle a prefix, sharing its connections.

use std::ffi::c_char;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ::mcds_core::{Eviction, MemoryStore};
use ::mcds_memcached::MemcachedStore;

use crate::boundary::{Fail, boundary, free, handle, out_ptr, text, write};
use crate::result::{MCDS_INVALID_ARGUMENT, mcds_result};
use crate::store::mcds_store;

/// The longest connect or I/O timeout accepted: one hour. A longer one
/// would hang a call on a dead server for longer than anyone waits.
const MAX_TIMEOUT_MS: u32 = 3_600_000;
/// The smallest item size limit and memory budget accepted (memcached's
/// smallest `-I`).
const MIN_BYTES: u64 = 1024;
/// The largest item size limit accepted (memcached's largest `-I`).
const MAX_ITEM_SIZE: u64 = 1 << 30;
/// The largest memory budget accepted for the embedded store: 1 TiB.
const MAX_MEMORY: u64 = 1 << 40;

/// Options for a store; see `mcds_store_builder_new`.
pub struct mcds_store_builder {
    settings: Mutex<Settings>,
}

/// What was set; `None` keeps the backend's default.
#[derive(Clone, Copy, Debug, Default)]
struct Settings {
    connect_timeout: Option<Duration>,
    io_timeout: Option<Duration>,
    item_size_limit: Option<usize>,
    memory_limit: Option<usize>,
    evict: Option<bool>,
}

/// Create a builder with every option at its default. `*out` is a new
/// handle the caller owns: free it with `mcds_store_builder_free` (stores
/// built from it do not need it).
///
/// # Safety
/// `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_new(out: *mut *mut mcds_store_builder) -> mcds_result {
    boundary(|| {
        let out = out_ptr(out, "out")?;
        let builder = mcds_store_builder {
            settings: Mutex::new(Settings::default()),
        };
        // SAFETY: checked non-NULL.
        unsafe { write(out, Box::into_raw(Box::new(builder))) };
        Ok(())
    })
}

/// Check `value` against `range` and record it with `set`.
///
/// # Safety
/// `b` NULL or live.
unsafe fn set<T: PartialOrd + std::fmt::Display>(
    b: *const mcds_store_builder,
    what: &str,
    value: T,
    range: std::ops::RangeInclusive<T>,
    why: &str,
    apply: impl FnOnce(&mut Settings, T),
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let b = unsafe { handle(b, "builder") }?;
        if !range.contains(&value) {
            return Err(Fail(
                MCDS_INVALID_ARGUMENT,
                format!(
                    "{what} {value} is out of range: use {} to {} ({why})",
                    range.start(),
                    range.end()
                ),
            ));
        }
        let mut settings = b.settings.lock().unwrap_or_else(PoisonError::into_inner);
        apply(&mut settings, value);
        Ok(())
    })
}

/// How long dialing a memcached server may take, in milliseconds (default
/// 1000). 1 to 3 600 000 (one hour); 0 or more than that is
/// `MCDS_INVALID_ARGUMENT`. Memcached stores only.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_set_connect_timeout_ms(
    b: *const mcds_store_builder,
    ms: u32,
) -> mcds_result {
    let why = "0 would fail every dial; over an hour would hang on a dead server";
    // SAFETY: forwarded caller contract.
    unsafe {
        set(
            b,
            "connect timeout (ms)",
            ms,
            1..=MAX_TIMEOUT_MS,
            why,
            |s, ms| {
                s.connect_timeout = Some(Duration::from_millis(u64::from(ms)));
            },
        )
    }
}

/// How long one request and its reply may take on memcached, in
/// milliseconds (default 1000). A call that has to dial first may also
/// spend up to the connect timeout. 1 to 3 600 000 (one hour); 0 or more
/// than that is `MCDS_INVALID_ARGUMENT`. Memcached stores only.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_set_io_timeout_ms(
    b: *const mcds_store_builder,
    ms: u32,
) -> mcds_result {
    let why = "0 would fail every call; over an hour would hang on a dead server";
    // SAFETY: forwarded caller contract.
    unsafe {
        set(
            b,
            "I/O timeout (ms)",
            ms,
            1..=MAX_TIMEOUT_MS,
            why,
            |s, ms| {
                s.io_timeout = Some(Duration::from_millis(u64::from(ms)));
            },
        )
    }
}

/// The largest item, in bytes, counting key, value and 59 bytes of
/// overhead (default 1 MiB). For memcached, set it to the servers' `-I`:
/// larger values are refused with `MCDS_VALUE_TOO_LARGE` before they are
/// sent. An append (sets and logs grow by appends) adds to an item whose
/// size mcds has not read, so memcached checks the total itself; its
/// refusal is `MCDS_VALUE_TOO_LARGE` too, whatever this limit says. 1024 to
/// 1 GiB, as memcached's `-I`; else `MCDS_INVALID_ARGUMENT`. Both stores.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_set_item_size_limit(
    b: *const mcds_store_builder,
    bytes: u64,
) -> mcds_result {
    let why = "memcached's -I accepts 1k to 1024m";
    // SAFETY: forwarded caller contract.
    unsafe {
        set(
            b,
            "item size limit (bytes)",
            bytes,
            MIN_BYTES..=MAX_ITEM_SIZE,
            why,
            |s, n| {
                s.item_size_limit = Some(usize::try_from(n).unwrap_or(usize::MAX));
            },
        )
    }
}

/// The embedded store's memory budget in bytes, counting each item as key,
/// value and 59 bytes of overhead (default 64 MiB, like `memcached -m 64`).
/// Memory is taken as items are written, not up front. 1024 bytes to 1 TiB
/// (and at most the address space); else `MCDS_INVALID_ARGUMENT`. Embedded
/// store only.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_set_memory_limit(
    b: *const mcds_store_builder,
    bytes: u64,
) -> mcds_result {
    let max = MAX_MEMORY.min(u64::try_from(isize::MAX).unwrap_or(u64::MAX));
    let why = "a budget under 1 KiB holds almost nothing; over 1 TiB is surely a mistake";
    // SAFETY: forwarded caller contract.
    unsafe {
        set(
            b,
            "memory limit (bytes)",
            bytes,
            MIN_BYTES..=max,
            why,
            |s, n| {
                s.memory_limit = Some(usize::try_from(n).unwrap_or(usize::MAX));
            },
        )
    }
}

/// What the embedded store does when its budget is full: evict the least
/// recently used items (`true`, the default, like memcached) or refuse the
/// write with `MCDS_OUT_OF_MEMORY` (`false`, like `memcached -M`). Embedded
/// store only.
///
/// # Safety
/// `b` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_set_evict(
    b: *const mcds_store_builder,
    evict: bool,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        set(b, "evict", evict, false..=true, "", |s, e| {
            s.evict = Some(e)
        })
    }
}

fn wrong_store(option: &str, store: &str, hint: &str) -> Fail {
    Fail(
        MCDS_INVALID_ARGUMENT,
        format!("the {option} does not apply to {store} ({hint}); use a builder without it"),
    )
}

/// Build an embedded in-process store with the builder's options. The
/// builder is unchanged and stays the caller's. `*out` is a new handle the
/// caller owns: free it with `mcds_store_free`. `MCDS_INVALID_ARGUMENT` if
/// a memcached-only option (a timeout) was set.
///
/// # Safety
/// `b` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_build_memory(
    b: *const mcds_store_builder,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let b = unsafe { handle(b, "builder") }?;
        let out = out_ptr(out, "out")?;
        let s = *b.settings.lock().unwrap_or_else(PoisonError::into_inner);
        let embedded = "the embedded store";
        if s.connect_timeout.is_some() {
            return Err(wrong_store(
                "connect timeout",
                embedded,
                "it has no connections",
            ));
        }
        if s.io_timeout.is_some() {
            return Err(wrong_store(
                "I/O timeout",
                embedded,
                "it has no connections",
            ));
        }
        let mut builder = MemoryStore::builder();
        if let Some(n) = s.item_size_limit {
            builder = builder.item_size_limit(n);
        }
        if let Some(n) = s.memory_limit {
            builder = builder.memory_limit(n);
        }
        if let Some(evict) = s.evict {
            builder = builder.eviction(if evict {
                Eviction::Lru
            } else {
                Eviction::Error
            });
        }
        // SAFETY: checked non-NULL.
        unsafe { write(out, mcds_store::boxed(Arc::new(builder.build()))) };
        Ok(())
    })
}

/// Build a store on memcached with the builder's options: `servers` is
/// `"host:port[,host:port...]"` (borrowed for the call), as for
/// `mcds_store_new_memcached`. The builder is unchanged and stays the
/// caller's. `*out` is a new handle the caller owns: free it with
/// `mcds_store_free`. `MCDS_INVALID_ARGUMENT` if an embedded-store option
/// (the memory budget or eviction) was set.
///
/// # Safety
/// `b` NULL or live; `servers` NULL or NUL-terminated; `out` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_build_memcached(
    b: *const mcds_store_builder,
    servers: *const c_char,
    out: *mut *mut mcds_store,
) -> mcds_result {
    boundary(|| {
        // SAFETY: forwarded caller contract.
        let (b, servers) = unsafe { (handle(b, "builder")?, text(servers, "servers")?) };
        let out = out_ptr(out, "out")?;
        let s = *b.settings.lock().unwrap_or_else(PoisonError::into_inner);
        let server = "memcached";
        let hint = "the server's own budget is its -m and -M";
        if s.memory_limit.is_some() {
            return Err(wrong_store("memory limit", server, hint));
        }
        if s.evict.is_some() {
            return Err(wrong_store("eviction setting", server, hint));
        }
        let mut builder = MemcachedStore::builder();
        if let Some(t) = s.connect_timeout {
            builder = builder.connect_timeout(t);
        }
        if let Some(t) = s.io_timeout {
            builder = builder.io_timeout(t);
        }
        if let Some(n) = s.item_size_limit {
            builder = builder.item_size_limit(n);
        }
        let store = builder.connect(servers.split(',').filter(|s| !s.trim().is_empty()))?;
        // SAFETY: checked non-NULL.
        unsafe { write(out, mcds_store::boxed(Arc::new(store))) };
        Ok(())
    })
}

/// Free a builder (NULL is a no-op). Stores built from it are unaffected.
///
/// # Safety
/// `b` must be NULL or a live builder, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_store_builder_free(b: *mut mcds_store_builder) {
    // SAFETY: forwarded caller contract.
    unsafe { free(b) }
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use super::*;
    use crate::result::{MCDS_NULL_ARGUMENT, MCDS_OK};

    struct Builder(*mut mcds_store_builder);

    impl Builder {
        fn new() -> Builder {
            let mut b = ptr::null_mut();
            // SAFETY: a writable output.
            assert_eq!(unsafe { mcds_store_builder_new(&mut b) }, MCDS_OK);
            Builder(b)
        }

        fn memory(&self) -> Result<Arc<dyn ::mcds_core::Store>, mcds_result> {
            let mut store = ptr::null_mut();
            // SAFETY: a live builder and a writable output; the store is
            // freed once, after its scope is cloned.
            unsafe {
                match mcds_store_builder_build_memory(self.0, &mut store) {
                    MCDS_OK => {
                        let scope = (*store).scope.clone();
                        crate::mcds_store_free(store);
                        Ok(Arc::clone(scope.store()))
                    }
                    code => Err(code),
                }
            }
        }
    }

    impl Drop for Builder {
        fn drop(&mut self) {
            // SAFETY: a live builder, freed once.
            unsafe { mcds_store_builder_free(self.0) }
        }
    }

    #[test]
    fn setters_check_their_ranges_and_keep_the_last_good_value() {
        let b = Builder::new();
        // SAFETY: a live builder, and NULL.
        unsafe {
            assert_eq!(
                mcds_store_builder_set_io_timeout_ms(b.0, 0),
                MCDS_INVALID_ARGUMENT
            );
            assert_eq!(mcds_store_builder_set_io_timeout_ms(b.0, 1), MCDS_OK);
            assert_eq!(
                mcds_store_builder_set_io_timeout_ms(b.0, MAX_TIMEOUT_MS),
                MCDS_OK
            );
            assert_eq!(
                mcds_store_builder_set_io_timeout_ms(b.0, MAX_TIMEOUT_MS + 1),
                MCDS_INVALID_ARGUMENT
            );
            assert_eq!(
                mcds_store_builder_set_memory_limit(b.0, MIN_BYTES - 1),
                MCDS_INVALID_ARGUMENT
            );
            assert_eq!(
                mcds_store_builder_set_memory_limit(b.0, MAX_MEMORY),
                MCDS_OK
            );
            assert_eq!(
                mcds_store_builder_set_item_size_limit(b.0, MAX_ITEM_SIZE + 1),
                MCDS_INVALID_ARGUMENT
            );
            assert_eq!(
                mcds_store_builder_set_evict(ptr::null(), false),
                MCDS_NULL_ARGUMENT
            );
        }
        let s = *b_settings(&b);
        assert_eq!(
            s.io_timeout,
            Some(Duration::from_millis(u64::from(MAX_TIMEOUT_MS)))
        );
        assert_eq!(s.memory_limit, Some(1 << 40));
        assert_eq!(s.item_size_limit, None);
    }

    fn b_settings(b: &Builder) -> std::sync::MutexGuard<'_, Settings> {
        // SAFETY: a live builder.
        unsafe { &*b.0 }.settings.lock().unwrap()
    }

    #[test]
    fn the_embedded_store_gets_its_budget_and_item_size() {
        let b = Builder::new();
        // SAFETY: a live builder.
        unsafe {
            assert_eq!(mcds_store_builder_set_item_size_limit(b.0, 2048), MCDS_OK);
            assert_eq!(mcds_store_builder_set_memory_limit(b.0, 4096), MCDS_OK);
            assert_eq!(mcds_store_builder_set_evict(b.0, false), MCDS_OK);
        }
        let store = b.memory().unwrap();
        assert_eq!(store.item_size_limit(), 2048);
        let key = |i: usize| ::mcds_core::Key::new(format!("k{i}")).unwrap();
        let value = [0u8; 1000];
        let mut refused = None;
        for i in 0..10 {
            if let Err(e) = store.set(&key(i), &value, ::mcds_core::Ttl::Never) {
                refused = Some((i, e));
                break;
            }
        }
        let (i, e) = refused.expect("a 4 KiB budget refuses the fifth 1 KB item");
        assert!(matches!(e, ::mcds_core::Error::OutOfMemory { .. }), "{e}");
        assert!((3..=4).contains(&i), "refused at {i}");
        // Memcached-only options make the embedded build fail.
        // SAFETY: a live builder.
        unsafe { assert_eq!(mcds_store_builder_set_connect_timeout_ms(b.0, 5), MCDS_OK) };
        assert_eq!(b.memory().err(), Some(MCDS_INVALID_ARGUMENT));
    }
}
