//! # libmcds — the C ABI of mcds
//!
//! `include/mcds.h` is generated from this crate by cbindgen and committed; a
//! test fails when it is stale. Conventions, in the style of rustls-ffi:
//!
//! * Every name starts with `mcds_`. Handles (`mcds_store`, `mcds_counter`,
//!   `mcds_lock`, `mcds_set`, `mcds_window`, `mcds_limiter`, `mcds_log`,
//!   `mcds_table` and the result lists) are opaque; `mcds_<type>_new…`
//!   creates one and `mcds_<type>_free` frees it (`NULL` is a no-op). C never
//!   frees Rust memory with `free()`.
//! * Every fallible function returns an `mcds_result` (`uint32_t`): `MCDS_OK`
//!   (0) or an error code. Codes are never reused. Outputs are written only on
//!   success. `mcds_result_name()` names a code and `mcds_last_error_message()`
//!   gives the calling thread's last error detail.
//! * Every body runs inside a panic boundary: a Rust panic becomes
//!   `MCDS_PANIC`, never an unwind into C. No Rust enum is ever read from C.
//! * Names are NUL-terminated UTF-8; member bytes are a pointer and a length.
//!   Every handle can be shared between threads: only `mcds_<type>_free`
//!   takes a `*mut` handle.
//!
//! The modules, in the order cbindgen writes them to the header:
//!
//! | module     | holds                                                        |
//! |------------|--------------------------------------------------------------|
//! | `result`   | `mcds_result`, the `MCDS_…` codes, their one table            |
//! | `boundary` | the last-error message, the panic boundary, pointer helpers   |
//! | `store`    | `mcds_store`                                                  |
//! | `counter`  | `mcds_counter`                                                |
//! | `lock`     | `mcds_lock`                                                   |
//! | `set`      | `mcds_set`                                                    |
//! | `list`     | the result lists `mcds_bytes_list` and `mcds_event_list`      |
//! | `window`   | `mcds_window`                                                 |
//! | `limiter`  | `mcds_limiter`, `mcds_decision`                               |
//! | `log`      | `mcds_log`                                                    |
//! | `table`    | `mcds_table`                                                  |
//! | `sketch`   | `mcds_hll`, `mcds_bloom`, `mcds_bitmap`                       |

#![allow(non_camel_case_types)]
// Everything that touches raw pointers lives in the small helpers of
// `boundary`; each `unsafe` block states why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{CStr, c_char};

// cbindgen writes include/mcds.h in the order it reads items: this file's,
// then each module's in the order declared here (one per group, so that
// rustfmt keeps the order).
mod result;

mod boundary;

mod store;

mod counter;

mod lock;

mod set;

mod list;

mod window;

mod limiter;

mod log;

mod table;

mod sketch;

pub use boundary::mcds_last_error_message;
pub use counter::*;
pub use limiter::*;
pub use list::*;
pub use lock::*;
pub use log::*;
pub use result::*;
pub use set::*;
pub use sketch::*;
pub use store::*;
pub use table::*;
pub use window::*;

/// The library version, e.g. `"0.1.0"`: a static string.
#[unsafe(no_mangle)]
pub extern "C" fn mcds_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}
