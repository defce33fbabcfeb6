//! `mcds_limiter`: a rate limiter, and `mcds_decision`, its answer.

use std::ffi::c_char;
use std::time::Duration;

use ::mcds_counter::{RateLimiter, Window};

use crate::boundary::{create, free, query};
use crate::result::mcds_result;
use crate::store::mcds_store;

/// A rate limiter: at most `limit` requests per window.
pub struct mcds_limiter {
    limiter: RateLimiter,
}

/// The answer of `mcds_limiter_check` and `mcds_limiter_peek`.
#[repr(C)]
pub struct mcds_decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// How many more requests would be allowed now.
    pub remaining: u64,
    /// When denied, milliseconds until a request would be allowed (else 0).
    pub retry_after_ms: u64,
}

/// Create the rate limiter `name`: at most `limit` requests per
/// `window_secs` seconds, in a fixed window or (with `sliding`) the
/// sliding-window estimate. `*out` is a new handle the caller owns: free
/// it with `mcds_limiter_free`.
///
/// # Safety
/// `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_new(
    store: *const mcds_store,
    name: *const c_char,
    limit: u64,
    window_secs: u32,
    sliding: bool,
    out: *mut *mut mcds_limiter,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        create(store, name, out, |scope, name| {
            let mode = if sliding {
                Window::Sliding
            } else {
                Window::Fixed
            };
            let limiter = RateLimiter::new(
                scope,
                name,
                limit,
                Duration::from_secs(u64::from(window_secs)),
                mode,
            )?;
            Ok(mcds_limiter { limiter })
        })
    }
}

/// Decide with or without counting the request.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
unsafe fn limiter_op(l: *const mcds_limiter, out: *mut mcds_decision, count: bool) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe {
        query(l, "limiter", out, "out", |l| {
            let d = if count {
                l.limiter.check()?
            } else {
                l.limiter.peek()?
            };
            let decision = mcds_decision {
                allowed: d.allowed,
                remaining: d.remaining,
                retry_after_ms: u64::try_from(d.retry_after.as_millis()).unwrap_or(u64::MAX),
            };
            Ok(decision)
        })
    }
}

/// Count this request and decide.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_check(
    l: *const mcds_limiter,
    out: *mut mcds_decision,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { limiter_op(l, out, true) }
}

/// Decide without counting a request.
///
/// # Safety
/// `l` NULL or live; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_peek(
    l: *const mcds_limiter,
    out: *mut mcds_decision,
) -> mcds_result {
    // SAFETY: forwarded caller contract.
    unsafe { limiter_op(l, out, false) }
}

/// Free a rate limiter (NULL is a no-op).
///
/// # Safety
/// `l` must be NULL or a live limiter, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcds_limiter_free(l: *mut mcds_limiter) {
    // SAFETY: forwarded caller contract.
    unsafe { free(l) }
}
